package partsfleet

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pingnode/pingnode/pingstatus"
)

// sized is pod with memoryMi of memory.
func sized(uid, flags string, cpus int, memoryMi int64) Job {
	j := pinned(uid, flags, cpus)
	j.MemoryMi = memoryMi
	return j
}

// limitedTo is sleeper with the time limit limit.
func limitedTo(uid string, cpus, seconds int, limit time.Duration) Job {
	j := sleeper(uid, "", cpus, seconds)
	j.TimeLimit = limit
	return j
}

// TestTimeLimit: in a Slurm fleet a running job ends timed out once it
// has run its time limit, its cpus free then and the queued starting
// then; a job that sleeps no longer than its limit completes; a limit
// counts from the start, not the create; another fleet has no limits (a
// time limit).
func TestTimeLimit(t *testing.T) {
	f, c := slurmWith(0)
	f.Create(limitedTo("long", 4, 120, time.Minute))
	f.Create(limitedTo("exact", 2, 60, time.Minute))
	hang := pod("hang", "", 2) // runs until deleted, but for its limit
	hang.TimeLimit = 30 * time.Second
	f.Create(hang)
	f.Create(limitedTo("late", 8, 120, time.Minute)) // waits for the others
	c.now = t0.Add(10 * time.Minute)
	type brief struct {
		State             State
		Started, Finished time.Duration
	}
	got := map[string]brief{}
	for _, s := range f.Jobs() {
		got[s.UID] = brief{s.State, s.Started.Sub(t0), s.Finished.Sub(t0)}
	}
	want := map[string]brief{
		"long":  {TimedOut, 0, time.Minute},
		"exact": {Completed, 0, time.Minute},
		"hang":  {TimedOut, 0, 30 * time.Second},
		"late":  {TimedOut, time.Minute, 2 * time.Minute},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("jobs (-want +got):\n%s", diff)
	}
	if f.free[0] != 8 {
		t.Errorf("%d cpus free, want 8", f.free[0])
	}

	other, oc := fleetWith(0)
	onMachine := limitedTo("a", 1, 120, time.Minute)
	onMachine.Node = "cn001"
	other.Create(onMachine)
	oc.now = t0.Add(90 * time.Second)
	if s, _ := other.Job("a"); s.State != Running {
		t.Errorf("in a fleet that is not Slurm's, a job past its limit is %v, want running", s.State)
	}
}

// TestSlurmMemory: in a Slurm fleet a job takes its memory on its
// machine beside its cpus: it starts only where both fit, queues
// otherwise, and is refused when it asks more than a machine has; the
// sum's memory is the machines' less their native jobs' (in proportion
// of their cpus) and their jobs'; the native churn never takes memory
// that jobs hold (a Slurm fleet's memory).
func TestSlurmMemory(t *testing.T) {
	runFleetCases(t, slurmWith, []fleetCase{
		{"memory chooses the machine", []int{0, 0}, func(f *Fleet) {
			f.Create(sized("a", "", 1, 7000))
			f.Create(sized("b", "", 1, 2000)) // cpus free on cn001, not its memory
		}, map[string]string{"a": "running cn001", "b": "running cn002"}, []int{7, 7}},
		{"memory queues", []int{0}, func(f *Fleet) {
			f.Create(sized("a", "", 1, 7000))
			f.Create(sized("b", "-w cn001", 1, 2000))
		}, map[string]string{"a": "running cn001", "b": "queued cn001"}, []int{7}},
		{"memory frees", []int{0}, func(f *Fleet) {
			f.Create(sized("a", "", 1, 7000))
			f.Create(sized("b", "", 1, 2000))
			f.Delete("a")
		}, map[string]string{"a": "absent", "b": "running cn001"}, []int{7}},
		{"native jobs hold memory", []int{4}, func(f *Fleet) {
			f.Create(sized("a", "", 1, 5000)) // 4000 of 8000 are the native jobs'
		}, map[string]string{"a": "queued "}, []int{4}},
		{"more memory than a machine has", []int{0}, func(f *Fleet) {
			f.Create(sized("a", "", 1, 8001))
			f.Create(sized("b", "-w cn001", 1, 8001))
		}, map[string]string{"a": "refused : " + RefusedTooMuchMemory, "b": "refused cn001: " + RefusedTooMuchMemory}, []int{8}},
	})

	f, _ := slurmWith(2, 0)
	f.Create(sized("a", "", 2, 3000))
	f.Create(sized("b", "", 1, 1))
	if diff := cmp.Diff(pingstatus.ResourcesResponse{CPU: "11", Memory: "10999Mi"}, f.Sum()); diff != "" {
		t.Errorf("Sum: 8000-2000-3000-1 on cn001, 8000 on cn002 (-want +got):\n%s", diff)
	}

	churned, _ := newFleet(Config{Slurm: true, Churn: 1}, 0, 0, 0)
	for i := range 3 {
		churned.Create(sized(fmt.Sprint(i), "", 1, 6000))
	}
	for reply := range 100 {
		for i := range churned.free {
			if m := churned.freeMemory(i); m < 0 || churned.free[i] < 0 {
				t.Fatalf("reply %d, machine %d: %d cpus and %dMi free", reply, i, churned.free[i], m)
			}
		}
		churned.Next()
	}
}

