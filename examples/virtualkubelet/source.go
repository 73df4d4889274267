package main

import (
	"context"
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/pingstatus"
)

// Where a node's pings come from: its supervisor (supervisor.go), the
// one ping loop of every node. A supervisor pings its plugin every
// interval and hands each node it serves the node's ping through the
// node's feed: a node of its own (a fleet's, or the only one) is served
// by a supervisor of one node, a part's node by the supervisor of its
// plugin's parts. Everything after the ping, the step of ping.go, is the
// same for both.

// supervise returns the supervisor of one node, p's: a node of its own.
func supervise(p *Provider) *supervisor {
	return &supervisor{cfg: p.cfg, opts: p.opts, client: p.client, log: p.log, metrics: p.metrics, one: p}
}

// runOne runs the node of a supervisor of one node, and pings its plugin
// every interval, until ctx ends; it returns once the node has stopped.
func (s *supervisor) runOne(ctx context.Context) error {
	running, stop := context.WithCancel(ctx)
	var node sync.WaitGroup
	node.Go(func() { _ = s.one.RunRetrying(running) }) // its configuration is the supervisor's, checked
	defer node.Wait()
	defer stop()
	wait.NonSlidingUntilWithContext(ctx, s.pingOne, s.cfg.Interval)
	return nil
}

// pingOne pings the plugin once, and hands the node of a supervisor of
// one node the ping, with the reply's warnings; it returns once the node
// has stepped it, or once its run has ended. It pings only while a run of
// the node takes the pings, as a kubelet's loop does: a node that cannot
// start costs its plugin no ping.
func (s *supervisor) pingOne(ctx context.Context) {
	select {
	case <-s.one.feed.running():
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
	case <-s.one.feed.put(ping, warnings):
	case <-ctx.Done():
	}
}

// ping runs the hook, pings the plugin once, counts the ping (in the
// supervisor's counters, and in its metrics), and parses the reply with
// the reply's options. It returns the ping, with its reply when the
// plugin answered, and the reply's warnings; false when ctx ended first.
// A failure is logged when it begins or changes, not at every ping.
func (s *supervisor) ping(ctx context.Context) (nodeapply.Ping, []pingstatus.Warning, bool) {
	if s.stepHook().run(ctx); ctx.Err() != nil {
		return nodeapply.Ping{}, nil, false
	}
	s.count.pings.Add(1)
	start := time.Now()
	ping := s.pinger.Ping(ctx)
	if ctx.Err() != nil {
		return ping, nil, false // stopping: the failure is ours, not the plugin's
	}
	s.metrics.Ping(ping.Reached(), ping.At, time.Since(start))
	ping, warnings := nodeapply.Judge(ping, s.opts.apply.Reply)
	if !ping.Reached() {
		s.count.failures.Add(1)
		if ping.Failure != s.lastFailure { // said once, not at every ping of an outage
			s.log.Warn("plugin ping failed", "failure", ping.Failure)
		}
	}
	s.lastFailure = ping.Failure
	return ping, warnings, true
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
