package jobs

import (
	"context"
	"log/slog"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	corev1listers "k8s.io/client-go/listers/core/v1"

	"github.com/pingnode/pingnode/examples/internal/podapi"
	"github.com/pingnode/pingnode/nodeapply/dra/confirm"
)

// Plugin is the plugin's API for pods, as pingclient.Client calls it.
type Plugin interface {
	Create(ctx context.Context, reqs []podapi.CreateRequest) ([]podapi.Created, error)
	Status(ctx context.Context, pods []*corev1.Pod) ([]podapi.PodStatus, error)
	Delete(ctx context.Context, pod *corev1.Pod) error
}

// Config is what a [Keeper] reads and writes through.
type Config struct {
	// Client writes the claims' status and the nodes' slices.
	Client kubernetes.Interface
	Plugin Plugin
	// Claims returns the claims whose allocations take a device from a
	// pool of driver: shared objects, read-only.
	Claims func(driver, pool string) []*resourcev1.ResourceClaim
	// Waiting are the pods not bound to a node.
	Waiting corev1listers.PodLister
	// Bound returns the pods bound to a node of the provider's.
	Bound func(node string) []*corev1.Pod
	// Nodes returns the nodes the provider serves now.
	Nodes func() []*corev1.Node
	// Driver is the confirmation devices' DRA driver, and Resource the
	// extended resource a pod asks with.
	Driver, Resource string
	// FieldManager writes the claims' status.
	FieldManager string
	// Deadline is confirm.Options.Deadline.
	Deadline time.Duration
	// Now is the clock; nil is time.Now.
	Now func() time.Time
	Log *slog.Logger
}

// Keeper keeps the jobs of the pods that wait for the backend's
// confirmation on the nodes of one plugin.
type Keeper struct {
	cfg  Config
	kick chan struct{}

	// What follows is its loop's alone.
	placed    map[types.UID]job    // the jobs it knows the node of, by pod
	published map[string]types.UID // the nodes whose slice is published: name to UID
	said      map[string]string    // what was last logged of each thing, so each is said once
	seeded    bool                 // the jobs of the pods bound to its nodes are in placed
	mu        sync.Mutex           // guards count
	count     Count
}

// job is a job it started, or found on a node of its: its pod, and the
// node it is for.
type job struct {
	namespace, name, node string
}

// Count is what a keeper did, for tests and logs.
type Count struct {
	Steps, Asked, Confirmed, Refused, Started, Removed, Failures int
}

// New returns the keeper of cfg; Run runs it.
func New(cfg Config) *Keeper {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Keeper{
		cfg: cfg, kick: make(chan struct{}, 1),
		placed: map[types.UID]job{}, published: map[string]types.UID{}, said: map[string]string{},
	}
}

// Kick asks for a step, after the one under way if there is one; it
// never blocks.
func (k *Keeper) Kick() {
	select {
	case k.kick <- struct{}{}:
	default:
	}
}

// Run takes a step at each kick until ctx ends.
func (k *Keeper) Run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-k.kick:
			k.Step(ctx)
		}
	}
}

// Counts returns what it did so far.
func (k *Keeper) Counts() Count {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.count
}

func (k *Keeper) add(f func(*Count)) {
	k.mu.Lock()
	f(&k.count)
	k.mu.Unlock()
}

