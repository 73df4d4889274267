package jobs

import (
	"context"
	"maps"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/pingnode/pingnode/nodeapply/dra/confirm"
)

// Keeper keeps the jobs of the pods that wait for the backend's
// confirmation on the nodes of one plugin.
type Keeper struct {
	cfg  Config
	kick chan struct{}

	// What follows is its loop's alone.
	asker     *asker
	placed    map[types.UID]job                    // the jobs it knows the node of, by pod
	published map[string]types.UID                 // the nodes whose slice is published: name to UID
	said      map[string]string                    // what was last logged of each thing, so each is said once
	toldData  map[types.UID]string                 // why a pod's data could not be read, as last told (data.go)
	seeded    bool                                 // the jobs of the pods bound to its nodes are in placed
	unserved  bool                                 // the plugin serves no pod API: it makes no job
	bound     map[string]map[types.UID]*corev1.Pod // the pods bound to each node, by UID, this step (boundPod)
	mu        sync.Mutex                           // guards count
	count     Count
}

// job is a job it made, or found on a node of its: its pod, its record
// (the node it is for, when it was made, whether it removed it, its
// pod's refusals), its ID, as the create answered, and what the backend
// last said of it.
type job struct {
	namespace, name string
	Record
	id string
	// containers are the names of the pod's containers, for the
	// questions about its job once the pod is deleted.
	containers []string
	// state is what the backend last said of the job (queued until it
	// says), and seen when: a job no answer speaks of is as last said.
	// finished says that every container of it had terminated then.
	state    confirm.State
	seen     time.Time
	finished bool
	// createErr is the failure of the create that made it, answered with
	// an error or not at all: the job may be there or not, until an
	// answer newer than the create says.
	createErr error
	// refused says that the backend made no job at its create: Removed
	// is set too, and the next step reads it as refused, once, so that
	// the pod's allocation is refused, and sends no delete.
	refused bool
	// deleting is a delete sent whose outcome is not known: the backend's
	// next answers say whether the job is gone.
	deleting *retry
	// kept says that the step keeps the job for its pod's next
	// allocation on its node (Keeper.keeps).
	kept bool
}

