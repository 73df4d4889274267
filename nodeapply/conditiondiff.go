package nodeapply

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/pingnode/pingnode/pingstatus"
)

// conditionFields are the fields of a node condition besides its type,
// the one place that decides whether two conditions are equal: the change
// list names each field that differs, and the status patch carries each
// condition with one. Times count to the second, as the API server keeps
// them.
var conditionFields = [...]struct {
	name string
	same func(a, b *corev1.NodeCondition) bool
	text func(c *corev1.NodeCondition) string
}{
	{"status", func(a, b *corev1.NodeCondition) bool { return a.Status == b.Status }, func(c *corev1.NodeCondition) string { return string(c.Status) }},
	{"reason", func(a, b *corev1.NodeCondition) bool { return a.Reason == b.Reason }, func(c *corev1.NodeCondition) string { return c.Reason }},
	{"message", func(a, b *corev1.NodeCondition) bool { return a.Message == b.Message }, func(c *corev1.NodeCondition) string { return c.Message }},
	{"lastTransitionTime", func(a, b *corev1.NodeCondition) bool { return sameSecond(a.LastTransitionTime, b.LastTransitionTime) },
		func(c *corev1.NodeCondition) string { return timeText(c.LastTransitionTime) }},
	{"lastHeartbeatTime", func(a, b *corev1.NodeCondition) bool { return sameSecond(a.LastHeartbeatTime, b.LastHeartbeatTime) },
		func(c *corev1.NodeCondition) string { return timeText(c.LastHeartbeatTime) }},
}

// sameCondition reports whether two conditions are equal: of one type, and
// the same in every field of conditionFields.
func sameCondition(a, b *corev1.NodeCondition) bool {
	if a.Type != b.Type {
		return false
	}
	for _, f := range conditionFields {
		if !f.same(a, b) {
			return false
		}
	}
	return true
}

func sameSecond(a, b metav1.Time) bool {
	return a.Truncate(time.Second).Equal(b.Truncate(time.Second))
}

// diffConditions lists the changes to the conditions: a new condition is
// one change, a changed one a change per field. Apply never removes a
// condition and keeps each in its place (rule condition-others), so out
// is in with some changed and some new at the end.
func diffConditions(changes []Change, in, out []corev1.NodeCondition) []Change {
	for j := range out {
		o := &out[j]
		path := "status.conditions[" + string(o.Type) + "]"
		if j >= len(in) {
			changes = append(changes, Change{Op: Added, Subject: pingstatus.SubjectCondition, Path: path, New: conditionText(o)})
			continue
		}
		b := &in[j]
		for _, f := range conditionFields {
			if !f.same(b, o) {
				changes = append(changes, Change{Op: Modified, Subject: pingstatus.SubjectCondition, Path: path + "." + f.name, Old: f.text(b), New: f.text(o)})
			}
		}
	}
	return changes
}

// conditionText is a condition as one line: "False InterlinkPingFailed:
// message (since 2026-11-30T00:00:00Z)".
func conditionText(c *corev1.NodeCondition) string {
	return string(c.Status) + " " + c.Reason + ": " + c.Message + " (since " + timeText(c.LastTransitionTime) + ")"
}

func timeText(t metav1.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}
