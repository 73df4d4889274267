package jobs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	corev1listers "k8s.io/client-go/listers/core/v1"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/pingnode/pingnode/examples/internal/podapi"
	"github.com/pingnode/pingnode/nodeapply/dra/confirm"
)

// plugin is a backend that answers each status with the jobs it has,
// in the state state gives, and records its calls. With slurm it
// answers as interLink's Slurm plugin does: every pod asked about, one
// status a container of the pod sent, a pod without a job with empty
// states; with cached set, every status with the answer before.
type plugin struct {
	mu      sync.Mutex
	state   string               // of every job: "queued", "running" or "refused"
	jobs    map[types.UID]string // pod to node
	slurm   bool
	cached  bool
	last    []podapi.PodStatus
	lost    bool // the next create makes the job, and its answer is lost
	refuse  bool // a create is answered with an error (sbatch's), and makes no job
	failDel bool // a delete is answered with an error (scancel's), and removes no job
	list    bool // a create is answered with a list, as older plugins did
	made    map[types.UID]int
	unknown int                    // deletes of a pod without a job
	asked   chan struct{}          // when not nil, told of each status
	calls   []string               // status, create pod@node, delete pod
	created []podapi.CreateRequest // what it was asked to create
}

func newPlugin() *plugin { return &plugin{jobs: map[types.UID]string{}, made: map[types.UID]int{}} }

func (p *plugin) Create(_ context.Context, r podapi.CreateRequest) (podapi.Created, bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls = append(p.calls, "create "+r.Pod.Name+"@"+r.Pod.Spec.NodeName)
	if p.refuse {
		return podapi.Created{}, false, answeredErr("POST /create: HTTP 504 Gateway Timeout")
	}
	p.jobs[r.Pod.UID] = r.Pod.Spec.NodeName
	p.made[r.Pod.UID]++
	p.created = append(p.created, r)
	if p.lost {
		p.lost = false
		return podapi.Created{}, false, errors.New("POST /create: timeout after 10s")
	}
	return podapi.Created{PodUID: string(r.Pod.UID), PodJID: fmt.Sprint(len(p.created))}, p.list, nil
}

func (p *plugin) Status(_ context.Context, pods []*corev1.Pod) ([]podapi.PodStatus, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls = append(p.calls, fmt.Sprintf("status of %d", len(pods)))
	if p.asked != nil {
		select {
		case p.asked <- struct{}{}:
		default:
		}
	}
	if p.cached && p.last != nil {
		return p.last, nil
	}
	var out []podapi.PodStatus
	for _, pod := range pods {
		var state corev1.ContainerState
		if _, ok := p.jobs[pod.UID]; ok {
			switch p.state {
			case "queued":
				state.Waiting = &corev1.ContainerStateWaiting{}
			case "running":
				state.Running = &corev1.ContainerStateRunning{StartedAt: metav1.Now()}
			case "refused":
				state.Terminated = &corev1.ContainerStateTerminated{ExitCode: 15}
			}
		} else if !p.slurm {
			continue
		}
		s := podapi.PodStatus{Name: pod.Name, UID: string(pod.UID), Namespace: pod.Namespace}
		for _, c := range pod.Spec.Containers {
			s.Containers = append(s.Containers, corev1.ContainerStatus{Name: c.Name, State: state})
		}
		out = append(out, s)
	}
	p.last = out
	return out, nil
}

func (p *plugin) Delete(_ context.Context, pod *corev1.Pod) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls = append(p.calls, "delete "+pod.Name)
	if _, ok := p.jobs[pod.UID]; !ok {
		p.unknown++ // interLink's Slurm plugin panics: no answer
		return errors.New("POST /delete: EOF")
	}
	if p.failDel {
		return answeredErr("POST /delete: HTTP 500 Internal Server Error")
	}
	delete(p.jobs, pod.UID)
	return nil
}

