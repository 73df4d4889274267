package jobs

import (
	"context"
	"log/slog"
	"slices"
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
	Create(ctx context.Context, req podapi.CreateRequest) (created podapi.Created, list bool, err error)
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
	// PinAnnotation and PinFlag pin the job of a part's node to its part,
	// in the plugin's words: the pod sent to the plugin carries PinFlag
	// and the part's name appended to its annotation PinAnnotation, after
	// the flags it had. interLink's Slurm plugin pins by sbatch flags:
	// slurm-job.vk.io/flags and --nodelist=. An empty PinAnnotation pins
	// nothing.
	PinAnnotation, PinFlag string
	// Part returns the part of a node of the provider's; "" for a node of
	// its own, whose job is not pinned. Nil: no node is a part's.
	Part func(node string) string
	// Pace is how often it takes a step of its own while a pod waits for
	// its job to start, between the kicks of the pings; DefaultPace when
	// zero or less.
	Pace time.Duration
	// StatusAge is how old the plugin's answer to a status may be: a job
	// it created less than StatusAge ago reads as queued unless the
	// answer says it started, for the answer may be from before the
	// create. interLink's Slurm plugin keeps its answers 10 s
	// (DefaultStatusAge, when zero or less).
	StatusAge time.Duration
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

// DefaultPace is [Config.Pace] when it is not set: a pod binds within a
// second or so of its job's start, for one status request a second while
// pods wait, and none while none does.
const DefaultPace = time.Second

// DefaultStatusAge is [Config.StatusAge] when it is not set: the age of
// the answers of interLink's Slurm plugin, which keeps one for 10 s.
const DefaultStatusAge = 10 * time.Second

// job is a job it made, or found on a node of its: its pod, its record
// (the node it is for, when it was made, whether it removed it) and its
// ID, as the create answered.
type job struct {
	namespace, name string
	Record
	id string
	// refused says that the plugin answered its create with an error: it
	// made no job (Removed is set too), and the next step reads it as
	// refused, once, so that the pod's allocation is refused.
	refused bool
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
	if cfg.StatusAge <= 0 {
		cfg.StatusAge = DefaultStatusAge
	}
	if cfg.Pace <= 0 {
		cfg.Pace = DefaultPace
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

// Run takes a step at each kick until ctx ends, and, while a pod waits
// for its job to start, one every [Config.Pace] between kicks: so that a
// pod binds soon after its job starts, not at the next ping.
func (k *Keeper) Run(ctx context.Context) {
	pace := time.NewTimer(k.cfg.Pace)
	pace.Stop()
	defer pace.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-k.kick:
		case <-pace.C:
		}
		if k.Step(ctx) {
			pace.Reset(k.cfg.Pace)
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

// Step takes one step (see the package documentation), and reports
// whether a pod waits for its job to start: a decision to wait, or a job
// started.
func (k *Keeper) Step(ctx context.Context) (waiting bool) {
	k.add(func(c *Count) { c.Steps++ })
	nodes := k.cfg.Nodes()
	k.publish(ctx, nodes)
	k.seed(nodes)
	var allocations []confirm.Allocation
	for _, n := range nodes {
		allocations = append(allocations, confirm.Allocations(k.cfg.Claims(k.cfg.Driver, n.Name), k.cfg.Driver)...)
	}
	starts, plain := k.boundStarts(nodes)
	asked := k.asked(allocations)
	if len(asked)+len(starts) == 0 {
		return false
	}
	var pods []*corev1.Pod // the whole pods, as interLink sends them
	for _, p := range asked {
		if p.Spec.Containers != nil && !k.placed[p.UID].Removed {
			pods = append(pods, p)
		}
	}
	var statuses []podapi.PodStatus
	if len(pods) > 0 {
		k.add(func(c *Count) { c.Asked += len(pods) })
		var err error
		if statuses, err = k.cfg.Plugin.Status(ctx, pods); err != nil {
			k.failed("status", err)
			return false // nothing is decided without the backend's word; the next ping asks again
		}
		k.said["status"] = ""
	}
	now := k.cfg.Now()
	jobs := k.read(asked, statuses, now)
	bound := map[types.UID]string{}
	for uid, j := range k.placed {
		if j.Node != "" && !j.Removed && k.boundTo(uid, j.Node) {
			bound[uid] = j.Node
		}
	}
	res := confirm.Step(allocations, jobs, bound, now, confirm.Options{Deadline: k.cfg.Deadline})
	k.write(ctx, res.Decisions)
	k.remove(ctx, k.ending(ctx, res.Remove, jobs, asked))
	for uid, p := range plain {
		asked[uid] = p
	}
	k.start(ctx, append(res.Start, starts...), asked)
	k.follow(ctx, asked, statuses, now)
	k.forget(allocations, jobs)
	return len(res.Start) > 0 || slices.ContainsFunc(res.Decisions, func(d confirm.Decision) bool { return d.Verdict == confirm.Wait })
}

// asked returns the pods to ask the backend about, by UID: the pods
// that ask for confirmation and are not bound yet, those of allocations,
// and those it knows a job of; each whole, as its cache has it, or a
// stub (its UID, namespace and name) when no cache has it: the pod of an
// allocation the informer has not listed yet, which is not asked about
// at this step, or a deleted pod, whose job is removed.
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
				asked[p.UID] = k.whole(p.UID, a.Claim.Namespace, p.Name, a.Node)
			}
		}
	}
	for uid, j := range k.placed {
		if asked[uid] == nil {
			asked[uid] = k.whole(uid, j.namespace, j.name, j.Node)
		}
	}
	for uid, p := range asked {
		if _, known := k.placed[uid]; !known {
			if r, ok := RecordOf(p); ok { // a job made before a restart or a takeover
				k.placed[uid] = job{namespace: p.Namespace, name: p.Name, Record: r}
			}
		}
	}
	return asked
}

// whole returns the pod of uid as a cache has it, waiting or bound to
// node, or a stub.
func (k *Keeper) whole(uid types.UID, namespace, name, node string) *corev1.Pod {
	if p, _ := k.cfg.Waiting.Pods(namespace).Get(name); p != nil && p.UID == uid {
		return p
	}
	if node != "" {
		for _, p := range k.cfg.Bound(node) {
			if p.UID == uid {
				return p
			}
		}
	}
	return stub(uid, namespace, name)
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
				k.placed[p.UID] = job{namespace: p.Namespace, name: p.Name, Record: Record{Node: n.Name}}
			}
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
