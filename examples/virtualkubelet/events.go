package main

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"

	"github.com/pingnode/pingnode/internal/text"
	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/pingstatus"
)

// Event reasons. Ready's transitions use the kubelet's reasons, so that
// tools that watch for them keep working.
const (
	ReasonNodeReady           = "NodeReady"
	ReasonNodeNotReady        = "NodeNotReady"
	ReasonPingFailed          = "PluginPingFailed"
	ReasonPingSucceeded       = "PluginPingSucceeded"
	ReasonResourceRefused     = "PluginResourceRefused"
	ReasonTaintRefused        = "PluginTaintRefused"
	ReasonReplyRefused        = "PluginReplyRefused"
	ReasonHeldRefused         = "HeldResourcesRefused"
	ReasonNodeRepaired        = "NodeRepaired"
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

// warnings records a Warning event for each thing refused or repaired; the
// message is the JSON path and what was done.
func (e *nodeEvents) warnings(warnings []pingstatus.Warning) {
	if e == nil {
		return
	}
	for _, w := range warnings {
		e.recorder.Event(e.node, corev1.EventTypeWarning, warningReason(w.Path), bound(w.String()))
	}
}

// warningReason names the kind of problem from where it is.
func warningReason(path string) string {
	switch {
	case strings.HasPrefix(path, "resources"), strings.HasPrefix(path, "patch.resources"):
		return ReasonResourceRefused
	case strings.HasPrefix(path, "taints"), strings.HasPrefix(path, "patch.taints"):
		return ReasonTaintRefused
	case strings.HasPrefix(path, "ping.held"):
		return ReasonHeldRefused
	case strings.HasPrefix(path, "spec."), strings.HasPrefix(path, "status."), strings.HasPrefix(path, "metadata."):
		return ReasonNodeRepaired
	}
	return ReasonReplyRefused
}

// transitions records the conditions' transitions among changes: Ready's
// as the kubelet does (Normal NodeReady, NodeNotReady), the connectivity
// condition's as Warning PluginPingFailed and Normal PluginPingSucceeded.
func (e *nodeEvents) transitions(changes []nodeapply.Change, node *corev1.Node, connectivity corev1.NodeConditionType) {
	if e == nil {
		return
	}
	for _, c := range changes {
		var t corev1.NodeConditionType
		switch c.Path {
		case "status.conditions[" + string(corev1.NodeReady) + "].status", "status.conditions[" + string(corev1.NodeReady) + "]":
			t = corev1.NodeReady
		case "status.conditions[" + string(connectivity) + "].status", "status.conditions[" + string(connectivity) + "]":
			t = connectivity
		default:
			continue
		}
		cond := conditionNamed(node, t)
		if cond == nil {
			continue
		}
		switch {
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

func conditionNamed(node *corev1.Node, t corev1.NodeConditionType) *corev1.NodeCondition {
	for i := range node.Status.Conditions {
		if node.Status.Conditions[i].Type == t {
			return &node.Status.Conditions[i]
		}
	}
	return nil
}

// bound cleans and cuts a message to what an event shows well.
func bound(s string) string { return text.Clean(s, maxEventMessageCharacters) }
