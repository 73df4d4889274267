package nodeapply

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/pingnode/pingnode/internal/kuberules"
	"github.com/pingnode/pingnode/internal/text"
)

// repair makes out valid where the API server would reject it, changing
// as little as it can and always to the safe side, with a warning for each
// repair: a negative quantity becomes 0; a fraction of a whole-number
// resource is rounded down; a taint with an invalid key or value is
// dropped; an invalid effect becomes NoSchedule; of taints repeating a key
// and effect, the last is kept.
func (a *applier) repair(out *corev1.Node) {
	a.repairList(out.Status.Capacity, "status.capacity")
	a.repairList(out.Status.Allocatable, "status.allocatable")
	a.repairTaints(out)
}

func (a *applier) repairList(list corev1.ResourceList, path string) {
	for name, q := range list {
		problem := kuberules.QuantityProblem(name, q)
		if problem == "" {
			continue
		}
		fixed := roundDown(q)
		if kuberules.QuantityProblem(name, fixed) != "" { // negative, or too large to round
			fixed = resource.Quantity{}
		}
		list[name] = fixed
		a.warn(path+"["+string(name)+"]", "the node had "+q.String()+", which "+problem+" (the API server would refuse the node); set to "+fixed.String())
	}
}

// roundDown returns the whole number at or below q.
func roundDown(q resource.Quantity) resource.Quantity {
	n := q.Value() // rounded up
	whole := *resource.NewQuantity(n, resource.DecimalSI)
	if whole.Cmp(q) > 0 {
		whole = *resource.NewQuantity(n-1, resource.DecimalSI)
	}
	return whole
}

func (a *applier) repairTaints(out *corev1.Node) {
	taints := out.Spec.Taints
	kept := taints[:0:0]
	last := map[kuberules.TaintID]int{} // index in kept
	for i := range taints {
		t := taints[i]
		path := "spec.taints[" + kuberules.IDOf(&t).String() + "]"
		if p := kuberules.TaintKeyProblem(t.Key); p != "" {
			a.warn(path, "the node had a taint whose key "+p+"; dropped (the API server would refuse the node)")
			continue
		}
		if p := kuberules.TaintValueProblem(t.Value); p != "" {
			a.warn(path, "the node had a taint whose value "+p+"; dropped (the API server would refuse the node)")
			continue
		}
		if !kuberules.IsValidEffect(t.Effect) {
			a.warn(path, "the node had a taint with effect "+quote(string(t.Effect))+"; NoSchedule used")
			t.Effect = corev1.TaintEffectNoSchedule
		}
		id := kuberules.IDOf(&t)
		if j, dup := last[id]; dup {
			a.warn("spec.taints["+id.String()+"]", "the node had this key and effect twice; the last is kept")
			kept[j] = t
			continue
		}
		last[id] = len(kept)
		kept = append(kept, t)
	}
	out.Spec.Taints = kept
}

// quote quotes text from the node for a warning, escaped and bounded.
func quote(s string) string { return text.Quote(s, 64) }
