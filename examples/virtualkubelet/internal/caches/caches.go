package caches

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	corev1listers "k8s.io/client-go/listers/core/v1"
	resourcev1listers "k8s.io/client-go/listers/resource/v1"
	"k8s.io/client-go/tools/cache"
)

// SyncTimeout bounds the wait for the caches to hold what the API
// server holds at start. An API server that answers but never lists would
// otherwise keep the start waiting for good; past it, the start fails and
// is tried again. A list or watch the API server refuses (403 Forbidden: a
// role without list and watch on the node or on pods; 401 Unauthorized: a
// token it does not take) ends the wait at once: waiting would not help,
// and the start's error then says what was refused.
const SyncTimeout = 30 * time.Second

// Caches are the provider's view of its node and of the pods bound to it:
// informers, each with one watch that the API server serves from its watch
// cache, so that a ping reads no node and lists no pod from the API
// server. The node informer watches this node alone (field selector
// metadata.name), the pod informer the pods bound to it (spec.nodeName):
// what they hold (-held), their devices (-dra-driver), and their deletion,
// which the provider finishes (its podfinish.go). A part's node (-parts) has
// no node or pod informer of its own: it reads both from the caches of
// its supervisor (Owned), by its name, so that a process of 5,000
// parts runs two watches, not 10,000.
// With a DRA driver, the slice informer watches the node's ResourceSlices
// of that driver (spec.driver and spec.nodeName, as the ResourceSlice
// controller selects its own: a node's slices, not the fleet's, so that
// each node starts and fails on its own, as its other caches do), and
// claims are the ResourceClaims (claims.go).
type Caches struct {
	// Node is the node, or, for a supervisor, the nodes it owns.
	Node corev1listers.NodeLister
	// Claims are the ResourceClaims; nil without a DRA driver.
	Claims *Claims

	name      string // the node's; "" for the supervisor's
	pods      *Pods
	slices    resourcev1listers.ResourceSliceLister // nil without a DRA driver
	factories []informers.SharedInformerFactory
	cancel    context.CancelFunc // ends the informers
	done      chan struct{}      // closed once a claim cache of its own has stopped; nil without one

	mu      sync.Mutex
	lastErr error // the informers' last list or watch error
	// refused is closed at the first list or watch the API server
	// refused (403 or 401); refusal says which, once it is closed.
	refused     chan struct{}
	refusedOnce sync.Once
	refusal     error
}

// Set says which caches a provider needs besides its node's and its
// pods'.
type Set struct {
	Driver string // its ResourceSlices of this DRA driver, and the claims; "" for none
	// Claims is the claim cache shared by a fleet, which its process
	// runs; nil, with a driver, the caches run one of their own.
	Claims *Claims
	// Shared are the caches of a part's node's supervisor (Owned), whose
	// node and pods it reads; nil, it watches its own.
	Shared *Caches
}

// Start starts the informers of the node name, with a context of their own that
// Stop ends, and waits until they hold what the API server holds, for at
// most SyncTimeout. When it returns an error, nothing it started
// still runs.
func Start(parent context.Context, client kubernetes.Interface, name string, set Set) (*Caches, error) {
	ctx, cancel := context.WithCancel(parent)
	c := &Caches{name: name, cancel: cancel, refused: make(chan struct{})}
	if set.Shared != nil {
		c.Node, c.pods = set.Shared.Node, set.Shared.pods
	} else {
		byName := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("metadata.name", name).String()
		}))
		nodes := byName.Core().V1().Nodes()
		if err := nodes.Informer().SetTransform(stripManagedFields); err != nil {
			cancel()
			return nil, err
		}
		c.Node = nodes.Lister()
		c.watchErrors(nodes.Informer())
		c.factories = append(c.factories, byName)
		if err := c.watchPods(client, fields.OneTermEqualSelector("spec.nodeName", name)); err != nil {
			cancel()
			return nil, err
		}
	}
	if set.Driver != "" {
		ofNode := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.Set{resourcev1.ResourceSliceSelectorDriver: set.Driver, resourcev1.ResourceSliceSelectorNodeName: name}.String()
		}))
		slices := ofNode.Resource().V1().ResourceSlices()
		c.slices = slices.Lister()
		c.watchErrors(slices.Informer())
		c.factories = append(c.factories, ofNode)
		c.Claims = set.Claims
		if c.Claims == nil {
			c.Claims, c.done = NewClaims(client), make(chan struct{})
			go func() {
				defer close(c.done)
				c.Claims.Run(ctx)
			}()
		}
	}
	if err := c.sync(parent, ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// watchPods adds to c the informer of the pods that selector selects,
// indexed by their node (Pods).
func (c *Caches) watchPods(client kubernetes.Interface, selector fields.Selector) error {
	bound := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.FieldSelector = selector.String()
	}))
	informer := bound.Core().V1().Pods().Informer()
	pods, err := newPods(informer)
	if err != nil {
		return err
	}
	c.pods = pods
	c.watchErrors(informer)
	c.factories = append(c.factories, bound)
	return nil
}

