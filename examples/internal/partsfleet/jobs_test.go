package partsfleet

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/pingnode/pingnode/internal/golden"
)

// t0 is the fixed clock of the tests; a test that moves it moves it by
// whole minutes.
var t0 = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

// clock is a fixed clock that a test moves.
type clock struct{ now time.Time }

func (c *clock) Now() time.Time { return c.now }

// fleetWith is a fleet of machines of 8 cpus, without churn, whose
// native jobs use native[i] cpus of machine i, and the clock it reads.
func fleetWith(native ...int) (*Fleet, *clock) {
	return newFleet(Config{}, native...)
}

// slurmWith is fleetWith for a Slurm fleet.
func slurmWith(native ...int) (*Fleet, *clock) {
	return newFleet(Config{Slurm: true}, native...)
}

// newFleet is fleetWith with the other fields of c.
func newFleet(c Config, native ...int) (*Fleet, *clock) {
	clk := &clock{now: t0}
	c.Machines, c.CPUs, c.MemoryMi, c.Seed, c.Now = len(native), 8, 8000, 1, clk.Now
	f := New(c)
	for i, n := range native {
		f.native[i], f.free[i] = n, 8-n
	}
	return f, clk
}

// pod is a job of cpus on node, with one container, named after its UID.
func pod(uid, node string, cpus int) Job {
	return Job{UID: uid, Namespace: "default", Name: "pod-" + uid, Node: node, CPUs: cpus, Containers: []string{"main"}}
}

// states says where each job of uids is, "absent" for one the fleet has
// not: its state and machine, and for a pod whose newest job was refused
// (which is no job of the pod) the refusal's machine and message.
func states(f *Fleet, uids ...string) map[string]string {
	got := map[string]string{}
	for _, uid := range uids {
		s, ok := f.Job(uid)
		all := f.JobsOf(uid)
		switch {
		case len(all) > 0 && all[len(all)-1].State == Refused && !all[len(all)-1].Deleted:
			r := all[len(all)-1]
			got[uid] = fmt.Sprintf("refused %s: %s", r.Machine, r.Message)
		case !ok:
			got[uid] = "absent"
		default:
			got[uid] = fmt.Sprintf("%s %s", s.State, s.Machine)
		}
	}
	return got
}

