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
// or terminated "Refused" with exit code 1, never started.
func TestPodStatus(t *testing.T) {
	job := Job{UID: "u1", Namespace: "ns", Name: "p", Node: "cn001", CPUs: 2, Containers: []string{"main", "side"}}
	started := t0.Add(time.Minute)
	each := func(ready bool, state corev1.ContainerState) []corev1.ContainerStatus {
		return []corev1.ContainerStatus{{Name: "main", Ready: ready, State: state}, {Name: "side", Ready: ready, State: state}}
	}
	tests := []struct {
		name   string
		status JobStatus
		want   []corev1.ContainerStatus
	}{
		{"queued", JobStatus{Job: job, ID: "job-3", State: Queued, Machine: "cn001", Created: t0},
			each(false, corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "Queued"}})},
		{"running", JobStatus{Job: job, ID: "job-3", State: Running, Machine: "cn001", Created: t0, Started: started},
			each(true, corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(started)}})},
		{"refused", JobStatus{Job: job, ID: "job-3", State: Refused, Machine: "cn001", Created: t0, Message: RefusedTooLarge},
			each(false, corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				Reason: "Refused", ExitCode: 1, Message: RefusedTooLarge, FinishedAt: metav1.NewTime(t0),
			}})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := podapi.PodStatus{Name: "p", UID: "u1", Namespace: "ns", JobID: "job-3", Containers: tt.want}
			if diff := cmp.Diff(want, tt.status.PodStatus()); diff != "" {
				t.Errorf("PodStatus (-want +got):\n%s", diff)
			}
		})
	}
}