// answeredErr is the failure of a call the plugin answered, as
// pingclient.CallError says it.
type answeredErr string

func (e answeredErr) Error() string  { return string(e) }
func (e answeredErr) Answered() bool { return true }

func (p *plugin) took() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	calls := p.calls
	p.calls = nil
	return calls
}

// setup is a keeper of nodes vk-0 to vk-(n-1), its waiting pods and its
// claims, on a fake clientset whose claim status patches are recorded.
type setup struct {
	bound   map[string][]*corev1.Pod // the pods bound to each node
	now     time.Time
	log     bytes.Buffer
	keeper  *Keeper
	plugin  *plugin
	client  *fake.Clientset
	waiting cache.Indexer
	claims  map[string][]*resourcev1.ResourceClaim // by pool
	patches []string                               // claim: condition type
}

func newSetup(n int) *setup {
	s := &setup{
		now:     time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC),
		plugin:  newPlugin(),
		client:  fake.NewSimpleClientset(),
		waiting: cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}),
		claims:  map[string][]*resourcev1.ResourceClaim{},
	}
	s.client.PrependReactor("patch", "resourceclaims", func(a k8stesting.Action) (bool, runtime.Object, error) {
		p := a.(k8stesting.PatchAction)
		kind := "refused"
		if strings.Contains(string(p.GetPatch()), confirm.ConditionRuns) {
			kind = "runs"
		}
		s.patches = append(s.patches, p.GetName()+": "+kind)
		return true, &resourcev1.ResourceClaim{}, nil
	})
	nodes := make([]*corev1.Node, n)
	for i := range nodes {
		nodes[i] = &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("vk-%d", i), UID: types.UID(fmt.Sprintf("node-%d", i))}}
	}
	s.keeper = New(Config{
		Client: s.client, Plugin: s.plugin,
		Claims:  func(_, pool string) []*resourcev1.ResourceClaim { return s.claims[pool] },
		Waiting: corev1listers.NewPodLister(s.waiting),
		Bound:   func(node string) []*corev1.Pod { return s.bound[node] },
		Nodes:   func() []*corev1.Node { return nodes },
		Driver:  confirm.DefaultDriver, Resource: confirm.DefaultResource, FieldManager: "test",
		Now: func() time.Time { return s.now },
		Log: slog.New(slog.NewTextHandler(&s.log, nil)),
	})
	return s
}

// move gives the claim of pod a share of node's device instead, allocated
// now: the scheduler's next try after a refusal.
func (s *setup) move(pod, node string) {
	for pool, claims := range s.claims {
		for i, c := range claims {
			if c.Name != pod+"-claim" {
				continue
			}
			c = c.DeepCopy()
			s.claims[pool] = append(claims[:i:i], claims[i+1:]...)
			r := &c.Status.Allocation.Devices.Results[0]
			r.Pool, r.ShareID = node, ptr.To(types.UID("share-"+pod+"-"+node))
			c.Status.Allocation.NodeSelector.NodeSelectorTerms[0].MatchFields[0].Values = []string{node}
			c.Status.Allocation.AllocationTimestamp = ptr.To(metav1.NewTime(s.now))
			s.claims[node] = append(s.claims[node], c)
			return
		}
	}
}

