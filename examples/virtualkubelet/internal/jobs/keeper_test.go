package jobs

import (
	"context"
	"fmt"
	"io"
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
// in the state state gives, and records its calls.
type plugin struct {
	mu      sync.Mutex
	state   string                 // of every job: "queued" or "running"
	jobs    map[types.UID]string   // pod to node
	calls   []string               // status, create pod@node, delete pod
	created []podapi.CreateRequest // what it was asked to create
}

func (p *plugin) Create(_ context.Context, reqs []podapi.CreateRequest) ([]podapi.Created, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, r := range reqs {
		p.jobs[r.Pod.UID] = r.Pod.Spec.NodeName
		p.calls = append(p.calls, "create "+r.Pod.Name+"@"+r.Pod.Spec.NodeName)
		p.created = append(p.created, r)
	}
	return nil, nil
}

func (p *plugin) Status(_ context.Context, pods []*corev1.Pod) ([]podapi.PodStatus, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls = append(p.calls, fmt.Sprintf("status of %d", len(pods)))
	var out []podapi.PodStatus
	for _, pod := range pods {
		if _, ok := p.jobs[pod.UID]; ok {
			c := corev1.ContainerStatus{Name: "job", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "Queued"}}}
			if p.state == "running" {
				c.State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}
			}
			out = append(out, podapi.PodStatus{Name: pod.Name, UID: string(pod.UID), Namespace: pod.Namespace, Containers: []corev1.ContainerStatus{c}})
		}
	}
	return out, nil
}

func (p *plugin) Delete(_ context.Context, pod *corev1.Pod) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.jobs, pod.UID)
	p.calls = append(p.calls, "delete "+pod.Name)
	return nil
}

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
	keeper  *Keeper
	plugin  *plugin
	client  *fake.Clientset
	waiting cache.Indexer
	claims  map[string][]*resourcev1.ResourceClaim // by pool
	patches []string                               // claim: condition type
}

func newSetup(n int) *setup {
	s := &setup{
		plugin:  &plugin{jobs: map[types.UID]string{}},
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
		Bound:   func(string) []*corev1.Pod { return nil },
		Nodes:   func() []*corev1.Node { return nodes },
		Driver:  confirm.DefaultDriver, Resource: confirm.DefaultResource, FieldManager: "test",
		Now: func() time.Time { return time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC) },
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	return s
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
