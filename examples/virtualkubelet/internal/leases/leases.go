// Package leases renews the nodes' Leases: one [Renewer] for every node
// of a process, a fleet's nodes or a provider of parts' nodes alike.
//
// A node's Lease in kube-node-lease, renewed every renew interval (a
// quarter of its duration, 10 s), is how the node lifecycle controller
// judges that the node's kubelet lives. The renewer renews them from one
// delaying queue and a few workers, instead of a goroutine, a timer, a
// copy of the node at each renewal and a copy of the Lease with its
// managed fields for each node, as the Virtual Kubelet node controller's
// Lease loop has (virtual-kubelet v1.14.1, node/lease_controller_v1.go).
//
// It renews a node's Lease as the kubelet does: the Lease is named after
// the node, held by it, owned by it (so that the garbage collector
// deletes it with the node), and created when it is missing; a renewal
// refused (a conflict, the Lease deleted) reads or creates the Lease
// again, after a backoff of 100 ms doubling up to 7 s, per node. It
// renews the Lease of a node from the time the node is served (its node
// controller has registered it) until it is dropped, and each renewal
// comes between nine and eleven tenths of the interval after the last,
// so that nodes registered together spread over the interval.
package leases

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
)

// MaxWorkers is the most workers a renewer runs: 5,000 Leases every 10 s
// are 500 renewals a second, each a round trip that takes 30 to 40 ms on
// an API server under that load; 16 workers renewed 5,000 Leases every
// 12.8 s, not 10. A renewer of fewer nodes runs one worker a node.
const MaxWorkers = 64

// The backoff of a renewal that failed, per node: the kubelet's.
const (
	retryFirst = 100 * time.Millisecond
	retryMax   = 7 * time.Second
)

// Renewer renews the Leases of the nodes it serves.
type Renewer struct {
	leases       coordinationv1client.LeaseInterface
	fieldManager string
	seconds      int32 // the Lease's duration
	renew        time.Duration
	clock        clock.Clock
	log          *slog.Logger
	queue        workqueue.TypedRateLimitingInterface[string]
	workers      int

	mu sync.Mutex
	// served are the nodes whose Leases it renews, by name.
	served map[string]*servedLease
}

// servedLease is a node whose Lease a renewer renews.
type servedLease struct {
	// nodes is where the node is read, for its UID, the Lease's owner:
	// the cache of the node (its provider's, or its supervisor's).
	nodes corev1listers.NodeLister
	// lease is the Lease as last written, without its managed fields; nil
	// when it is to be read, or created.
	lease *coordinationv1.Lease
	// registered says that the node was registered just now, and so has
	// no Lease yet: the first renewal creates it without reading it first.
	registered bool
}

// New returns a renewer of the Leases of at most nodes nodes at once (it
// runs as many workers, up to [MaxWorkers]), of the duration seconds,
// every renew, through leases, its writes named fieldManager; nothing is
// renewed until it runs.
func New(leases coordinationv1client.LeaseInterface, fieldManager string, nodes int, seconds int32, renew time.Duration, clk clock.WithTicker, log *slog.Logger) *Renewer {
	return &Renewer{
		leases: leases, fieldManager: fieldManager, seconds: seconds, renew: renew, clock: clk, log: log,
		workers: min(max(nodes, 1), MaxWorkers),
		served:  map[string]*servedLease{},
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.NewTypedItemExponentialFailureRateLimiter[string](retryFirst, retryMax),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "pingnode-leases", Clock: clk},
		),
	}
}

// Run renews the Leases until ctx ends, and returns once its workers
// have stopped.
func (r *Renewer) Run(ctx context.Context) {
	var running sync.WaitGroup
	for range r.workers {
		running.Go(func() {
			for r.next(ctx) {
			}
		})
	}
	<-ctx.Done()
	r.queue.ShutDown()
	running.Wait()
}

// Serve renews the Lease of the node name, which nodes holds, from now
// on, the first time at once. registered says that the node was
// registered just now: its first renewal creates the Lease without a read
// (a read, NotFound, and a create, for each of a fleet's new nodes), and
// reads it only if the create is refused because it is there.
func (r *Renewer) Serve(name string, nodes corev1listers.NodeLister, registered bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.served[name]; !ok {
		r.served[name] = &servedLease{nodes: nodes, registered: registered}
		r.queue.Add(name)
	}
}

