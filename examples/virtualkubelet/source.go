package main

import (
	"context"
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/pingstatus"
)

// The supervisor of one node: a node of its own (see pinging.go for the
// two kinds of supervisor), and the feed by which any supervisor hands a
// node its pings.

// nodeSupervisor serves one node, a node of its own: it pings the plugin
// every interval and hands the node the ping, with the reply's warnings,
// which the node says; it waits until the node has stepped it before the
// next, as a kubelet's loop does.
type nodeSupervisor struct {
	pinging
	node *Provider
}

// supervise returns the supervisor of one node, p's.
func supervise(p *Provider) *nodeSupervisor {
	return &nodeSupervisor{
		pinging: pinging{cfg: p.cfg, opts: p.opts, client: p.client, log: p.log, metrics: p.metrics, before: &p.beforePing},
		node:    p,
	}
}

// RunRetrying runs the supervisor until ctx ends, and then returns nil: a
// start that fails (the plugin's client, the caches of the jobs) is
// logged, counted and tried again after a backoff, by the lifecycle a
// node's start has too (runRetrying). Only a configuration that cannot
// work is returned at once.
func (s *nodeSupervisor) RunRetrying(ctx context.Context) error {
	return runRetrying(ctx, s.cfg, s.Run, s.node.startFailed)
}

// Run starts the supervisor once, runs the node, and pings its plugin
// every interval, until ctx ends; it returns once the node has stopped.
// A start that fails returns at once.
func (s *nodeSupervisor) Run(ctx context.Context) error {
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
func (s *nodeSupervisor) pingOnce(ctx context.Context) {
	select {
	case <-s.node.feed.running():
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
	case <-s.node.feed.put(ping, warnings):
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

// feed is how a supervisor hands a node its pings: the newest waits
// until the node's ping loop takes it, replacing any older one (each
// ping says all there is of the node: one missed changes nothing the
// next does not). It outlives the node's runs.
type feed struct {
	mu   sync.Mutex
	next *fed
	// run is closed while a run of the node takes its pings (attach),
	// and replaced by an open one when the run ends (detach).
	run  chan struct{}
	wake chan struct{}
}

// fed is a ping handed to a node, with its reply's warnings that the node
// says (a node of its own's; a part's node's are its supervisor's), and
// done, closed once the node has stepped it, or will not.
type fed struct {
	ping     nodeapply.Ping
	warnings []pingstatus.Warning
	done     chan struct{}
}

func newFeed() *feed { return &feed{run: make(chan struct{}), wake: make(chan struct{}, 1)} }

// put hands ping on, with warnings; it never waits. The channel it
// returns is closed once the node has stepped the ping, or once it will
// not: a newer ping replaced it, or the run of the node that would have
// taken it ended.
func (f *feed) put(ping nodeapply.Ping, warnings []pingstatus.Warning) <-chan struct{} {
	next := &fed{ping: ping, warnings: warnings, done: make(chan struct{})}
	f.mu.Lock()
	if f.next != nil {
		close(f.next.done) // replaced
	}
	f.next = next
	f.mu.Unlock()
	select {
	case f.wake <- struct{}{}:
	default: // awake already
	}
	return next.done
}

// peek returns the ping waiting to be taken, and leaves it there; false
// if none waits.
func (f *feed) peek() (nodeapply.Ping, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.next == nil {
		return nodeapply.Ping{}, false
	}
	return f.next.ping, true
}

// running returns a channel that is closed while a run of the node
// takes its pings.
func (f *feed) running() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.run
}

// attach says that a run of the node takes the pings from now on, and
// detach that it takes no more: the ping waiting then is dropped, and
// the next run waits for a ping of its own, not one from before it.
func (f *feed) attach() {
	f.mu.Lock()
	defer f.mu.Unlock()
	close(f.run)
}

func (f *feed) detach() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.run = make(chan struct{})
	if f.next != nil {
		close(f.next.done)
		f.next = nil
	}
}

// take returns the next ping of p's node, counted in p's counters, and
// what to call once it has been stepped; false when ctx ended first.
func (f *feed) take(ctx context.Context, p *Provider) (next fed, stepped func(), ok bool) {
	for {
		f.mu.Lock()
		n := f.next
		f.next = nil
		f.mu.Unlock()
		if n != nil {
			p.count.pings.Add(1)
			if !n.ping.Reached() {
				p.count.failures.Add(1)
			}
			return *n, func() { close(n.done) }, true
		}
		select {
		case <-f.wake:
		case <-ctx.Done():
			return fed{}, nil, false
		}
	}
}
