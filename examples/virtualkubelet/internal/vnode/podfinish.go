package vnode

import (
	"context"

	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/jobs"
	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/pods"
)

// finishDeletes starts deleting, apart from the pings, the pods bound to
// the node that are being deleted, as the caches show them, and returns
// what stops it and waits until it has. A pod waits for the plugin's first
// answer ([pods.Finisher.Answered]), and for its job's
// removal, recorded on it ([jobs.Stopped]).
func (p *Node) finishDeletes(ctx context.Context) (stop func()) {
	f := pods.NewFinisher(ctx, p.client, p.log, p.caches.BoundPods, p.cfg.Static.Name, jobs.Stopped)
	p.finish = f
	remove := p.caches.OnBoundPod(f.Add)
	return func() {
		remove()
		f.Stop()
	}
}
