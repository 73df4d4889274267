package nodeapply

import (
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/pingnode/pingnode/internal/text"
)

// conditionWant is what a ping asks of one of the two conditions Apply
// writes.
type conditionWant struct {
	typ corev1.NodeConditionType
	// leave: the condition stays as it is (Ready while the failures have
	// lasted less than the grace period).
	leave  bool
	status corev1.ConditionStatus
	reason string
	// The message is prefix+detail, or, with since set, prefix, since and
	// detail. With keepMessage, a condition that has the status and reason
	// already keeps its message: Ready False and Unknown say how the run
	// of failures began, once.
	prefix, detail string
	since          time.Time
	keepMessage    bool
}

func (w *conditionWant) message() string {
	if w.since.IsZero() {
		return w.prefix + w.detail
	}
	return w.prefix + w.since.UTC().Format(time.RFC3339) + ": " + w.detail
}

// satisfiedBy reports whether c is as w asks, without allocating.
func (w *conditionWant) satisfiedBy(c *corev1.NodeCondition) bool {
	if w.leave {
		return true
	}
	if c.Status != w.status || c.Reason != w.reason {
		return false
	}
	return w.keepMessage || len(c.Message) == len(w.prefix)+len(w.detail) &&
		strings.HasPrefix(c.Message, w.prefix) && strings.HasSuffix(c.Message, w.detail)
}

// findCondition returns the index of the condition of type t, or -1.
func findCondition(conditions []corev1.NodeCondition, t corev1.NodeConditionType) int {
	for i := range conditions {
		if conditions[i].Type == t {
			return i
		}
	}
	return -1
}

// conditionWants works out what the ping asks of Ready and of the
// connectivity condition, from the ping and the node's own conditions.
func (a *checker) conditionWants() {
	at := a.at
	ready := conditionWant{typ: corev1.NodeReady}
	conn := conditionWant{typ: a.opts.connectivity()}
	if a.ping.Reached() {
		conn.status, conn.reason, conn.prefix = corev1.ConditionTrue, ReasonPingSuccessful, messagePingSuccessful
		ready.status, ready.reason, ready.prefix = corev1.ConditionTrue, ReasonPluginReachable, messagePluginReachable
		a.wants = [2]conditionWant{ready, conn}
		return
	}
	detail := text.Clean(a.ping.Failure, MaxFailureBytes)
	conn.status, conn.reason, conn.prefix, conn.detail = corev1.ConditionFalse, ReasonPingFailed, messagePingFailed, detail

	// The run of failures began when the connectivity condition turned
	// False, or begins now.
	var conditions []corev1.NodeCondition
	if a.in != nil {
		conditions = a.in.Status.Conditions
	}
	start := at
	if i := findCondition(conditions, conn.typ); i >= 0 && conditions[i].Status == corev1.ConditionFalse {
		start = conditions[i].LastTransitionTime.Time
	}
	lasted := max(at.Sub(start), 0) // a clock that went back counts as no time
	grace := a.opts.grace()
	switch {
	case grace < 0 || lasted >= grace:
		ready.status, ready.reason, ready.keepMessage = corev1.ConditionFalse, ReasonPluginUnreachable, true
		ready.prefix, ready.since, ready.detail = messageUnreachable, start, detail
	case findCondition(conditions, corev1.NodeReady) < 0:
		ready.status, ready.reason, ready.keepMessage = corev1.ConditionUnknown, ReasonPluginNotReached, true
		ready.prefix, ready.detail = messageNotReached, detail
	default:
		ready.leave = true
	}
	a.wants = [2]conditionWant{ready, conn}
}

// heartbeatDue reports whether c's heartbeat is older than
// Options.HeartbeatInterval.
func (a *checker) heartbeatDue(c *corev1.NodeCondition) bool {
	return a.opts.HeartbeatInterval > 0 && a.at.Sub(c.LastHeartbeatTime.Time) >= a.opts.HeartbeatInterval
}

