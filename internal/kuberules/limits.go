package kuberules

import (
	"math"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// TooLarge reports whether v is more than a scheduler can count for name in
// an int64: thousandths for cpu and whole-number resources (whose
// validation counts in thousandths too), bytes otherwise. A byte count of
// 2^63-1 is refused as well, since the quantity parser silently caps larger
// binary values ("100Ei") at it. It does not allocate for values that fit
// an int64.
func TooLarge(name corev1.ResourceName, v resource.Quantity) bool {
	thousandths := countsInThousandths(name)
	if n, ok := v.AsInt64(); ok {
		return thousandths && n > math.MaxInt64/1000 || n == math.MaxInt64
	}
	if thousandths {
		return v.Cmp(*resource.NewQuantity(math.MaxInt64/1000, resource.DecimalSI)) > 0
	}
	return v.Cmp(*resource.NewQuantity(math.MaxInt64, resource.BinarySI)) >= 0
}

// LimitText says what [TooLarge] allows for name.
func LimitText(name corev1.ResourceName) string {
	if countsInThousandths(name) {
		return "the most is 9223372036854775"
	}
	return "it must be less than 8Ei"
}

func countsInThousandths(name corev1.ResourceName) bool {
	return name == corev1.ResourceCPU || IsIntegerResource(name)
}
