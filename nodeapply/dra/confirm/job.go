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
	// JobRefused: the backend will not run the job: it ended without
	// starting.
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
}

func (j Job) String() string {
	return fmt.Sprintf("%s/%s (%s) on %q: %v", j.Namespace, j.Name, j.Pod, j.Node, j.State)
}

// StateOf returns the state of a job whose containers are as the backend
// reports them (rule confirm-state): started when a container runs, or
// terminated after it started; refused when a container terminated
// without starting; gone when every container has an empty state (as
// interLink's Slurm plugin answers for a pod it has no job of); queued
// otherwise.
func StateOf(containers []corev1.ContainerStatus) State {
	refused, empty := false, len(containers) > 0
	for _, c := range containers {
		switch {
		case c.State.Running != nil:
			return JobStarted
		case c.State.Terminated != nil && !c.State.Terminated.StartedAt.IsZero():
			return JobStarted
		case c.State.Terminated != nil:
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
