package nodeapply

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The part-gone rule (rule part-gone): a ping with Ping.Unlisted puts the
// part-gone taint on the node, with the time the part left, and turns
// Ready False once the part has been gone for Options.PartGrace. The
// taint is the rule's memory: its TimeAdded is when the part left, read
// back from the node at every ping, as the connectivity condition's
// transition time is the start of a run of failures.

// isPartGone reports whether t is the part-gone taint (key and effect).
func isPartGone(t *corev1.Taint) bool {
	return t.Key == PartGoneTaintKey && t.Effect == corev1.TaintEffectNoSchedule
}

// hasTimeAdded reports whether t says when it was added. A zero time,
// which the API server stores as none, is none.
func hasTimeAdded(t *corev1.Taint) bool { return t.TimeAdded != nil && !t.TimeAdded.IsZero() }

// PartGone reports whether the node's part has left the backend (rule
// part-gone): whether the node has the part-gone taint, [PartGoneTaintKey] with
// the effect NoSchedule, and since when, the time it was added to the
// second, zero when it says none. Of several such taints the last
// counts, as a repair keeps it. Package parts reads it so too.
func PartGone(node *corev1.Node) (since time.Time, gone bool) {
	if node == nil {
		return time.Time{}, false
	}
	taints := node.Spec.Taints
	for i := len(taints) - 1; i >= 0; i-- {
		if t := &taints[i]; isPartGone(t) {
			if hasTimeAdded(t) {
				return t.TimeAdded.UTC().Truncate(time.Second), true
			}
			return time.Time{}, true
		}
	}
	return time.Time{}, false
}

// PartGraceOver reports whether a part gone since since (as [PartGone]
// says) has been gone for the part's grace ([Options.PartGrace]) at the
// time at, to the second (rule part-gone): from then on Apply turns its node's
// Ready False, and package parts may delete it. Never with a zero since
// or at; a time at before since counts as no time passed.
func (o *Options) PartGraceOver(since, at time.Time) bool {
	if since.IsZero() || at.IsZero() {
		return false
	}
	return at.UTC().Truncate(time.Second).Sub(since) >= o.partGrace()
}

// partLeft returns when the part left: as [PartGone] says, or, for a
// taint without a time or none at all, the ping's time (zero for a ping
// without a time).
func (a *applier) partLeft() time.Time {
	if since, _ := PartGone(a.in); !since.IsZero() {
		return since
	}
	return a.at
}

// partGoneReady works out what an Unlisted ping with a time asks of
// Ready: while the part has been gone less than PartGrace, a Ready True
// is an answered ping's, a Ready False for the part is kept (a clock that
// stepped back does not bring the grace back), and any other Ready, or
// none, is Unknown, saying why (an earlier reason, such as the plugin's
// being unreachable, no longer holds: it answers); False after the grace.
// The message says since when, once, as Ready's unreachable message
// does.
func (a *applier) partGoneReady() conditionWant {
	ready := conditionWant{typ: corev1.NodeReady}
	left := a.partLeft()
	conditions := a.in.Status.Conditions
	i := findCondition(conditions, corev1.NodeReady)
	switch {
	case a.opts.PartGraceOver(left, a.at), i >= 0 && conditions[i].Status == corev1.ConditionFalse && conditions[i].Reason == ReasonPartGone:
		ready.status = corev1.ConditionFalse
	case i < 0 || conditions[i].Status != corev1.ConditionTrue:
		ready.status = corev1.ConditionUnknown
	default: // an answered ping's (rule ping-answered)
		ready.status, ready.reason, ready.prefix = corev1.ConditionTrue, ReasonPluginReachable, messagePluginReachable
		return ready
	}
	ready.reason, ready.keepMessage, ready.prefix, ready.since = ReasonPartGone, true, messagePartGone, left
	return ready
}

// partGoneTaint puts the part-gone taint on the node, or removes it, as
// the ping asks (rule part-gone): an Unlisted ping puts it, another
// answered ping removes it, and a failed one leaves it. One the node has
// stays in its place as it is, given the ping's time if it has none; a
// new one goes at the end, with the time the part left (the ping's,
// unless a repair dropped one that said otherwise). Other taints keep
// their place.
func (a *applier) partGoneTaint() {
	if !a.ping.Reached() {
		return
	}
	present := a.ping.Unlisted
	n, last := countOwn(a.node(), isPartGone)
	switch {
	case n == 0 && !present:
		return // as the ping asks already: no copy
	case n == 1 && present:
		if t := &a.node().Spec.Taints[last]; !hasTimeAdded(t) && !a.at.IsZero() {
			added := metav1.NewTime(a.at)
			a.edit(concernTaints).Spec.Taints[last].TimeAdded = &added // the copy's taints are its own
		}
		return
	}
	taint := corev1.Taint{Key: PartGoneTaintKey, Effect: corev1.TaintEffectNoSchedule}
	if left := a.partLeft(); !left.IsZero() && present {
		added := metav1.NewTime(left)
		taint.TimeAdded = &added
	}
	putOwn(a.edit(concernTaints), isPartGone, present, taint)
}
