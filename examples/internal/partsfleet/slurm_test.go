package partsfleet

import (
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pingnode/pingnode/pingstatus"
)

// pinned is pod with the sbatch flags flags.
func pinned(uid, flags string, cpus int) Job {
	j := pod(uid, "", cpus)
	j.Flags = flags
	return j
}

// TestSlurmJobs: in a Slurm fleet the node name chooses nothing: a job
// starts on the first machine, in name order, with its cpus free, or
// waits in the backend's one queue, first come first served, and starts
// on the first machine with room; only --nodelist or -w pins it to a
// machine, where it queues as in another fleet, and a pin to no machine,
// or more cpus than a machine has, is refused (a Slurm fleet's placement, first come first served).
func TestSlurmJobs(t *testing.T) {
	runFleetCases(t, slurmWith, []fleetCase{
		{"the node name chooses nothing", []int{8, 0}, func(f *Fleet) {
			f.Create(pod("a", "cn001", 4))
			f.Create(pod("b", "vk-cn001", 2))
		}, map[string]string{"a": "running cn002", "b": "running cn002"}, []int{0, 2}},
		{"the first machine with room, in name order", []int{6, 4, 0}, func(f *Fleet) {
			f.Create(pod("a", "", 3))
			f.Create(pod("b", "", 2))
		}, map[string]string{"a": "running cn002", "b": "running cn001"}, []int{0, 1, 8}},
		{"one queue, first come first served", []int{6, 6}, func(f *Fleet) {
			f.Create(pod("a", "", 4))
			f.Create(pod("b", "", 1)) // fits, but a is ahead of it
		}, map[string]string{"a": "queued ", "b": "queued "}, []int{2, 2}},
		{"the queue starts on the first machine with room", []int{6, 6}, func(f *Fleet) {
			f.Create(pod("a", "", 4))
			f.Create(pod("b", "", 2))
			f.native[1], f.free[1] = 0, 8 // as the churn ends native jobs
			f.Next()
		}, map[string]string{"a": "running cn002", "b": "running cn001"}, []int{0, 4}},
		{"a deletion starts the queue", []int{0}, func(f *Fleet) {
			f.Create(pod("a", "", 8))
			f.Create(pod("b", "", 4))
			f.Create(pod("c", "", 4))
			f.Create(pod("d", "", 1))
			f.Delete("a")
		}, map[string]string{"a": "absent", "b": "running cn001", "c": "running cn001", "d": "queued "}, []int{0}},
		{"pinned, each way of saying it", []int{0, 0}, func(f *Fleet) {
			f.Create(pinned("a", "--nodelist=cn002", 1))
			f.Create(pinned("b", "--time=10 --nodelist cn002", 1))
			f.Create(pinned("c", "-w cn002 --mem=1G", 1))
			f.Create(pinned("d", "-w=cn002", 1))
			f.Create(pinned("e", "--partition=cpu", 1)) // no pin
		}, map[string]string{"a": "running cn002", "b": "running cn002", "c": "running cn002", "d": "running cn002", "e": "running cn001"}, []int{7, 4}},
		{"pinned to no machine", []int{0}, func(f *Fleet) {
			f.Create(pinned("node", "--nodelist=vk-cn001", 1))
			f.Create(pinned("other", "-w cn009", 1))
			f.Create(pinned("range", "--nodelist=cn[001-002]", 1))
			f.Create(pinned("bare", "-w", 1))
		}, map[string]string{
			"node": "refused : " + RefusedNoPin, "other": "refused : " + RefusedNoPin,
			"range": "refused : " + RefusedNoPin, "bare": "refused : " + RefusedNoPin,
		}, []int{8}},
		{"pinned, queues on its machine", []int{0, 6}, func(f *Fleet) {
			f.Create(pinned("a", "-w cn002", 4))
			f.Create(pod("b", "cn002", 4))
		}, map[string]string{"a": "queued cn002", "b": "running cn001"}, []int{4, 2}},
		{"too large", []int{0}, func(f *Fleet) {
			f.Create(pod("a", "", 9))
			f.Create(pinned("b", "-w cn001", 9))
			f.Create(pod("c", "", 8))
		}, map[string]string{"a": "refused : " + RefusedTooLarge, "b": "refused cn001: " + RefusedTooLarge, "c": "running cn001"}, []int{0}},
		{"created twice is two jobs", []int{0}, func(f *Fleet) {
			f.Create(pod("a", "", 4))
			f.Create(pod("a", "", 4))
		}, map[string]string{"a": "running cn001"}, []int{0}},
	})
}

