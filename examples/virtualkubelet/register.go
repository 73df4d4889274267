package main

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/pingnode/pingnode/nodeapply"
)

// A node's registration. A run reads the node once (registration); a new
// node is created by the node controller, with its first ping applied
// when one waits (withFirstPing), so that a fleet's new node costs the API
// server one create, not a create, a status read and patch, and an object
// patch; a node someone deleted is registered again by the ping that finds
// it gone (registerAgain).

// registration is the node handed to the node controller, and whether
// the node is stored: the static configuration, or, when the node is
// stored already (the provider restarted), the stored status, labels and
// annotations over it. The controller's first write replaces the stored
// status with this one, and its later writes remove what it wrote before
// and this one lacks, so starting from the static node would drop the
// plugin's last resources, the conditions and the ownership annotation.
// It reads the node as stored, once: from the API server, or, at the first
// run of a part's node, as its supervisor read it at the ping that
// registers it (readNew).
func (p *Provider) registration(ctx context.Context) (*corev1.Node, bool, error) {
	node := p.cfg.Static.DeepCopy()
	var stored *corev1.Node
	var err error
	if r := p.known; r != nil {
		p.known = nil
		stored, err = p.ours(r.node, r.err)
	} else {
		stored, err = p.ours(p.nodes.Get(ctx, node.Name, metav1.GetOptions{}))
	}
	if apierrors.IsNotFound(err) {
		return node, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	status := stored.Status.DeepCopy()
	status.NodeInfo = node.Status.NodeInfo // this provider's version
	node.Status = *status
	labels := stored.Labels
	for k, v := range node.Labels {
		if labels == nil {
			labels = map[string]string{}
		}
		labels[k] = v
	}
	node.Labels, node.Annotations = labels, stored.Annotations
	return node, true, nil
}

// registrar waits, when the node is new and its supervisor bounds how
// many register at once, until the node may register, and returns what to
// call once its node controller has registered it (or failed to).
func (p *Provider) registrar(ctx context.Context, new bool) (registered func()) {
	places := p.cfg.registering
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
// labels in one request, not registered bare and written again at once,
// which took a status write (a read and a patch) and an object patch more
// for each of a fleet's new nodes. The run's first step applies the same
// ping again, to the node as registered, and finds nothing to write. A node
// of its own has no ping waiting: its supervisor pings once the run takes
// the pings.
func (p *Provider) withFirstPing(node *corev1.Node) (*corev1.Node, bool) {
	ping, ok := p.feed.peek()
	if !ok || !ping.Reached() {
		return node, false
	}
	if p.cfg.CountHeld {
		ping.Held = p.held(ping.At)
	}
	p.statusAt = ping.At // its figures are held back from then on, as any status write's
	return nodeapply.Apply(node, ping, p.opts.apply).Node, true
}

// registerAgain returns the node as stored, and registers it again, as
// the static configuration has it, if someone deleted it: the ping then
// brings back what the plugin reports, and the node controller's next
// status write what it was handed. This is the one place that registers
// a node once the node controller has; the node controller's status
// error handler only says that the node is gone (statuswrite.go).
func (p *Provider) registerAgain(ctx context.Context) (*corev1.Node, error) {
	stored, err := p.nodes.Get(ctx, p.cfg.Static.Name, metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		return p.ours(stored, err)
	}
	p.log.Warn("the node is gone; registering it again")
	stored, err = p.nodes.Create(ctx, p.cfg.Static, metav1.CreateOptions{FieldManager: FieldManager})
	if apierrors.IsAlreadyExists(err) { // registered meanwhile, by the node controller
		return p.ours(p.nodes.Get(ctx, p.cfg.Static.Name, metav1.GetOptions{}))
	}
	return stored, err
}
