package vnode

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
)

// KubeletEndpoint is where the kubelet API of a node is served, as the
// API server finds a kubelet's: the node's address of type InternalIP
// and the port of its status.daemonEndpoints.kubeletEndpoint
// (k8s.io/kubernetes pkg/kubelet/client, GetConnectionInfo, which dials
// the first address of --kubelet-preferred-address-types, Hostname
// first by default; a node publishes no Hostname address here, for its
// name resolves to no host). Zero, the node publishes none.
type KubeletEndpoint struct {
	IP   string
	Port int32
}

// published writes e into the status of node; a zero e writes nothing,
// so that what another writer (interLink's Virtual Kubelet) published
// stays.
func (e KubeletEndpoint) published(node *corev1.Node) {
	if e == (KubeletEndpoint{}) {
		return
	}
	node.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: e.IP}}
	node.Status.DaemonEndpoints.KubeletEndpoint.Port = e.Port
}

// stale returns the status fields of stored that e would change, as a
// JSON merge patch of the status, or nil when there are none.
func (e KubeletEndpoint) stale(stored *corev1.Node) map[string]any {
	want := stored.DeepCopy()
	e.published(want)
	patch := map[string]any{}
	if !equality.Semantic.DeepEqual(want.Status.Addresses, stored.Status.Addresses) {
		patch["addresses"] = want.Status.Addresses
	}
	if want.Status.DaemonEndpoints != stored.Status.DaemonEndpoints {
		patch["daemonEndpoints"] = want.Status.DaemonEndpoints
	}
	if len(patch) == 0 {
		return nil
	}
	return patch
}
