package vnode

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"

	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/metrics"
	"github.com/pingnode/pingnode/nodeapply"
)

// The object patch: the taints, the plugin's labels and their ownership
// annotations (nodeapply.Result.ObjectPatch), sent with the
// resourceVersion of the node it was computed from as a precondition.
// The status goes by a write of its own (status.go).

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
func (p *Node) deliverObject(ctx context.Context, ping nodeapply.Ping, base *corev1.Node, res nodeapply.Result) (objectDelivery, error) {
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
			d.base, d.res = stored, nodeapply.Apply(stored, ping, p.opts.Apply)
			if !d.res.NeedsObjectPatch() {
				d.stored = stored // stored as the plugin wants already
				return nil
			}
		}
		first = false
		p.BeforeObjectPatch.Run(ctx)
		p.Count.Writes.Add(1)
		p.metrics.Write(metrics.KindObject)
		stored, err := p.nodes.Patch(ctx, name, types.StrategicMergePatchType, d.res.ObjectPatch(), metav1.PatchOptions{FieldManager: FieldManager})
		switch {
		case err == nil:
			d.stored = stored
		case apierrors.IsConflict(err):
			p.Count.Conflicts.Add(1)
			p.metrics.Conflict(metrics.KindObject)
			p.log.Info("object patch conflicted with another write; reading the node again")
		default:
			refused = true
		}
		return err
	})
	if refused && ctx.Err() == nil {
		p.Count.WriteErrors.Add(1)
		p.metrics.WriteError(metrics.KindObject)
	}
	return d, err
}
