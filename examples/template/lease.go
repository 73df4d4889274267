package main

import (
	"context"
	"log/slog"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
)

// The node's Lease in kube-node-lease is how the node lifecycle controller
// knows that the node's kubelet (here, this program) lives: renewed every
// leaseRenew and valid for leaseDuration, the kubelet's figures, so that
// three renewals in a row may fail before the node is taken for dead.
const (
	leaseDuration = 40 * time.Second
	leaseRenew    = 10 * time.Second
)

// leaseRetry is the backoff of a renewal that failed: 5 tries within
// about 3 s, well before the next renewal is due.
var leaseRetry = wait.Backoff{Duration: 200 * time.Millisecond, Factor: 2, Jitter: 0.1, Steps: 5}

// leaseRenewer renews one node's Lease as the kubelet does: named after
// the node, held by it, owned by it (so that the garbage collector deletes
// it with the node), and created when it is missing.
type leaseRenewer struct {
	leases coordinationv1client.LeaseInterface
	nodes  corev1client.NodeInterface
	name   string
	now    func() time.Time
	log    *slog.Logger
	last   *coordinationv1.Lease // as the last renewal stored it; nil: read it first
}

func newLeaseRenewer(client kubernetes.Interface, name string, now func() time.Time, log *slog.Logger) *leaseRenewer {
	return &leaseRenewer{
		leases: client.CoordinationV1().Leases(corev1.NamespaceNodeLease),
		nodes:  client.CoreV1().Nodes(), name: name, now: now, log: log,
	}
}

// renew renews the Lease, retrying with backoff (leaseRetry); it logs the
// last error if every try failed, and the next renewal tries again.
func (r *leaseRenewer) renew(ctx context.Context) {
	var last error
	err := wait.ExponentialBackoffWithContext(ctx, leaseRetry, func(ctx context.Context) (bool, error) {
		last = r.renewOnce(ctx)
		return last == nil, nil
	})
	if err != nil && ctx.Err() == nil {
		r.log.Error("the node's Lease was not renewed", "node", r.name, "err", last)
	}
}

// renewOnce writes the Lease once: an update of the Lease as the last
// renewal stored it, or, after a failure, as it is read now; a create when
// there is none.
func (r *leaseRenewer) renewOnce(ctx context.Context) error {
	lease, create := r.last, false
	r.last = nil // until this renewal is stored
	if lease == nil {
		got, err := r.leases.Get(ctx, r.name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			got, create = &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: r.name, Namespace: corev1.NamespaceNodeLease}}, true
		case err != nil:
			return err
		}
		lease = got
	}
	lease = lease.DeepCopy()
	seconds := int32(leaseDuration / time.Second)
	lease.Spec.HolderIdentity, lease.Spec.LeaseDurationSeconds = &r.name, &seconds
	lease.Spec.RenewTime = &metav1.MicroTime{Time: r.now()}
	if len(lease.OwnerReferences) == 0 {
		// Owned by the node once it is registered: until then the Lease is
		// renewed without an owner, and a later renewal adds it.
		if node, err := r.nodes.Get(ctx, r.name, metav1.GetOptions{ResourceVersion: "0"}); err == nil {
			lease.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: node.Name, UID: node.UID}}
		}
	}
	var err error
	if create {
		r.last, err = r.leases.Create(ctx, lease, metav1.CreateOptions{})
	} else {
		r.last, err = r.leases.Update(ctx, lease, metav1.UpdateOptions{})
	}
	if err != nil {
		r.last = nil
	}
	return err
}
