package partsfleet

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/pingnode/pingnode/examples/internal/podapi"
)

// The reasons of a job's container states that are not running.
const (
	ReasonQueued  = "Queued"
	ReasonRefused = "Refused"
)

// PodStatus is s as interLink's plugin API reports a pod: its job's ID,
// and one status for each of its containers (none for init containers),
// all in the job's state:
//
//   - queued: waiting, with the reason [ReasonQueued];
//   - running: running since the job started, and ready;
//   - refused: terminated with the reason [ReasonRefused], exit code 1
//     and s.Message, finished when it was refused and never started.
func (s JobStatus) PodStatus() podapi.PodStatus {
	status := podapi.PodStatus{
		Name:       s.Name,
		UID:        s.UID,
		Namespace:  s.Namespace,
		JobID:      s.ID,
		Containers: make([]corev1.ContainerStatus, len(s.Containers)),
	}
	for i, name := range s.Containers {
		c := corev1.ContainerStatus{Name: name, Ready: s.State == Running}
		switch s.State {
		case Queued:
			c.State.Waiting = &corev1.ContainerStateWaiting{Reason: ReasonQueued}
		case Running:
			c.State.Running = &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(s.Started)}
		case Refused:
			c.State.Terminated = &corev1.ContainerStateTerminated{Reason: ReasonRefused, ExitCode: 1, Message: s.Message, FinishedAt: metav1.NewTime(s.Created)}
		}
		status.Containers[i] = c
	}
	return status
}