// TestSlurmCreatedTwice: a second create of a pod is a second job, with
// the next number; the first runs on, holding its cpus, while the UID
// names the second, which a delete cancels alone; every job is counted
// and listed, and the first ends only when cancelled by its ID (a Slurm fleet's second job).
func TestSlurmCreatedTwice(t *testing.T) {
	f, _ := slurmWith(0)
	ids := []string{f.Create(pod("a", "", 3)).ID, f.Create(pod("a", "", 3)).ID, f.Create(pod("b", "", 1)).ID}
	if diff := cmp.Diff([]string{"1", "2", "3"}, ids); diff != "" {
		t.Errorf("IDs (-want +got):\n%s", diff)
	}
	if s, _ := f.Job("a"); s.ID != "2" || f.Created() != 3 || f.free[0] != 1 {
		t.Errorf("job of a %s, %d created, %d cpus free; want 2, 3 and 1", s.ID, f.Created(), f.free[0])
	}
	if !f.Delete("a") || f.Delete("a") || f.UnknownDeletes() != 1 {
		t.Errorf("deletes of a: want the first true, the second false and counted; %d counted", f.UnknownDeletes())
	}
	type brief struct {
		ID      string
		State   State
		Deleted bool
	}
	briefs := func(all []JobStatus) []brief {
		var got []brief
		for _, s := range all {
			got = append(got, brief{s.ID, s.State, s.Deleted})
		}
		return got
	}
	want := []brief{{"1", Running, false}, {"2", Cancelled, true}}
	if diff := cmp.Diff(want, briefs(f.JobsOf("a"))); diff != "" {
		t.Errorf("JobsOf(a) (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(append(want, brief{"3", Running, false}), briefs(f.Jobs())); diff != "" {
		t.Errorf("Jobs (-want +got):\n%s", diff)
	}
	if f.free[0] != 4 {
		t.Errorf("%d cpus free; want 4: the first job of a holds 3", f.free[0])
	}
	if !f.Cancel("1") || f.free[0] != 7 {
		t.Errorf("Cancel(1): %d cpus free; want 7", f.free[0])
	}
}

// TestPinOf: the flags that pin a job, and the machine each names.
func TestPinOf(t *testing.T) {
	tests := []struct {
		name, flags, machine string
		pinned               bool
	}{
		{"none", "", "", false},
		{"other flags", "--time=10 --partition=gpu --mem 4G", "", false},
		{"nodelist=", "--nodelist=cn004", "cn004", true},
		{"nodelist then a word", "--nodelist cn004", "cn004", true},
		{"w then a word", "-w cn004", "cn004", true},
		{"w=", "-w=cn004", "cn004", true},
		{"among others", "--time=10 -w cn004 --mem=1G", "cn004", true},
		{"the last one", "-w cn001 --nodelist=cn004", "cn004", true},
		{"without a value", "--time=10 --nodelist", "", true},
		{"a node name, as it is", "--nodelist=vk-cn004", "vk-cn004", true},
		{"not a prefix", "--nodelistx=cn004 -wcn004", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			machine, ok := pinOf(tt.flags)
			if machine != tt.machine || ok != tt.pinned {
				t.Errorf("pinOf(%q) = %q, %v; want %q, %v", tt.flags, machine, ok, tt.machine, tt.pinned)
			}
		})
	}
}

