package main

import (
	"bytes"
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/pingnode/pingnode/examples/internal/partsfleet"
	"github.com/pingnode/pingnode/examples/internal/podapi"
)

// testClock is a clock that a test moves, read by the handler's
// goroutines: an offset from its start.
type testClock struct {
	start  time.Time
	offset atomic.Int64
}

func (c *testClock) now() time.Time           { return c.start.Add(time.Duration(c.offset.Load())) }
func (c *testClock) set(offset time.Duration) { c.offset.Store(int64(offset)) }

// The fleets of the Slurm tests, idle at their seed: every cpu free.
var (
	twoIdleOf4 = []string{"-parts-generate", "2", "-parts-cpus", "4", "-parts-memory", "4000Mi", "-parts-churn", "0", "-parts-seed", "22"}
	twoIdleOf1 = []string{"-parts-generate", "2", "-parts-cpus", "1", "-parts-memory", "1000Mi", "-parts-churn", "0", "-parts-seed", "15"}
)

// serve starts the plugin that args say, as the command would serve it,
// with a clock that starts at start, and returns its server, its jobs and
// the clock.
func serve(t *testing.T, start time.Time, args ...string) (*httptest.Server, *partsfleet.Fleet, *testClock) {
	t.Helper()
	var stderr bytes.Buffer
	c, err := parseFlags(args, &stderr)
	if err != nil {
		t.Fatalf("parseFlags(%q): %v; said:\n%s", args, err, stderr.String())
	}
	clock := &testClock{start: start}
	handler, jobs := handlerOf(c, clock.now)
	server := httptest.NewServer(handler)
	t.Cleanup(server.Close)
	return server, jobs, clock
}

// slurmPod is a pod of one container, main, limited to cpus, with the
// sbatch flags flags (none when empty) and the command command.
func slurmPod(uid, flags, cpus string, command ...string) corev1.Pod {
	pod := corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{UID: types.UID(uid), Namespace: "team-a", Name: "pod-" + uid},
		Spec:       corev1.PodSpec{NodeName: "vk-slurm", Containers: []corev1.Container{{Name: "main", Command: command}}},
	}
	if flags != "" {
		pod.Annotations = map[string]string{podapi.SlurmFlags: flags}
	}
	pod.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpus)}
	return pod
}

// withMemory is pod with its first container limited to memory too.
func withMemory(pod corev1.Pod, memory string) corev1.Pod {
	pod.Spec.Containers = slices.Clone(pod.Spec.Containers)
	limits := maps.Clone(pod.Spec.Containers[0].Resources.Limits)
	limits[corev1.ResourceMemory] = resource.MustParse(memory)
	pod.Spec.Containers[0].Resources.Limits = limits
	return pod
}

// resourceOf is the quantity s.
func resourceOf(s string) resource.Quantity { return resource.MustParse(s) }

// pingSlurm pings the server with body, and returns the answer's status
// code and body.
func pingSlurm(t *testing.T, server *httptest.Server, body any) (int, string) {
	t.Helper()
	code, data := call(t, server, http.MethodGet, podapi.StatusPath, body)
	return code, string(data)
}

// sumReply is the body of the Slurm plugin's ping reply with cpu and
// memory, and the draining taint when drain.
func sumReply(cpu, memory string, drain bool) string {
	taints := ""
	if drain {
		taints = `,"taints":[{"key":"plugin.example.com/draining","value":"true","effect":"NoSchedule"}]`
	}
	return `{"status":"ok","resources":{"cpu":"` + cpu + `","memory":"` + memory + `"}` + taints + "}\n"
}

