package main

import (
	"context"
	"sync"

	corev1 "k8s.io/api/core/v1"
)

// Handing the node on to the Virtual Kubelet node controller, which
// writes its status (statuswrite.go).

// handoff passes the nodes the ping loop hands on to the node controller,
// from a goroutine of its own, so that the ping loop never waits for the
// controller: the controller takes one node at a time, and while it is
// busy with a write the newest node waits, replacing any older one still
// waiting, which it holds all of.
type handoff struct {
	mu     sync.Mutex
	notify func(*corev1.Node) // the node controller's
	next   *corev1.Node       // waiting to be passed on: the controller's own copy
	last   *corev1.Node       // the last node handed on
	wake   chan struct{}
}

func newHandoff() *handoff { return &handoff{wake: make(chan struct{}, 1)} }

// put hands node on; node must not change afterwards.
func (h *handoff) put(node *corev1.Node) {
	h.mu.Lock()
	h.next, h.last = node.DeepCopy(), node // the controller changes the node it is given
	h.mu.Unlock()
	select {
	case h.wake <- struct{}{}:
	default: // already awake
	}
}

// run passes the waiting node on until ctx ends. The node controller's
// notify blocks while the controller is busy and holds a node already;
// should ctx end then, the controller stops, and this goroutine stays
// blocked, with one node: that is all that outlives the run.
func (h *handoff) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-h.wake:
		}
		h.mu.Lock()
		node, notify := h.next, h.notify
		h.next = nil
		h.mu.Unlock()
		if node != nil && notify != nil && ctx.Err() == nil {
			notify(node)
		}
	}
}

// NotifyNodeStatus keeps the node controller's callback: the node
// controller calls it as it starts.
func (p *Provider) NotifyNodeStatus(_ context.Context, cb func(*corev1.Node)) {
	h := p.currentHandoff()
	h.mu.Lock()
	defer h.mu.Unlock()
	h.notify = cb
}

func (p *Provider) setHandoff(h *handoff) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.handoff = h
}

func (p *Provider) currentHandoff() *handoff {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.handoff
}

// lastHandedOn returns a copy of the node last handed to the node
// controller, or nil.
func (p *Provider) lastHandedOn() *corev1.Node {
	h := p.currentHandoff()
	if h == nil {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.last.DeepCopy()
}