// wait adds a pod that asks, and its claim given a share of vk-0's
// device at PreBind.
func (s *setup) wait(name string) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "hpc", Name: name, UID: types.UID("uid-" + name)},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "job", Resources: corev1.ResourceRequirements{
			Limits: corev1.ResourceList{confirm.DefaultResource: *resourceOne()},
		}}}},
	}
	_ = s.waiting.Add(pod)
	_ = s.client.Tracker().Add(pod)
	s.claims["vk-0"] = append(s.claims["vk-0"], &resourcev1.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: "hpc", Name: name + "-claim", UID: types.UID("claim-" + name)},
		Status: resourcev1.ResourceClaimStatus{
			Allocation: &resourcev1.AllocationResult{
				Devices: resourcev1.DeviceAllocationResult{Results: []resourcev1.DeviceRequestAllocationResult{{
					Driver: confirm.DefaultDriver, Pool: "vk-0", Device: confirm.DeviceName, ShareID: ptr.To(types.UID("share-" + name)),
					BindingConditions: []string{confirm.ConditionRuns}, BindingFailureConditions: []string{confirm.ConditionRefused},
				}}},
				NodeSelector: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{
					{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"vk-0"}},
				}}}},
				AllocationTimestamp: ptr.To(metav1.NewTime(time.Date(2026, 12, 3, 8, 59, 50, 0, time.UTC))),
			},
			ReservedFor: []resourcev1.ResourceClaimConsumerReference{{Resource: "pods", Name: name, UID: pod.UID}},
		},
	})
}

// TestNothingPendingAsksNothing: with no pod that waits, a step asks the
// plugin nothing; the nodes' devices are published at the first step
// (one list of the slices, then a create a node), and not again.
func TestNothingPendingAsksNothing(t *testing.T) {
	s := newSetup(3)
	s.keeper.Step(t.Context())
	s.keeper.Step(t.Context())
	if calls := s.plugin.took(); len(calls) != 0 {
		t.Errorf("calls to the plugin %v, want none", calls)
	}
	var verbs []string
	for _, a := range s.client.Actions() {
		verbs = append(verbs, a.GetVerb()+" "+a.GetResource().Resource)
	}
	want := []string{"list resourceslices", "create resourceslices", "create resourceslices", "create resourceslices"}
	if diff := cmp.Diff(want, verbs); diff != "" {
		t.Errorf("API requests (-want +got):\n%s", diff)
	}
}

// TestJobMadeThenConfirmed: a pod that waits has its job made on its
// allocation's node, with spec.nodeName set to it; while the job queues
// nothing is written; once it runs, its claim is confirmed, once.
func TestJobMadeThenConfirmed(t *testing.T) {
	s := newSetup(1)
	s.wait("a")
	s.plugin.state = "queued"
	s.keeper.Step(t.Context())
	if diff := cmp.Diff([]string{"status of 1", "create a@vk-0"}, s.plugin.took()); diff != "" {
		t.Errorf("first step's calls (-want +got):\n%s", diff)
	}
	s.keeper.Step(t.Context())
	if diff := cmp.Diff([]string{"status of 1"}, s.plugin.took()); diff != "" {
		t.Errorf("second step's calls (-want +got):\n%s", diff)
	}
	if len(s.patches) != 0 {
		t.Errorf("claims written while the job queues: %v", s.patches)
	}
	s.plugin.state = "running"
	s.keeper.Step(t.Context())
	if diff := cmp.Diff([]string{"a-claim: runs"}, s.patches); diff != "" {
		t.Errorf("claims written (-want +got):\n%s", diff)
	}
	if c := s.keeper.Counts(); c.Confirmed != 1 || c.Started != 1 || c.Failures != 0 {
		t.Errorf("counts %+v", c)
	}
}