// TestSlurmPing: with -slurm the ping is GET /status with [] (or null),
// answered with one sum of the fleet's free cpus and memory (a machine's
// memory less its jobs' memory limits), a true zero when it is full,
// with nothing else but -drain's taint; without a body
// it is answered 500 with the decoder's words, as the Slurm plugin's
// json.Unmarshal says them; and it is never cached, the status cache
// notwithstanding.
func TestSlurmPing(t *testing.T) {
	server, fleet, _ := serve(t, t0, append([]string{"-slurm"}, twoIdleOf4...)...)
	for _, body := range []any{"[]", " null ", []corev1.Pod{}} {
		if code, got := pingSlurm(t, server, body); code != http.StatusOK || got != sumReply("8", "8000Mi", false) {
			t.Errorf("ping with %v: %d %s; want 200 %s", body, code, got, sumReply("8", "8000Mi", false))
		}
	}
	for _, tt := range []struct {
		name string
		body any
		want string
	}{
		{"no body", nil, "unexpected end of JSON input"},
		{"white space", "  ", "unexpected end of JSON input"},
		{"an object", "{}", "json: cannot unmarshal object into Go value of type []v1.Pod"},
	} {
		if code, got := pingSlurm(t, server, tt.body); code != http.StatusInternalServerError || got != tt.want {
			t.Errorf("ping with %s: %d %q; want 500 %q", tt.name, code, got, tt.want)
		}
	}
	a := withMemory(slurmPod("a", "", "3"), "3000Mi")
	create(t, server, a)
	statusOf(t, server, a) // cached for 10s, which the ping is not
	if _, got := pingSlurm(t, server, "[]"); got != sumReply("5", "5000Mi", false) {
		t.Errorf("ping after a pod of 3 cpus and 3000Mi, within the status cache's 10s: %s; want %s", got, sumReply("5", "5000Mi", false))
	}
	create(t, server, withMemory(slurmPod("b", "", "1"), "1000Mi"))
	create(t, server, withMemory(slurmPod("c", "", "4"), "4000Mi"))
	if code, got := pingSlurm(t, server, "[]"); code != http.StatusOK || got != sumReply("0", "0Mi", false) {
		t.Errorf("ping of a full fleet: %d %s; want 200 %s", code, got, sumReply("0", "0Mi", false))
	}
	if fleet.Created() != 3 {
		t.Errorf("%d jobs, want 3", fleet.Created())
	}

	drained, _, _ := serve(t, t0, "-slurm", "-drain", "-cpu", "12", "-memory", "64Gi")
	if code, got := pingSlurm(t, drained, "[]"); code != http.StatusOK || got != sumReply("12", "64Gi", true) {
		t.Errorf("-slurm -drain without -parts-generate: %d %s; want 200 %s", code, got, sumReply("12", "64Gi", true))
	}
}

// TestSlurmCreatedTwice: with -slurm a second create of a pod is a
// second job, with a new JID; the first keeps running, holding its cpus,
// and the pod's status and delete concern the second alone.
func TestSlurmCreatedTwice(t *testing.T) {
	server, fleet, _ := serve(t, t0, append([]string{"-slurm"}, twoIdleOf4...)...)
	a := withMemory(slurmPod("a", "", "2"), "2000Mi")
	first, second := create(t, server, a), create(t, server, a)
	if first.PodJID != "1" || second.PodJID != "2" || fleet.Created() != 2 {
		t.Errorf("JIDs %s and %s, %d jobs; want 1 and 2, 2 jobs", first.PodJID, second.PodJID, fleet.Created())
	}
	if _, got := pingSlurm(t, server, "[]"); got != sumReply("4", "4000Mi", false) {
		t.Errorf("ping: %s; want both jobs' cpus taken, %s", got, sumReply("4", "4000Mi", false))
	}
	if code, body := call(t, server, http.MethodPost, podapi.DeletePath, a); code != http.StatusOK {
		t.Fatalf("delete: %d %s", code, body)
	}
	if _, got := pingSlurm(t, server, "[]"); got != sumReply("6", "6000Mi", false) {
		t.Errorf("ping after the delete: %s; want the first job's cpus still taken, %s", got, sumReply("6", "6000Mi", false))
	}
	var states []string
	for _, s := range fleet.JobsOf("a") {
		states = append(states, s.ID+" "+s.State.String())
	}
	if diff := cmp.Diff([]string{"1 running", "2 cancelled"}, states); diff != "" {
		t.Errorf("jobs of a (-want +got):\n%s", diff)
	}
}

