package main

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corev1listers "k8s.io/client-go/listers/core/v1"
)

// caches are the provider's view of its node and of the pods bound to it:
// informers, each with one watch that the API server serves from its watch
// cache, so that a ping reads no node and lists no pod from the API
// server. The node informer watches this node alone (field selector
// metadata.name), the pod informer the pods bound to it (spec.nodeName).
type caches struct {
	node      corev1listers.NodeLister
	pods      corev1listers.PodLister // nil without CountHeld
	factories []informers.SharedInformerFactory
}

// startCaches starts the informers and waits until they hold what the API
// server holds. Stop them with stop.
func startCaches(ctx context.Context, client kubernetes.Interface, name string, withPods bool) (*caches, error) {
	c := &caches{}
	byName := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.FieldSelector = fields.OneTermEqualSelector("metadata.name", name).String()
	}))
	c.node = byName.Core().V1().Nodes().Lister()
	c.factories = append(c.factories, byName)
	if withPods {
		bound := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("spec.nodeName", name).String()
		}))
		c.pods = bound.Core().V1().Pods().Lister()
		c.factories = append(c.factories, bound)
	}
	for _, f := range c.factories {
		f.Start(ctx.Done())
	}
	for _, f := range c.factories {
		for typ, ok := range f.WaitForCacheSync(ctx.Done()) {
			if !ok {
				c.stop()
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				return nil, errors.New("the cache of " + typ.String() + " did not sync")
			}
		}
	}
	return c, nil
}

// stop waits for the informers to end; their context must have ended.
func (c *caches) stop() {
	for _, f := range c.factories {
		f.Shutdown()
	}
}

// boundPods returns the pods bound to the node, as cached: shared
// objects, read-only.
func (c *caches) boundPods() []*corev1.Pod {
	if c.pods == nil {
		return nil
	}
	pods, _ := c.pods.List(labels.Everything()) // a cache lister never fails
	return pods
}
