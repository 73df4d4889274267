package kuberules

import (
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

// TestUniqueTaintsKeepsTheLastInTheFirstsPlace pins the rule for a repeated
// key and effect: the last taint is kept, where the first stood, and Add
// names where the one it replaced stood in the input.
func TestUniqueTaintsKeepsTheLastInTheFirstsPlace(t *testing.T) {
	in := []corev1.Taint{
		{Key: "a.io/x", Value: "1", Effect: corev1.TaintEffectNoSchedule},
		{Key: "b.io/y", Effect: corev1.TaintEffectNoExecute},
		{Key: "a.io/x", Value: "2", Effect: corev1.TaintEffectNoSchedule},
		{Key: "a.io/x", Value: "3", Effect: corev1.TaintEffectNoSchedule},
		{Key: "a.io/x", Value: "4", Effect: corev1.TaintEffectNoExecute},
	}
	u := NewUniqueTaints(len(in))
	var earlier []int
	for i, taint := range in {
		if e, repeated := u.Add(taint, i); repeated {
			earlier = append(earlier, e)
		}
	}
	want := []corev1.Taint{in[3], in[1], in[4]}
	if diff := cmp.Diff(want, u.List); diff != "" {
		t.Errorf("taints (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int{0, 2}, earlier); diff != "" {
		t.Errorf("the repeated entries (-want +got):\n%s", diff)
	}
	if i, ok := u.Index(TaintID{Key: "a.io/x", Effect: corev1.TaintEffectNoExecute}); !ok || i != 2 {
		t.Errorf("Index = %d, %v, want 2, true", i, ok)
	}
}

func TestTaintCheck(t *testing.T) {
	long := strings.Repeat("k", MaxNameBytes+1)
	tests := []struct {
		name  string
		check TaintCheck
		taint corev1.Taint
		want  TaintProblems
	}{
		{"valid", TaintCheck{}, corev1.Taint{Key: "a.io/x", Effect: corev1.TaintEffectNoSchedule}, TaintProblems{}},
		{"protected", TaintCheck{Protected: []string{"site.io/static"}}, corev1.Taint{Key: "site.io/static", Effect: corev1.TaintEffectNoSchedule}, TaintProblems{Protected: true}},
		{"reserved", TaintCheck{}, corev1.Taint{Key: "node.kubernetes.io/unreachable", Effect: corev1.TaintEffectNoExecute}, TaintProblems{Reserved: true}},
		{"bad effect", TaintCheck{}, corev1.Taint{Key: "a.io/x", Effect: "Evict"}, TaintProblems{Effect: true}},
		{"bounded by length", TaintCheck{Bounded: true}, corev1.Taint{Key: long, Value: long[:64], Effect: corev1.TaintEffectNoSchedule},
			TaintProblems{Key: "must be no more than 317 bytes", Value: "must be no more than 63 bytes"}},
		{"unbounded: the name rules' words", TaintCheck{}, corev1.Taint{Key: long, Effect: corev1.TaintEffectNoSchedule},
			TaintProblems{Key: TaintKeyProblem(long)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, tt.check.Check(&tt.taint)); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
	valid := corev1.Taint{Key: "a.io/x", Value: "v", Effect: corev1.TaintEffectNoSchedule}
	check := TaintCheck{Protected: []string{"site.io/static"}, Bounded: true}
	if allocs := testing.AllocsPerRun(100, func() { _ = check.Check(&valid) }); allocs != 0 {
		t.Errorf("Check of a valid taint allocates %v times", allocs)
	}
}

// TestUniqueTaintsManyTaints: past the pair-by-pair limit the rule is the
// same.
func TestUniqueTaintsManyTaints(t *testing.T) {
	u := NewUniqueTaints(0)
	for i := range 3 * pairwiseLimit {
		taint := corev1.Taint{Key: "a.io/k" + strconv.Itoa(i%(2*pairwiseLimit)), Value: strconv.Itoa(i), Effect: corev1.TaintEffectNoSchedule}
		earlier, repeated := u.Add(taint, i)
		if want := i >= 2*pairwiseLimit; repeated != want || repeated && earlier != i-2*pairwiseLimit {
			t.Fatalf("taint %d: Add = %d, %v", i, earlier, repeated)
		}
	}
	if len(u.List) != 2*pairwiseLimit {
		t.Fatalf("%d taints, want %d", len(u.List), 2*pairwiseLimit)
	}
	for i, taint := range u.List {
		want := i // keys 0 to pairwiseLimit-1 came again, at 2*pairwiseLimit on
		if i < pairwiseLimit {
			want += 2 * pairwiseLimit
		}
		if taint.Value != strconv.Itoa(want) {
			t.Fatalf("taint %d has value %s, want the last one's, %d", i, taint.Value, want)
		}
		if j, ok := u.Index(IDOf(&taint)); !ok || j != i {
			t.Fatalf("Index of taint %d = %d, %v", i, j, ok)
		}
	}
}
