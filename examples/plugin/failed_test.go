package main

import (
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/pingnode/pingnode/examples/internal/podapi"
)

// TestFailedServed: in either mode, a pod whose container runs
// "sleep 60; exit 3" fails 60 seconds after it started, and one that
// runs "exit 4" at once, each terminated with its exit code, and frees
// its cpus for the pod queued behind it, which then runs from that
// instant. Without -slurm the reason is "Error", as a kubelet says, and
// the times are the job's; with -slurm there is no reason (the Slurm
// plugin's F, as its CD), the times are those of the status refreshes
// that saw each (at 0, 59 and 60 s here, with no cache; "exit 4" was
// never seen running), and once Slurm forgot the jobs each is answered
// from its status file, which the job wrote: its exit code, no times.
func TestFailedServed(t *testing.T) {
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	for _, tt := range []struct {
		name   string
		args   []string
		slurm  bool
		reason string
	}{
		{"default", []string{"-parts-generate", "2", "-parts-cpus", "1", "-parts-memory", "1000Mi", "-parts-churn", "0", "-parts-seed", "15"}, false, "Error"},
		{"slurm", append([]string{"-slurm", "-status-cache", "0"}, twoIdleOf1...), true, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			server, _, clock := serve(t, t0, tt.args...)
			failer := slurmPod("failer", "-w cn001", "1", "/bin/sh", "-c", "sleep 60; exit 3")
			waiter := slurmPod("waiter", "-w cn001", "1")
			quick := slurmPod("quick", "-w cn002", "1", "/bin/sh", "-c", "exit 4")
			failer.Spec.NodeName, waiter.Spec.NodeName, quick.Spec.NodeName = "vk-cn001", "vk-cn001", "vk-cn002"
			ids := map[string]string{}
			for _, p := range []corev1.Pod{failer, waiter, quick} {
				ids[string(p.UID)] = create(t, server, p).PodJID
			}
			// want is what the plugin says of pod in state.
			want := func(pod corev1.Pod, state corev1.ContainerState) podapi.PodStatus {
				if tt.slurm {
					return slurmStatus(pod, state)
				}
				return podStatus(pod, ids[string(pod.UID)], state)
			}
			failed := func(code int32, started, finished time.Time) corev1.ContainerState {
				s := terminatedAt(code, started, finished)
				s.Terminated.Reason = tt.reason
				return s
			}
			quickStarted := t0
			if tt.slurm {
				quickStarted = time.Time{}
			}
			for _, d := range []time.Duration{0, 59 * time.Second} {
				clock.set(d)
				if got := statusOf(t, server, failer, waiter, quick); len(got) != 3 || got[0].Containers[0].State.Running == nil || got[1].Containers[0].State.Waiting == nil {
					t.Fatalf("at %v: %+v; want the failer running, the waiter waiting", d, got)
				} else if diff := cmp.Diff(want(quick, failed(4, quickStarted, t0)), got[2], sameInstant); diff != "" {
					t.Errorf("exit 4 at %v (-want +got):\n%s", d, diff)
				}
			}
			clock.set(time.Minute)
			statusOf(t, server, failer, waiter)
			clock.set(4 * time.Minute)
			wants := []podapi.PodStatus{want(failer, failed(3, t0, at(time.Minute))), want(waiter, runningSince(at(time.Minute)))}
			if diff := cmp.Diff(wants, statusOf(t, server, failer, waiter), sameInstant); diff != "" {
				t.Errorf("at 4m (-want +got):\n%s", diff)
			}
			if !tt.slurm {
				return
			}
			clock.set(6 * time.Minute)
			wants = []podapi.PodStatus{slurmStatus(failer, terminatedAt(3, time.Time{}, time.Time{})), slurmStatus(quick, terminatedAt(4, time.Time{}, time.Time{}))}
			if code, body := statusAnswer(t, server, "", failer, quick); code != http.StatusOK {
				t.Fatalf("forgotten: %d %s; want their status files read", code, body)
			}
			if diff := cmp.Diff(wants, statusOf(t, server, failer, quick), sameInstant); diff != "" {
				t.Errorf("forgotten, from their status files (-want +got):\n%s", diff)
			}
		})
	}
}
