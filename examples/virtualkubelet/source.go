package main

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/pingnode/pingnode/examples/internal/pingclient"
	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/pingstatus"
)

// Where a provider's pings come from. A node of its own pings its plugin
// itself, every interval (pluginSource); a part's node is fed the pings
// of the parts supervisor, which pings the plugin once for every part
// (partFeed, supervisor.go). Everything after the ping, the step of
// ping.go, is the same for both.

// A pingSource is where a provider's pings come from, for the runs of
// one provider.
type pingSource interface {
	// open readies the source for a run of p, and returns what ends it.
	// A start fails when it cannot (a file the plugin's client names that
	// cannot be used yet).
	open(p *Provider) (close func(), err error)
	// loop calls p.PingOnce until ctx ends, as often as the source has
	// pings.
	loop(ctx context.Context, p *Provider)
	// next returns the next ping of p's node and the warnings of its
	// reply, counted in p's counters; false when ctx ended first.
	next(ctx context.Context, p *Provider) (nodeapply.Ping, []pingstatus.Warning, bool)
}

// pluginSource pings the plugin, every interval, for one node.
type pluginSource struct{ asker }

func (s *pluginSource) open(p *Provider) (func(), error) {
	pinger, err := p.cfg.pingClient(p.log)
	if err != nil {
		return nil, err
	}
	s.pinger = pinger
	return pinger.Close, nil
}

func (s *pluginSource) loop(ctx context.Context, p *Provider) {
	wait.NonSlidingUntilWithContext(ctx, p.PingOnce, p.cfg.Interval)
}

func (s *pluginSource) next(ctx context.Context, p *Provider) (nodeapply.Ping, []pingstatus.Warning, bool) {
	p.Pings.Add(1)
	ping, warnings, ok := s.ask(ctx, p.opts.apply.Reply, p.metrics, p.log)
	switch {
	case !ok:
	case ping.Reached():
		warnings = withoutParts(ping.Reply, warnings)
	default:
		p.Failures.Add(1)
	}
	return ping, warnings, ok
}

// asker pings a plugin: for one node (pluginSource), or for every part's
// node (the parts supervisor).
type asker struct {
	pinger *pingclient.Client
	// lastFailure is the last ping's failure, "" when it was answered: a
	// failure is logged when it begins or changes, not at every ping.
	lastFailure string
}

// ask pings the plugin once, counts the ping in m, and parses the reply
// with opts. It returns the ping, with its reply when the plugin
// answered, and the reply's warnings; false when ctx ended first.
func (s *asker) ask(ctx context.Context, opts pingstatus.Options, m nodeMetrics, log *slog.Logger) (nodeapply.Ping, []pingstatus.Warning, bool) {
	start := time.Now()
	ping := s.pinger.Ping(ctx)
	if ctx.Err() != nil {
		return ping, nil, false // stopping: the failure is ours, not the plugin's
	}
	m.ping(ping.Reached(), ping.At, time.Since(start))
	var warnings []pingstatus.Warning
	if ping.Reached() {
		patch, w := pingstatus.Parse(ping.Body, opts)
		ping.Reply, warnings = &patch, w
	} else if ping.Failure != s.lastFailure { // said once, not at every ping of an outage
		log.Warn("plugin ping failed", "failure", ping.Failure)
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

// partFeed is how the parts supervisor hands a part's node its pings: the
// newest waits until the node's ping loop takes it, replacing any older
// one (each ping says all there is of the part: one missed changes
// nothing the next does not). It outlives the node's runs.
type partFeed struct {
	mu   sync.Mutex
	ping *nodeapply.Ping
	wake chan struct{}
}

func newPartFeed() *partFeed { return &partFeed{wake: make(chan struct{}, 1)} }

// put hands ping on; it never waits.
func (f *partFeed) put(ping nodeapply.Ping) {
	f.mu.Lock()
	f.ping = &ping
	f.mu.Unlock()
	select {
	case f.wake <- struct{}{}:
	default: // awake already
	}
}

func (f *partFeed) open(*Provider) (func(), error) { return func() {}, nil }

func (f *partFeed) loop(ctx context.Context, p *Provider) {
	for ctx.Err() == nil {
		p.PingOnce(ctx)
	}
}

func (f *partFeed) next(ctx context.Context, p *Provider) (nodeapply.Ping, []pingstatus.Warning, bool) {
	for {
		f.mu.Lock()
		ping := f.ping
		f.ping = nil
		f.mu.Unlock()
		if ping != nil {
			p.Pings.Add(1)
			if !ping.Reached() {
				p.Failures.Add(1) // the supervisor says it, once
			}
			return *ping, nil, true
		}
		select {
		case <-f.wake:
		case <-ctx.Done():
			return nodeapply.Ping{}, nil, false
		}
	}
}
