package vnode

import (
	"context"
	"log/slog"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/metrics"
	"github.com/pingnode/pingnode/nodeapply"
)

// The node's status: the provider sends the library's status patch
// (nodeapply.Result.StatusPatch) to the status subresource itself, at a
// change and at each status report (report.go), as the template does;
// and says what each write stored: the allocatable resources the node
// advertises, and the transitions of its conditions, in the log, as
// events and in the metrics, once the write that makes them is stored.
//
// The patch names only what changed (a resource, a condition whole, by
// its type), never a label or a taint, so it needs no precondition: what
// others write of the status, and the node's object, stay as they are.

// deliverStatus sends res's status patch, res being the ping applied to
// base, and returns the node as stored after it.
func (p *Node) deliverStatus(ctx context.Context, base *corev1.Node, res nodeapply.Result) (*corev1.Node, error) {
	p.sent.Store(res.Node)
	p.BeforeStatusPatch.Run(ctx)
	stored, err := p.nodes.Patch(ctx, base.Name, types.StrategicMergePatchType, res.StatusPatch(), metav1.PatchOptions{FieldManager: FieldManager}, "status")
	if err != nil {
		if ctx.Err() == nil {
			p.statusRefused(err)
		}
		return nil, err
	}
	if base.UID != stored.UID {
		base = nil // another node of the same name: no transition
	}
	p.delivered(base, stored)
	return stored, nil
}

// delivered records what a write of the node's status stored: the
// allocatable resources the node advertises, and the transitions of its
// conditions from before (nil for a node just registered, whose first
// ping sets the conditions).
func (p *Node) delivered(before, after *corev1.Node) {
	p.advertised = p.metrics.Advertise(p.advertised, after.Status.Allocatable)
	if before == nil {
		return
	}
	connectivity := p.opts.connectivity()
	p.events.transitions(before, after, connectivity)
	p.metrics.Transition(ConditionNamed(before, connectivity), transitioned(before, after, connectivity))
	for i := range after.Status.Conditions {
		t := after.Status.Conditions[i].Type
		now := transitioned(before, after, t)
		if now == nil {
			continue
		}
		from := corev1.ConditionStatus("")
		if was := ConditionNamed(before, t); was != nil {
			from = was.Status
		}
		level := slog.LevelInfo
		if (t == corev1.NodeReady || t == connectivity) && now.Status != corev1.ConditionTrue {
			level = slog.LevelWarn
		}
		p.log.Log(context.Background(), level, "node condition transition", "condition", t, "from", from, "to", now.Status, "reason", now.Reason)
	}
}

// statusRefused says that a status write was refused. The next ping,
// applied to the node as cached, finds the change still to make and
// sends it again; a node that is gone is registered again by the next
// ping (registerAgain), not here.
func (p *Node) statusRefused(err error) {
	if apierrors.IsNotFound(err) {
		p.log.Warn("the node is gone; the next ping registers it again")
		return
	}
	p.Count.WriteErrors.Add(1)
	p.metrics.WriteError(metrics.KindStatus)
	p.log.Error("node status refused; the next ping sends it again", "error", err)
}

// LastSent returns the node whose status the provider last sent, or nil:
// what a test waits to see stored.
func (p *Node) LastSent() *corev1.Node { return p.sent.Load() }
