package vnode

import (
	"context"

	corev1 "k8s.io/api/core/v1"

	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/jobs"
	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/pods"
)

// finishDeletes starts deleting, apart from the pings, the pods bound to
// the node that are being deleted, as the caches show them, and returns
// what stops it and waits until it has. A pod waits for the plugin's first
// answer ([pods.Finisher.Answered]), and with -confirm for its job's
// removal, recorded on it ([jobs.Stopped]).
func (p *Node) finishDeletes(ctx context.Context) (stop func()) {
	var stopped func(*corev1.Pod) bool
	if p.cfg.Confirm {
		stopped = jobs.Stopped
	}
	f := pods.NewFinisher(ctx, p.client, p.log, p.caches.BoundPods, p.cfg.Static.Name, stopped)
	p.finish = f
	remove := p.caches.OnBoundPod(f.Add)
	return func() {
		remove()
		f.Stop()
	}
}
