package confirm

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// State is what the backend says of a job.
type State int

const (
	// JobQueued: the backend has the job and has not started it.
	JobQueued State = iota
	// JobStarted: the backend runs the job, or ran it.
	JobStarted
	// JobRefused: the backend will not run the job: it cancelled it
	// before it ran.
	JobRefused
	// JobGone: the backend has no job of the pod: it was removed, or
	// never made. It is no job (rule confirm-gone).
	JobGone
)

func (s State) String() string {
	switch s {
	case JobQueued:
		return "queued"
	case JobStarted:
		return "started"
	case JobRefused:
		return "refused"
	case JobGone:
		return "gone"
	}
	return fmt.Sprintf("State(%d)", int(s))
}

// ExitCancelled is the exit code of a job the backend cancelled, or
// killed, before its container could say how it ended: SIGTERM's number,
// which Slurm sends a job it cancels (scancel, state CA) or that reaches
// its time limit (TO), and which interLink's Slurm plugin then answers
// (rule confirm-state).
const ExitCancelled = 15

// Job is a pod the backend has, as it says.
type Job struct {
	// Pod is the pod's UID, by which the backend knows it; Namespace and
	// Name are the pod's, for the provider's request to remove it.
	Pod             types.UID
	Namespace, Name string
	// Node is the node the job was created for (the pod's spec.nodeName
	// in the create); empty when the provider does not know it (the
	// backend's status does not say, and a provider that restarted does
	// not remember): such a job is on no node.
	Node  string
	State State
	// Kept says that the caller keeps the job for its pod's next
	// allocation on Node (rule confirm-kept): the pod waits for a node
	// again (its allocation refused at the deadline, say), Node is one it
	// can only come back to, and the job keeps its place in the
	// backend's queue. A kept job that is live is removed only once its
	// pod goes elsewhere.
	Kept bool
}

func (j Job) String() string {
	return fmt.Sprintf("%s/%s (%s) on %q: %v", j.Namespace, j.Name, j.Pod, j.Node, j.State)
}

// StateOf returns the state of a job whose containers are as the backend
// reports them (rule confirm-state): started when a container runs, or
// has terminated after it started, or has terminated with an exit code of
// its own, started or not (a job that ran and ended between two looks of
// the backend: interLink's Slurm plugin records a start only when a
// refresh of its sees the job running); refused when a container
// terminated without starting, with [ExitCancelled], as a job cancelled
// while it queued is answered; gone when every container has an empty
// state (as interLink's Slurm plugin answers for a pod it has no job of);
// queued otherwise.
func StateOf(containers []corev1.ContainerStatus) State {
	refused, empty := false, len(containers) > 0
	for _, c := range containers {
		t := c.State.Terminated
		switch {
		case c.State.Running != nil:
			return JobStarted
		case t != nil && (!t.StartedAt.IsZero() || t.ExitCode != ExitCancelled):
			return JobStarted
		case t != nil:
			refused = true
		}
		empty = empty && c.State == (corev1.ContainerState{})
	}
	switch {
	case refused:
		return JobRefused
	case empty:
		return JobGone
	}
	return JobQueued
}

// live reports whether the backend has the job and may still run it, or
// runs it: a pod with a live job is not started again (rule
// confirm-start).
func (s State) live() bool { return s == JobQueued || s == JobStarted }