// TestForgotten: Slurm forgets a job MinJobAge after it ended, not
// before; never one queued or running, and never with MinJobAge 0 (a
// forgotten job).
func TestForgotten(t *testing.T) {
	for _, age := range []time.Duration{0, 5 * time.Minute} {
		f, c := newFleet(Config{Slurm: true, MinJobAge: age}, 0)
		f.Create(sleeper("done", "", 1, 60))
		f.Create(pod("runs", "", 1))
		for _, at := range []time.Duration{time.Minute, 6*time.Minute - time.Nanosecond, 6 * time.Minute, time.Hour} {
			c.now = t0.Add(at)
			done, _ := f.Job("done")
			runs, _ := f.Job("runs")
			if want := age > 0 && at >= time.Minute+age; done.Forgotten != want || runs.Forgotten {
				t.Errorf("MinJobAge %v, at %v: done forgotten %v, running forgotten %v; want %v and false", age, at, done.Forgotten, runs.Forgotten, want)
			}
		}
	}
}

// TestCreateUnnamed: a job created unnamed is made as any, holding its
// cpus and listed among Jobs, but its pod's UID names the job it named
// before, or none: a delete of the UID cancels that one, or is a delete
// of a pod without a job, and the unnamed job runs on; Cancel ends it.
func TestCreateUnnamed(t *testing.T) {
	f, _ := slurmWith(0)
	first := f.Create(pod("a", "", 2))
	unnamed := f.CreateUnnamed(pod("a", "", 3))
	if s, _ := f.Job("a"); s.ID != first.ID || unnamed.ID != "2" || unnamed.State != Running || f.free[0] != 3 {
		t.Errorf("the UID names %s; unnamed %s %v; %d cpus free; want %s, 2 running, 3", s.ID, unnamed.ID, unnamed.State, f.free[0], first.ID)
	}
	f.CreateUnnamed(pod("b", "", 1))
	if _, ok := f.Job("b"); ok || f.Delete("b") || f.UnknownDeletes() != 1 {
		t.Errorf("an unnamed job's UID names a job, or its delete was not of a pod without one (%d counted)", f.UnknownDeletes())
	}
	if !f.Delete("a") || f.free[0] != 4 {
		t.Errorf("the delete of a: %d cpus free, want 4: the first cancelled, the unnamed ones running", f.free[0])
	}
	if !f.Cancel(unnamed.ID) || f.free[0] != 7 {
		t.Errorf("Cancel of the unnamed job: %d cpus free, want 7", f.free[0])
	}
	if n := len(f.Jobs()); n != 3 {
		t.Errorf("%d jobs, want 3", n)
	}
}
