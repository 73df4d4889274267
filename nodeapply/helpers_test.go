package nodeapply_test

import (
	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
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
