package supervise

import (
	"context"
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/vnode"
	"github.com/pingnode/pingnode/pingstatus"
)

// The supervisor of one node: a node of its own (see pinging.go for the
// two kinds of supervisor).

// NodeSupervisor serves one node, a node of its own: it pings the plugin
// every interval and hands the node the ping, with the reply's warnings,
// which the node says; it waits until the node has stepped it before the
// next, as a kubelet's loop does.
type NodeSupervisor struct {
	pinging
	node *vnode.Node
}

// One returns the supervisor of one node, p's.
func One(p *vnode.Node) *NodeSupervisor {
	cfg := p.Config()
	return &NodeSupervisor{
		pinging: pinging{cfg: cfg, opts: cfg.Options(), client: p.Client(), log: p.Log(), metrics: p.Metrics(), before: &p.BeforePing},
		node:    p,
	}
}

// RunRetrying runs the supervisor until ctx ends, and then returns nil: a
// start that fails (the plugin's client, the caches of the jobs) is
// logged, counted and tried again after a backoff, by the lifecycle a
// node's start has too (vnode.RunRetrying). Only a configuration that cannot
// work is returned at once.
func (s *NodeSupervisor) RunRetrying(ctx context.Context) error {
	return vnode.RunRetrying(ctx, s.cfg, s.Run, s.node.StartFailed)
}

// Run starts the supervisor once, runs the node, and pings its plugin
// every interval, until ctx ends; it returns once the node has stopped.
// A start that fails returns at once.
func (s *NodeSupervisor) Run(ctx context.Context) error {
	stop, err := s.startRun(ctx, s)
	if err != nil {
		return err
	}
	defer stop()
	running, stopNode := context.WithCancel(ctx)
	var node sync.WaitGroup
	node.Go(func() { _ = s.node.RunRetrying(running) }) // its configuration is the supervisor's, checked
	defer node.Wait()
	defer stopNode()
	wait.NonSlidingUntilWithContext(ctx, s.pingOnce, s.cfg.Interval)
	return nil
}

// pingOnce pings the plugin once, and hands the node the ping, with the
// reply's warnings; it returns once the node has stepped it, or once its
// run has ended. It pings only while a run of the node takes the pings,
// as a kubelet's loop does: a node that cannot start costs its plugin no
// ping.
func (s *NodeSupervisor) pingOnce(ctx context.Context) {
	select {
	case <-s.node.Feed().Running():
	case <-ctx.Done():
		return
	}
	ping, warnings, ok := s.ping(ctx)
	if !ok {
		return
	}
	if ping.Reached() {
		warnings = withoutParts(ping.Reply, warnings)
	}
	defer s.kickJobs(ping)
	select {
	case <-s.node.Feed().Put(ping, warnings):
	case <-ctx.Done():
	}
}

// partsIgnored is the warning of a reply that lists parts, to a provider
// that serves none (no -parts): the parts are passed over, and the node
// stays as it is (pingstatus rule part-no-sum: such a reply carries no sum).
var partsIgnored = pingstatus.Warning{
	Subject: pingstatus.SubjectPart, Action: pingstatus.Ignored, Path: "nodes", Rule: "part-no-sum",
	Message: "the reply lists the backend's parts, which only -parts serves; ignored, and the node stays as it is",
}

// withoutParts returns the warnings of a reply, patch, to a provider that
// serves no parts: those about the parts list ("nodes" and its entries)
// are replaced by one, [partsIgnored], which the log says when it
// appears, as any warning. A reply without "nodes" keeps its warnings as
// they are.
func withoutParts(patch *pingstatus.NodePatch, warnings []pingstatus.Warning) []pingstatus.Warning {
	aboutParts := pingstatus.Warning.AboutParts
	if !patch.ReplaceParts && !slices.ContainsFunc(warnings, aboutParts) {
		return warnings // the common case: nothing copied
	}
	return append(slices.DeleteFunc(slices.Clone(warnings), aboutParts), partsIgnored)
}
