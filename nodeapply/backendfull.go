package nodeapply

import (
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/pingnode/pingnode/internal/kuberules"
	"github.com/pingnode/pingnode/pingstatus"
)

// BackendFullTaintKey is the key of the taint that Apply puts on a node,
// with the effect NoSchedule, while the plugin's reply says that the
// backend has no free cpu or memory now ([pingstatus.NodePatch.Full]),
// its value the resources it has none of, joined with "." ("cpu",
// "memory", "cpu.memory"). It is pingnode's own: no plugin may set it.
const BackendFullTaintKey = kuberules.BackendFullTaintKey

// isBackendFull reports whether t is the backend-full taint (key and
// effect).
func isBackendFull(t *corev1.Taint) bool {
	return t.Key == BackendFullTaintKey && t.Effect == corev1.TaintEffectNoSchedule
}

// fullValue returns the value of the backend-full taint for full, the
// resources the backend has none of free now: their names joined with
// ".", a label value. The cases a judged patch has cost no allocation.
func fullValue(full []corev1.ResourceName) string {
	switch {
	case len(full) == 1:
		return string(full[0])
	case len(full) == 2 && full[0] == corev1.ResourceCPU && full[1] == corev1.ResourceMemory:
		return "cpu.memory"
	}
	names := make([]string, len(full))
	for i, name := range full {
		names[i] = string(name)
	}
	return strings.Join(names, ".")
}

// newsOfRoom reports whether p says anything of the backend's cpu or
// memory now: a figure of either, or that it has none free.
func newsOfRoom(p *pingstatus.NodePatch) bool {
	if len(p.Full) > 0 {
		return true
	}
	_, cpu := p.Resources[corev1.ResourceCPU]
	_, memory := p.Resources[corev1.ResourceMemory]
	return cpu || memory
}

// backendFullTaint puts the backend-full taint on the node, changes its
// value, or removes it, as the reply asks (rule backend-full): a reply
// that says the backend has no free cpu or memory now puts it, its value
// what the backend has none of; a reply with news of cpu or memory and
// no such word removes it; any other ping (no reply, a legacy one, a
// failed or Unlisted ping, whose reply is no news) leaves it. One the
// node has keeps its place, and the time it was added, when its value
// changes; a new one goes at the end, without a time added. Other taints
// keep their place.
func (a *applier) backendFullTaint() {
	if !newsOfRoom(a.patch) {
		return
	}
	present := len(a.patch.Full) > 0
	value := fullValue(a.patch.Full)
	n, last := countOwn(a.node(), isBackendFull)
	switch {
	case n == 0 && !present:
		return // as the reply asks already: no copy
	case n == 1 && present && a.node().Spec.Taints[last].Value == value:
		return
	case n == 1 && present:
		a.edit(concernTaints).Spec.Taints[last].Value = value // the copy's taints are its own
		return
	}
	putOwn(a.edit(concernTaints), isBackendFull, present, corev1.Taint{Key: BackendFullTaintKey, Value: value, Effect: corev1.TaintEffectNoSchedule})
}
