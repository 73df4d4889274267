package partsfleet

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/pingnode/pingnode/examples/internal/podapi"
)

// The reasons of a job's container states that are not running.
const (
	ReasonQueued    = "Queued"
	ReasonRefused   = "Refused"
	ReasonCompleted = "Completed"
	ReasonCancelled = "Cancelled"
)

// The exit codes of a job's containers once it has ended: Slurm's exit
// code of a job cancelled (scancel's SIGTERM, 15), of a job that never
// ran, and of one that slept its time out.
const (
	ExitCancelled = 15
	ExitRefused   = 1
	ExitCompleted = 0
)

// PodStatus is s as interLink's plugin API reports a pod: its job's ID,
// and one status for each of its containers (none for init containers),
// all as [JobStatus.ContainerStatus] says.
func (s JobStatus) PodStatus() podapi.PodStatus {
	status := podapi.PodStatus{
		Name:       s.Name,
		UID:        s.UID,
		Namespace:  s.Namespace,
		JobID:      s.ID,
		Containers: make([]corev1.ContainerStatus, len(s.Containers)),
	}
	for i, name := range s.Containers {
		status.Containers[i] = s.ContainerStatus(name)
	}
	return status
}

// ContainerStatus is the status of the container name of s's pod, in
// the job's state:
//
//   - queued: waiting, with the reason [ReasonQueued];
//   - running: running since the job started, and ready;
//   - refused: terminated with the reason [ReasonRefused], exit code 1
//     and s.Message, finished when it was refused and never started;
//   - completed: terminated with the reason [ReasonCompleted], exit code
//     0, started and finished when the job did;
//   - cancelled: terminated with the reason [ReasonCancelled], exit code
//     15, finished when it was cancelled, started when the job did (never,
//     for a job cancelled while it queued).
func (s JobStatus) ContainerStatus(name string) corev1.ContainerStatus {
	c := corev1.ContainerStatus{Name: name, Ready: s.State == Running}
	switch s.State {
	case Queued:
		c.State.Waiting = &corev1.ContainerStateWaiting{Reason: ReasonQueued}
	case Running:
		c.State.Running = &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(s.Started)}
	case Refused:
		c.State.Terminated = s.terminated(ExitRefused, ReasonRefused)
		c.State.Terminated.Message = s.Message
	case Completed:
		c.State.Terminated = s.terminated(ExitCompleted, ReasonCompleted)
	case Cancelled:
		c.State.Terminated = s.terminated(ExitCancelled, ReasonCancelled)
	}
	return c
}

// SlurmContainerStatus is the status of the container name of s's pod
// as interLink's Slurm plugin reports it from squeue's state of the job:
// [JobStatus.ContainerStatus] without a reason or a message. Queued (PD)
// is waiting ({"waiting":{}}); running (R) is running since the job
// started, and ready; completed (CD) is terminated with exit code 0,
// started and finished; a job that ended without starting, refused or
// cancelled while it queued, is terminated with exit code 1 or 15, its
// startedAt null.
func (s JobStatus) SlurmContainerStatus(name string) corev1.ContainerStatus {
	c := s.ContainerStatus(name)
	switch {
	case c.State.Waiting != nil:
		c.State.Waiting = &corev1.ContainerStateWaiting{}
	case c.State.Terminated != nil:
		c.State.Terminated.Reason, c.State.Terminated.Message = "", ""
	}
	return c
}

// terminated is the terminated state of a container of s, ended, with
// exit code and reason: started and finished when the job did.
func (s JobStatus) terminated(code int32, reason string) *corev1.ContainerStateTerminated {
	return &corev1.ContainerStateTerminated{
		ExitCode:   code,
		Reason:     reason,
		StartedAt:  metav1.NewTime(s.Started),
		FinishedAt: metav1.NewTime(s.Finished),
	}
}