// TestSlurmPlacement: with -slurm the pod's node name chooses no
// machine: the backend does, the first with room, or its one queue; only
// the annotation slurm-job.vk.io/flags pins a pod, to a machine as Slurm
// names it, and a pin to a node name is refused at its create, in
// sbatch's words, with no job: its status is that of a pod without one.
func TestSlurmPlacement(t *testing.T) {
	server, fleet, _ := serve(t, t0, append([]string{"-slurm"}, twoIdleOf4...)...)
	nodeNamed := slurmPod("node-named", "", "3")
	nodeNamed.Spec.NodeName = "vk-cn002"
	pods := []corev1.Pod{
		nodeNamed,
		slurmPod("pinned", "--nodelist=cn002", "1"),
		slurmPod("w", "--time=10 -w cn002", "2"),
		slurmPod("vk", "--nodelist=vk-cn002", "1"),
		slurmPod("queued", "", "2"),
	}
	// node-named on cn001, the first with room, whatever its node name;
	// then 1 cpu free on each machine, too few for the last.
	for _, p := range pods {
		if p.UID == "vk" {
			refusedCreate(t, server, p)
			continue
		}
		create(t, server, p)
	}
	want := map[string]string{"node-named": "running cn001", "pinned": "running cn002", "w": "running cn002", "vk": "State(0) ", "queued": "queued "} // vk: no job
	got := map[string]string{}
	for _, p := range pods {
		s, _ := fleet.Job(string(p.UID))
		got[string(p.UID)] = s.State.String() + " " + s.Machine
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("jobs (-want +got):\n%s", diff)
	}
	statuses := statusOf(t, server, pods[3], pods[4])
	queued := corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{}}
	wantStatuses := []podapi.PodStatus{slurmStatus(pods[3], corev1.ContainerState{}), slurmStatus(pods[4], queued)}
	if diff := cmp.Diff(wantStatuses, statuses, sameInstant); diff != "" {
		t.Errorf("status (-want +got):\n%s", diff)
	}
}

// slurmStatus is what the Slurm plugin says of pod, its one container
// in state.
func slurmStatus(pod corev1.Pod, state corev1.ContainerState) podapi.PodStatus {
	return podapi.PodStatus{
		Name: pod.Name, UID: string(pod.UID), Namespace: pod.Namespace,
		Containers: []corev1.ContainerStatus{{Name: "main", State: state, Ready: state.Running != nil}},
	}
}

// TestSlurmStatusOfPodsSent: with -slurm a status answers every pod
// asked about, in order, with one container status for each container
// of the pod sent, by name, whatever the pod created had: the empty
// state for a pod without a job (never created, or deleted), none for a
// pod sent without containers; and JID is empty.
func TestSlurmStatusOfPodsSent(t *testing.T) {
	server, _, _ := serve(t, t0, "-slurm", "-status-cache", "0")
	a := slurmPod("a", "", "1")
	create(t, server, a)
	sent := a
	sent.Spec.Containers = []corev1.Container{{Name: "main"}, {Name: "side"}}
	bare := a
	bare.Spec.Containers = nil
	never := slurmPod("never", "", "1")
	running := corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(t0)}}
	want := []podapi.PodStatus{
		{Name: a.Name, UID: "a", Namespace: a.Namespace, Containers: []corev1.ContainerStatus{
			{Name: "main", State: running, Ready: true}, {Name: "side", State: running, Ready: true},
		}},
		{Name: a.Name, UID: "a", Namespace: a.Namespace, Containers: []corev1.ContainerStatus{}},
		slurmStatus(never, corev1.ContainerState{}),
	}
	if diff := cmp.Diff(want, statusOf(t, server, sent, bare, never), sameInstant); diff != "" {
		t.Errorf("status (-want +got):\n%s", diff)
	}
	if code, body := call(t, server, http.MethodPost, podapi.DeletePath, a); code != http.StatusOK {
		t.Fatalf("delete: %d %s", code, body)
	}
	if diff := cmp.Diff([]podapi.PodStatus{slurmStatus(a, corev1.ContainerState{})}, statusOf(t, server, a)); diff != "" {
		t.Errorf("status of a deleted pod (-want +got):\n%s", diff)
	}
}

