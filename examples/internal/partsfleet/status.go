package partsfleet

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/pingnode/pingnode/examples/internal/podapi"
)

// The reasons of a job's container states that are not running. A
// timed-out job's reason and message are the ones interLink's Slurm
// plugin gives a job Slurm says timed out (TO: pkg/slurm/Status.go,
// ReasonSlurmJobTimeout and MessageSlurmJobTimeout), the only fleet
// whose jobs time out. A failed job's is the one a kubelet gives a
// container that exited with a code other than 0, so that a test reads
// the fleet's pod as it would read a pod of a kubelet's.
const (
	ReasonQueued    = "Queued"
	ReasonRefused   = "Refused"
	ReasonCompleted = "Completed"
	ReasonCancelled = "Cancelled"
	ReasonTimedOut  = "SlurmJobTimeout"
	ReasonFailed    = "Error"

	MessageTimedOut = "SLURM job reached its time limit and was terminated"
)

// The exit codes of a job's containers once it has ended: Slurm's exit
// code of a job cancelled (scancel's SIGTERM, 15), of a job that never
// ran, of one that slept its time out, and of one ended at its time
// limit, which Slurm ends with SIGTERM too (the signal of squeue's exit
// code 0:15, as the Slurm plugin's pkg/slurm/status_test.go,
// TestExitCodeRegexForTimeout, has it).
const (
	ExitCancelled = 15
	ExitRefused   = 1
	ExitCompleted = 0
	ExitTimedOut  = 15
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
//     for a job cancelled while it queued);
//   - timed out: terminated with the reason [ReasonTimedOut], the message
//     [MessageTimedOut] and exit code 15, started and finished when the
//     job did;
//   - failed: terminated with the reason [ReasonFailed] and the job's
//     exit code (Job.ExitCode), started and finished when the job did.
//     Each container has it, as each has the job's state: the fleet runs
//     a pod as one job, which its first container ends.
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
	case TimedOut:
		c.State.Terminated = s.terminated(ExitTimedOut, ReasonTimedOut)
		c.State.Terminated.Message = MessageTimedOut
	case Failed:
		c.State.Terminated = s.terminated(s.ExitCode, ReasonFailed)
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
