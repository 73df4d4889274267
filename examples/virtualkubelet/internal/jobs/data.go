package jobs

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"

	"github.com/pingnode/pingnode/examples/internal/podapi"
	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/poddata"
)

// ReasonDataUnavailable is the reason of the Warning event on a pod
// whose job is not made because what it uses from the cluster cannot be
// read: an object missing (in the kubelet's words), a read refused, or a
// ConfigMap or Secret of a pod not bound yet (poddata.ErrUnbound).
const ReasonDataUnavailable = "DataUnavailable"

// dataOf returns the pod to send to the plugin for a job of p on node,
// and its data (poddata.Of): read as node once p is bound to it, and
// only what p says itself before. Without [Config.Data], p is sent as
// it is, with no data.
func (k *Keeper) dataOf(ctx context.Context, p *corev1.Pod, node string) (*corev1.Pod, podapi.Data, error) {
	pod := p.DeepCopy()
	pod.Spec.NodeName = node
	k.pin(pod, node)
	if k.cfg.Data == nil {
		return pod, podapi.Data{}, nil
	}
	var src poddata.Source
	if p.Spec.NodeName == node {
		var err error
		if src, err = k.cfg.Data(node); err != nil {
			return nil, podapi.Data{}, err
		}
	}
	sent, data, err := poddata.Of(ctx, src, pod, k.nodeNamed(node))
	if err == nil {
		delete(k.toldData, p.UID)
	}
	return sent, data, err
}

// tellData tells p, once its words change, why its job is not made: err,
// from dataOf. It is tried again at the next step.
func (k *Keeper) tellData(p *corev1.Pod, node string, err error) {
	words := err.Error()
	if k.toldData[p.UID] == words {
		return
	}
	k.toldData[p.UID] = words
	if errors.Is(err, poddata.ErrUnbound) {
		words += ": a pod that asks for the backend's confirmation cannot use them"
	}
	k.eventFrom(node, p, corev1.EventTypeWarning, ReasonDataUnavailable, "its job is not made: "+words)
	k.cfg.Log.Warn("a pod's data cannot be read; its job is not made", "pod", p.Namespace+"/"+p.Name, "node", node, "error", err)
}

// nodeNamed returns the node of the provider's named name; nil if none.
func (k *Keeper) nodeNamed(name string) *corev1.Node {
	for _, n := range k.cfg.Nodes() {
		if n.Name == name {
			return n
		}
	}
	return nil
}
