package parts

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// servedInOrder returns nodes sorted by part, then node name: nodes
// itself when they are so already, as Step returns them, which costs
// nothing, or else a sorted copy.
func servedInOrder(nodes []Node) []Node {
	if slices.IsSortedFunc(nodes, compareNodes) {
		return nodes
	}
	sorted := slices.Clone(nodes)
	slices.SortStableFunc(sorted, compareNodes)
	return sorted
}

func compareNodes(a, b Node) int {
	if c := strings.Compare(a.Part, b.Part); c != 0 {
		return c
	}
	return strings.Compare(nodeName(a.Node), nodeName(b.Node))
}

func nodeName(n *corev1.Node) string {
	if n == nil {
		return ""
	}
	return n.Name
}
