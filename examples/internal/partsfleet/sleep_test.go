package partsfleet

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

// TestJobOfSleep: a pod sleeps when its first container's command then
// args are sleep N, N whole seconds, or a shell's -c with "sleep N";
// anything else runs until deleted.
func TestJobOfSleep(t *testing.T) {
	tests := []struct {
		name          string
		command, args []string
		sleep         time.Duration
		sleeps        bool
	}{
		{"command", []string{"sleep", "60"}, nil, time.Minute, true},
		{"command then args", []string{"sleep"}, []string{"60"}, time.Minute, true},
		{"args alone", nil, []string{"sleep", "60"}, time.Minute, true},
		{"a path", []string{"/bin/sleep", "5"}, nil, 5 * time.Second, true},
		{"zero", []string{"sleep", "0"}, nil, 0, true},
		{"a shell", []string{"/bin/sh", "-c", "sleep 60"}, nil, time.Minute, true},
		{"a shell, its script in the args", []string{"/bin/sh", "-c"}, []string{"sleep 60"}, time.Minute, true},
		{"a shell, in the args", nil, []string{"bash", "-c", " sleep  60 "}, time.Minute, true},
		{"a script that does more", []string{"/bin/sh", "-c", "sleep 60; date"}, nil, 0, false},
		{"a unit", []string{"sleep", "1m"}, nil, 0, false},
		{"a fraction", []string{"sleep", "1.5"}, nil, 0, false},
		{"negative", []string{"sleep", "-1"}, nil, 0, false},
		{"infinity", []string{"sleep", "infinity"}, nil, 0, false},
		{"no time", []string{"sleep"}, nil, 0, false},
		{"two times", []string{"sleep", "1", "2"}, nil, 0, false},
		{"another program", []string{"sleepy", "60"}, nil, 0, false},
		{"the image's own", nil, nil, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &corev1.Pod{}
			p.Spec.Containers = []corev1.Container{{Name: "main", Command: tt.command, Args: tt.args}}
			j := JobOf(p)
			if j.Sleep != tt.sleep || j.Sleeps != tt.sleeps {
				t.Errorf("JobOf: sleeps %v for %v; want %v for %v", j.Sleeps, j.Sleep, tt.sleeps, tt.sleep)
			}
		})
	}
	p := &corev1.Pod{}
	p.Spec.Containers = []corev1.Container{{Name: "main"}, {Name: "side", Command: []string{"sleep", "5"}}}
	if j := JobOf(p); j.Sleeps {
		t.Errorf("a pod whose second container sleeps sleeps %v", j.Sleep)
	}
}

// sleeper is pod, sleeping for seconds.
func sleeper(uid, node string, cpus, seconds int) Job {
	j := pod(uid, node, cpus)
	j.Sleeps, j.Sleep = true, time.Duration(seconds)*time.Second
	return j
}

