package vnode

import (
	"context"
	"log/slog"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/metrics"
	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/pingstatus"
)

// The step at each ping: ask the plugin, apply the outcome to the node,
// and write what changed: the object patch (delivery.go), then the
// status patch (status.go), the library's patches both.
//
// Each ping is applied to the node as cached (an informer on this node
// alone: no read of the API server at a ping), so what an administrator or
// a controller changed meanwhile is seen within moments, and drift (the
// plugin's taint deleted by hand) is corrected at the next ping. Writes
// carry preconditions: the object patch the resourceVersion of the node it
// was computed from, so a cache that lags costs a conflict, a read of the
// node as stored and a retry, never a lost taint.
//
// A cache lags the provider's own writes too. So that a write is not made
// twice, the node as its last write stored it stands in for the cached
// one while the cache shows a version the provider knows to be older than
// that write: the one the write was built on, any the provider read on
// the way, and the result of its own object patch when the status patch
// came after it. A cache shows versions in
// order, so any other version is newer and holds the write, or another
// writer's change, which the next Apply sees.
//
// The object patch (taints, labels and their ownership annotations) and
// the status are independent writes: an object patch the API server
// refuses never holds the status back. The status then goes on with the
// node as stored, and the next ping, applied to that node, finds the
// taints and labels still to send and sends them again. The status patch
// names no label and no taint, so it never undoes one removed since the
// ping was applied.

// PingOnce takes the next ping that its supervisor handed the node (its
// plugin's ping, or the ping of its part: internal/supervise), applies it to the
// node, and delivers what changed. When nothing conflicts, it reads the
// node once, from the cache, and calls Apply once.
func (p *Node) PingOnce(ctx context.Context) {
	taken, stepped, ok := p.feed.take(ctx, p)
	if !ok {
		return
	}
	defer stepped()
	ping, warnings := taken.ping, taken.warnings
	if ping.Reached() && p.cfg.CountHeld {
		ping.Held = p.Held(ping.At)
	}
	p.finish.Answered(ping.Reached())
	warnings = p.withoutDevices(ping, warnings)
	base, err := p.current(ctx)
	if err != nil {
		p.log.Error("reading the node; the next ping tries again", "error", err)
		return
	}
	// Two steps of the same ping: the node's, and the device pool's.
	res := nodeapply.Apply(base, ping, p.opts.Apply)
	pool := p.devicePool(ping)
	warnings = slices.Concat(warnings, res.Warnings, pool.Warnings)
	p.logWarnings(warnings)
	p.events.warnings(warnings)
	p.metrics.Warnings(warnings)
	// The devices go by a write of their own, independent of the node's.
	p.publishDevices(ctx, base, ping, pool)
	p.podDevices(ctx, pool.Devices)
	if len(res.Changes) == 0 {
		p.reportIfDue(ctx, base, ping, time.Now())
		return
	}
	if p.holdsBack(res, ping.At) {
		return // the next ping, applied to the node as it stands, finds the change still to make
	}

	older := []string{base.ResourceVersion}
	objectSent := false
	if res.NeedsObjectPatch() {
		d, err := p.deliverObject(ctx, ping, base, res)
		if ctx.Err() != nil {
			return
		}
		older = append(older, d.seen...)
		if err != nil {
			p.log.Error("object patch not delivered; the status goes on without it, and the next ping sends it again", "error", err)
			base, res = d.base, d.res
		} else {
			p.logChanges(d.res, pingstatus.SubjectTaint, pingstatus.SubjectLabel, pingstatus.SubjectAnnotation)
			base, res, objectSent = d.stored, d.res, true
			older = append(older, base.ResourceVersion)
		}
	}
	// The status goes on from the node as stored (with the taints and
	// labels just delivered, or as they were). The node as stored after
	// the last write stands in for the cached node while the cache shows
	// one of the versions before it.
	if res.NeedsStatusPatch() {
		p.logChanges(res, pingstatus.SubjectResource, pingstatus.SubjectCondition)
		p.Count.Writes.Add(1)
		p.metrics.Write(metrics.KindStatus)
		if stored, err := p.deliverStatus(ctx, base, res); err == nil {
			p.statusAt = ping.At
			p.reportAfter(time.Now(), true)
			p.setPending(stored, older)
			return
		}
	}
	if objectSent {
		p.setPending(base, older)
	}
}

// current returns the node to apply the next ping to: the cached node,
// or the node last written while the cache has not caught up with it.
// Only a node missing from the cache costs a read of the API server:
// registered too recently for the cache (but at the first ping, which
// takes the node as registered), or deleted by someone, and then
// registered again.
func (p *Node) current(ctx context.Context) (*corev1.Node, error) {
	unseen := p.unseen
	p.unseen = false
	cached, err := p.caches.Node.Get(p.cfg.Static.Name)
	if apierrors.IsNotFound(err) && unseen && p.pending != nil {
		return p.pending, nil // registered a moment ago
	}
	if apierrors.IsNotFound(err) {
		p.pending, p.older = nil, nil
		return p.registerAgain(ctx)
	}
	if err == nil {
		err = p.foreign(cached)
	}
	if err != nil {
		return nil, err
	}
	if p.pending != nil && p.older[cached.ResourceVersion] {
		return p.pending, nil
	}
	p.pending, p.older = nil, nil
	return cached, nil
}

// setPending makes node stand in for the cached node while the cache
// shows one of the versions in older (or one already known older).
func (p *Node) setPending(node *corev1.Node, older []string) {
	if p.pending == nil {
		p.older = map[string]bool{}
	}
	p.pending = node
	for _, rv := range older {
		p.older[rv] = true
	}
}

// logWarnings logs each of this ping's warnings (of the reply, and of
// Apply) that the last ping did not have, as a failure is logged
// (supervisor.lastFailure): a warning is said when it appears and when
// it changes, and again when it comes back after a ping without it, not
// at every ping that repeats it. The metric counts it at every ping; the
// events are recorded at every ping too, and client-go's correlator
// aggregates them (events.go).
func (p *Node) logWarnings(warnings []pingstatus.Warning) {
	p.lastWarnings = LogNewWarnings(p.log, p.lastWarnings, warnings)
}

// LogNewWarnings logs each of warnings that last does not hold, and
// returns the warnings said at this ping, the next one's last.
func LogNewWarnings(log *slog.Logger, last map[pingstatus.Warning]bool, warnings []pingstatus.Warning) map[pingstatus.Warning]bool {
	said := make(map[pingstatus.Warning]bool, len(warnings))
	for _, w := range warnings {
		if !last[w] && !said[w] {
			log.Warn("plugin reply", "subject", w.Subject, "action", w.Action, "path", w.Path, "problem", w.Message)
		}
		said[w] = true
	}
	return said
}

// logChanges logs the changes of res about the subjects given, when the
// write that carries them is made: the object patch carries the taints,
// the labels and the ownership annotations (this provider keeps no ping-response
// annotation), the status the resources and the conditions.
func (p *Node) logChanges(res nodeapply.Result, subjects ...pingstatus.Subject) {
	for _, c := range res.Changes {
		for _, s := range subjects {
			if c.Subject == s {
				p.log.Info("node change", "subject", c.Subject, "path", c.Path, "op", c.Op.String(), "old", c.Old, "new", c.New)
			}
		}
	}
}
