package partsfleet

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/pingnode/pingnode/examples/internal/podapi"
)

// TestJobOfExit: a pod ends by itself with an exit code of its own when
// its first container is a shell's -c with "exit N", N from 0 to 255, or
// "sleep S; exit N" or "sleep S && exit N", whitespace around the words
// as it may be: S seconds after it started (0 for exit alone), with exit
// code N; a script that exits before it sleeps, or with a code over 255,
// with a sign, or none, or that does more, runs until deleted.
func TestJobOfExit(t *testing.T) {
	tests := []struct {
		name          string
		command, args []string
		sleep         time.Duration
		code          int32
		sleeps        bool
	}{
		{"exit", []string{"/bin/sh", "-c", "exit 3"}, nil, 0, 3, true},
		{"exit 0", []string{"/bin/sh", "-c", "exit 0"}, nil, 0, 0, true},
		{"exit 255", []string{"/bin/sh", "-c", "exit 255"}, nil, 0, 255, true},
		{"sleep; exit", []string{"/bin/sh", "-c", "sleep 2; exit 3"}, nil, 2 * time.Second, 3, true},
		{"sleep && exit", []string{"/bin/sh", "-c", "sleep 2 && exit 3"}, nil, 2 * time.Second, 3, true},
		{"sleep; exit 0", []string{"/bin/sh", "-c", "sleep 5; exit 0"}, nil, 5 * time.Second, 0, true},
		{"no spaces", []string{"/bin/sh", "-c", "sleep 2;exit 3"}, nil, 2 * time.Second, 3, true},
		{"no spaces around &&", []string{"/bin/sh", "-c", "sleep 2&&exit 3"}, nil, 2 * time.Second, 3, true},
		{"more whitespace", []string{"/bin/sh", "-c", "\tsleep  2 ;\n exit  3 "}, nil, 2 * time.Second, 3, true},
		{"a path to sleep", []string{"/bin/sh", "-c", "/bin/sleep 2; exit 3"}, nil, 2 * time.Second, 3, true},
		{"in the args", nil, []string{"bash", "-c", "exit 4"}, 0, 4, true},
		{"the script in the args", []string{"/bin/sh", "-c"}, []string{"sleep 1 && exit 5"}, time.Second, 5, true},

		{"exit, then sleep", []string{"/bin/sh", "-c", "exit 3; sleep 1"}, nil, 0, 0, false},
		{"exit 300", []string{"/bin/sh", "-c", "exit 300"}, nil, 0, 0, false},
		{"exit 256", []string{"/bin/sh", "-c", "exit 256"}, nil, 0, 0, false},
		{"exit -1", []string{"/bin/sh", "-c", "exit -1"}, nil, 0, 0, false},
		{"exit +1", []string{"/bin/sh", "-c", "exit +1"}, nil, 0, 0, false},
		{"a fraction", []string{"/bin/sh", "-c", "exit 1.5"}, nil, 0, 0, false},
		{"no code", []string{"/bin/sh", "-c", "exit"}, nil, 0, 0, false},
		{"sleep; exit with no code", []string{"/bin/sh", "-c", "sleep 1; exit"}, nil, 0, 0, false},
		{"two codes", []string{"/bin/sh", "-c", "sleep 1; exit 3 4"}, nil, 0, 0, false},
		{"exit twice", []string{"/bin/sh", "-c", "sleep 1; exit 3; exit 4"}, nil, 0, 0, false},
		{"a trailing ;", []string{"/bin/sh", "-c", "exit 3;"}, nil, 0, 0, false},
		{"a leading ;", []string{"/bin/sh", "-c", "; exit 3"}, nil, 0, 0, false},
		{"||", []string{"/bin/sh", "-c", "sleep 1 || exit 3"}, nil, 0, 0, false},
		{"in the background", []string{"/bin/sh", "-c", "sleep 1 & exit 3"}, nil, 0, 0, false},
		{"a sleep with a unit", []string{"/bin/sh", "-c", "sleep 1m; exit 3"}, nil, 0, 0, false},
		{"something else first", []string{"/bin/sh", "-c", "date; exit 3"}, nil, 0, 0, false},
		{"exit as a program", []string{"exit", "3"}, nil, 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &corev1.Pod{}
			p.Spec.Containers = []corev1.Container{{Name: "main", Command: tt.command, Args: tt.args}}
			j := JobOf(p)
			if j.Sleeps != tt.sleeps || j.Sleep != tt.sleep || j.ExitCode != tt.code {
				t.Errorf("JobOf: ends by itself %v, after %v, exit code %d; want %v, after %v, exit code %d", j.Sleeps, j.Sleep, j.ExitCode, tt.sleeps, tt.sleep, tt.code)
			}
		})
	}
}

// exiter is sleeper, ending with the exit code code.
func exiter(uid, node string, cpus, seconds int, code int32) Job {
	j := sleeper(uid, node, cpus, seconds)
	j.ExitCode = code
	return j
}

