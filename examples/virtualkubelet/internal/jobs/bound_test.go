package jobs

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	k8stesting "k8s.io/client-go/testing"

	"github.com/pingnode/pingnode/examples/internal/podapi"
)

// TestStatusOf: a bound pod's status follows its job, as interLink's
// Slurm plugin reports it (PD waiting, R running, CD terminated 0, a
// job cancelled before it started terminated 15 without a start), and a
// phase never goes back; a second reading of the same answer changes
// nothing.
func TestStatusOf(t *testing.T) {
	now := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	started := metav1.NewTime(now.Add(-time.Minute))
	waiting := corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{}}
	running := corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: started}}
	done := func(code int32, from metav1.Time) corev1.ContainerState {
		return corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, StartedAt: from, FinishedAt: metav1.NewTime(now)}}
	}
	tests := []struct {
		name    string
		phase   corev1.PodPhase // the pod's before
		states  map[string]corev1.ContainerState
		want    corev1.PodPhase
		ready   bool
		changed bool
	}{
		{"queued (PD)", corev1.PodPending, map[string]corev1.ContainerState{"a": waiting, "b": waiting}, corev1.PodPending, false, true},
		{"running (R)", corev1.PodPending, map[string]corev1.ContainerState{"a": running, "b": running}, corev1.PodRunning, true, true},
		{"one runs, one waits", corev1.PodPending, map[string]corev1.ContainerState{"a": running, "b": waiting}, corev1.PodRunning, false, true},
		{"a container the answer has not", corev1.PodPending, map[string]corev1.ContainerState{"a": running}, corev1.PodRunning, false, true},
		{"completed (CD)", corev1.PodRunning, map[string]corev1.ContainerState{"a": done(0, started), "b": done(0, started)}, corev1.PodSucceeded, false, true},
		{"one failed", corev1.PodRunning, map[string]corev1.ContainerState{"a": done(0, started), "b": done(1, started)}, corev1.PodFailed, false, true},
		{"cancelled before it started (CA)", corev1.PodPending, map[string]corev1.ContainerState{"a": done(15, metav1.Time{}), "b": done(15, metav1.Time{})}, corev1.PodFailed, false, true},
		{"succeeded stays", corev1.PodSucceeded, map[string]corev1.ContainerState{"a": running, "b": running}, corev1.PodSucceeded, false, false},
		{"no job (empty states): no news", corev1.PodRunning, map[string]corev1.ContainerState{"a": {}, "b": {}}, corev1.PodRunning, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := &corev1.Pod{
				Spec:   corev1.PodSpec{Containers: []corev1.Container{{Name: "a", Image: "img-a"}, {Name: "b", Image: "img-b"}}},
				Status: corev1.PodStatus{Phase: tt.phase},
			}
			var answer podapi.PodStatus
			for _, name := range []string{"a", "b"} {
				if s, ok := tt.states[name]; ok {
					answer.Containers = append(answer.Containers, corev1.ContainerStatus{Name: name, State: s})
				}
			}
			got, changed := StatusOf(pod, answer, now)
			if got.Phase != tt.want || changed != tt.changed {
				t.Fatalf("phase %s, changed %v; want %s, %v", got.Phase, changed, tt.want, tt.changed)
			}
			if !changed {
				if diff := cmp.Diff(pod.Status, got); diff != "" {
					t.Errorf("no change, but the status differs (-pod +got):\n%s", diff)
				}
				return
			}
			ready := false
			for _, c := range got.Conditions {
				ready = ready || c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue
			}
			if ready != tt.ready || (got.StartTime == nil) != (tt.want == corev1.PodPending) {
				t.Errorf("ready %v, start time %v; want ready %v, a start time unless pending", ready, got.StartTime, tt.ready)
			}
			if got.ContainerStatuses[0].Image != "img-a" || len(got.ContainerStatuses) != 2 {
				t.Errorf("container statuses %+v, want one a container of the pod, with its image", got.ContainerStatuses)
			}
			again := pod.DeepCopy()
			again.Status = got
			if _, changed := StatusOf(again, answer, now.Add(time.Minute)); changed {
				t.Error("a second reading of the same answer changes the status")
			}
		})
	}
}

