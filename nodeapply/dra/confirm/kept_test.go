package confirm_test

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/pingnode/pingnode/nodeapply/dra/confirm"
)

// TestKeptAtDeadline walks rule confirm-kept through a queue longer than
// the deadline: a pod on a node of its own whose job queues is refused
// at the deadline and keeps its job, while it waits with no allocation
// and once allocated there again (no second job, a new deadline); once
// allocated on another node, its job is removed.
func TestKeptAtDeadline(t *testing.T) {
	pod := confirm.Pod{Name: "a", UID: "uid-a"}
	alloc := func(node string, at float64) confirm.Allocation {
		return confirm.Allocation{Claim: types.NamespacedName{Namespace: "hpc", Name: "a-claim"}, Node: node, Allocated: seconds(at), Pods: []confirm.Pod{pod}}
	}
	job := confirm.Job{Pod: pod.UID, Namespace: "hpc", Name: "a", Node: "vk-0", State: confirm.JobQueued, Kept: true}
	opts := confirm.Options{Deadline: 10 * time.Second}
	steps := []struct {
		what        string
		allocations []confirm.Allocation
		at          float64
		verdict     string // "" for no decision
		removed     bool
		started     bool
	}{
		{"at the deadline", []confirm.Allocation{alloc("vk-0", 0)}, 10, "refuse", false, false},
		{"waiting, no allocation", nil, 11, "", false, false},
		{"allocated there again", []confirm.Allocation{alloc("vk-0", 12)}, 15, "wait", false, false},
		{"past the first deadline, within the new one", []confirm.Allocation{alloc("vk-0", 12)}, 21, "wait", false, false},
		{"allocated elsewhere", []confirm.Allocation{alloc("vk-1", 30)}, 31, "wait", true, false},
	}
	for _, s := range steps {
		res := confirm.Step(s.allocations, []confirm.Job{job}, nil, seconds(s.at), opts)
		verdict := ""
		if len(res.Decisions) == 1 {
			verdict = res.Decisions[0].Verdict.String()
		}
		if verdict != s.verdict || (len(res.Remove) == 1) != s.removed || (len(res.Start) > 0) != s.started {
			t.Errorf("%s: verdict %q, removed %v, started %v; want %q, %v, %v", s.what, verdict, res.Remove, res.Start, s.verdict, s.removed, s.started)
		}
	}
	job.Kept = false
	if res := confirm.Step([]confirm.Allocation{alloc("vk-0", 0)}, []confirm.Job{job}, nil, seconds(10), opts); len(res.Remove) != 1 {
		t.Errorf("a job not kept, at the deadline: removed %v, want it removed", res.Remove)
	}
}
