package vnode

import (
	"unicode"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"

	"github.com/pingnode/pingnode/pingstatus"
)

// Event reasons. Ready's transitions use the kubelet's reasons, so that
// tools that watch for them keep working.
const (
	ReasonNodeReady     = "NodeReady"
	ReasonNodeNotReady  = "NodeNotReady"
	ReasonPingFailed    = "PluginPingFailed"
	ReasonPingSucceeded = "PluginPingSucceeded"
	// ReasonResourceRefused is the reason of a refused quantity, one of
	// the reasons WarningReason gives.
	ReasonResourceRefused     = "ResourceRefused"
	maxEventMessageCharacters = 1024
)

// nodeEvents records events on the node, through client-go's recorder,
// whose correlator turns the same event repeated (a plugin that makes the
// same mistake at every ping) into one event whose count grows, and rate
// limits each kind of event on the node.
type nodeEvents struct {
	recorder record.EventRecorder
	node     *corev1.ObjectReference
}

func newNodeEvents(recorder record.EventRecorder, name string) *nodeEvents {
	// The kubelet's convention: a node's events name it with its name as
	// UID, in no namespace, so "kubectl describe node" finds them.
	return &nodeEvents{recorder: recorder, node: &corev1.ObjectReference{Kind: "Node", Name: name, UID: types.UID(name)}}
}

// warnings records a Warning event for each thing refused, repaired or
// ignored; the message is the JSON path and what was done.
func (e *nodeEvents) warnings(warnings []pingstatus.Warning) {
	if e == nil {
		return
	}
	for _, w := range warnings {
		e.recorder.Event(e.node, corev1.EventTypeWarning, WarningReason(w), bound(w.String()))
	}
}

// pod records an event on pod, in its namespace, as the kubelet records
// those of a pod it runs.
func (e *nodeEvents) pod(pod *corev1.Pod, eventType, reason, message string) {
	if e == nil {
		return
	}
	ref := &corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID}
	e.recorder.Event(ref, eventType, reason, bound(message))
}

// WarningReason names a warning by what it is about and what was done:
// ResourceRefused, TaintRepaired, ReplyIgnored, and so on, a small fixed set.
func WarningReason(w pingstatus.Warning) string {
	return title(w.Subject.String()) + title(w.Action.String())
}

func title(s string) string {
	if s == "" {
		return s
	}
	return string(unicode.ToUpper(rune(s[0]))) + s[1:]
}

// transitions records the transitions of Ready and of the connectivity
// condition from old to new: Ready's as the kubelet does (Normal NodeReady,
// NodeNotReady), the connectivity condition's as Warning PluginPingFailed
// and Normal PluginPingSucceeded.
func (e *nodeEvents) transitions(old, new *corev1.Node, connectivity corev1.NodeConditionType) {
	if e == nil {
		return
	}
	for _, t := range []corev1.NodeConditionType{corev1.NodeReady, connectivity} {
		cond := transitioned(old, new, t)
		switch {
		case cond == nil:
		case t == corev1.NodeReady && cond.Status == corev1.ConditionTrue:
			e.recorder.Eventf(e.node, corev1.EventTypeNormal, ReasonNodeReady, "Node %s status is now: NodeReady", e.node.Name)
		case t == corev1.NodeReady:
			e.recorder.Eventf(e.node, corev1.EventTypeNormal, ReasonNodeNotReady, "Node %s status is now: NodeNotReady (%s)", e.node.Name, bound(cond.Message))
		case cond.Status == corev1.ConditionTrue:
			e.recorder.Event(e.node, corev1.EventTypeNormal, ReasonPingSucceeded, bound(cond.Message))
		default:
			e.recorder.Event(e.node, corev1.EventTypeWarning, ReasonPingFailed, bound(cond.Message))
		}
	}
}

// transitioned returns new's condition of type t if it is new or its
// status differs from old's, and nil otherwise.
func transitioned(old, new *corev1.Node, t corev1.NodeConditionType) *corev1.NodeCondition {
	now := ConditionNamed(new, t)
	if now == nil {
		return nil
	}
	if was := ConditionNamed(old, t); was != nil && was.Status == now.Status {
		return nil
	}
	return now
}

func ConditionNamed(node *corev1.Node, t corev1.NodeConditionType) *corev1.NodeCondition {
	for i := range node.Status.Conditions {
		if node.Status.Conditions[i].Type == t {
			return &node.Status.Conditions[i]
		}
	}
	return nil
}

// bound cuts a message to what an event shows well, at a character's
// start, with a marker. The messages are clean already: pingstatus quotes
// what it takes from a plugin, and nodeapply cleans a failure.
func bound(s string) string {
	if len(s) <= maxEventMessageCharacters {
		return s
	}
	cut := maxEventMessageCharacters - len(cutMarker)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + cutMarker
}

// cutMarker ends a message that bound cut short.
const cutMarker = "…"
