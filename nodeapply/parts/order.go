package parts

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/pingnode/pingnode/pingstatus"
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

// partsOrder returns nil when parts are in name order, each name once,
// as Parse gives them; otherwise their indices in name order, of a name
// listed twice the last (rule 9).
func partsOrder(parts []pingstatus.Part) []int {
	inOrder := true
	for i := 1; i < len(parts); i++ {
		if parts[i-1].Name >= parts[i].Name {
			inOrder = false
			break
		}
	}
	if inOrder {
		return nil
	}
	order := make([]int, len(parts))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return strings.Compare(parts[a].Name, parts[b].Name) })
	last := order[:0]
	for k, i := range order {
		if k+1 < len(order) && parts[order[k+1]].Name == parts[i].Name {
			continue // a later entry of the same name follows
		}
		last = append(last, i)
	}
	return last
}

// listedLen is how many parts the reply lists, each name once.
func (s *stepper) listedLen() int {
	if s.order != nil {
		return len(s.order)
	}
	return len(s.parts)
}

// listed returns the jth listed part in name order, in the reply itself.
func (s *stepper) listed(j int) *pingstatus.Part {
	if s.order != nil {
		return &s.parts[s.order[j]]
	}
	return &s.parts[j]
}
