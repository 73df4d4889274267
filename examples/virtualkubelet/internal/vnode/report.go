package vnode

import (
	"context"
	"math/rand/v2"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/metrics"
	"github.com/pingnode/pingnode/nodeapply"
)

// DefaultStatusReport is how often the status of a steady node is written:
// the kubelet's nodeStatusReportFrequency. Liveness goes by the Lease,
// renewed far more often; the report keeps the conditions' heartbeat times
// from growing old, for tools that read them.
const DefaultStatusReport = 5 * time.Minute

// NodeStatusUpdateFrequency is the kubelet's nodeStatusUpdateFrequency:
// with -parts, a ping whose changes are figures alone (capacity and
// allocatable: nodeapply.Result.FiguresOnly, nodeapply rule change-list) is not
// written while the node's status was written less than this long
// before, by the pings' times. The next ping, applied to the node as it
// stands, finds the change still to make, so that a backend whose free
// cpus change at every ping costs one status write in this long, not one
// a ping; the last figure is written once it has passed, and nothing is
// lost. A change of a taint, a label, a condition (Ready) or an
// annotation goes at once, with the figures of its ping.
const NodeStatusUpdateFrequency = 10 * time.Second

// The provider writes the node's status when a ping changes it (at once),
// and otherwise once every status report interval, as the kubelet does:
// the report refreshes the heartbeat of each condition the provider sets.
// To keep many nodes from writing in step (Kubernetes issue 124202: 5,000
// kubelets aligned on the 5-minute mark), it uses the kubelet's jitter:
// after a start and after each change, the next report alone moves by a
// random shift, uniform within half the interval either way; the reports
// that follow keep the interval. Nodes started together, or changed by
// one event, so spread over a whole interval after one report.

// holdsBack reports whether res, the change of the ping at at, waits:
// a part's node's change of figures alone, less than
// [NodeStatusUpdateFrequency] after its last status written.
func (p *Node) holdsBack(res nodeapply.Result, at time.Time) bool {
	return p.cfg.Parts != nil && res.FiguresOnly() && at.Sub(p.statusAt) < NodeStatusUpdateFrequency
}

// reportAfter sets when a steady node's status is next written: one
// interval after now, shifted at random when the node changed or the
// provider started.
func (p *Node) reportAfter(now time.Time, shift bool) {
	d := p.cfg.statusReport()
	if shift {
		d += time.Duration((rand.Float64() - 0.5) * float64(d))
	}
	p.reportDue = now.Add(d)
}

// reportIfDue writes the status of base, steady at this ping, if the
// status report interval has passed since its last write: the ping
// applied again with every heartbeat due (nodeapply's
// Options.HeartbeatInterval), which changes the heartbeat times of the
// conditions the provider sets, and nothing else.
func (p *Node) reportIfDue(ctx context.Context, base *corev1.Node, ping nodeapply.Ping, now time.Time) {
	if now.Before(p.reportDue) {
		return
	}
	p.reportAfter(now, false)
	opts := p.opts.Apply
	opts.HeartbeatInterval = time.Nanosecond // due, whatever their age
	res := nodeapply.Apply(base, ping, opts)
	if !res.NeedsStatusPatch() {
		return // a ping without a time moves no heartbeat
	}
	p.Count.Reports.Add(1)
	p.metrics.Write(metrics.KindReport)
	if stored, err := p.deliverStatus(ctx, base, res); err == nil {
		p.setPending(stored, []string{base.ResourceVersion})
	}
}