// TestRefusedPodRunsElsewhere: a pod refused on one node runs on the
// next, against a backend that answers as interLink's Slurm plugin does,
// from a cache older than each change: its refused job is removed once,
// read as gone though the cache still says refused, so the pod's job is
// made on its new node at once, and that new job is not taken for the
// refused one while the cache is older than it. One job a node, no
// delete of a pod the backend does not know.
func TestRefusedPodRunsElsewhere(t *testing.T) {
	s := newSetup(2)
	s.plugin.slurm, s.plugin.state = true, "queued"
	s.wait("a")
	s.keeper.Step(t.Context())
	if diff := cmp.Diff([]string{"status of 1", "create a@vk-0"}, s.plugin.took()); diff != "" {
		t.Errorf("first step's calls (-want +got):\n%s", diff)
	}
	s.plugin.state = "refused"
	s.now = s.now.Add(DefaultStatusAge) // an answer newer than the job
	s.keeper.Step(t.Context())
	if diff := cmp.Diff([]string{"status of 1", "delete a"}, s.plugin.took()); diff != "" {
		t.Errorf("the refusal's calls (-want +got):\n%s", diff)
	}
	s.move("a", "vk-1")
	s.plugin.cached, s.plugin.state = true, "queued" // the cache still says refused
	s.keeper.Step(t.Context())
	if diff := cmp.Diff([]string{"create a@vk-1"}, s.plugin.took()); diff != "" { // a pod whose job it removed has none to ask about
		t.Errorf("the step after the refusal (-want +got):\n%s", diff)
	}
	s.now = s.now.Add(5 * time.Second) // the cache is older than the new job
	s.keeper.Step(t.Context())
	if diff := cmp.Diff([]string{"status of 1"}, s.plugin.took()); diff != "" {
		t.Errorf("a step with the answer from before the new job (-want +got):\n%s", diff)
	}
	s.plugin.cached, s.plugin.state = false, "running"
	s.now = s.now.Add(6 * time.Second)
	s.keeper.Step(t.Context())
	if diff := cmp.Diff([]string{"a-claim: refused", "a-claim: runs"}, s.patches); diff != "" {
		t.Errorf("claims written (-want +got):\n%s", diff)
	}
	if s.plugin.made["uid-a"] != 2 || s.plugin.unknown != 0 {
		t.Errorf("%d jobs made of a (want 2: one a node), %d deletes of a pod the backend did not know (want 0)", s.plugin.made["uid-a"], s.plugin.unknown)
	}
	if c := s.keeper.Counts(); c.Removed != 1 || c.Started != 2 || c.Refused != 1 || c.Confirmed != 1 {
		t.Errorf("counts %+v", c)
	}
}

// TestLostCreateNotResent: a create whose answer is lost made its job;
// the next steps ask the backend first, and while its answers may be
// older than the create (a cache that says it has no job) the job is
// taken as made; once they are newer, the job is there, and is adopted:
// one job.
func TestLostCreateNotResent(t *testing.T) {
	s := newSetup(1)
	s.plugin.slurm, s.plugin.state, s.plugin.lost = true, "queued", true
	s.wait("a")
	s.keeper.Step(t.Context()) // answers that a has no job, then makes it and loses the answer
	s.plugin.cached = true
	for range 3 {
		s.now = s.now.Add(3 * time.Second)
		s.keeper.Step(t.Context())
	}
	s.plugin.cached = false
	s.now = s.now.Add(3 * time.Second)
	s.keeper.Step(t.Context())
	want := []string{"status of 1", "create a@vk-0", "status of 1", "status of 1", "status of 1", "status of 1"}
	if diff := cmp.Diff(want, s.plugin.took()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if s.plugin.made["uid-a"] != 1 || len(s.plugin.jobs) != 1 {
		t.Errorf("%d jobs made of a, %d on the backend; want 1 and 1", s.plugin.made["uid-a"], len(s.plugin.jobs))
	}
}

// TestListAnswerSaidOnce: a plugin that answers creates with a list, as
// older plugins did, is read, and said so once.
func TestListAnswerSaidOnce(t *testing.T) {
	s := newSetup(1)
	s.plugin.list, s.plugin.state = true, "queued"
	s.wait("a")
	s.wait("b")
	s.keeper.Step(t.Context())
	s.keeper.Step(t.Context())
	if c := s.keeper.Counts(); c.Started != 2 || c.Failures != 0 {
		t.Errorf("counts %+v, want 2 jobs started, no failure", c)
	}
	if n := strings.Count(s.log.String(), "answers a create with a list"); n != 1 {
		t.Errorf("said %d times that the plugin answers a list, want once:\n%s", n, s.log.String())
	}
}

// TestDeletedPodsJobRemovedOnce: the job of a waiting pod that is
// deleted is removed once, and not again while the plugin's cache still
// lists it.
func TestDeletedPodsJobRemovedOnce(t *testing.T) {
	s := newSetup(1)
	s.plugin.slurm, s.plugin.state = true, "queued"
	s.wait("a")
	s.keeper.Step(t.Context())
	_ = s.waiting.Delete(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "hpc", Name: "a"}})
	s.claims["vk-0"] = nil
	s.plugin.cached = true
	for range 3 {
		s.now = s.now.Add(20 * time.Second)
		s.keeper.Step(t.Context())
	}
	want := []string{"status of 1", "create a@vk-0", "delete a"}
	if diff := cmp.Diff(want, s.plugin.took()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if len(s.plugin.jobs) != 0 || s.plugin.unknown != 0 {
		t.Errorf("%d jobs left on the backend, %d deletes of a pod it did not know; want none", len(s.plugin.jobs), s.plugin.unknown)
	}
}

