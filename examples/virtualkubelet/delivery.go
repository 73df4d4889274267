package main

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"

	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/metrics"
	"github.com/pingnode/pingnode/nodeapply"
)

// Delivery to the API server. The node object and its status go by two
// independent writes: the provider sends the object patch itself (the
// taints, the plugin's labels and their ownership annotations: the node
// controller sends no spec, and would undo a label removed behind it),
// and hands the node to the Virtual Kubelet node controller, which sends
// its status. Events and metrics say that a condition changed when the
// node controller's write that changes it has been stored, and only then.
//
// This file sends the object patch; handoff.go hands the node on to the
// node controller, and statuswrite.go is the client the controller writes
// the status through, and what each of its writes stored.

// objectDelivery is what deliverObject did.
type objectDelivery struct {
	// base is the node the last patch was computed from, the last read;
	// res is the ping applied to it.
	base *corev1.Node
	res  nodeapply.Result
	// stored is the node as stored after the patch was taken; nil when it
	// was not.
	stored *corev1.Node
	// seen are the versions of the node read on the way, all older than
	// the patch.
	seen []string
}

// deliverObject sends res's object patch, computed from base, with
// base's resourceVersion as a precondition. On a conflict (someone
// changed the node since, or the cache lagged) it reads the node as
// stored, applies the ping to it again, and tries again, as client-go's
// retry.RetryOnConflict does; the last conflict, or any other error, is
// returned.
func (p *Provider) deliverObject(ctx context.Context, ping nodeapply.Ping, base *corev1.Node, res nodeapply.Result) (objectDelivery, error) {
	d := objectDelivery{base: base, res: res}
	name := base.Name
	first, refused := true, false
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if !first {
			stored, err := p.nodes.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			d.seen = append(d.seen, stored.ResourceVersion)
			d.base, d.res = stored, nodeapply.Apply(stored, ping, p.opts.apply)
			if !d.res.NeedsObjectPatch() {
				d.stored = stored // stored as the plugin wants already
				return nil
			}
		}
		first = false
		p.beforeObjectPatch.run(ctx)
		p.count.writes.Add(1)
		p.metrics.Write(metrics.KindObject)
		stored, err := p.nodes.Patch(ctx, name, types.StrategicMergePatchType, d.res.ObjectPatch(), metav1.PatchOptions{FieldManager: FieldManager})
		switch {
		case err == nil:
			d.stored = stored
		case apierrors.IsConflict(err):
			p.count.conflicts.Add(1)
			p.metrics.Conflict(metrics.KindObject)
			p.log.Info("object patch conflicted with another write; reading the node again")
		default:
			refused = true
		}
		return err
	})
	if refused && ctx.Err() == nil {
		p.count.writeErrors.Add(1)
		p.metrics.WriteError(metrics.KindObject)
	}
	return d, err
}

// withStatus returns stored, the node as stored (read back, or from the
// cache), with the status of want: the node handed to the node
// controller. Its labels and annotations are those stored, never those
// of want, which may be older than stored (the ping applied to an earlier
// read), or hold what the object patch did not store (it was refused):
// what the plugin owns of them goes by the object patch alone.
func withStatus(stored, want *corev1.Node) *corev1.Node {
	next := stored.DeepCopy()
	next.Status = *want.Status.DeepCopy()
	return next
}

// handOn hands node, changed, to the node controller, and makes it stand
// in for the cached node while the cache shows one of the versions in
// older. The next status report is then one interval away, shifted at
// random (report.go).
func (p *Provider) handOn(node *corev1.Node, older []string) {
	p.count.writes.Add(1)
	p.metrics.Write(metrics.KindStatus)
	p.setPending(node, older)
	p.reportAfter(time.Now(), true)
	p.handoff.put(node)
}