// TestPlainPodJobAtBind: a pod that did not ask for confirmation gets its
// job when it binds, on its node, once, recorded on it; a keeper that
// restarts takes the record and makes no second job; a pod being
// deleted, or done, gets none.
func TestPlainPodJobAtBind(t *testing.T) {
	s := newSetup(1)
	s.plugin.state = "queued"
	plain := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "hpc", Name: "plain", UID: "uid-plain"},
		Spec:       corev1.PodSpec{NodeName: "vk-0", Containers: []corev1.Container{{Name: "job"}}},
	}
	deleting := plain.DeepCopy()
	deleting.Name, deleting.UID, deleting.DeletionTimestamp = "deleting", "uid-deleting", &metav1.Time{Time: s.now}
	done := plain.DeepCopy()
	done.Name, done.UID, done.Status.Phase = "done", "uid-done", corev1.PodSucceeded
	for _, p := range []*corev1.Pod{plain, deleting, done} {
		_ = s.client.Tracker().Add(p)
	}
	s.bound = map[string][]*corev1.Pod{"vk-0": {plain, deleting, done}}
	s.keeper.Step(t.Context())
	s.keeper.Step(t.Context())
	if diff := cmp.Diff([]string{"create plain@vk-0", "status of 1"}, s.plugin.took()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	stored, err := s.client.CoreV1().Pods("hpc").Get(t.Context(), "plain", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r, ok := RecordOf(stored); !ok || r.Node != "vk-0" {
		t.Errorf("the record on the pod: %+v, %v; want its node, vk-0", r, ok)
	}
	s.bound["vk-0"] = []*corev1.Pod{stored} // as the informer has it once the record reached it
	s.keeper = New(s.keeper.cfg)
	s.keeper.Step(t.Context())
	if calls := s.plugin.took(); slices.ContainsFunc(calls, func(c string) bool { return strings.HasPrefix(c, "create") }) {
		t.Errorf("a keeper that restarted made the job again: %v", calls)
	}
	if s.plugin.made["uid-plain"] != 1 || len(s.plugin.made) != 1 {
		t.Errorf("jobs made %v, want one, of plain", s.plugin.made)
	}
}

// TestPlainPodRefused: a bound pod whose creates the plugin answers with
// an error (sbatch's words) and that made no job, as the backend's next
// answers say, is created again, up to DefaultRefusals times; then it
// fails, as a kubelet fails a pod it cannot run: phase Failed, reason
// BackendRefused, the plugin's words in the message. No delete is sent,
// and nothing more once it failed.
func TestPlainPodRefused(t *testing.T) {
	s := newSetup(1)
	s.plugin.slurm, s.plugin.refuse = true, true
	plain := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "hpc", Name: "plain", UID: "uid-plain"},
		Spec:       corev1.PodSpec{NodeName: "vk-0", Containers: []corev1.Container{{Name: "job"}}},
	}
	_ = s.client.Tracker().Add(plain)
	s.bound = map[string][]*corev1.Pod{"vk-0": {plain}}
	for range 2*DefaultRefusals + 1 {
		s.now = s.now.Add(time.Minute)
		s.keeper.Step(t.Context())
	}
	var want []string
	for range DefaultRefusals {
		want = append(want, "create plain@vk-0", "status of 1")
	}
	if diff := cmp.Diff(want, s.plugin.took()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	stored, err := s.client.CoreV1().Pods("hpc").Get(t.Context(), "plain", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st := stored.Status; st.Phase != corev1.PodFailed || st.Reason != ReasonRefused || !strings.Contains(st.Message, "504") {
		t.Errorf("status %s %s %q; want Failed, %s, with the plugin's words", st.Phase, st.Reason, st.Message, ReasonRefused)
	}
	s.bound["vk-0"] = []*corev1.Pod{stored}
	s.took(t, time.Minute)
}

// TestBeingDeletedJobRemovedFirst: a bound pod being deleted has its job
// removed at the next step, and the removal recorded on it, so that its
// delete completes only once its job has ended (Stopped); a record the
// API server refuses is written again at a later step, with no second
// delete.
func TestBeingDeletedJobRemovedFirst(t *testing.T) {
	s := newSetup(1)
	s.plugin.state = "running"
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "hpc", Name: "plain", UID: "uid-plain"},
		Spec:       corev1.PodSpec{NodeName: "vk-0", Containers: []corev1.Container{{Name: "job"}}},
	}
	_ = s.client.Tracker().Add(pod)
	s.bound = map[string][]*corev1.Pod{"vk-0": {pod}}
	s.keeper.Step(t.Context())
	stored := func() *corev1.Pod {
		t.Helper()
		p, err := s.client.CoreV1().Pods("hpc").Get(t.Context(), "plain", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	deleting := stored()
	deleting.DeletionTimestamp = &metav1.Time{Time: s.now}
	if Stopped(deleting) {
		t.Fatal("Stopped: true for a pod whose job runs")
	}
	s.bound["vk-0"] = []*corev1.Pod{deleting}
	refused := true
	s.client.PrependReactor("patch", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if refused && a.GetSubresource() == "" {
			refused = false
			return true, nil, errors.New("the API server refuses")
		}
		return false, nil, nil
	})
	s.now = s.now.Add(time.Minute)
	s.keeper.Step(t.Context())
	if Stopped(stored()) {
		t.Fatal("Stopped: true, though the record of the removal was refused")
	}
	s.keeper.Step(t.Context())
	if diff := cmp.Diff([]string{"create plain@vk-0", "status of 1", "delete plain"}, s.plugin.took()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if !Stopped(stored()) || len(s.plugin.jobs) != 0 {
		t.Errorf("after the removal: Stopped %v, %d jobs on the backend; want true and none", Stopped(stored()), len(s.plugin.jobs))
	}
	if Stopped(&corev1.Pod{}) != true {
		t.Error("Stopped: false for a pod without a record, which has no job")
	}
}

// plainKeeper is s's keeper without the backend's confirmation: no
// claims, no pods that wait, as the provider runs without -confirm.
func (s *setup) plainKeeper() {
	cfg := s.keeper.cfg
	cfg.Claims, cfg.Waiting = nil, nil
	s.keeper = New(cfg)
}

// TestWithoutConfirmPodRuns: without the backend's confirmation, a pod
// bound to a node gets its job when it binds, and the pod is annotated
// JobID with the job's ID, as interLink's Virtual Kubelet annotates it.
func TestWithoutConfirmPodRuns(t *testing.T) {
	s := newSetup(1)
	s.plainKeeper()
	s.plugin.state = "running"
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "hpc", Name: "plain", UID: "uid-plain"},
		Spec:       corev1.PodSpec{NodeName: "vk-0", Containers: []corev1.Container{{Name: "job"}}},
	}
	_ = s.client.Tracker().Add(pod)
	s.bound = map[string][]*corev1.Pod{"vk-0": {pod}}
	s.took(t, 0, "create plain@vk-0")
	stored, err := s.client.CoreV1().Pods("hpc").Get(t.Context(), "plain", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if id := stored.Annotations[JobIDAnnotation]; id != "1" {
		t.Errorf("annotation %s %q, want the plugin's job ID, 1", JobIDAnnotation, id)
	}
	s.bound["vk-0"] = []*corev1.Pod{stored}
	s.took(t, time.Minute, "status of 1")
	stored, _ = s.client.CoreV1().Pods("hpc").Get(t.Context(), "plain", metav1.GetOptions{})
	if stored.Status.Phase != corev1.PodRunning {
		t.Errorf("phase %s, want Running, as its job", stored.Status.Phase)
	}
}