// conditionsUnchanged reports whether the node's conditions are as the
// ping asks.
func (a *checker) conditionsUnchanged() bool {
	if a.at.IsZero() {
		return true
	}
	var conditions []corev1.NodeCondition
	if a.in != nil {
		conditions = a.in.Status.Conditions
	}
	for k := range a.wants {
		w := &a.wants[k]
		i := findCondition(conditions, w.typ)
		if i < 0 {
			if !w.leave {
				return false
			}
			continue
		}
		if !w.satisfiedBy(&conditions[i]) || a.heartbeatDue(&conditions[i]) {
			return false
		}
	}
	return true
}

// conditions writes the two conditions to out: a new one at the end of the
// list, a changed one in its place. The transition time moves only when
// the status does; the heartbeat moves whenever the condition changes, or
// is older than Options.HeartbeatInterval.
func (a *applier) conditions(out *corev1.Node) {
	at := metav1.NewTime(a.at)
	for k := range a.wants {
		w := &a.wants[k]
		i := findCondition(out.Status.Conditions, w.typ)
		if i < 0 {
			if !w.leave {
				out.Status.Conditions = append(out.Status.Conditions, corev1.NodeCondition{
					Type: w.typ, Status: w.status, Reason: w.reason, Message: w.message(),
					LastHeartbeatTime: at, LastTransitionTime: at,
				})
			}
			continue
		}
		c := &out.Status.Conditions[i]
		if !w.satisfiedBy(c) {
			if c.Status != w.status {
				c.Status, c.LastTransitionTime = w.status, at
				c.Message = w.message()
			}
			if c.Reason != w.reason || !w.keepMessage {
				c.Message = w.message()
			}
			c.Reason, c.LastHeartbeatTime = w.reason, at
			continue
		}
		if a.heartbeatDue(c) {
			c.LastHeartbeatTime = at
		}
	}
}

// pingResponse returns the value of interLink's ping-response annotation
// after the ping: the body, cleaned and cut, or "" when the ping failed.
func (a *checker) pingResponse() string {
	if !a.ping.Reached() {
		return ""
	}
	return text.Clean(string(a.ping.Body), MaxPingResponseBytes)
}

// pingResponseUnchanged reports whether the annotation is as the ping
// asks, or not asked for.
func (a *checker) pingResponseUnchanged() bool {
	if !a.opts.PingResponseAnnotation {
		return true
	}
	if a.in == nil {
		return false
	}
	v, ok := a.in.Annotations[PingResponseAnnotation]
	return ok && v == a.pingResponse()
}

func (a *applier) setPingResponse(out *corev1.Node) {
	if out.Annotations == nil {
		out.Annotations = map[string]string{}
	}
	out.Annotations[PingResponseAnnotation] = a.pingResponse()
}

// diffConditions lists the changes to the two conditions: a new condition
// is one change, a changed one a change per field.
func (a *applier) diffConditions(changes []Change, in, out []corev1.NodeCondition) []Change {
	for k := range a.wants {
		t := a.wants[k].typ
		path := "status.conditions[" + string(t) + "]"
		j := findCondition(out, t)
		if j < 0 {
			continue // Apply never removes a condition
		}
		o := &out[j]
		i := findCondition(in, t)
		if i < 0 {
			changes = append(changes, Change{Op: Added, Path: path, New: conditionText(o)})
			continue
		}
		b := &in[i]
		field := func(name, old, now string) {
			if old != now {
				changes = append(changes, Change{Op: Modified, Path: path + "." + name, Old: old, New: now})
			}
		}
		field("status", string(b.Status), string(o.Status))
		field("reason", b.Reason, o.Reason)
		field("message", b.Message, o.Message)
		field("lastTransitionTime", timeText(b.LastTransitionTime), timeText(o.LastTransitionTime))
		field("lastHeartbeatTime", timeText(b.LastHeartbeatTime), timeText(o.LastHeartbeatTime))
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