// TestPartJobPinned: the job of a part's node is pinned to its part in
// the plugin's words, appended to the flags the pod carries; the job of
// a node of its own is not; the pod itself keeps its flags.
func TestPartJobPinned(t *testing.T) {
	s := newSetup(2)
	s.keeper.cfg.PinAnnotation, s.keeper.cfg.PinFlag = podapi.SlurmFlags, "--nodelist="
	s.keeper.cfg.Part = func(node string) string {
		if node == "vk-1" {
			return "cn001"
		}
		return "" // vk-0: a node of its own
	}
	s.plugin.state = "queued"
	s.wait("a")
	s.wait("b")
	s.move("b", "vk-1")
	for _, name := range []string{"a", "b"} {
		pod, _, _ := s.waiting.GetByKey("hpc/" + name)
		pod.(*corev1.Pod).Annotations = map[string]string{podapi.SlurmFlags: "--time=10"}
	}
	s.keeper.Step(t.Context())
	got := map[string]string{}
	for _, r := range s.plugin.created {
		got[r.Pod.Name] = r.Pod.Annotations[podapi.SlurmFlags]
	}
	want := map[string]string{"a": "--time=10", "b": "--time=10 --nodelist=cn001"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the flags of the pods sent (-want +got):\n%s", diff)
	}
	if pod, _, _ := s.waiting.GetByKey("hpc/b"); pod.(*corev1.Pod).Annotations[podapi.SlurmFlags] != "--time=10" {
		t.Errorf("the pod's own flags changed: %v", pod.(*corev1.Pod).Annotations)
	}
}

// TestPaceWhileWaiting: while a pod waits for its job to start, Run
// takes steps of its own, one every Pace, between the pings' kicks; a
// step says whether a pod waits, and once the pod is confirmed none does.
func TestPaceWhileWaiting(t *testing.T) {
	s := newSetup(1)
	s.keeper.cfg.Pace = time.Millisecond
	s.plugin.state, s.plugin.asked = "queued", make(chan struct{}, 1)
	s.wait("a")
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.keeper.Run(ctx)
	}()
	s.keeper.Kick() // one kick, as one ping
	for i := range 3 {
		select {
		case <-s.plugin.asked:
		case <-time.After(10 * time.Second):
			t.Fatalf("%d steps after one kick, want 3 while the pod waits", i)
		}
	}
	cancel()
	<-done
	if !s.keeper.Step(t.Context()) {
		t.Error("a step while the job queues says no pod waits")
	}
	s.plugin.mu.Lock()
	s.plugin.state = "running"
	s.plugin.mu.Unlock()
	if s.keeper.Step(t.Context()) {
		t.Error("the step that confirms the pod says a pod still waits")
	}
}

