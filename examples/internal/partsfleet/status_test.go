package partsfleet

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/pingnode/pingnode/examples/internal/podapi"
)

// TestPodStatus: each container of a job's pod is in the job's state, as
// interLink reports it: waiting "Queued", running since the job started,
// terminated "Refused" with exit code 1 never started, "Completed" with
// exit code 0 since it started, "Cancelled" with exit code 15, started
// or not, or, timed out, with the Slurm plugin's reason and message and
// exit code 15.
func TestPodStatus(t *testing.T) {
	job := Job{UID: "u1", Namespace: "ns", Name: "p", Node: "cn001", CPUs: 2, Containers: []string{"main", "side"}}
	started, finished := t0.Add(time.Minute), t0.Add(3*time.Minute)
	terminated := func(code int32, reason, message string, started, finished time.Time) corev1.ContainerState {
		return corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: code, Reason: reason, Message: message, StartedAt: metav1.NewTime(started), FinishedAt: metav1.NewTime(finished),
		}}
	}
	running := corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(started)}}
	tests := []struct {
		name   string
		status JobStatus
		ready  bool
		want   corev1.ContainerState // each container's
	}{
		{"queued", JobStatus{Job: job, ID: "job-3", State: Queued, Machine: "cn001", Created: t0}, false,
			corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "Queued"}}},
		{"running", JobStatus{Job: job, ID: "job-3", State: Running, Machine: "cn001", Created: t0, Started: started}, true,
			running},
		{"refused", JobStatus{Job: job, ID: "job-3", State: Refused, Machine: "cn001", Created: t0, Finished: t0, Message: RefusedTooLarge}, false,
			terminated(1, "Refused", RefusedTooLarge, time.Time{}, t0)},
		{"completed", JobStatus{Job: job, ID: "job-3", State: Completed, Machine: "cn001", Created: t0, Started: started, Finished: finished}, false,
			terminated(0, "Completed", "", started, finished)},
		{"cancelled queued", JobStatus{Job: job, ID: "job-3", State: Cancelled, Machine: "cn001", Created: t0, Finished: finished}, false,
			terminated(15, "Cancelled", "", time.Time{}, finished)},
		{"cancelled running", JobStatus{Job: job, ID: "job-3", State: Cancelled, Machine: "cn001", Created: t0, Started: started, Finished: finished}, false,
			terminated(15, "Cancelled", "", started, finished)},
		{"timed out", JobStatus{Job: job, ID: "job-3", State: TimedOut, Machine: "cn001", Created: t0, Started: started, Finished: finished}, false,
			terminated(15, "SlurmJobTimeout", "SLURM job reached its time limit and was terminated", started, finished)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			each := []corev1.ContainerStatus{{Name: "main", Ready: tt.ready, State: tt.want}, {Name: "side", Ready: tt.ready, State: tt.want}}
			want := podapi.PodStatus{Name: "p", UID: "u1", Namespace: "ns", JobID: "job-3", Containers: each}
			if diff := cmp.Diff(want, tt.status.PodStatus()); diff != "" {
				t.Errorf("PodStatus (-want +got):\n%s", diff)
			}
		})
	}
}
