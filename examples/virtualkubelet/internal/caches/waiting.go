package caches

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corev1listers "k8s.io/client-go/listers/core/v1"
)

// Waiting starts the cache of the pods not bound to a node
// (spec.nodeName empty, as the scheduler selects the pods it places), in
// which the pods that wait for the backend's confirmation are (-confirm),
// and waits until it holds what the API server holds, for at most
// SyncTimeout. It returns its lister and what stops it; when it returns
// an error, nothing it started still runs. A process shares one.
func Waiting(parent context.Context, client kubernetes.Interface) (corev1listers.PodLister, func(), error) {
	ctx, cancel := context.WithCancel(parent)
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.FieldSelector = fields.OneTermEqualSelector("spec.nodeName", "").String()
	}))
	pods := factory.Core().V1().Pods()
	if err := pods.Informer().SetTransform(stripManagedFields); err != nil {
		cancel()
		return nil, nil, err
	}
	lister := pods.Lister()
	factory.Start(ctx.Done())
	syncing, stopSyncing := context.WithTimeout(ctx, SyncTimeout)
	defer stopSyncing()
	stop := func() {
		cancel()
		factory.Shutdown()
	}
	for typ, ok := range factory.WaitForCacheSync(syncing.Done()) {
		if !ok {
			stop()
			if err := parent.Err(); err != nil {
				return nil, nil, err
			}
			return nil, nil, fmt.Errorf("the cache of %v did not sync within %v", typ, SyncTimeout)
		}
	}
	return lister, stop, nil
}

// BoundTo returns the pods bound to the node name, as cached: shared
// objects, read-only. For a supervisor's caches (Owned), any node's.
func (c *Caches) BoundTo(name string) []*corev1.Pod {
	return c.pods.Bound(name)
}