// retry is a call whose outcome is not known yet: when it was first
// sent, when to send it again, the back-off, and its last failure.
type retry struct {
	at, next time.Time
	wait     time.Duration
	err      error
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
	if cfg.LostAfter <= 0 {
		cfg.LostAfter = DefaultLostAfter
	}
	if cfg.Refusals <= 0 {
		cfg.Refusals = DefaultRefusals
	}
	return &Keeper{
		cfg: cfg, kick: make(chan struct{}, 1), asker: newAsker(cfg.Plugin, cfg.StatusAge),
		placed: map[types.UID]job{}, published: map[string]types.UID{}, said: map[string]string{}, toldData: map[types.UID]string{},
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
	k.bound = map[string]map[types.UID]*corev1.Pod{}
	nodes := k.cfg.Nodes()
	var allocations []confirm.Allocation
	if k.confirming() {
		k.publish(ctx, nodes)
		for _, n := range nodes {
			allocations = append(allocations, confirm.Allocations(k.cfg.Claims(k.cfg.Driver, n.Name), k.cfg.Driver)...)
		}
	}
	k.seed(nodes)
	starts, plain := k.boundStarts(ctx, nodes)
	asked := k.asked(allocations)
	if len(asked)+len(starts) == 0 {
		return false
	}
	var pods []*corev1.Pod // the whole pods, as interLink sends them
	for _, uid := range slices.Sorted(maps.Keys(asked)) {
		p, j := asked[uid], k.placed[uid]
		switch {
		case j.Removed || done(p):
		case p.Spec.Containers != nil:
			pods = append(pods, p)
		case j.deleting != nil && len(j.containers) > 0: // deleted, its job's delete not known done
			pods = append(pods, withContainers(p, j.containers))
		}
	}
	now := k.cfg.Now()
	var out answers
	if len(pods) > 0 {
		k.add(func(c *Count) { c.Asked += len(pods) })
		out = k.asker.ask(ctx, pods, now)
		k.tell(asked, out)
		if out.failed != nil {
			k.failed("status", out.failed)
			return false // nothing is decided without the backend's word; the next ping asks again
		}
		k.said["status"] = ""
	}
	jobs := k.read(asked, out, now)
	bound := map[types.UID]string{}
	for uid, j := range k.placed {
		if j.Node != "" && !j.Removed && k.boundTo(uid, j.Node) {
			bound[uid] = j.Node
		}
	}
	res := confirm.Step(allocations, jobs, bound, now, confirm.Options{Deadline: k.cfg.Deadline})
	k.write(ctx, res.Decisions)
	k.remove(ctx, k.ending(ctx, res.Remove, jobs, asked), now)
	for uid, p := range plain {
		asked[uid] = p
	}
	k.start(ctx, append(res.Start, starts...), asked)
	k.follow(ctx, asked, out.statuses, now)
	k.forget(allocations, jobs)
	return len(res.Start) > 0 || slices.ContainsFunc(res.Decisions, func(d confirm.Decision) bool { return d.Verdict == confirm.Wait })
}

// confirming reports whether the keeper holds pods for the backend's
// confirmation: it has the claims and the pods that wait.
func (k *Keeper) confirming() bool { return k.cfg.Claims != nil && k.cfg.Waiting != nil }

// tell says to each pod the backend cannot answer about that it cannot,
// in its words, once they change, and that it answers again once it
// does: a Warning event BackendStatusFailed, a Normal one
// BackendStatusAnswered.
func (k *Keeper) tell(asked map[types.UID]*corev1.Pod, out answers) {
	for uid, err := range out.held {
		if p := asked[uid]; p != nil {
			k.event(p, corev1.EventTypeWarning, ReasonStatusFailed, "the plugin cannot answer about the pod, whose question is asked apart: "+err.Error())
			k.cfg.Log.Warn("the plugin cannot answer about a pod; the others are asked apart", "pod", p.Namespace+"/"+p.Name, "error", err)
		}
	}
	for _, uid := range out.freed {
		if p := asked[uid]; p != nil {
			k.event(p, corev1.EventTypeNormal, ReasonStatusAnswered, "the plugin answers about the pod again")
		}
	}
}

// The reasons of the events on a pod.
const (
	ReasonStatusFailed   = "BackendStatusFailed"
	ReasonStatusAnswered = "BackendStatusAnswered"
)

// event records an event on pod, from its node or the node of its job,
// if the keeper has a recorder and the pod a node.
func (k *Keeper) event(pod *corev1.Pod, eventType, reason, message string) {
	node := pod.Spec.NodeName
	if node == "" {
		node = k.placed[pod.UID].Node
	}
	k.eventFrom(node, pod, eventType, reason, message)
}

// eventFrom records an event on pod from node, if the keeper has a
// recorder and node is one.
func (k *Keeper) eventFrom(node string, pod *corev1.Pod, eventType, reason, message string) {
	if k.cfg.Events == nil || node == "" {
		return
	}
	ref := &corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID}
	k.cfg.Events(node).Event(ref, eventType, reason, boundWords(message))
}

// EventReasons returns the reasons of the events a keeper records on
// pods, for the provider's rights.
func EventReasons() []string {
	return []string{ReasonStatusFailed, ReasonStatusAnswered, ReasonRefused, ReasonQueued, ReasonDataUnavailable}
}

// failed logs a failure of what, when it begins or changes.
func (k *Keeper) failed(what string, err error) {
	k.add(func(c *Count) { c.Failures++ })
	if k.said[what] != err.Error() {
		k.said[what] = err.Error()
		k.cfg.Log.Warn("the backend's confirmation: a call failed; tried again at the next ping", "call", what, "error", err)
	}
}