// TestExitFails: a job that ends by itself with a non-zero exit code
// ends Failed, its status carrying the code, at once for exit N alone
// (the next call sees it ended at the instant it started, as one that
// sleeps 0) and S seconds after it started for sleep S then exit N; its
// cpus free then, and the queued jobs start then, as a completed job's
// do; exit 0 completes; in every kind of fleet; and in a Slurm fleet a
// time limit shorter than the sleep still ends the job timed out.
func TestExitFails(t *testing.T) {
	for _, config := range []Config{{}, {Slurm: true}} {
		t.Run("slurm "+map[bool]string{false: "no", true: "yes"}[config.Slurm], func(t *testing.T) {
			f, c := newFleet(config, 4)
			f.Create(exiter("now", "cn001", 4, 0, 3))
			if s, _ := f.Job("now"); s.State != Failed || s.ExitCode != 3 || !s.Started.Equal(t0) || !s.Finished.Equal(t0) {
				t.Errorf("exit 3: %v, exit code %d, from %v to %v; want failed, exit code 3, at once", s.State, s.ExitCode, s.Started, s.Finished)
			}
			if f.free[0] != 4 {
				t.Errorf("after exit 3: %d cpus free; want 4, all that native jobs leave", f.free[0])
			}
			f.Create(exiter("later", "cn001", 4, 2, 3))
			f.Create(pod("waiter", "cn001", 4))
			c.now = t0.Add(time.Second)
			if s, _ := f.Job("later"); s.State != Running {
				t.Errorf("sleep 2; exit 3 at 1s: %v, want running", s.State)
			}
			c.now = t0.Add(time.Minute)
			later, _ := f.Job("later")
			if later.State != Failed || later.ExitCode != 3 || !later.Started.Equal(t0) || !later.Finished.Equal(t0.Add(2*time.Second)) {
				t.Errorf("sleep 2; exit 3: %v, exit code %d, from %v to %v; want failed, exit code 3, from 0s to 2s", later.State, later.ExitCode, later.Started.Sub(t0), later.Finished.Sub(t0))
			}
			if w, _ := f.Job("waiter"); w.State != Running || !w.Started.Equal(t0.Add(2*time.Second)) {
				t.Errorf("the waiter: %v since %v; want running since 2s, when the job before it failed", w.State, w.Started.Sub(t0))
			}
			f.Delete("waiter")
			f.Create(exiter("zero", "cn001", 4, 0, 0))
			if s, _ := f.Job("zero"); s.State != Completed || s.ExitCode != 0 {
				t.Errorf("exit 0: %v, exit code %d; want completed, 0", s.State, s.ExitCode)
			}
			if f.free[0] != 4 {
				t.Errorf("at the end: %d cpus free; want 4", f.free[0])
			}
		})
	}
	t.Run("unbounded", func(t *testing.T) {
		c := &clock{now: t0}
		f := New(Config{Unbounded: true, Now: c.Now})
		f.Create(exiter("a", "", 100, 5, 7))
		c.now = t0.Add(5 * time.Second)
		if s, _ := f.Job("a"); s.State != Failed || s.ExitCode != 7 {
			t.Errorf("a: %v, exit code %d; want failed, 7", s.State, s.ExitCode)
		}
	})
	t.Run("a time limit first", func(t *testing.T) {
		f, c := slurmWith(0)
		j := exiter("a", "", 1, 120, 3)
		j.TimeLimit = time.Minute
		f.Create(j)
		c.now = t0.Add(10 * time.Minute)
		if s, _ := f.Job("a"); s.State != TimedOut || !s.Finished.Equal(t0.Add(time.Minute)) {
			t.Errorf("sleep 120; exit 3, --time=1: %v at %v; want timed out at 60s", s.State, s.Finished.Sub(t0))
		}
	})
}

// TestPodStatusFailed: each container of a failed job's pod is
// terminated with the job's exit code and the reason "Error", as a
// kubelet says a container that exited non-zero, started and finished
// when the job did.
func TestPodStatusFailed(t *testing.T) {
	job := exiter("u1", "cn001", 2, 60, 3)
	job.Namespace, job.Name, job.Containers = "ns", "p", []string{"main", "side"}
	started, finished := t0.Add(time.Minute), t0.Add(2*time.Minute)
	s := JobStatus{Job: job, ID: "job-3", State: Failed, Machine: "cn001", Created: t0, Started: started, Finished: finished}
	terminated := corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
		ExitCode: 3, Reason: "Error", StartedAt: metav1.NewTime(started), FinishedAt: metav1.NewTime(finished),
	}}
	want := podapi.PodStatus{Name: "p", UID: "u1", Namespace: "ns", JobID: "job-3", Containers: []corev1.ContainerStatus{
		{Name: "main", State: terminated}, {Name: "side", State: terminated},
	}}
	if diff := cmp.Diff(want, s.PodStatus()); diff != "" {
		t.Errorf("PodStatus (-want +got):\n%s", diff)
	}
}