// Step takes one step (see the package documentation).
func (k *Keeper) Step(ctx context.Context) {
	k.add(func(c *Count) { c.Steps++ })
	nodes := k.cfg.Nodes()
	k.publish(ctx, nodes)
	k.seed(nodes)
	var allocations []confirm.Allocation
	for _, n := range nodes {
		allocations = append(allocations, confirm.Allocations(k.cfg.Claims(k.cfg.Driver, n.Name), k.cfg.Driver)...)
	}
	asked := k.asked(allocations)
	if len(asked) == 0 {
		return
	}
	pods := make([]*corev1.Pod, 0, len(asked))
	for _, p := range asked {
		pods = append(pods, p)
	}
	k.add(func(c *Count) { c.Asked += len(pods) })
	statuses, err := k.cfg.Plugin.Status(ctx, pods)
	if err != nil {
		k.failed("status", err)
		return // nothing is decided without the backend's word
	}
	k.said["status"] = ""
	k.forget(asked, statuses)
	jobs := make([]confirm.Job, 0, len(statuses))
	bound := map[types.UID]string{}
	for _, s := range statuses {
		uid := types.UID(s.UID)
		p := asked[uid]
		if p == nil {
			continue // not asked about
		}
		placed := k.placed[uid]
		jobs = append(jobs, confirm.Job{Pod: uid, Namespace: p.Namespace, Name: p.Name, Node: placed.node, State: confirm.StateOf(s.Containers)})
		if placed.node != "" && k.boundTo(uid, placed.node) {
			bound[uid] = placed.node
		}
	}
	res := confirm.Step(allocations, jobs, bound, k.cfg.Now(), confirm.Options{Deadline: k.cfg.Deadline})
	k.write(ctx, res.Decisions)
	k.remove(ctx, res.Remove)
	k.start(ctx, res.Start, asked)
}

// asked returns the pods to ask the backend about, by UID: the pods of
// allocations, those it knows a job of, and those that ask for
// confirmation and are not bound yet.
func (k *Keeper) asked(allocations []confirm.Allocation) map[types.UID]*corev1.Pod {
	asked := map[types.UID]*corev1.Pod{}
	waiting, _ := k.cfg.Waiting.List(labels.Everything()) // a cache lister never fails
	for _, p := range waiting {
		if Asks(p, k.cfg.Resource) {
			asked[p.UID] = p
		}
	}
	for _, a := range allocations {
		for _, p := range a.Pods {
			if asked[p.UID] == nil {
				asked[p.UID] = stub(p.UID, a.Claim.Namespace, p.Name)
			}
		}
	}
	for uid, j := range k.placed {
		if asked[uid] == nil {
			asked[uid] = stub(uid, j.namespace, j.name)
		}
	}
	return asked
}

// stub is what the backend reads of a pod it is asked about or told to
// delete: its UID, namespace and name.
func stub(uid types.UID, namespace, name string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: uid, Namespace: namespace, Name: name}}
}

// Asks reports whether pod asks for the backend's confirmation: a
// container requests or limits resource.
func Asks(pod *corev1.Pod, resource string) bool {
	name := corev1.ResourceName(resource)
	for _, c := range pod.Spec.Containers {
		if _, ok := c.Resources.Limits[name]; ok {
			return true
		}
		if _, ok := c.Resources.Requests[name]; ok {
			return true
		}
	}
	return false
}

// boundTo reports whether the pod of uid is bound to node, as its cache
// shows.
func (k *Keeper) boundTo(uid types.UID, node string) bool {
	for _, p := range k.cfg.Bound(node) {
		if p.UID == uid {
			return true
		}
	}
	return false
}

// seed puts, once, the jobs of the pods that ask and are bound to its
// nodes in placed: their node is theirs.
func (k *Keeper) seed(nodes []*corev1.Node) {
	if k.seeded {
		return
	}
	k.seeded = true
	for _, n := range nodes {
		for _, p := range k.cfg.Bound(n.Name) {
			if Asks(p, k.cfg.Resource) {
				k.placed[p.UID] = job{namespace: p.Namespace, name: p.Name, node: n.Name}
			}
		}
	}
}

// forget drops what it knows of a job the backend no longer has.
func (k *Keeper) forget(asked map[types.UID]*corev1.Pod, statuses []podapi.PodStatus) {
	has := make(map[types.UID]bool, len(statuses))
	for _, s := range statuses {
		has[types.UID(s.UID)] = true
	}
	for uid := range k.placed {
		if asked[uid] != nil && !has[uid] {
			delete(k.placed, uid)
		}
	}
}

// failed logs a failure of what, when it begins or changes.
func (k *Keeper) failed(what string, err error) {
	k.add(func(c *Count) { c.Failures++ })
	if k.said[what] != err.Error() {
		k.said[what] = err.Error()
		k.cfg.Log.Warn("the backend's confirmation: a call failed; tried again at the next ping", "call", what, "error", err)
	}
}