// TestStatusCache: the pod status is served again, verbatim, whatever
// pods are asked about, for -status-cache after it was computed: 10s by
// default with -slurm, as the Slurm plugin's cache; never by default
// without it, or with -status-cache 0.
func TestStatusCache(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		cached time.Duration // 0: never
	}{
		{"slurm", []string{"-slurm"}, 10 * time.Second},
		{"slurm, no cache", []string{"-slurm", "-status-cache", "0"}, 0},
		{"slurm, 1m", []string{"-slurm", "-status-cache", "1m"}, time.Minute},
		{"default", nil, 0},
		{"default, 5s", []string{"-status-cache", "5s"}, 5 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			server, _, clock := serve(t, t0, tt.args...)
			status := func(pods ...corev1.Pod) string {
				code, body := call(t, server, http.MethodGet, podapi.StatusPath, pods)
				if code != http.StatusOK {
					t.Fatalf("status: %d %s", code, body)
				}
				return string(body)
			}
			a, b := slurmPod("a", "", "1"), slurmPod("b", "", "1")
			create(t, server, a)
			first := status(a)
			create(t, server, b)
			clock.set(tt.cached - time.Millisecond)
			again := status(b)
			if cached := again == first; cached != (tt.cached > 0) {
				t.Errorf("a status of b just before %v: the answer of a again %v, want %v:\n%s", tt.cached, cached, tt.cached > 0, again)
			}
			clock.set(tt.cached)
			if fresh := status(b); fresh == first || !strings.Contains(fresh, `"UID":"b"`) {
				t.Errorf("a status of b at %v: %s; want b's, computed again", tt.cached, fresh)
			}
		})
	}
}

// TestSlurmDelete: with -slurm a delete cancels the pod's job, which
// leaves the backend, its cpus free for the queued, and answers 200; a
// delete of a pod without a job (never created, or deleted already)
// gets no answer at all, and is counted; a body that is no pod is
// answered 500.
func TestSlurmDelete(t *testing.T) {
	server, fleet, _ := serve(t, t0, append([]string{"-slurm", "-status-cache", "0"}, twoIdleOf1...)...)
	a, b, c := slurmPod("a", "", "1"), slurmPod("b", "", "1"), slurmPod("c", "", "1")
	for _, p := range []corev1.Pod{a, b, c} {
		create(t, server, p)
	}
	if code, body := call(t, server, http.MethodPost, podapi.DeletePath, a); code != http.StatusOK {
		t.Fatalf("delete a: %d %s", code, body)
	}
	running := corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(t0)}}
	want := []podapi.PodStatus{slurmStatus(a, corev1.ContainerState{}), slurmStatus(c, running)}
	if diff := cmp.Diff(want, statusOf(t, server, a, c), sameInstant); diff != "" {
		t.Errorf("status after a is deleted (-want +got):\n%s", diff)
	}
	if fleet.UnknownDeletes() != 0 {
		t.Fatalf("%d unknown deletes before any", fleet.UnknownDeletes())
	}
	for i, p := range []corev1.Pod{a, slurmPod("never", "", "1"), {}} {
		body, _ := json.Marshal(p)
		req, err := http.NewRequest(http.MethodPost, server.URL+podapi.DeletePath, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if resp, err := http.DefaultClient.Do(req); err == nil {
			_ = resp.Body.Close()
			t.Errorf("delete of %q, which has no job: answered %d; want no answer", p.UID, resp.StatusCode)
		}
		if fleet.UnknownDeletes() != i+1 {
			t.Errorf("after the delete of %q: %d unknown deletes, want %d", p.UID, fleet.UnknownDeletes(), i+1)
		}
	}
	if code, body := call(t, server, http.MethodPost, podapi.DeletePath, "pod"); code != http.StatusInternalServerError || !strings.HasPrefix(string(body), "invalid character") {
		t.Errorf("delete of no JSON: %d %q; want 500 with the decoder's words", code, body)
	}
}

