package confirm_test

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"pgregory.net/rapid"

	"github.com/pingnode/pingnode/nodeapply/dra/confirm"
)

// A model of what interLink's Slurm plugin (interlink-slurm-plugin at
// f8451d9, pkg/slurm/Status.go and prepare.go's getExitCode) answers of
// a job over its life, for the rule confirm-state to be checked against:
//
//   - The plugin refreshes its answer at most every 10 s, and records a
//     job's start only when a refresh sees it R or CG; a job seen so is
//     answered with that start time ever after, a job never seen so
//     with none (startedAt null).
//   - PD is a container waiting ({"waiting":{}}); R is running since the
//     start it recorded.
//   - A job that ended is terminated with its start time (or none) and an
//     exit code: the one job.sh wrote to run-<container>.status when the
//     container ended on its own (CD: 0; F: the job's own), or, for a job
//     killed before job.sh could write it, the exit code squeue gives,
//     15 for a job Slurm cancelled or killed by its time limit (CA, TO:
//     SIGTERM's number). TO is answered with the reason SlurmJobTimeout.
//   - Once Slurm forgets an ended job (MinJobAge), the plugin reads
//     run-<container>.status alone and answers a terminated state with
//     that exit code and no start time, even for a job it saw run.
//   - A pod the plugin has no job of (never created, or deleted) is
//     answered with an empty state ("state":{}).
type slurmJob struct {
	// End is how the job ended: "" (it has not: queued or running), "CD",
	// "F", "TO" or "CA".
	End string
	// Ran reports whether it ran (R), for a while at least; Seen, whether
	// a refresh of the plugin saw it running; Forgotten, whether Slurm
	// has forgotten it since it ended (MinJobAge). Code is an F job's own
	// exit code.
	Ran, Seen, Forgotten, Known bool
	Code                        int32
}

// answer is the plugin's answer for the job's container.
func (j slurmJob) answer(at time.Time) corev1.ContainerStatus {
	c := corev1.ContainerStatus{Name: "main"}
	var started metav1.Time
	if j.Seen {
		started = metav1.NewTime(at.Add(-time.Minute))
	}
	switch {
	case !j.Known:
	case j.End == "" && !j.Ran:
		c.State.Waiting = &corev1.ContainerStateWaiting{}
	case j.End == "":
		c.State.Running = &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(at.Add(-time.Minute))}
	default:
		code := j.Code // F
		switch j.End {
		case "CD":
			code = 0
		case "CA", "TO":
			code = confirm.ExitCancelled // killed before job.sh wrote its code
		}
		t := &corev1.ContainerStateTerminated{StartedAt: started, FinishedAt: metav1.NewTime(at), ExitCode: code}
		if j.End == "TO" {
			t.Reason = "SlurmJobTimeout"
		}
		if j.Forgotten {
			t = &corev1.ContainerStateTerminated{ExitCode: code}
		}
		c.State.Terminated = t
	}
	return c
}

// want is what the job is, as rule confirm-state reads the plugin's
// answer: started once it ran, whether or not the plugin saw it start;
// refused when it was cancelled, or killed, before a refresh saw it run
// (its answer is then the same as a job cancelled while queued); queued
// while it waits; gone when the plugin has no job.
func (j slurmJob) want() confirm.State {
	switch {
	case !j.Known:
		return confirm.JobGone
	case j.End == "" && !j.Ran:
		return confirm.JobQueued
	case j.End == "":
		return confirm.JobStarted
	case j.End == "CA" || j.End == "TO" || j.Code == confirm.ExitCancelled:
		if j.Seen && !j.Forgotten {
			return confirm.JobStarted
		}
		return confirm.JobRefused
	}
	return confirm.JobStarted
}

var slurmJobs = rapid.Custom(func(t *rapid.T) slurmJob {
	j := slurmJob{Known: rapid.Float64Range(0, 1).Draw(t, "known") < 0.9}
	j.End = rapid.SampledFrom([]string{"", "CD", "F", "TO", "CA"}).Draw(t, "end")
	j.Ran = rapid.Bool().Draw(t, "ran") || j.End == "CD" || j.End == "F" || j.End == "TO"
	j.Seen = j.Ran && rapid.Bool().Draw(t, "seen")
	if j.End == "" && j.Ran {
		j.Seen = true // a refresh that answers R records the start
	}
	if j.End == "F" {
		j.Code = rapid.Int32Range(1, 255).Draw(t, "code")
	}
	// A forgotten job killed before job.sh wrote its code has no status
	// file: the plugin answers 500 for the whole request (no answer to
	// read), so only the others are forgotten here.
	j.Forgotten = j.End != "" && j.End != "CA" && j.End != "TO" && rapid.Bool().Draw(t, "forgotten")
	return j
})

// TestPropertyStateOfSlurm checks rule confirm-state against what
// interLink's Slurm plugin answers of jobs over their life (slurmJob):
// a job that ended on its own reads as started, whether or not the
// plugin saw it start, so that a short job is not refused and run again;
// only a job cancelled or killed before the plugin saw it run reads as
// refused.
func TestPropertyStateOfSlurm(t *testing.T) {
	at := time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 3).Draw(t, "containers")
		j := slurmJobs.Draw(t, "job")
		containers := make([]corev1.ContainerStatus, n) // the plugin answers each container of the job alike
		for i := range containers {
			containers[i] = j.answer(at)
		}
		if got, want := confirm.StateOf(containers), j.want(); got != want {
			t.Fatalf("the plugin's answer %s for %+v reads %v, want %v", describe(containers[0]), j, got, want)
		}
	})
}

func describe(c corev1.ContainerStatus) string {
	switch s := c.State; {
	case s.Waiting != nil:
		return "waiting"
	case s.Running != nil:
		return "running"
	case s.Terminated != nil:
		return fmt.Sprintf("terminated exit %d, started %v", s.Terminated.ExitCode, !s.Terminated.StartedAt.IsZero())
	}
	return "{}"
}

// TestStateOfShortJob pins down the short job that ran again and again:
// interLink's Slurm plugin answers a job that ran and ended between two
// of its refreshes terminated, with its own exit code and no start time.
// It ran: read as refused, its claim was refused and the pod given a new
// job, and a job that fails fast looped for ever.
func TestStateOfShortJob(t *testing.T) {
	for _, tc := range []struct {
		name string
		exit int32
		want confirm.State
	}{
		{"completed", 0, confirm.JobStarted},
		{"failed on its own", 3, confirm.JobStarted},
		{"cancelled while queued", confirm.ExitCancelled, confirm.JobRefused},
	} {
		t.Run(tc.name, func(t *testing.T) {
			unseen := []corev1.ContainerStatus{{Name: "main", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: tc.exit}}}}
			if got := confirm.StateOf(unseen); got != tc.want {
				t.Errorf("StateOf(terminated, exit code %d, no start) = %v, want %v", tc.exit, got, tc.want)
			}
		})
	}
}