// TestSum: the fleet as one sum is its free cpus and memory, each summed
// over its machines, "0" and "0Mi" when it is full; NextSum is Next's
// reply summed, reply after reply, as the fleet moves on.
func TestSum(t *testing.T) {
	f, _ := fleetWith(2, 8, 5)
	if diff := cmp.Diff(pingstatus.ResourcesResponse{CPU: "9", Memory: "9000Mi"}, f.Sum()); diff != "" {
		t.Errorf("Sum (-want +got):\n%s", diff)
	}
	full, _ := fleetWith(8, 8)
	if diff := cmp.Diff(pingstatus.ResourcesResponse{CPU: "0", Memory: "0Mi"}, full.NextSum()); diff != "" {
		t.Errorf("Sum of a full fleet (-want +got):\n%s", diff)
	}
	config := Config{Machines: 40, CPUs: 8, MemoryMi: 32000, Churn: 0.5, Seed: 3}
	summed, parted := New(config), New(config)
	for reply := range 20 {
		parts := machines(t, parted.Next(), config)
		cpus := 0
		for _, free := range parts {
			cpus += free
		}
		got := summed.NextSum()
		if got.CPU != strconv.Itoa(cpus) || got.Memory != strconv.Itoa(cpus*4000)+"Mi" {
			t.Fatalf("reply %d: NextSum %+v, want %d cpus and %dMi", reply, got, cpus, cpus*4000)
		}
	}
}

// stuckWith is slurmWith with cn001 a machine that looks free and never
// starts anything.
func stuckWith(native ...int) (*Fleet, *clock) {
	return newFleet(Config{Slurm: true, Stuck: []string{"cn001"}}, native...)
}

// TestStuckMachine: a stuck machine takes the jobs placed on it as any
// machine does, holding their cpus, and starts none of them, a sleeping
// one neither; a delete gives their cpus back. It replies with every
// cpu free, and no native job comes to it (a stuck machine).
func TestStuckMachine(t *testing.T) {
	runFleetCases(t, stuckWith, []fleetCase{
		{"placed there, never started", []int{0, 4}, func(f *Fleet) {
			f.Create(pod("a", "", 4))
			f.Create(pinned("b", "-w cn001", 2))
			f.Create(pod("c", "", 4))
		}, map[string]string{"a": "queued cn001", "b": "queued cn001", "c": "running cn002"}, []int{2, 0}},
		{"the queue goes to it when it has room", []int{0, 8}, func(f *Fleet) {
			f.Create(pod("a", "", 6))
			f.Create(pod("b", "", 4)) // waits: cn001 holds 6 of its 8
			f.Delete("a")
		}, map[string]string{"a": "absent", "b": "queued cn001"}, []int{4, 0}},
	})
	f, c := stuckWith(0, 8)
	sleeper := pod("s", "", 8)
	sleeper.Sleeps, sleeper.Sleep = true, time.Second
	f.Create(sleeper)
	c.now = c.now.Add(time.Hour)
	if got := states(f, "s")["s"]; got != "queued cn001" {
		t.Errorf("a sleeping job on the stuck machine an hour on: %s, want queued cn001", got)
	}
	if diff := cmp.Diff(map[string]int{"cn001": 8, "cn002": 0}, machines(t, f.Parts(), f.config)); diff != "" {
		t.Errorf("replied free cpus (-want +got):\n%s", diff)
	}
	if got := f.Sum(); got.CPU != "8" {
		t.Errorf("the sum's cpus %s, want 8: the stuck machine looks free", got.CPU)
	}
	churned := New(Config{Machines: 3, CPUs: 8, MemoryMi: 8000, Churn: 1, Seed: 2, Stuck: []string{"cn002", "cn404"}})
	for range 50 {
		churned.Next()
	}
	if churned.native[1] != 0 || churned.free[1] != 8 {
		t.Errorf("the stuck machine after 50 replies of churn: %d native, %d free; want 0 and 8", churned.native[1], churned.free[1])
	}
}