// TestJobs: a pod's job starts when its machine has room and queues
// otherwise, first come first served; queued jobs start in order when a
// running job is deleted or native jobs end; a pod is created once; and
// a pod without a machine, or larger than one, is refused and has no job.
func TestJobs(t *testing.T) {
	runFleetCases(t, fleetWith, []fleetCase{
		{"starts when its machine has room", []int{4, 0}, func(f *Fleet) {
			f.Create(pod("a", "cn001", 4))
			f.Create(pod("b", "slurm-cn002", 3))
		}, map[string]string{"a": "running cn001", "b": "running cn002"}, []int{0, 5}},
		{"queues without room", []int{6}, func(f *Fleet) {
			f.Create(pod("a", "cn001", 4))
		}, map[string]string{"a": "queued cn001"}, []int{2}},
		{"first come first served", []int{2}, func(f *Fleet) {
			f.Create(pod("a", "cn001", 4))
			f.Create(pod("b", "cn001", 4))
			f.Create(pod("c", "cn001", 1)) // fits, but b is ahead of it
		}, map[string]string{"a": "running cn001", "b": "queued cn001", "c": "queued cn001"}, []int{2}},
		{"a deletion starts the queued in order", []int{2}, func(f *Fleet) {
			f.Create(pod("a", "cn001", 6))
			f.Create(pod("b", "cn001", 4))
			f.Create(pod("c", "cn001", 1))
			f.Create(pod("d", "cn001", 4))
			f.Delete("a")
		}, map[string]string{"a": "absent", "b": "running cn001", "c": "running cn001", "d": "queued cn001"}, []int{1}},
		{"deleting the first queued lets the next start", []int{2}, func(f *Fleet) {
			f.Create(pod("a", "cn001", 5))
			f.Create(pod("b", "cn001", 4))
			f.Create(pod("c", "cn001", 1))
			f.Delete("b")
		}, map[string]string{"a": "running cn001", "b": "absent", "c": "running cn001"}, []int{0}},
		{"native jobs ending start the queued at the next reply", []int{8, 8}, func(f *Fleet) {
			f.Create(pod("a", "cn001", 3))
			f.Create(pod("b", "cn001", 3))
			f.Create(pod("c", "cn001", 3))
			f.Create(pod("d", "cn002", 1))
			f.native[0], f.free[0] = 2, 6 // as the churn ends native jobs
			f.Next()
		}, map[string]string{"a": "running cn001", "b": "running cn001", "c": "queued cn001", "d": "queued cn002"}, []int{0, 0}},
		{"created twice is one job", []int{0}, func(f *Fleet) {
			f.Create(pod("a", "cn001", 4))
			f.Create(pod("a", "cn001", 8))
			f.Create(pod("a", "cn009", 1))
		}, map[string]string{"a": "running cn001"}, []int{4}},
		{"refused", []int{0}, func(f *Fleet) {
			f.Create(pod("none", "", 1))
			f.Create(pod("other", "cn009", 1))
			f.Create(pod("gpu", "gpu-01", 1))
			f.Create(pod("large", "cn001", 9))
			f.Create(pod("small", "cn001", 8))
			f.Next()
		}, map[string]string{
			"none": "refused : " + RefusedNoMachine, "other": "refused : " + RefusedNoMachine, "gpu": "refused : " + RefusedNoMachine,
			"large": "refused cn001: " + RefusedTooLarge, "small": "running cn001",
		}, []int{0}},
		{"a refused pod has no job to delete", []int{0}, func(f *Fleet) {
			f.Create(pod("large", "cn001", 9))
			if f.Delete("large") {
				panic("Delete reports a job for a pod whose create was refused")
			}
		}, map[string]string{"large": "refused cn001: " + RefusedTooLarge}, []int{8}},
		{"frozen, a deletion still starts the queued", []int{4}, func(f *Fleet) {
			f.Create(pod("a", "cn001", 4))
			f.Create(pod("b", "cn001", 2))
			f.Freeze()
			f.Delete("a")
		}, map[string]string{"a": "absent", "b": "running cn001"}, []int{2}},
		{"deleting what is not there", []int{3}, func(f *Fleet) {
			if f.Delete("a") {
				panic("Delete reports a job never created")
			}
		}, map[string]string{"a": "absent"}, []int{5}},
	})
}

// fleetCase is a case of a fleet's jobs: what is done to a fleet whose
// machines run native jobs of those cpus, then the state of each pod's
// job and each machine's free cpus.
type fleetCase struct {
	name   string
	native []int
	do     func(f *Fleet)
	want   map[string]string
	free   []int // each machine's free cpus after
}