// TestAdoptsJobID: a pod bound to a node with a JobID annotation and no
// record, whose job another provider made (interLink's Virtual Kubelet),
// is adopted: no create, its status followed, a record written; once the
// pod is deleted its job gets one delete, and only then is it Stopped.
func TestAdoptsJobID(t *testing.T) {
	s := newSetup(1)
	s.plainKeeper()
	s.plugin.state = "running"
	s.plugin.jobs["uid-theirs"] = "vk-0" // the job the other provider made
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "hpc", Name: "theirs", UID: "uid-theirs", Annotations: map[string]string{JobIDAnnotation: "4711"}},
		Spec:       corev1.PodSpec{NodeName: "vk-0", Containers: []corev1.Container{{Name: "job"}}},
	}
	if Stopped(pod) {
		t.Error("Stopped: true for a pod whose job another provider made")
	}
	_ = s.client.Tracker().Add(pod)
	s.bound = map[string][]*corev1.Pod{"vk-0": {pod}}
	s.took(t, 0, "status of 1")
	stored, err := s.client.CoreV1().Pods("hpc").Get(t.Context(), "theirs", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r, ok := RecordOf(stored); !ok || r.Node != "vk-0" || stored.Status.Phase != corev1.PodRunning {
		t.Errorf("record %+v %v, phase %s; want the record of its node, vk-0, and Running", r, ok, stored.Status.Phase)
	}
	stored.DeletionTimestamp = &metav1.Time{Time: s.now}
	s.bound["vk-0"] = []*corev1.Pod{stored}
	s.took(t, time.Minute, "status of 1", "delete theirs")
	stored, _ = s.client.CoreV1().Pods("hpc").Get(t.Context(), "theirs", metav1.GetOptions{})
	if !Stopped(stored) || len(s.plugin.jobs) != 0 {
		t.Errorf("after the delete: Stopped %v, jobs %v; want true, none", Stopped(stored), s.plugin.jobs)
	}
}

// unservedErr is a pod call the plugin serves not (a 404), as
// pingclient.CallError says it.
type unservedErr string

func (e unservedErr) Error() string  { return string(e) }
func (e unservedErr) Unserved() bool { return true }