// Drop renews the Lease of the node name no more.
func (r *Renewer) Drop(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.served, name)
}

// next renews one Lease of the queue, and reports whether the queue still
// runs.
func (r *Renewer) next(ctx context.Context) bool {
	name, shutdown := r.queue.Get()
	if shutdown {
		return false
	}
	defer r.queue.Done(name)
	r.mu.Lock()
	served, ok := r.served[name]
	var nodes corev1listers.NodeLister
	var last *coordinationv1.Lease
	create := false
	if ok {
		nodes, last, create = served.nodes, served.lease, served.registered
	}
	r.mu.Unlock()
	if !ok {
		r.queue.Forget(name) // dropped
		return true
	}
	lease, err := r.renewOnce(ctx, name, nodes, last, create)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.served[name] != served {
		r.queue.Forget(name) // dropped meanwhile (and perhaps served again, and queued)
		return true
	}
	if err != nil {
		served.lease = nil // read again
		if ctx.Err() == nil {
			if !errors.Is(err, errNotRegistered) {
				r.log.Info("renewing a node's Lease; trying again after a backoff", "node", name, "error", err)
			}
			r.queue.AddRateLimited(name)
		}
		return true
	}
	served.lease, served.registered = lease, false
	r.queue.Forget(name)
	r.queue.AddAfter(name, r.renew-r.renew/10+rand.N(r.renew/5))
	return true
}

// errNotRegistered is a renewal of the Lease of a node the cache does not
// show yet (it was registered just now): it has no UID to own the Lease,
// and is tried again after the backoff, without a word.
var errNotRegistered = errors.New("the node is not in the cache yet")

// renewOnce renews the Lease of the node name, which nodes holds, last as
// last written (nil: read it, or create it; with create, create it first),
// and returns it as written, without its managed fields (an update
// without managed fields keeps those stored).
func (r *Renewer) renewOnce(ctx context.Context, name string, nodes corev1listers.NodeLister, last *coordinationv1.Lease, create bool) (*coordinationv1.Lease, error) {
	node, err := nodes.Get(name)
	if err != nil {
		return nil, errNotRegistered
	}
	if last == nil && create {
		created, err := r.leases.Create(ctx, r.renewed(node, nil), metav1.CreateOptions{FieldManager: r.fieldManager})
		if !apierrors.IsAlreadyExists(err) {
			return leanLease(created, err)
		}
	}
	if last == nil {
		stored, err := r.leases.Get(ctx, name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			created, err := r.leases.Create(ctx, r.renewed(node, nil), metav1.CreateOptions{FieldManager: r.fieldManager})
			return leanLease(created, err)
		case err != nil:
			return nil, err
		}
		last = stored
	}
	return leanLease(r.leases.Update(ctx, r.renewed(node, last), metav1.UpdateOptions{FieldManager: r.fieldManager}))
}

// renewed is last renewed now, for node: a new Lease when last is nil.
// The holder, the duration and the owner are set when missing, as the
// kubelet sets them.
func (r *Renewer) renewed(node *corev1.Node, last *coordinationv1.Lease) *coordinationv1.Lease {
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: node.Name, Namespace: corev1.NamespaceNodeLease}}
	if last != nil {
		lease = last.DeepCopy()
	}
	if lease.Spec.HolderIdentity == nil {
		lease.Spec.HolderIdentity = &node.Name
	}
	if lease.Spec.LeaseDurationSeconds == nil {
		lease.Spec.LeaseDurationSeconds = &r.seconds
	}
	lease.Spec.RenewTime = &metav1.MicroTime{Time: r.clock.Now()}
	if len(lease.OwnerReferences) == 0 {
		lease.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: node.Name, UID: node.UID}}
	}
	return lease
}

func leanLease(lease *coordinationv1.Lease, err error) (*coordinationv1.Lease, error) {
	if err != nil {
		return nil, err
	}
	lease.ManagedFields = nil
	return lease, nil
}
