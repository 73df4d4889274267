package nodeapply

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/pingnode/pingnode/internal/enum"
	"github.com/pingnode/pingnode/internal/kuberules"
)

// Unreachable is what a node says once its plugin has not answered for
// the grace ([Options.Unreachable]).
type Unreachable int

const (
	// UnreachableNotReady turns Ready False. The node lifecycle controller
	// then taints the node node.kubernetes.io/not-ready, NoSchedule and
	// NoExecute: no new pod lands, and every running pod without a
	// toleration for it is evicted after its toleration seconds (300 s,
	// the default that admission gives every pod); the provider is told
	// to delete it, and the backend cancels the job. Pods are also
	// marked not ready, and leave their Services' endpoints.
	UnreachableNotReady Unreachable = iota
	// UnreachableNoSchedule keeps Ready True, with the reason
	// [ReasonPluginUnreachableKeepingPods], and puts pingnode's own taint
	// [UnreachableTaintKey]:NoSchedule on the node: no new pod lands, and
	// running pods stay, ready, in their Services' endpoints. The taint
	// goes at the next answered ping. Ready turns False only after
	// [Options.NotReadyAfter], if it is set.
	UnreachableNoSchedule
)

var unreachableNames = [...]string{"NotReady", "NoSchedule"}

// String returns "NotReady" or "NoSchedule".
func (u Unreachable) String() string { return enum.Name(unreachableNames[:], int(u), "Unreachable") }

// MarshalText returns the policy as [Unreachable.String] writes it.
func (u Unreachable) MarshalText() ([]byte, error) {
	return enum.Marshal(u, u >= UnreachableNotReady && u <= UnreachableNoSchedule)
}

// UnmarshalText reads what MarshalText writes, so that a flag or a
// configuration file can name the policy.
func (u *Unreachable) UnmarshalText(b []byte) error {
	return enum.Unmarshal(u, b, UnreachableNotReady, UnreachableNoSchedule)
}

// UnreachableTaintKey is the key of the taint that Apply puts on a node,
// with the effect NoSchedule, while its plugin has not answered for the
// grace under [UnreachableNoSchedule]. It is pingnode's own: no plugin may
// set it, and Apply adds and removes only this key with this effect.
const UnreachableTaintKey = kuberules.UnreachableTaintKey

// PartGoneTaintKey is the key of the taint that Apply puts on a part's
// node, with the effect NoSchedule and the ping's time as the time it was
// added, when the plugin's reply no longer lists the part
// ([Ping.Unlisted]). It is pingnode's own: no plugin may set it.
const PartGoneTaintKey = kuberules.PartGoneTaintKey

// isUnreachable reports whether t is the unreachable taint (key and
// effect).
func isUnreachable(t *corev1.Taint) bool {
	return t.Key == UnreachableTaintKey && t.Effect == corev1.TaintEffectNoSchedule
}

// unreachableTaint puts the unreachable taint on the node, at the end,
// or removes it, as the ping asks (rule unreachable-taint): an answered
// ping removes it; a failed one with a time puts it when the grace has
// ended under UnreachableNoSchedule and removes it otherwise; a failed
// one without a time leaves it. Other taints keep their place. The taint
// has no value, so that it never changes while it stands, and no time
// added (Apply has no clock; the connectivity condition says since when).
func (a *applier) unreachableTaint() {
	present := a.pastGrace() && a.opts.Unreachable == UnreachableNoSchedule
	if !a.ping.Reached() && a.at.IsZero() {
		return
	}
	if n, _ := countOwn(a.node(), isUnreachable); n == 0 && !present || n == 1 && present {
		return // as the ping asks already: no copy
	}
	putOwn(a.edit(concernTaints), isUnreachable, present, corev1.Taint{Key: UnreachableTaintKey, Effect: corev1.TaintEffectNoSchedule})
}

// countOwn returns how many of node's taints is tells, one of pingnode's
// own, and where the last of them stands.
func countOwn(node *corev1.Node, is func(*corev1.Taint) bool) (n, last int) {
	last = -1
	for i := range node.Spec.Taints {
		if is(&node.Spec.Taints[i]) {
			n, last = n+1, i
		}
	}
	return n, last
}

// putOwn replaces on out the taints that is tells, one of pingnode's own,
// by taint at the end when present, or by none; other taints keep their
// place. The unreachable, part-gone and backend-full taints go so.
func putOwn(out *corev1.Node, is func(*corev1.Taint) bool, present bool, taint corev1.Taint) {
	kept := make([]corev1.Taint, 0, len(out.Spec.Taints)+1)
	for _, t := range out.Spec.Taints {
		if !is(&t) {
			kept = append(kept, t)
		}
	}
	if present {
		kept = append(kept, taint)
	}
	if len(kept) == 0 {
		kept = nil
	}
	out.Spec.Taints = kept
}
