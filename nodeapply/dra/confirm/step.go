package confirm

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// DefaultDeadline is the time an allocation waits for its pod to start
// when [Options.Deadline] is not set: half the scheduler's default binding
// timeout (600 s), so that a refusal comes well before the scheduler gives
// up on its own (rule confirm-deadline).
const DefaultDeadline = 300 * time.Second

// Options are the settings of [Step]; the zero value is the default.
type Options struct {
	// Deadline is how long after its allocation a pod may wait for the
	// backend to start it before its allocation is refused;
	// DefaultDeadline when zero or less. Keep it below the scheduler's
	// binding timeout (its DynamicResources plugin's bindingTimeout).
	Deadline time.Duration
}

func (o Options) deadline() time.Duration {
	if o.Deadline <= 0 {
		return DefaultDeadline
	}
	return o.Deadline
}

// Verdict is what becomes of a pending allocation at a step.
type Verdict int

const (
	// Wait: the backend has not started every pod of the allocation yet.
	Wait Verdict = iota
	// Confirm: the backend runs every pod of the allocation; write
	// ConditionRuns True.
	Confirm
	// Refuse: the backend will not run a pod of the allocation in time;
	// write ConditionRefused True.
	Refuse
)

func (v Verdict) String() string {
	switch v {
	case Wait:
		return "wait"
	case Confirm:
		return "confirm"
	case Refuse:
		return "refuse"
	}
	return fmt.Sprintf("Verdict(%d)", int(v))
}

// The reasons of the conditions a decision writes (rule confirm-words).
const (
	ReasonRuns       = "BackendRuns"
	ReasonRefused    = "BackendRefused"
	ReasonNotStarted = "NotStarted"
	ReasonNoNode     = "NoNode"
)

// Decision is what becomes of one pending allocation.
type Decision struct {
	Allocation Allocation
	Verdict    Verdict
	// Reason and Message are the words of the condition to write: fixed
	// for each reason (rule confirm-words), empty for Wait.
	Reason, Message string
}

func (d Decision) String() string {
	if d.Verdict == Wait {
		return fmt.Sprintf("%v: wait", d.Allocation)
	}
	return fmt.Sprintf("%v: %v (%s: %s)", d.Allocation, d.Verdict, d.Reason, d.Message)
}

// Start is a job to create on the backend: the pod, for the node.
type Start struct {
	Namespace, Name string
	Pod             types.UID
	Node            string
}

func (s Start) String() string {
	return fmt.Sprintf("%s/%s (%s) on %q", s.Namespace, s.Name, s.Pod, s.Node)
}

// Result is what a [Step] says.
type Result struct {
	// Decisions has one decision for each pending allocation, in the
	// order given (rule confirm-once).
	Decisions []Decision
	// Start are the jobs to create, in the order of the allocations and
	// their pods (rule confirm-start).
	Start []Start
	// Remove are the jobs to remove, in the order given (rule
	// confirm-remove).
	Remove []Job
}

// Step returns what becomes of the allocations of the confirmation
// devices, given what the backend says of its jobs, the pods bound to
// nodes (their UID to their node's name), and the time of the step
// (rules confirm-pure to confirm-words).
func Step(allocations []Allocation, jobs []Job, bound map[types.UID]string, now time.Time, opts Options) Result {
	type key struct {
		pod  types.UID
		node string
	}
	at := map[key]State{}       // the jobs by pod and node: refused over started over queued
	has := map[types.UID]bool{} // the pods with a live job on any node, or on none known
	for _, j := range jobs {
		if j.State == JobGone {
			continue // no job (rule confirm-gone)
		}
		k := key{j.Pod, j.Node}
		if s, ok := at[k]; !ok || s != JobRefused && j.State != JobQueued {
			at[k] = j.State
		}
		has[j.Pod] = has[j.Pod] || j.State.live()
	}
	job := func(a Allocation) func(types.UID) (State, bool) {
		return func(p types.UID) (State, bool) {
			s, ok := at[key{p, a.Node}]
			return s, ok
		}
	}
	keep := map[key]bool{}
	elsewhere := map[key]bool{} // a pod's allocations kept this step, and its binding: it goes to another node than these
	var res Result
	for _, a := range allocations {
		switch a.Status {
		case Confirmed:
			for _, p := range a.Pods {
				keep[key{p.UID, a.Node}] = true
				keep[key{p.UID, ""}] = true // the one its confirmation was given for
			}
			continue
		case Refused:
			continue
		}
		d := decide(a, job(a), now, opts)
		res.Decisions = append(res.Decisions, d)
		if d.Verdict == Refuse {
			continue
		}
		for _, p := range a.Pods {
			keep[key{p.UID, a.Node}] = true
		}
	}
	for k := range keep {
		elsewhere[k] = true
	}
	for uid, node := range bound {
		keep[key{uid, node}] = true
		keep[key{uid, ""}] = true // a bound pod's job of a node not known is the pod's
		elsewhere[key{uid, node}] = true
	}
	goes := func(j Job) bool { // the pod of a kept job goes to another node (rule confirm-kept)
		for k := range elsewhere {
			if k.pod == j.Pod && k.node != j.Node {
				return true
			}
		}
		return false
	}
	for _, j := range jobs {
		switch {
		case j.State == JobGone || keep[key{j.Pod, j.Node}]:
		case j.Kept && j.Node != "" && j.State.live() && !goes(j):
		default:
			res.Remove = append(res.Remove, j)
		}
	}
	for _, d := range res.Decisions {
		if d.Verdict != Wait {
			continue
		}
		a := d.Allocation
		for _, p := range a.Pods {
			if !has[p.UID] {
				res.Start = append(res.Start, Start{Namespace: a.Claim.Namespace, Name: p.Name, Pod: p.UID, Node: a.Node})
				has[p.UID] = true // once, if two allocations name it
			}
		}
	}
	return res
}

// decide returns the decision on a pending allocation, whose pods' jobs
// on its node job gives (false for none).
func decide(a Allocation, job func(types.UID) (State, bool), now time.Time, opts Options) Decision {
	d := Decision{Allocation: a}
	if a.Node == "" {
		return refuse(d, ReasonNoNode, "the allocation names no single node")
	}
	started := len(a.Pods) > 0
	for _, p := range a.Pods {
		state, ok := job(p.UID)
		switch {
		case ok && state == JobRefused:
			return refuse(d, ReasonRefused, "the backend refused the pod")
		case !ok || state != JobStarted:
			started = false
		}
	}
	if started {
		d.Verdict, d.Reason, d.Message = Confirm, ReasonRuns, "the backend runs the pod"
		return d
	}
	if !a.Allocated.IsZero() && now.Sub(a.Allocated) >= opts.deadline() {
		return refuse(d, ReasonNotStarted, fmt.Sprintf("the backend did not start the pod within %v", opts.deadline()))
	}
	return d
}

func refuse(d Decision, reason, message string) Decision {
	d.Verdict, d.Reason, d.Message = Refuse, reason, message
	return d
}