// Owned starts the caches of the provider of parts, with a context
// of its own that Stop ends, and waits until they hold what the API
// server holds, as Start does: the nodes with the label owner (a
// provider's ownership label of its parts, and its value), one watch selected by the label, of every node it
// serves, which it adopts at start and reads at each ping; and the pods
// bound to any node (spec.nodeName!=), one watch, indexed by their node.
// Every part's node reads its node and its pods from them, by its name.
func Owned(parent context.Context, client kubernetes.Interface, owner labels.Set) (*Caches, error) {
	ctx, cancel := context.WithCancel(parent)
	c := &Caches{cancel: cancel, refused: make(chan struct{})}
	if err := c.watchPods(client, fields.OneTermNotEqualSelector("spec.nodeName", "")); err != nil {
		cancel()
		return nil, err
	}
	owned := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.LabelSelector = labels.SelectorFromSet(owner).String()
	}))
	nodes := owned.Core().V1().Nodes()
	if err := nodes.Informer().SetTransform(stripManagedFields); err != nil {
		cancel()
		return nil, err
	}
	c.Node = nodes.Lister()
	c.watchErrors(nodes.Informer())
	c.factories = append(c.factories, owned)
	if err := c.sync(parent, ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// sync starts c's informers, with ctx, and waits until they hold what
// the API server holds, for at most SyncTimeout; a list or watch
// refused ends the wait at once. When it returns an error, c is stopped.
func (c *Caches) sync(parent, ctx context.Context) error {
	for _, f := range c.factories {
		f.Start(ctx.Done())
	}
	syncing, stopSyncing := context.WithTimeout(ctx, SyncTimeout)
	defer stopSyncing()
	go func() {
		select {
		case <-c.refused:
			stopSyncing()
		case <-syncing.Done():
		}
	}()
	for _, f := range c.factories {
		for typ, ok := range f.WaitForCacheSync(syncing.Done()) {
			if !ok {
				c.Stop() // which ends ctx: the start's own is parent
				if err := parent.Err(); err != nil {
					return err
				}
				select {
				case <-c.refused:
					return c.refusal
				default:
				}
				err := c.lastError()
				if err != nil {
					return fmt.Errorf("the cache of %s did not sync within %s: %w", typ, SyncTimeout, err)
				}
				return fmt.Errorf("the cache of %s did not sync within %s", typ, SyncTimeout)
			}
		}
	}
	if c.Claims != nil {
		if err := c.Claims.Wait(syncing); err != nil {
			c.Stop()
			if perr := parent.Err(); perr != nil {
				return perr
			}
			return err
		}
	}
	return nil
}

// watchErrors keeps the informer's list and watch errors, for the error
// of a cache that does not sync, says when one was refused, and logs them
// as client-go does.
func (c *Caches) watchErrors(informer cache.SharedIndexInformer) {
	_ = informer.SetWatchErrorHandlerWithContext(func(ctx context.Context, r *cache.Reflector, err error) {
		c.mu.Lock()
		c.lastErr = err
		c.mu.Unlock()
		if apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err) {
			c.refusedOnce.Do(func() {
				c.refusal = fmt.Errorf("the cache of %s cannot sync: %w", r.TypeDescription(), err)
				close(c.refused)
			})
		}
		cache.DefaultWatchErrorHandler(ctx, r, err)
	}) // fails only once the informer runs
}

func (c *Caches) lastError() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lastErr
}

// Stop ends the informers and waits until they have.
func (c *Caches) Stop() {
	c.cancel()
	for _, f := range c.factories {
		f.Shutdown()
	}
	if c.done != nil {
		<-c.done
	}
}

// BoundPods returns the pods bound to the node, as cached: shared
// objects, read-only.
func (c *Caches) BoundPods() []*corev1.Pod {
	return c.pods.Bound(c.name)
}

// NodeSlices returns the node's ResourceSlices of its driver, as cached:
// shared objects, read-only.
func (c *Caches) NodeSlices() []*resourcev1.ResourceSlice {
	slices, _ := c.slices.List(labels.Everything()) // a cache lister never fails
	return slices
}

// The managed fields of the nodes and pods the provider holds are not
// kept: no reader needs them (its object patches are strategic merge
// patches, with their field manager), and they are a third of a node's
// size or more, held more than once a node (its cache, its last write).

// stripManagedFields is the transform of a node or a pod as it enters a
// cache: without its managed fields.
func stripManagedFields(obj any) (any, error) {
	if o, ok := obj.(metav1.Object); ok {
		o.SetManagedFields(nil)
	}
	return obj, nil
}

// LeanNodes is the provider's client of nodes: every node it returns is
// without its managed fields.
type LeanNodes struct{ corev1client.NodeInterface }

func lean(node *corev1.Node, err error) (*corev1.Node, error) {
	if node != nil {
		node.ManagedFields = nil
	}
	return node, err
}

func (n LeanNodes) Get(ctx context.Context, name string, opts metav1.GetOptions) (*corev1.Node, error) {
	return lean(n.NodeInterface.Get(ctx, name, opts))
}

func (n LeanNodes) Create(ctx context.Context, node *corev1.Node, opts metav1.CreateOptions) (*corev1.Node, error) {
	return lean(n.NodeInterface.Create(ctx, node, opts))
}

func (n LeanNodes) Update(ctx context.Context, node *corev1.Node, opts metav1.UpdateOptions) (*corev1.Node, error) {
	return lean(n.NodeInterface.Update(ctx, node, opts))
}

func (n LeanNodes) UpdateStatus(ctx context.Context, node *corev1.Node, opts metav1.UpdateOptions) (*corev1.Node, error) {
	return lean(n.NodeInterface.UpdateStatus(ctx, node, opts))
}

func (n LeanNodes) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subresources ...string) (*corev1.Node, error) {
	return lean(n.NodeInterface.Patch(ctx, name, pt, data, opts, subresources...))
}

// OnBoundPod calls handle with each pod bound to the node that the cache
// adds or updates, those it holds already first, and returns what stops
// it (Pods.On).
func (c *Caches) OnBoundPod(handle func(*corev1.Pod)) (remove func()) {
	return c.pods.On(c.name, handle)
}
