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

// conditions sets the conditions the ping asks for (rules condition-set
// to condition-others): a new one at the end of the list, a changed one in
// its place. The transition time moves only when the status does; the
// heartbeat moves whenever the condition changes, or is older than
// Options.HeartbeatInterval. A ping without a time leaves them alone.
func (a *applier) conditions() {
	if a.at.IsZero() {
		return
	}
	wants := [2]conditionWant{}
	wants[0], wants[1] = a.reachabilityWants()
	n := len(wants)
	if a.opts.VirtualNodeConditions {
		n += len(virtualNodeWants)
	}
	at := metav1.NewTime(a.at)
	for k := range n {
		w := &virtualNodeWants[max(k-len(wants), 0)]
		if k < len(wants) {
			w = &wants[k]
		}
		conditions := a.node().Status.Conditions
		i := findCondition(conditions, w.typ)
		switch {
		case i < 0 && w.leave:
		case i < 0:
			out := a.edit(concernConditions)
			out.Status.Conditions = append(out.Status.Conditions, corev1.NodeCondition{
				Type: w.typ, Status: w.status, Reason: w.reason, Message: w.message(),
				LastHeartbeatTime: at, LastTransitionTime: at,
			})
		case !w.satisfiedBy(&conditions[i]):
			c := &a.edit(concernConditions).Status.Conditions[i]
			if c.Status != w.status {
				c.Status, c.LastTransitionTime = w.status, at
				c.Message = w.message()
			}
			if c.Reason != w.reason || !w.keepMessage {
				c.Message = w.message()
			}
			c.Reason, c.LastHeartbeatTime = w.reason, at
		case a.heartbeatDue(&conditions[i]):
			a.edit(concernConditions).Status.Conditions[i].LastHeartbeatTime = at
		}
	}
}

// reachabilityWants works out what the ping asks of Ready and of the
// connectivity condition (rules ping-answered and ping-failed).
func (a *applier) reachabilityWants() (ready, conn conditionWant) {
	ready = conditionWant{typ: corev1.NodeReady}
	conn = conditionWant{typ: a.opts.connectivity()}
	if a.ping.Reached() {
		conn.status, conn.reason, conn.prefix = corev1.ConditionTrue, ReasonPingSuccessful, messagePingSuccessful
		if a.ping.Unlisted { // rule part-gone
			return a.partGoneReady(), conn
		}
		ready.status, ready.reason, ready.prefix = corev1.ConditionTrue, ReasonPluginReachable, messagePluginReachable
		return ready, conn
	}
	detail := text.Clean(a.ping.Failure, MaxFailureBytes)
	conn.status, conn.reason, conn.prefix, conn.detail = corev1.ConditionFalse, ReasonPingFailed, messagePingFailed, detail

	start, lasted := a.failingFor()
	pastGrace := a.opts.NoGrace || lasted >= a.opts.grace()
	keepPods := a.opts.Unreachable == UnreachableNoSchedule && (a.opts.NotReadyAfter <= 0 || lasted < a.opts.NotReadyAfter)
	switch {
	case pastGrace && keepPods:
		ready.status, ready.reason, ready.keepMessage = corev1.ConditionTrue, ReasonPluginUnreachableKeepingPods, true
		ready.prefix, ready.since, ready.detail = messageKeepingPods, start, detail
	case pastGrace:
		ready.status, ready.reason, ready.keepMessage = corev1.ConditionFalse, ReasonPluginUnreachable, true
		ready.prefix, ready.since, ready.detail = messageUnreachable, start, detail
	case findCondition(a.in.Status.Conditions, corev1.NodeReady) < 0:
		ready.status, ready.reason, ready.keepMessage = corev1.ConditionUnknown, ReasonPluginNotReached, true
		ready.prefix, ready.detail = messageNotReached, detail
	default:
		ready.leave = true
	}
	return ready, conn
}

// failingFor returns when the run of failures that a failed ping with a
// time belongs to began, and how long it has lasted at the ping: it began
// when the connectivity condition of the input turned False, or begins
// now. A clock that went back counts as no time.
func (a *applier) failingFor() (start time.Time, lasted time.Duration) {
	conditions := a.in.Status.Conditions
	start = a.at
	if i := findCondition(conditions, a.opts.connectivity()); i >= 0 && conditions[i].Status == corev1.ConditionFalse {
		start = conditions[i].LastTransitionTime.Time
	}
	return start, max(a.at.Sub(start), 0)
}

// pastGrace reports whether the ping failed, with a time, after the
// plugin had failed for the grace (rule ping-failed).
func (a *applier) pastGrace() bool {
	if a.ping.Reached() || a.at.IsZero() {
		return false
	}
	_, lasted := a.failingFor()
	return a.opts.NoGrace || lasted >= a.opts.grace()
}

// heartbeatDue reports whether c's heartbeat is older than
// Options.HeartbeatInterval.
func (a *applier) heartbeatDue(c *corev1.NodeCondition) bool {
	return a.opts.HeartbeatInterval > 0 && a.at.Sub(c.LastHeartbeatTime.Time) >= a.opts.HeartbeatInterval
}