// runFleetCases runs each case on a fleet that build makes.
func runFleetCases(t *testing.T, build func(native ...int) (*Fleet, *clock), tests []fleetCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, _ := build(tt.native...)
			tt.do(f)
			var uids []string
			for uid := range tt.want {
				uids = append(uids, uid)
			}
			if diff := cmp.Diff(tt.want, states(f, uids...)); diff != "" {
				t.Errorf("jobs (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.free, f.free); diff != "" {
				t.Errorf("free cpus (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRefusedIsNoJob: a job refused at its create is no job of its pod,
// as sbatch's refusal makes none: the pod's UID names no job, or in a
// Slurm fleet the job it named before, which runs on.
func TestRefusedIsNoJob(t *testing.T) {
	f, _ := fleetWith(0)
	if s := f.Create(pod("large", "cn001", 9)); s.State != Refused || s.Message != RefusedTooLarge {
		t.Errorf("Create of a pod too large: %v %q, want refused, %q", s.State, s.Message, RefusedTooLarge)
	}
	if s, ok := f.Job("large"); ok {
		t.Errorf("the refused pod's UID names a job: %s %v", s.ID, s.State)
	}
	g, _ := slurmWith(0)
	first := g.Create(pod("a", "", 1))
	if s := g.Create(pinned("a", "-w cn009", 1)); s.State != Refused {
		t.Errorf("second create pinned to no machine: %v, want refused", s.State)
	}
	if s, ok := g.Job("a"); !ok || s.ID != first.ID || s.State != Running {
		t.Errorf("after a refused second create the UID names %s %v (%v), want the first job %s, running", s.ID, s.State, ok, first.ID)
	}
}

// TestJobIDsAndTimes: jobs are numbered in the order they are created,
// a second create returns the first's ID, and a job's Started is when it
// started, not when it was created.
func TestJobIDsAndTimes(t *testing.T) {
	f, c := fleetWith(4)
	ids := []string{f.Create(pod("a", "cn001", 4)).ID, f.Create(pod("b", "cn001", 4)).ID, f.Create(pod("a", "cn001", 1)).ID}
	if diff := cmp.Diff([]string{"job-1", "job-2", "job-1"}, ids); diff != "" {
		t.Errorf("IDs (-want +got):\n%s", diff)
	}
	c.now = t0.Add(time.Minute)
	f.Delete("a")
	got, _ := f.Job("b")
	want := JobStatus{Job: pod("b", "cn001", 4), ID: "job-2", State: Running, Machine: "cn001", Created: t0, Started: t0.Add(time.Minute)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("job b (-want +got):\n%s", diff)
	}
}

// TestUnbounded: a backend without machines starts every pod at once,
// whatever its node and cpus, and Delete removes it.
func TestUnbounded(t *testing.T) {
	f := New(Config{Machines: 3, CPUs: 1, Unbounded: true, Now: func() time.Time { return t0 }})
	f.Create(pod("a", "", 1000))
	f.Create(pod("b", "vk-node", 1))
	if diff := cmp.Diff(map[string]string{"a": "running ", "b": "running "}, states(f, "a", "b")); diff != "" {
		t.Errorf("jobs (-want +got):\n%s", diff)
	}
	if s, _ := f.Job("a"); !s.Started.Equal(t0) {
		t.Errorf("started %v, want %v", s.Started, t0)
	}
	if parts := f.Next(); len(parts) != 0 {
		t.Errorf("an unbounded fleet serves %d parts", len(parts))
	}
	if !f.Delete("a") || states(f, "a")["a"] != "absent" {
		t.Error("Delete left the job")
	}
}

// TestRepliesCountPods: the free cpus in a reply are the machine's less
// its native jobs and its running pods, with the full taint when they
// are none; queued pods take nothing.
func TestRepliesCountPods(t *testing.T) {
	f, _ := fleetWith(2, 0, 0)
	f.Create(pod("a", "cn001", 3))
	f.Create(pod("b", "cn002", 8))
	f.Create(pod("c", "cn002", 1)) // queued
	got := machines(t, f.Parts(), f.config)
	if diff := cmp.Diff(map[string]int{"cn001": 3, "cn002": 0, "cn003": 8}, got); diff != "" {
		t.Errorf("free cpus in the reply (-want +got):\n%s", diff)
	}
}

// TestJobsUnderChurn: with churn 1 and pods created and deleted between
// replies, every reply keeps the books: a machine's free cpus are its
// cpus less its native jobs and its running pods, never below 0, and the
// first pod queued on a machine does not fit in its free cpus.
func TestJobsUnderChurn(t *testing.T) {
	config := Config{Machines: 20, CPUs: 8, MemoryMi: 8000, Churn: 1, Seed: 11, Now: func() time.Time { return t0 }}
	f := New(config)
	created := 0
	for reply := range 60 {
		for range 5 {
			created++
			f.Create(pod(fmt.Sprint(created), fmt.Sprintf("cn%03d", created%20+1), created%5+1))
		}
		if reply%3 == 0 {
			for uid := created - 12; uid < created-6; uid++ {
				f.Delete(fmt.Sprint(uid))
			}
		}
		running := make([]int, config.Machines) // the fleet at the reply
		for _, j := range f.jobs {
			if j.status.State == Running {
				running[j.machine] += j.status.CPUs
			}
		}
		native := slices.Clone(f.native)
		free := machines(t, f.Next(), config)
		for i, name := range f.names {
			if native[i] < 0 || free[name] != config.CPUs-native[i]-running[i] {
				t.Fatalf("reply %d, %s: %d free cpus in the reply, with %d native and %d running", reply, name, free[name], native[i], running[i])
			}
			if q := f.queues[i]; len(q) > 0 && q[0].status.CPUs <= f.free[i] {
				t.Fatalf("after reply %d, %s: a queued pod of %d cpus fits in %d free", reply, name, q[0].status.CPUs, f.free[i])
			}
		}
	}
}

// TestJobsConcurrently: creates, deletes and replies at once (run with
// -race) leave every job somewhere.
func TestJobsConcurrently(t *testing.T) {
	f := New(Config{Machines: 10, CPUs: 8, MemoryMi: 8000, Churn: 0.5, Seed: 2})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for n := range 50 {
				uid := fmt.Sprintf("%d-%d", w, n)
				f.Create(pod(uid, fmt.Sprintf("cn%03d", n%10+1), n%4+1))
				f.Next()
				if n%2 == 0 {
					f.Delete(uid)
				}
			}
		})
	}
	wg.Wait()
	if len(f.jobs) != 100 {
		t.Errorf("%d jobs, want 100", len(f.jobs))
	}
}

// TestJobOf: a pod's cpus are its containers' requests (a limit for a
// container without one), summed and rounded up; init containers do not
// count.
func TestJobOf(t *testing.T) {
	container := func(name, request, limit string) corev1.Container {
		c := corev1.Container{Name: name}
		if request != "" {
			c.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(request)}
		}
		if limit != "" {
			c.Resources.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(limit)}
		}
		return c
	}
	tests := []struct {
		name       string
		containers []corev1.Container
		init       []corev1.Container
		want       int
	}{
		{"none", nil, nil, 0},
		{"no cpu", []corev1.Container{{Name: "a"}}, nil, 0},
		{"requests", []corev1.Container{container("a", "2", "4"), container("b", "1", "")}, nil, 3},
		{"limit without a request", []corev1.Container{container("a", "", "3")}, nil, 3},
		{"rounded up", []corev1.Container{container("a", "1500m", ""), container("b", "600m", "")}, nil, 3},
		{"a millicpu", []corev1.Container{container("a", "1m", "")}, nil, 1},
		{"init containers", []corev1.Container{container("a", "1", "")}, []corev1.Container{container("i", "8", "")}, 1},
		{"negative", []corev1.Container{container("a", "-2", ""), container("b", "1", "")}, nil, 1},
		{"more than any machine", []corev1.Container{container("a", "1e30", "")}, nil, MaxCPUs + 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &corev1.Pod{}
			p.UID, p.Namespace, p.Name = "u1", "ns", "p"
			p.Spec.NodeName, p.Spec.Containers, p.Spec.InitContainers = "vk-cn001", tt.containers, tt.init
			names := []string{}
			for _, c := range tt.containers {
				names = append(names, c.Name)
			}
			want := Job{UID: "u1", Namespace: "ns", Name: "p", Node: "vk-cn001", CPUs: tt.want, Containers: names}
			if diff := cmp.Diff(want, JobOf(p)); diff != "" {
				t.Errorf("JobOf (-want +got):\n%s", diff)
			}
		})
	}
}

// TestNoPodsRepliesUnchanged: a fleet where no pod was ever created gives,
// for a seed, the fleet as made, then the replies it gave before it ran
// pods: the free cpus of each machine at each reply, in
// testdata/nopods.golden, were written by the fleet of native jobs only,
// which moved before its reply.
func TestNoPodsRepliesUnchanged(t *testing.T) {
	config := Config{Machines: 30, CPUs: 8, MemoryMi: 32000, Churn: 0.3, Seed: 7}
	fleet := New(config)
	if diff := cmp.Diff(fleet.Parts(), fleet.Next()); diff != "" {
		t.Fatalf("the first reply is not the fleet as made (-made +reply):\n%s", diff)
	}
	var b strings.Builder
	for reply := range 40 {
		free := machines(t, fleet.Next(), config)
		fmt.Fprintf(&b, "%02d:", reply)
		for i := range config.Machines {
			fmt.Fprintf(&b, " %d", free[fmt.Sprintf("cn%03d", i+1)])
		}
		b.WriteString("\n")
	}
	golden.Check(t, "testdata/nopods.golden", []byte(b.String()))
}