// TestSleepServed: in either mode, a pod whose container runs sleep N
// completes N seconds after it started, exit code 0, and frees its cpus
// for the pod queued behind it, which then runs from that instant; with
// -slurm the times are those of the status refreshes that saw each (at
// 0, 59 and 60 s here, with no cache).
func TestSleepServed(t *testing.T) {
	for _, tt := range []struct {
		name      string
		args      []string
		completed corev1.ContainerStateTerminated
	}{
		{"default", []string{"-parts-generate", "2", "-parts-cpus", "1", "-parts-memory", "1000Mi", "-parts-churn", "0", "-parts-seed", "15"},
			corev1.ContainerStateTerminated{Reason: "Completed"}},
		{"slurm", append([]string{"-slurm", "-status-cache", "0"}, twoIdleOf1...), corev1.ContainerStateTerminated{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			server, _, clock := serve(t, t0, tt.args...)
			sleeper, waiter := slurmPod("sleeper", "-w cn001", "1", "/bin/sh", "-c", "sleep 60"), slurmPod("waiter", "-w cn001", "1")
			sleeper.Spec.NodeName, waiter.Spec.NodeName = "vk-cn001", "vk-cn001"
			create(t, server, sleeper)
			create(t, server, waiter)
			for _, at := range []time.Duration{0, 59 * time.Second} {
				clock.set(at)
				if got := statusOf(t, server, sleeper, waiter); len(got) != 2 || got[0].Containers[0].State.Running == nil || got[1].Containers[0].State.Waiting == nil {
					t.Fatalf("at %v: %+v; want the sleeper running, the waiter waiting", at, got)
				}
			}
			clock.set(time.Minute)
			statusOf(t, server, sleeper, waiter)
			clock.set(5 * time.Minute)
			completed := tt.completed
			completed.StartedAt, completed.FinishedAt = metav1.NewTime(t0), metav1.NewTime(t0.Add(time.Minute))
			got := statusOf(t, server, sleeper, waiter)
			if len(got) != 2 {
				t.Fatalf("status: %+v", got)
			}
			if diff := cmp.Diff(&completed, got[0].Containers[0].State.Terminated, sameInstant); diff != "" {
				t.Errorf("the sleeper (-want +got):\n%s", diff)
			}
			if r := got[1].Containers[0].State.Running; r == nil || !r.StartedAt.Equal(&metav1.Time{Time: t0.Add(time.Minute)}) {
				t.Errorf("the waiter: %+v; want running since 60s", got[1].Containers[0].State)
			}
		})
	}
}

// TestSlurmFlags: -slurm sets the status cache to 10s unless
// -status-cache says otherwise, makes the fleet of -parts-generate a
// Slurm fleet, and refuses the flags of what the Slurm plugin's reply
// has not, each named, with exit status 2; -status-cache wants a
// duration of 0 or more.
func TestSlurmFlags(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		stderr []string // each a substring of what is said; none: accepted
		cache  time.Duration
		fleet  bool // a Slurm fleet
	}{
		{"slurm", []string{"-slurm"}, nil, 10 * time.Second, false},
		{"slurm, no cache", []string{"-slurm", "-status-cache", "0"}, nil, 0, false},
		{"slurm, a fleet", []string{"-slurm", "-parts-generate", "3", "-status-cache", "2s"}, nil, 2 * time.Second, true},
		{"slurm, its own flags", []string{"-slurm", "-cpu", "8", "-memory", "16Gi", "-drain", "-label-namespaces", "nvidia.com"}, nil, 10 * time.Second, false},
		{"a cache without slurm", []string{"-status-cache", "5s"}, nil, 5 * time.Second, false},
		{"no slurm", nil, nil, 0, false},
		{"a negative cache", []string{"-status-cache", "-1s"}, []string{`invalid value "-1s" for flag -status-cache: want a duration of 0 or more, like 10s`}, 0, false},
		{"a cache without a unit", []string{"-status-cache", "10"}, []string{`invalid value "10" for flag -status-cache`}, 0, false},
		{"parts", []string{"-slurm", "-parts", "testdata/parts.json"}, []string{"plugin: -parts: not with -slurm: the Slurm plugin's reply is one sum, without parts"}, 0, false},
		{"what the reply has not", []string{"-slurm", "-pods", "10", "-label", "feature.node.kubernetes.io/x=y", "-gpu", "nvidia.com/gpu=1"}, []string{
			"plugin: -pods: not with -slurm: the Slurm plugin's reply has cpu, memory and taints only",
			"plugin: -gpu: not with -slurm", "plugin: -label: not with -slurm",
		}, 0, false},
		{"help", []string{"-h"}, []string{"-slurm", "-status-cache value", "behave as interLink's Slurm plugin"}, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, ok := parsed(t, tt.args, tt.stderr)
			if !ok {
				return
			}
			if c.statusCache != tt.cache || (c.fleet != nil && c.fleet.Slurm) != tt.fleet {
				t.Errorf("status cache %v, Slurm fleet %v; want %v, %v", c.statusCache, c.fleet != nil && c.fleet.Slurm, tt.cache, tt.fleet)
			}
		})
	}
	if code, stderr := runCommand(t, "-slurm", "-basis", "total"); code != 2 || !strings.Contains(stderr, "plugin: -basis: not with -slurm") {
		t.Errorf("plugin -slurm -basis total: exit %d, want 2, with -basis named in:\n%s", code, stderr)
	}
}

