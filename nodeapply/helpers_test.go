package nodeapply_test

import (
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/pingstatus"
)

// exactQuantities compares quantities by value and by spelling, so that a
// test sees any change Apply made to its input, even a cached string.
var exactQuantities = cmp.Comparer(func(a, b resource.Quantity) bool {
	return a.Cmp(b) == 0 && a.Format == b.Format
})

// equateQuantities compares quantities by value, as the API server does.
var equateQuantities = cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })

// nodeDiff is cmp.Diff for nodes, with quantities compared by value and
// format.
func nodeDiff(want, got *corev1.Node) string {
	return cmp.Diff(want, got, exactQuantities)
}

// nodeChanges counts the changes of res that are of the node, not of
// its devices: the node Apply returns is the input exactly when there
// are none.
func nodeChanges(res nodeapply.Result) int {
	n := 0
	for _, c := range res.Changes {
		if c.Subject != pingstatus.SubjectDevice {
			n++
		}
	}
	return n
}
