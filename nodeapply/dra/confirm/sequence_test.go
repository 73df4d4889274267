package confirm_test

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/pingnode/pingnode/internal/golden"
	"github.com/pingnode/pingnode/nodeapply/dra/confirm"
)

// world is what a provider reads at each step: the claims' allocations of
// the confirmation devices (by claim name), the backend's jobs (by pod)
// and the pods bound to nodes.
type world struct {
	allocations map[string]confirm.Allocation
	jobs        map[types.UID]confirm.Job
	bound       map[types.UID]string
	// unknown are the jobs whose node the provider does not know: it
	// restarted since it started them.
	unknown map[types.UID]bool
}

var base = time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)

func seconds(s float64) time.Time { return base.Add(time.Duration(s * float64(time.Second))) }

// share is the allocation of a share of node's confirmation device to the
// claim of pod, at the time given.
func share(pod string, node string, at float64) confirm.Allocation {
	return confirm.Allocation{
		Claim:    types.NamespacedName{Namespace: "hpc", Name: pod + "-backend"},
		ClaimUID: types.UID("claim-" + pod),
		Driver:   "backend.pingnode.io", Pool: node + "-confirm", Device: "confirm",
		Share: fmt.Sprintf("share-%s-%v", pod, at), Node: node, Allocated: seconds(at),
		Pods: []confirm.Pod{{Name: pod, UID: types.UID("uid-" + pod)}},
	}
}

// TestSequence is a provider confirming pods on two nodes, vk-0 and
// vk-1, over nine steps with the default deadline of 300 s. Between
// steps the scheduler and the backend act as the step's "then" says;
// after each step, the provider writes each decision to its claim,
// starts the jobs and removes the jobs the step names, as a provider
// does. a runs within 10 s and is confirmed; the backend refuses c on
// vk-1, and the scheduler gives c a share on vk-0, while its job on vk-1
// is still there: that job is removed and c starts on vk-0 in the same
// step, for a refused job does not hold its pod (rule confirm-start). b never
// starts, and is refused at the deadline, its job removed. A job of d
// that no allocation or binding accounts for (a restart's leftover) is
// removed. A restart at 200 s forgets the node of the jobs of the pods
// not bound: c's, confirmed already, is kept; b's is on no node known:
// removed, and started again. The backend answers a removed job as
// interLink's Slurm plugin does, with an empty state: gone, which is never
// removed again and never holds its pod.
func TestSequence(t *testing.T) {
	w := world{allocations: map[string]confirm.Allocation{}, jobs: map[types.UID]confirm.Job{}, bound: map[types.UID]string{}, unknown: map[types.UID]bool{}}
	steps := []struct {
		at    float64
		about string
		then  func(w *world) // what the scheduler and the backend do before the step
	}{
		{0, "a and b get a share on vk-0", func(w *world) {
			w.allocations["a"] = share("a", "vk-0", 0)
			w.allocations["b"] = share("b", "vk-0", 0)
		}},
		{5, "the backend queues both", nil},
		{10, "the backend starts a; c gets a share on vk-1", func(w *world) {
			w.run("a", confirm.JobStarted)
			w.allocations["c"] = share("c", "vk-1", 10)
		}},
		{15, "the backend refuses c", func(w *world) { w.run("c", confirm.JobRefused) }},
		{20, "the scheduler gives c a share on vk-0; its job on vk-1 is still there, its removal failed", func(w *world) {
			w.allocations["c"] = share("c", "vk-0", 20)
			w.jobs["uid-c"] = confirm.Job{Pod: "uid-c", Namespace: "hpc", Name: "c", Node: "vk-1", State: confirm.JobRefused}
		}},
		{25, "a binds to vk-0", func(w *world) { w.bound["uid-a"] = "vk-0" }},
		{30, "the backend starts c; a job of d is left from before a restart", func(w *world) {
			w.run("c", confirm.JobStarted)
			w.jobs["uid-d"] = confirm.Job{Pod: "uid-d", Namespace: "hpc", Name: "d", Node: "vk-1", State: confirm.JobQueued}
		}},
		{200, "the provider restarts: it knows the node of a's job (a is bound there), not of b's nor c's (confirmed, not bound yet)", func(w *world) {
			for uid := range w.jobs {
				if _, bound := w.bound[uid]; !bound {
					w.unknown[uid] = true
				}
			}
		}},
		{205, "the backend queues b again", nil},
		{299, "b is still queued", nil},
		{300, "b is still queued, at its deadline", nil},
	}
	var b strings.Builder
	for i, step := range steps {
		if step.then != nil {
			step.then(&w)
		}
		allocations, jobs := w.read()
		got := confirm.Step(allocations, jobs, w.bound, seconds(step.at), confirm.Options{})
		fmt.Fprintf(&b, "== step %d at +%vs: %s\n", i+1, step.at, step.about)
		golden.Section(&b, "decisions", got.Decisions)
		golden.Section(&b, "start", got.Start)
		golden.Section(&b, "remove", got.Remove)
		w.act(got)
		_, jobs = w.read()
		golden.Section(&b, "jobs after", jobs)
		b.WriteString("\n")
	}
	golden.Check(t, filepath.Join("testdata", "sequence.golden"), []byte(b.String()))
}

// run sets the state of pod's job.
func (w *world) run(pod string, s confirm.State) {
	j := w.jobs[types.UID("uid-"+pod)]
	j.State = s
	w.jobs[j.Pod] = j
}

// read returns the allocations by claim name and the jobs by pod.
func (w *world) read() ([]confirm.Allocation, []confirm.Job) {
	var allocations []confirm.Allocation
	for _, name := range slices.Sorted(maps.Keys(w.allocations)) {
		allocations = append(allocations, w.allocations[name])
	}
	var jobs []confirm.Job
	for _, uid := range slices.Sorted(maps.Keys(w.jobs)) {
		j := w.jobs[uid]
		if w.unknown[uid] {
			j.Node = ""
		}
		jobs = append(jobs, j)
	}
	return allocations, jobs
}

// act does what a provider does with a step's result: it writes the
// decisions to the claims (a refused claim is deallocated by the
// scheduler), and starts and removes the jobs; the backend says a
// removed job is gone until the pod's next job.
func (w *world) act(r confirm.Result) {
	for _, d := range r.Decisions {
		name := strings.TrimSuffix(d.Allocation.Claim.Name, "-backend")
		switch d.Verdict {
		case confirm.Confirm:
			a := w.allocations[name]
			a.Status = confirm.Confirmed
			w.allocations[name] = a
		case confirm.Refuse:
			delete(w.allocations, name)
		}
	}
	for _, j := range r.Remove {
		j.State = confirm.JobGone
		w.jobs[j.Pod] = j
		delete(w.unknown, j.Pod)
	}
	for _, s := range r.Start {
		w.jobs[s.Pod] = confirm.Job{Pod: s.Pod, Namespace: s.Namespace, Name: s.Name, Node: s.Node, State: confirm.JobQueued}
	}
}
