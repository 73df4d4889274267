package kuberules

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// pairwiseLimit is how many taints are checked for repeats pair by pair
// (no allocation) before a map is used (linear time).
const pairwiseLimit = 16

// NodeProblems returns what the API server would reject in node's capacity,
// allocatable and taints, each as "path: problem". It is nil for a valid
// node (and for nil), and then it does not allocate when the node has at
// most 16 taints.
func NodeProblems(node *corev1.Node) []string {
	if node == nil {
		return nil
	}
	var problems []string
	add := func(path, problem string) { problems = append(problems, path+": "+problem) }
	for name, q := range node.Status.Capacity {
		if p := QuantityProblem(name, q); p != "" {
			add("status.capacity["+string(name)+"]", q.String()+" "+p)
		}
	}
	for name, q := range node.Status.Allocatable {
		if p := QuantityProblem(name, q); p != "" {
			add("status.allocatable["+string(name)+"]", q.String()+" "+p)
		}
	}
	taints := node.Spec.Taints
	var check TaintCheck // unbounded: the API server reads every name
	for i := range taints {
		t := &taints[i]
		path := func() string { return "spec.taints[" + IDOf(t).String() + "]" }
		problems := check.validity(t) // whose key it is does not count here
		if problems.Key != "" {
			add(path(), "key "+problems.Key)
		}
		if problems.Value != "" {
			add(path(), "value "+problems.Value)
		}
		if problems.Effect {
			add(path(), "effect must be NoSchedule, PreferNoSchedule or NoExecute")
		}
	}
	if i, j := FirstRepeat(taints); i >= 0 {
		add("spec.taints["+IDOf(&taints[j]).String()+"]", "taints must be unique by key and effect")
	}
	slices.Sort(problems)
	return problems
}

// FirstRepeat returns the indexes i < j of the first taint j whose key and
// effect repeat an earlier taint i, or -1, -1 if they are unique.
func FirstRepeat(taints []corev1.Taint) (int, int) {
	if len(taints) <= pairwiseLimit {
		for j := range taints {
			for i := range j {
				if IDOf(&taints[i]) == IDOf(&taints[j]) {
					return i, j
				}
			}
		}
		return -1, -1
	}
	seen := make(map[TaintID]int, len(taints))
	for j := range taints {
		id := IDOf(&taints[j])
		if i, ok := seen[id]; ok {
			return i, j
		}
		seen[id] = j
	}
	return -1, -1
}
