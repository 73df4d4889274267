package caches

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// The caches of Dynamic Resource Allocation (-dra-driver): the node's
// ResourceSlices of its driver, in caches.go with the node's other
// informers, and the ResourceClaims, here.
//
// ResourceClaims cannot be selected by the node or the pool their
// devices come from (no field selector reaches status.allocation), so the
// informer holds every claim of the cluster. A fleet shares one
// (SharedClaims): one watch and one copy of the claims a
// process, not one a node. It is indexed by the driver and pool of each
// device its allocation names, so that a ping reads the claims of its
// pool without a scan of every claim, and by namespace and name, for a
// pod's claims.

// SharedClaims starts the claim cache that the nodes of a fleet share,
// when they need one (they publish devices under a driver, or wait for
// the backend's confirmation), and returns it and what stops it; nil and
// a no-op when they do not.
func SharedClaims(ctx context.Context, restConfig *rest.Config, need bool) (*Claims, func(), error) {
	if !need {
		return nil, func() {}, nil
	}
	client, err := kubernetes.NewForConfig(restConfig)
	if err != nil {
		return nil, nil, err
	}
	claims, stop := RunClaims(ctx, client)
	return claims, stop, nil
}

// RunClaims runs a claim cache through client until stop is called; stop
// returns once it has stopped.
func RunClaims(ctx context.Context, client kubernetes.Interface) (claims *Claims, stop func()) {
	claims = NewClaims(client)
	running, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		claims.Run(running)
	}()
	return claims, func() { cancel(); <-done }
}

// claimIndex is the name of the index of claims by driver and pool.
const claimIndex = "driver/pool"

// poolKey is the key of a driver's pool in [claimIndex].
func poolKey(driver, pool string) string { return driver + "/" + pool }

// Claims is an informer of ResourceClaims, indexed by the pools their
// allocations take devices from.
type Claims struct {
	informer cache.SharedIndexInformer

	mu      sync.Mutex
	lastErr error // its last list or watch error
}

// NewClaims returns a cache of every ResourceClaim, read through client;
// Run starts it.
func NewClaims(client kubernetes.Interface) *Claims {
	c := &Claims{informer: informers.NewSharedInformerFactory(client, 0).Resource().V1().ResourceClaims().Informer()}
	_ = c.informer.AddIndexers(cache.Indexers{claimIndex: byPool}) // fails only once it runs
	_ = c.informer.SetWatchErrorHandlerWithContext(func(ctx context.Context, r *cache.Reflector, err error) {
		c.mu.Lock()
		c.lastErr = err
		c.mu.Unlock()
		cache.DefaultWatchErrorHandler(ctx, r, err)
	})
	return c
}

// byPool indexes a claim by the driver and pool of each device its
// allocation names.
func byPool(obj any) ([]string, error) {
	claim, ok := obj.(*resourcev1.ResourceClaim)
	if !ok || claim.Status.Allocation == nil {
		return nil, nil
	}
	var keys []string
	for _, r := range claim.Status.Allocation.Devices.Results {
		if key := poolKey(r.Driver, r.Pool); !slices.Contains(keys, key) {
			keys = append(keys, key)
		}
	}
	return keys, nil
}

// Run runs the informer until ctx ends.
func (c *Claims) Run(ctx context.Context) { c.informer.RunWithContext(ctx) }

// Wait waits until the cache holds what the API server holds, and
// returns at once, with the error, when the API server refused its list
// or watch (403 or 401), or when ctx ends. A cache that synced once stays
// synced: a start after a refusal that was mended waits no more.
func (c *Claims) Wait(ctx context.Context) error {
	err := wait.PollUntilContextCancel(ctx, 20*time.Millisecond, true, func(context.Context) (bool, error) {
		if c.informer.HasSynced() {
			return true, nil
		}
		c.mu.Lock()
		err := c.lastErr
		c.mu.Unlock()
		if apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err) {
			return false, fmt.Errorf("the cache of *v1.ResourceClaim cannot sync: %w", err)
		}
		return false, nil
	})
	if err != nil && ctx.Err() != nil {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.lastErr != nil {
			return fmt.Errorf("the cache of *v1.ResourceClaim did not sync: %w", c.lastErr)
		}
		return fmt.Errorf("the cache of *v1.ResourceClaim did not sync: %w", err)
	}
	return err
}

// InPool returns the claims whose allocation names a device of the pool
// of driver: shared objects, read-only.
func (c *Claims) InPool(driver, pool string) []*resourcev1.ResourceClaim {
	objs, _ := c.informer.GetIndexer().ByIndex(claimIndex, poolKey(driver, pool)) // the index exists
	claims := make([]*resourcev1.ResourceClaim, 0, len(objs))
	for _, obj := range objs {
		if claim, ok := obj.(*resourcev1.ResourceClaim); ok {
			claims = append(claims, claim)
		}
	}
	return claims
}

// Get returns the claim of this namespace and name as cached, or nil.
func (c *Claims) Get(namespace, name string) *resourcev1.ResourceClaim {
	obj, ok, _ := c.informer.GetIndexer().GetByKey(namespace + "/" + name) // a cache never fails
	if !ok {
		return nil
	}
	claim, _ := obj.(*resourcev1.ResourceClaim)
	return claim
}
