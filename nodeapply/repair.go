package nodeapply

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/pingnode/pingnode/internal/kuberules"
	"github.com/pingnode/pingnode/internal/text"
	"github.com/pingnode/pingnode/pingstatus"
)

// repair makes the node valid where the API server would reject it
// (rule node-valid), changing as little as it can and always to the safe
// side, with a warning for each repair: a negative quantity becomes 0; a
// fraction of a whole-number resource is rounded down; a taint with an
// invalid key or value is dropped; an invalid effect becomes NoSchedule;
// of taints repeating a key and effect, the last is kept. A valid node is
// not copied.
func (a *applier) repair() {
	if kuberules.NodeProblems(a.node()) == nil {
		return
	}
	out := a.edit(concernResources | concernTaints)
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
		a.warn(ruleNodeValid, pingstatus.SubjectResource, pingstatus.Repaired, path+"["+string(name)+"]", "the node had "+q.String()+", which "+problem+" (the API server would refuse the node); set to "+fixed.String())
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

// repairTaints drops the taints of out with an invalid key or value, reads
// an invalid effect as NoSchedule, and of taints that repeat a key and
// effect keeps the last, in the place of the first.
func (a *applier) repairTaints(out *corev1.Node) {
	taints := out.Spec.Taints
	if taints == nil {
		return
	}
	var check kuberules.TaintCheck // the node's own taints: reserved and protected keys are fine
	unique := kuberules.NewUniqueTaints(len(taints))
	for i := range taints {
		t := taints[i]
		path := "spec.taints[" + kuberules.IDOf(&t).String() + "]"
		problems := check.Check(&t)
		if problems.Key != "" {
			a.warn(ruleNodeValid, pingstatus.SubjectTaint, pingstatus.Repaired, path, "the node had a taint whose key "+problems.Key+"; dropped (the API server would refuse the node)")
			continue
		}
		if problems.Value != "" {
			a.warn(ruleNodeValid, pingstatus.SubjectTaint, pingstatus.Repaired, path, "the node had a taint whose value "+problems.Value+"; dropped (the API server would refuse the node)")
			continue
		}
		if problems.Effect {
			a.warn(ruleNodeValid, pingstatus.SubjectTaint, pingstatus.Repaired, path, "the node had a taint with effect "+quote(string(t.Effect))+"; NoSchedule used")
			t.Effect = corev1.TaintEffectNoSchedule
		}
		if _, repeated := unique.Add(t, i); repeated {
			a.warn(ruleNodeValid, pingstatus.SubjectTaint, pingstatus.Repaired, "spec.taints["+kuberules.IDOf(&t).String()+"]", "the node had this key and effect twice; the last is kept")
		}
	}
	out.Spec.Taints = unique.List
}

// quote quotes text from the node for a warning, escaped and bounded.
func quote(s string) string { return text.Quote(s, 64) }
