package main

import (
	"math/rand/v2"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// DefaultStatusReport is how often the status of a steady node is written:
// the kubelet's nodeStatusReportFrequency. Liveness goes by the Lease,
// renewed far more often; the report keeps the conditions' heartbeat times
// from growing old, for tools that read them.
const DefaultStatusReport = 5 * time.Minute

// The provider writes the node's status when a ping changes it (at once),
// and otherwise once every status report interval, as the kubelet does. To
// keep many nodes from writing in step (Kubernetes issue 124202: 5,000
// kubelets aligned on the 5-minute mark), it uses the kubelet's jitter:
// after a start and after each change, the next report alone moves by a
// random shift, uniform within half the interval either way; the reports
// that follow keep the interval. Nodes started together, or changed by
// one event, so spread over a whole interval after one report.
//
// The Virtual Kubelet node controller has no jitter of its own: its status
// timer restarts at each update it sends, with a fixed interval. The
// provider therefore decides when to report, and hands the node to the
// controller then; the controller's own timer is set to twice the interval
// (see [Provider.Run]), a backstop that a running provider always beats.

// reportAfter sets when a steady node's status is next written: one
// interval after now, shifted at random when the node changed or the
// provider started.
func (p *Provider) reportAfter(now time.Time, shift bool) {
	d := p.cfg.statusReport()
	if shift {
		d += time.Duration((rand.Float64() - 0.5) * float64(d))
	}
	p.reportDue = now.Add(d)
}

// reportIfDue hands node, unchanged, to the node controller if the status
// report interval has passed since the last write of its status: the
// controller refreshes the conditions' heartbeat times and writes it.
func (p *Provider) reportIfDue(node *corev1.Node, now time.Time) {
	if now.Before(p.reportDue) {
		return
	}
	p.Reports.Add(1)
	p.metrics.write(kindReport)
	p.reportAfter(now, false)
	p.handoff.put(node)
}
