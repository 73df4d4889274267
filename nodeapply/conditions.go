package nodeapply

import (
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/pingnode/pingnode/internal/text"
)

// conditionWant is what a ping asks of one of the conditions Apply
// writes.
type conditionWant struct {
	typ corev1.NodeConditionType
	// leave: the condition stays as it is (Ready while the failures have
	// lasted less than the grace period).
	leave  bool
	status corev1.ConditionStatus
	reason string
	// The message is prefix+detail, or, with since set, prefix, since and
	// detail (if any). With keepMessage, a condition that has the status
	// and reason already keeps its message: Ready False and Unknown say
	// how the run of failures began, or since when the part is gone, once.
	prefix, detail string
	since          time.Time
	keepMessage    bool
}

func (w *conditionWant) message() string {
	switch {
	case w.since.IsZero():
		return w.prefix + w.detail
	case w.detail == "":
		return w.prefix + w.since.UTC().Format(time.RFC3339)
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

// virtualNodeWants are what every ping with a time asks, with
// [Options.VirtualNodeConditions], of the conditions that the kubelet and
// the network set on a real node: the same at every ping, so kept once,
// read-only.
var virtualNodeWants = [...]conditionWant{
	{typ: corev1.NodeMemoryPressure, status: corev1.ConditionFalse, reason: ReasonVirtualNode, prefix: messageVirtualPressure},
	{typ: corev1.NodeDiskPressure, status: corev1.ConditionFalse, reason: ReasonVirtualNode, prefix: messageVirtualPressure},
	{typ: corev1.NodePIDPressure, status: corev1.ConditionFalse, reason: ReasonVirtualNode, prefix: messageVirtualPressure},
	{typ: corev1.NodeNetworkUnavailable, status: corev1.ConditionFalse, reason: ReasonVirtualNode, prefix: messageVirtualNetwork},
}

// conditionWants works out what the ping asks of Ready, of the
// connectivity condition and, with Options.VirtualNodeConditions, of the
// virtual node's conditions, from the ping and the node's own conditions.
func (a *checker) conditionWants() {
	a.wants[0], a.wants[1] = a.reachabilityWants()
	a.virtual = a.opts.VirtualNodeConditions
}

// reachabilityWants works out what the ping asks of Ready and of the
// connectivity condition.
func (a *checker) reachabilityWants() (ready, conn conditionWant) {
	at := a.at
	ready = conditionWant{typ: corev1.NodeReady}
	conn = conditionWant{typ: a.opts.connectivity()}
	if a.ping.Reached() {
		conn.status, conn.reason, conn.prefix = corev1.ConditionTrue, ReasonPingSuccessful, messagePingSuccessful
		if a.ping.Unlisted { // rule 20
			return a.partGoneReady(), conn
		}
		ready.status, ready.reason, ready.prefix = corev1.ConditionTrue, ReasonPluginReachable, messagePluginReachable
		return ready, conn
	}
	detail := text.Clean(a.ping.Failure, MaxFailureBytes)
	conn.status, conn.reason, conn.prefix, conn.detail = corev1.ConditionFalse, ReasonPingFailed, messagePingFailed, detail

	// The run of failures began when the connectivity condition turned
	// False, or begins now.
	conditions := a.in.Status.Conditions
	start := at
	if i := findCondition(conditions, conn.typ); i >= 0 && conditions[i].Status == corev1.ConditionFalse {
		start = conditions[i].LastTransitionTime.Time
	}
	lasted := max(at.Sub(start), 0) // a clock that went back counts as no time
	a.pastGrace = a.opts.NoGrace || lasted >= a.opts.grace()
	keepPods := a.opts.Unreachable == UnreachableNoSchedule && (a.opts.NotReadyAfter <= 0 || lasted < a.opts.NotReadyAfter)
	switch {
	case a.pastGrace && keepPods:
		ready.status, ready.reason, ready.keepMessage = corev1.ConditionTrue, ReasonPluginUnreachableKeepingPods, true
		ready.prefix, ready.since, ready.detail = messageKeepingPods, start, detail
	case a.pastGrace:
		ready.status, ready.reason, ready.keepMessage = corev1.ConditionFalse, ReasonPluginUnreachable, true
		ready.prefix, ready.since, ready.detail = messageUnreachable, start, detail
	case findCondition(conditions, corev1.NodeReady) < 0:
		ready.status, ready.reason, ready.keepMessage = corev1.ConditionUnknown, ReasonPluginNotReached, true
		ready.prefix, ready.detail = messageNotReached, detail
	default:
		ready.leave = true
	}
	return ready, conn
}

// wantCount returns how many conditions the ping asks for: none without a
// time, Ready and the connectivity condition, and perhaps the virtual
// node's four.
func (a *checker) wantCount() int {
	switch {
	case a.at.IsZero():
		return 0
	case a.virtual:
		return len(a.wants) + len(virtualNodeWants)
	}
	return len(a.wants)
}

// want returns what the ping asks of the k-th condition, in the order a
// node with none gets them. It is read-only.
func (a *checker) want(k int) *conditionWant {
	if k < len(a.wants) {
		return &a.wants[k]
	}
	return &virtualNodeWants[k-len(a.wants)]
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
	conditions := a.in.Status.Conditions
	for k := range a.wantCount() {
		w := a.want(k)
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

// conditions writes the conditions the ping asks for to out: a new one at the end of the
// list, a changed one in its place. The transition time moves only when
// the status does; the heartbeat moves whenever the condition changes, or
// is older than Options.HeartbeatInterval.
func (a *applier) conditions(out *corev1.Node) {
	at := metav1.NewTime(a.at)
	for k := range a.wantCount() {
		w := a.want(k)
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
