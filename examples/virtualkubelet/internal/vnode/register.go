package vnode

import (
	"context"
	"encoding/json"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/metrics"
	"github.com/pingnode/pingnode/nodeapply"
)

// A node's registration. A run reads the node once (storedNode). A new
// node is created with its first ping applied when one waits
// (withFirstPing), so that a fleet's new node costs the API server one
// create, not a create, a status patch and an object patch. A node stored
// already keeps what it has, and takes this provider's static labels and
// version, as a kubelet's at its start (refresh). A node someone deleted
// is registered again by the ping that finds it gone (registerAgain).

// storedNode returns the node as stored, nil when there is none. It reads
// it once: from the API server, or, at the first run of a part's node, as
// its supervisor read it at the ping that registers it (readNew).
func (p *Node) storedNode(ctx context.Context) (*corev1.Node, error) {
	var stored *corev1.Node
	var err error
	if r := p.Known; r != nil {
		p.Known = nil
		stored, err = p.ours(r.Node, r.Err)
	} else {
		stored, err = p.ours(p.nodes.Get(ctx, p.cfg.Static.Name, metav1.GetOptions{}))
	}
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return stored, err
}

// register creates the node when stored is nil, and otherwise refreshes
// it; it returns the node as stored after.
func (p *Node) register(ctx context.Context, stored *corev1.Node) (*corev1.Node, error) {
	if stored != nil {
		return p.refresh(ctx, stored)
	}
	static := p.cfg.Static.DeepCopy()
	p.cfg.Kubelet.published(static)
	node, applied := p.withFirstPing(static)
	created, err := p.nodes.Create(ctx, node, metav1.CreateOptions{FieldManager: FieldManager})
	if err != nil {
		return nil, err
	}
	if applied {
		p.Count.Writes.Add(1)
		p.metrics.Write(metrics.KindRegister)
	}
	return created, nil
}

// refresh gives stored, a node registered before this run (by this
// provider before a restart, or by another, as interLink's), this
// provider's static labels and version (its status.nodeInfo), and its
// kubelet's endpoint when it serves one ([KubeletEndpoint]), writing
// only what differs; what else it has stays, and the next ping brings the
// plugin's reply. It returns the node as stored after.
func (p *Node) refresh(ctx context.Context, stored *corev1.Node) (*corev1.Node, error) {
	static := p.cfg.Static
	labels := map[string]string{}
	for k, v := range static.Labels {
		if got, ok := stored.Labels[k]; !ok || got != v {
			labels[k] = v
		}
	}
	var err error
	if len(labels) > 0 {
		patch := map[string]any{"metadata": map[string]any{"labels": labels}}
		if stored, err = p.patch(ctx, metrics.KindObject, patch); err != nil {
			return nil, err
		}
	}
	status := p.cfg.Kubelet.stale(stored)
	if !equality.Semantic.DeepEqual(stored.Status.NodeInfo, static.Status.NodeInfo) {
		if status == nil {
			status = map[string]any{}
		}
		status["nodeInfo"] = static.Status.NodeInfo
	}
	if status != nil {
		if stored, err = p.patch(ctx, metrics.KindStatus, map[string]any{"status": status}, "status"); err != nil {
			return nil, err
		}
	}
	return stored, nil
}

// patch sends patch, a JSON merge patch, to the node or to its
// subresource, as a write of kind.
func (p *Node) patch(ctx context.Context, kind string, patch map[string]any, subresource ...string) (*corev1.Node, error) {
	data, err := json.Marshal(patch)
	if err != nil {
		return nil, err
	}
	p.Count.Writes.Add(1)
	p.metrics.Write(kind)
	return p.nodes.Patch(ctx, p.cfg.Static.Name, types.MergePatchType, data, metav1.PatchOptions{FieldManager: FieldManager}, subresource...)
}

// registrar waits, when the node is new and its supervisor bounds how
// many register at once, until the node may register, and returns what to
// call once it is registered (or failed to be).
func (p *Node) registrar(ctx context.Context, new bool) (registered func()) {
	places := p.cfg.Process.Registering
	if !new || places == nil {
		return func() {}
	}
	select {
	case places <- struct{}{}:
		return func() { <-places }
	case <-ctx.Done():
		return func() {}
	}
}

// withFirstPing is node, new, with the ping that waits for its run applied
// (the first ping of a part's node, which its supervisor handed on before
// the run started): the node is then registered with its status, taints and
// labels in one request, not registered bare and written again at once.
// The run's first step applies the same ping again, to the node as
// registered, and finds nothing to write. A node of its own has no ping
// waiting: its supervisor pings once the run takes the pings.
func (p *Node) withFirstPing(node *corev1.Node) (*corev1.Node, bool) {
	ping, ok := p.feed.peek()
	if !ok || !ping.Reached() {
		return node, false
	}
	if p.cfg.CountHeld {
		ping.Held = p.Held(ping.At)
	}
	p.statusAt = ping.At // its figures are held back from then on, as any status write's
	return nodeapply.Apply(node, ping, p.opts.Apply).Node, true
}

// registerAgain returns the node as stored, and registers it again, as
// the static configuration has it, if someone deleted it: the ping then
// brings back what the plugin reports. This is the one place that
// registers a node once its run has.
func (p *Node) registerAgain(ctx context.Context) (*corev1.Node, error) {
	stored, err := p.nodes.Get(ctx, p.cfg.Static.Name, metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		return p.ours(stored, err)
	}
	p.log.Warn("the node is gone; registering it again")
	stored, err = p.nodes.Create(ctx, p.cfg.Static, metav1.CreateOptions{FieldManager: FieldManager})
	if apierrors.IsAlreadyExists(err) { // registered meanwhile, by another
		return p.ours(p.nodes.Get(ctx, p.cfg.Static.Name, metav1.GetOptions{}))
	}
	return stored, err
}

// Read is a node read from the API server: the node, or why not.
type Read struct {
	Node *corev1.Node
	Err  error
}