// TestRefusedCreate: a create the plugin answers with an error (504,
// sbatch's words) may have made a job or not; the backend's answers newer
// than the create say. It made none here: the pod's allocation is refused
// once an answer at least StatusAge newer than the create has no job of
// it, not before, so that it goes elsewhere; the refusal is counted on the
// pod's record with the plugin's words, and no delete is ever sent for
// it, nor once the pod is deleted.
func TestRefusedCreate(t *testing.T) {
	s := newSetup(1)
	s.plugin.slurm, s.plugin.state, s.plugin.refuse = true, "queued", true
	s.wait("a")
	s.keeper.Step(t.Context())
	s.now = s.now.Add(time.Second)
	s.keeper.Step(t.Context())
	if len(s.patches) != 0 {
		t.Errorf("claims written %v a second after the create, want none: the answer may be older than it", s.patches)
	}
	s.now = s.now.Add(DefaultStatusAge)
	s.keeper.Step(t.Context())
	if diff := cmp.Diff([]string{"a-claim: refused"}, s.patches); diff != "" {
		t.Errorf("claims written (-want +got):\n%s", diff)
	}
	want := []string{"status of 1", "create a@vk-0", "status of 1", "status of 1"}
	if diff := cmp.Diff(want, s.plugin.took()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	stored, err := s.client.CoreV1().Pods("hpc").Get(t.Context(), "a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := RecordOf(stored); r.Refusals != 1 || !strings.Contains(r.Refusal, "504") || !r.Removed {
		t.Errorf("the record %+v; want removed, one refusal, in the plugin's words", r)
	}
	_ = s.waiting.Delete(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "hpc", Name: "a"}})
	s.claims["vk-0"] = nil
	s.now = s.now.Add(time.Minute)
	s.keeper.Step(t.Context())
	for _, c := range s.plugin.took() {
		if strings.HasPrefix(c, "delete") {
			t.Errorf("%s, for a job the plugin never made", c)
		}
	}
	if s.plugin.unknown != 0 {
		t.Errorf("%d deletes of a pod the backend did not know, want none", s.plugin.unknown)
	}
}

// TestFailedDeleteEnds: a delete the plugin answers with an error
// (interLink's Slurm plugin answers 500 when scancel fails, and keeps the
// job) is judged by the backend's next answers, newer than the delete:
// while they show the job, the delete is sent again after a back-off, not
// at every step; once they show it gone (it ended), it is removed with no
// other delete.
func TestFailedDeleteEnds(t *testing.T) {
	s := newSetup(1)
	s.plugin.slurm, s.plugin.state, s.plugin.failDel = true, "queued", true
	s.wait("a")
	s.keeper.Step(t.Context())
	_ = s.waiting.Delete(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "hpc", Name: "a"}})
	s.claims["vk-0"] = nil
	s.took(t, time.Minute, "status of 1", "create a@vk-0", "delete a")
	s.took(t, time.Second, "status of 1") // within its back-off, and the answer may be older than the delete
	s.took(t, time.Minute, "status of 1", "delete a")
	s.plugin.mu.Lock()
	delete(s.plugin.jobs, "uid-a") // the job ended
	s.plugin.mu.Unlock()
	s.took(t, time.Minute, "status of 1")
	s.took(t, time.Minute)
	if c := s.keeper.Counts(); c.Removed != 1 {
		t.Errorf("%d removals, want 1", c.Removed)
	}
}