// TestSlurmFaultFlags: -slurm-min-job-age is 300s unless given, and
// reaches the fleet, -sbatch-latency and -scancel-failures are 0 unless
// given, -slurm-data empty; each wants -slurm, and a value of 0 or more, its refusal naming
// it, with exit status 2.
func TestSlurmFaultFlags(t *testing.T) {
	type faults struct {
		MinJobAge, FleetMinJobAge, SbatchLatency time.Duration
		ScancelFailures                          int
		SlurmData                                string
	}
	tests := []struct {
		name   string
		args   []string
		stderr []string // each a substring of what is said; none: accepted
		want   faults
	}{
		{"defaults", []string{"-slurm"}, nil, faults{MinJobAge: 300 * time.Second}},
		{"a fleet", []string{"-slurm", "-parts-generate", "2"}, nil, faults{MinJobAge: 300 * time.Second, FleetMinJobAge: 300 * time.Second}},
		{"each given", []string{"-slurm", "-parts-generate", "2", "-slurm-min-job-age", "0", "-sbatch-latency", "2s", "-scancel-failures", "3", "-slurm-data", "jobs"}, nil,
			faults{SbatchLatency: 2 * time.Second, ScancelFailures: 3, SlurmData: "jobs"}},
		{"a minute", []string{"-slurm", "-slurm-min-job-age", "1m"}, nil, faults{MinJobAge: time.Minute}},
		{"without -slurm", []string{"-slurm-min-job-age", "1m", "-sbatch-latency", "1s", "-scancel-failures", "1", "-slurm-data", "jobs"}, []string{
			"plugin: -slurm-min-job-age: only with -slurm", "plugin: -sbatch-latency: only with -slurm", "plugin: -scancel-failures: only with -slurm",
			"plugin: -slurm-data: only with -slurm",
		}, faults{}},
		{"negative", []string{"-slurm", "-scancel-failures", "-1"}, []string{`invalid value "-1" for flag -scancel-failures: want a count of 0 or more`}, faults{}},
		{"no unit", []string{"-slurm", "-sbatch-latency", "5"}, []string{`invalid value "5" for flag -sbatch-latency: want a duration of 0 or more, like 10s`}, faults{}},
		{"a negative age", []string{"-slurm", "-slurm-min-job-age", "-5m"}, []string{`invalid value "-5m" for flag -slurm-min-job-age`}, faults{}},
		{"help", []string{"-h"}, []string{"-slurm-min-job-age value", "-sbatch-latency value", "-scancel-failures value", "-slurm-data DIR"}, faults{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, ok := parsed(t, tt.args, tt.stderr)
			if !ok {
				return
			}
			got := faults{MinJobAge: c.minJobAge, SbatchLatency: c.sbatchLatency, ScancelFailures: c.scancelFailures, SlurmData: c.slurmData}
			if c.fleet != nil {
				got.FleetMinJobAge = c.fleet.MinJobAge
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if code, stderr := runCommand(t, "-scancel-failures", "2"); code != 2 || !strings.Contains(stderr, "plugin: -scancel-failures: only with -slurm") {
		t.Errorf("plugin -scancel-failures 2: exit %d, want 2, with the flag named in:\n%s", code, stderr)
	}
}