// TestNoPodAPI: a plugin of the ping alone answers a create 404: the
// keeper makes no job for the rest of its run, sends no other call, and
// the record of the create that made nothing says removed, so that the
// pod's delete completes at once ([Stopped]).
func TestNoPodAPI(t *testing.T) {
	s := newSetup(1)
	s.plainKeeper()
	s.keeper.cfg.Plugin = noPods{s.plugin}
	var bound []*corev1.Pod
	for _, name := range []string{"a", "b"} {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "hpc", Name: name, UID: types.UID("uid-" + name)},
			Spec:       corev1.PodSpec{NodeName: "vk-0", Containers: []corev1.Container{{Name: "job"}}},
		}
		_ = s.client.Tracker().Add(p)
		bound = append(bound, p)
	}
	s.bound = map[string][]*corev1.Pod{"vk-0": bound}
	s.took(t, 0, "create a@vk-0")
	s.took(t, time.Minute)
	stored, err := s.client.CoreV1().Pods("hpc").Get(t.Context(), "a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !Stopped(stored) {
		t.Errorf("Stopped: false for a pod whose create the plugin serves not; record %q", stored.Annotations[RecordAnnotation])
	}
}

// noPods is p, whose creates are answered 404.
type noPods struct{ *plugin }

func (p noPods) Create(_ context.Context, r podapi.CreateRequest) (podapi.Created, bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls = append(p.calls, "create "+r.Pod.Name+"@"+r.Pod.Spec.NodeName)
	return podapi.Created{}, false, unservedErr("POST /create: HTTP 404 Not Found")
}

// forgetting is p, but the job of the pod a is one Slurm forgot without
// its status file: every status request that names it fails whole (500),
// and its delete fails (scancel knows it not), as interLink's Slurm plugin
// answers both.
type forgetting struct{ *plugin }

func (p forgetting) Status(ctx context.Context, pods []*corev1.Pod) ([]podapi.PodStatus, error) {
	for _, pod := range pods {
		if pod.Name == "a" {
			p.mu.Lock()
			p.calls = append(p.calls, fmt.Sprintf("status of %d", len(pods)))
			p.mu.Unlock()
			return nil, reachedErr{"GET /status: HTTP 500: unable to retrieve container status: open run-job.status: no such file or directory", true}
		}
	}
	return p.plugin.Status(ctx, pods)
}

func (p forgetting) Delete(ctx context.Context, pod *corev1.Pod) error {
	if pod.Name == "a" {
		p.mu.Lock()
		p.calls = append(p.calls, "delete a")
		p.mu.Unlock()
		return reachedErr{"POST /delete: HTTP 500: exit status 1", true}
	}
	return p.plugin.Delete(ctx, pod)
}

// TestForgottenJobDeleteEnds: a pod being deleted whose job the plugin
// can neither answer about nor delete (a job Slurm forgot) ends: once its
// question has failed alone for LostAfter, its job is recorded removed,
// and the pod is Stopped; its deletes are sent with a back-off, not at
// every step. The pod b beside it is answered all along.
func TestForgottenJobDeleteEnds(t *testing.T) {
	s := newSetup(1)
	s.plainKeeper()
	s.plugin.slurm, s.plugin.state = true, "running"
	s.keeper.cfg.Plugin = forgetting{s.plugin}
	s.keeper = New(s.keeper.cfg)
	var bound []*corev1.Pod
	for _, name := range []string{"a", "b"} {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "hpc", Name: name, UID: types.UID("uid-" + name),
				Annotations: map[string]string{RecordAnnotation: `{"node":"vk-0","made":"2026-12-03T08:00:00Z"}`}},
			Spec: corev1.PodSpec{NodeName: "vk-0", Containers: []corev1.Container{{Name: "job"}}},
		}
		if name == "a" {
			p.DeletionTimestamp = &metav1.Time{Time: s.now}
		}
		_ = s.client.Tracker().Add(p)
		bound = append(bound, p)
		s.plugin.jobs[p.UID] = "vk-0"
	}
	s.bound = map[string][]*corev1.Pod{"vk-0": bound}
	deletes := 0
	for range 40 { // 4 minutes, a step every 6 s
		s.now = s.now.Add(6 * time.Second)
		s.keeper.Step(t.Context())
		for _, c := range s.plugin.took() {
			if c == "delete a" {
				deletes++
			}
		}
	}
	stored, err := s.client.CoreV1().Pods("hpc").Get(t.Context(), "a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !Stopped(stored) {
		t.Errorf("a is not Stopped after 4 minutes; record %s", stored.Annotations[RecordAnnotation])
	}
	if deletes == 0 || deletes > 10 {
		t.Errorf("%d deletes of a over 40 steps, want some, with a back-off", deletes)
	}
	b, _ := s.client.CoreV1().Pods("hpc").Get(t.Context(), "b", metav1.GetOptions{})
	if b.Status.Phase != corev1.PodRunning {
		t.Errorf("b is %s, want Running: its answers never waited for a's", b.Status.Phase)
	}
}