// took moves the clock by d, takes a step, and checks the plugin's calls
// since the last check.
func (s *setup) took(t *testing.T, d time.Duration, want ...string) {
	t.Helper()
	s.now = s.now.Add(d)
	s.keeper.Step(t.Context())
	if diff := cmp.Diff(want, s.plugin.took()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
}

// restart is a keeper that starts again: a new one, with the pods' cache
// as the informer has it once the pods' writes have reached it.
func (s *setup) restart(t *testing.T) {
	t.Helper()
	pods, err := s.client.CoreV1().Pods("").List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range pods.Items {
		if err := s.waiting.Update(&pods.Items[i]); err != nil {
			t.Fatal(err)
		}
	}
	s.keeper = New(s.keeper.cfg)
}

// TestRestartAdoptsJob: a keeper that restarts reads the record of the
// job it made on the pod, and adopts the job the backend has, queued,
// where it would remove it and make it again: one job, which keeps its
// place in the backend's queue, and the pod confirmed once it runs.
func TestRestartAdoptsJob(t *testing.T) {
	s := newSetup(1)
	s.plugin.slurm, s.plugin.state = true, "queued"
	s.wait("a")
	s.keeper.Step(t.Context())
	s.restart(t)
	s.now = s.now.Add(DefaultStatusAge)
	s.keeper.Step(t.Context())
	s.plugin.state = "running"
	s.keeper.Step(t.Context())
	want := []string{"status of 1", "create a@vk-0", "status of 1", "status of 1"}
	if diff := cmp.Diff(want, s.plugin.took()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"a-claim: runs"}, s.patches); diff != "" {
		t.Errorf("claims written (-want +got):\n%s", diff)
	}
	if s.plugin.made["uid-a"] != 1 {
		t.Errorf("%d jobs made of a, want 1", s.plugin.made["uid-a"])
	}
}

// TestRestartRemovesOnce: a keeper that restarts after it removed a job
// reads on the pod that it did, and neither removes it again, while the
// plugin's cache still lists it, nor waits for it: the pod, allocated
// again, gets its next job at once.
func TestRestartRemovesOnce(t *testing.T) {
	s := newSetup(2)
	s.plugin.slurm, s.plugin.state = true, "queued"
	s.wait("a")
	s.keeper.Step(t.Context())
	s.plugin.state = "refused"
	s.now = s.now.Add(DefaultStatusAge)
	s.keeper.Step(t.Context()) // refused, and its job removed
	s.plugin.cached = true     // the cache still says refused
	s.move("a", "vk-1")
	s.restart(t)
	s.keeper.Step(t.Context())
	want := []string{"status of 1", "create a@vk-0", "status of 1", "delete a", "create a@vk-1"}
	if diff := cmp.Diff(want, s.plugin.took()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if s.plugin.unknown != 0 {
		t.Errorf("%d deletes of a pod the backend did not know, want none", s.plugin.unknown)
	}
}

// BenchmarkNothingPending is a keeper's step at 5,000 parts' nodes with
// no pod waiting, after the first (which publishes the devices): what
// -confirm adds to each ping of a provider of 5,000 parts.
func BenchmarkNothingPending(b *testing.B) {
	s := newSetup(5000)
	s.keeper.Step(b.Context())
	b.ReportAllocs()
	for b.Loop() {
		s.keeper.Step(b.Context())
	}
}

func resourceOne() *resource.Quantity { return resource.NewQuantity(1, resource.DecimalSI) }

// BenchmarkWaiting500 is a keeper's step at 5,000 parts' nodes with 500
// pods waiting, one on every tenth node, their jobs made and queued: what
// a step costs while many pods wait, and the requests it sends to the
// plugin (one status of the 500 pods; nothing written). The first step,
// which makes the 500 jobs, is counted apart (first-step-requests: a
// create each; the records are the API server's).
func BenchmarkWaiting500(b *testing.B) {
	s := newSetup(5000)
	s.plugin.state = "queued"
	for i := range 500 {
		name := fmt.Sprintf("p%d", i)
		s.wait(name)
		s.move(name, fmt.Sprintf("vk-%d", i*10))
	}
	s.keeper.Step(b.Context())
	first := len(s.plugin.took())
	b.ReportAllocs()
	for b.Loop() {
		s.keeper.Step(b.Context())
	}
	b.ReportMetric(float64(len(s.plugin.took()))/float64(b.N), "requests/op")
	b.ReportMetric(float64(first), "first-step-requests")
}