// TestSleepCompletes: a job that sleeps completes its time after it
// started, exit code 0, at whichever call first sees the clock past it;
// its cpus free at that instant, and the queued jobs start then, so that
// one that sleeps may complete too; in every kind of fleet (a sleeping pod).
func TestSleepCompletes(t *testing.T) {
	for _, config := range []Config{{}, {Slurm: true}} {
		t.Run("slurm "+map[bool]string{false: "no", true: "yes"}[config.Slurm], func(t *testing.T) {
			f, c := newFleet(config, 4)
			f.Create(sleeper("a", "cn001", 4, 60))
			f.Create(pod("b", "cn001", 4))
			f.Create(sleeper("c", "cn001", 4, 30))
			c.now = t0.Add(59 * time.Second)
			if diff := cmp.Diff(map[string]string{"a": "running cn001", "b": "queued " + machineOf(config, "cn001"), "c": "queued " + machineOf(config, "cn001")}, states(f, "a", "b", "c")); diff != "" {
				t.Errorf("at 59s (-want +got):\n%s", diff)
			}
			c.now = t0.Add(90 * time.Second)
			a, _ := f.Job("a")
			b, _ := f.Job("b")
			if a.State != Completed || !a.Started.Equal(t0) || !a.Finished.Equal(t0.Add(time.Minute)) {
				t.Errorf("a at 90s: %v, started %v, finished %v; want completed at 60s", a.State, a.Started, a.Finished)
			}
			if b.State != Running || !b.Started.Equal(t0.Add(time.Minute)) {
				t.Errorf("b at 90s: %v since %v; want running since 60s, when a completed", b.State, b.Started)
			}
			c.now = t0.Add(100 * time.Second)
			f.Delete("b")
			c.now = t0.Add(10 * time.Minute)
			cs, _ := f.Job("c")
			if cs.State != Completed || !cs.Started.Equal(t0.Add(100*time.Second)) || !cs.Finished.Equal(t0.Add(130*time.Second)) {
				t.Errorf("c: %v, started %v, finished %v; want completed, 100s to 130s", cs.State, cs.Started, cs.Finished)
			}
			if f.free[0] != 4 {
				t.Errorf("%d cpus free; want 4, all that native jobs leave", f.free[0])
			}
		})
	}
	t.Run("a chain, and sleep 0", func(t *testing.T) {
		f, c := fleetWith(6)
		f.Create(sleeper("d", "cn001", 2, 10))
		f.Create(sleeper("e", "cn001", 2, 10))
		f.Create(sleeper("zero", "cn001", 2, 0))
		c.now = t0.Add(time.Hour)
		want := map[string][2]time.Duration{"d": {0, 10 * time.Second}, "e": {10 * time.Second, 20 * time.Second}, "zero": {20 * time.Second, 20 * time.Second}}
		for uid, w := range want {
			s, _ := f.Job(uid)
			if s.State != Completed || !s.Started.Equal(t0.Add(w[0])) || !s.Finished.Equal(t0.Add(w[1])) {
				t.Errorf("%s: %v, from %v to %v; want completed from %v to %v", uid, s.State, s.Started.Sub(t0), s.Finished.Sub(t0), w[0], w[1])
			}
		}
	})
	t.Run("unbounded", func(t *testing.T) {
		c := &clock{now: t0}
		f := New(Config{Unbounded: true, Now: c.Now})
		f.Create(sleeper("a", "", 100, 5))
		c.now = t0.Add(5 * time.Second)
		if s, _ := f.Job("a"); s.State != Completed {
			t.Errorf("a: %v, want completed", s.State)
		}
	})
}

// machineOf is the machine a job queued for the machine name shows in a
// fleet of config: none, in the Slurm fleet's own queue.
func machineOf(config Config, name string) string {
	if config.Slurm {
		return ""
	}
	return name
}

// TestCancelAndDelete: a job cancelled from outside ends Cancelled and
// is still its pod's, started or not; a deleted one is cancelled and no
// longer its pod's, kept among Jobs; a delete of a pod without a job is
// counted (the deletion).
func TestCancelAndDelete(t *testing.T) {
	f, c := fleetWith(4)
	f.Create(pod("a", "cn001", 4))
	f.Create(pod("b", "cn001", 4))
	f.Create(pod("c", "cn001", 4))
	c.now = t0.Add(time.Minute)
	if !f.Cancel("job-2") || f.Cancel("job-2") || f.Cancel("job-9") {
		t.Error("Cancel: want true for a queued job, then false for it ended, and false for no job")
	}
	b, ok := f.Job("b")
	if !ok || b.State != Cancelled || !b.Started.IsZero() || !b.Finished.Equal(t0.Add(time.Minute)) {
		t.Errorf("b cancelled while it queued: found %v, %v, started %v, finished %v", ok, b.State, b.Started, b.Finished)
	}
	c.now = t0.Add(2 * time.Minute)
	f.Cancel("job-1")
	if diff := cmp.Diff(map[string]string{"a": "cancelled cn001", "b": "cancelled cn001", "c": "running cn001"}, states(f, "a", "b", "c")); diff != "" {
		t.Errorf("after a is cancelled (-want +got):\n%s", diff)
	}
	if s, _ := f.Job("c"); !s.Started.Equal(t0.Add(2 * time.Minute)) {
		t.Errorf("c started %v; want when a was cancelled", s.Started)
	}
	if !f.Delete("a") || !f.Delete("c") || f.Delete("c") || f.Delete("never") {
		t.Error("Delete: want true for a and c, then false for c again and a pod never created")
	}
	if f.UnknownDeletes() != 2 || f.free[0] != 4 || f.Created() != 3 {
		t.Errorf("%d unknown deletes, %d cpus free, %d created; want 2, 4 and 3", f.UnknownDeletes(), f.free[0], f.Created())
	}
	var deleted []string
	for _, s := range f.Jobs() {
		if s.Deleted {
			deleted = append(deleted, s.ID+" "+s.State.String())
		}
	}
	if diff := cmp.Diff([]string{"job-1 cancelled", "job-3 cancelled"}, deleted); diff != "" {
		t.Errorf("deleted jobs (-want +got):\n%s", diff)
	}
}
