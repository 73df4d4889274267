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
	// JobRefused: the backend will not run the job.
	JobRefused
)

func (s State) String() string {
	switch s {
	case JobQueued:
		return "queued"
	case JobStarted:
		return "started"
	case JobRefused:
		return "refused"
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
// without starting; queued otherwise.
func StateOf(containers []corev1.ContainerStatus) State {
	refused := false
	for _, c := range containers {
		switch {
		case c.State.Running != nil:
			return JobStarted
		case c.State.Terminated != nil && !c.State.Terminated.StartedAt.IsZero():
			return JobStarted
		case c.State.Terminated != nil:
			refused = true
		}
	}
	if refused {
		return JobRefused
	}
	return JobQueued
}
