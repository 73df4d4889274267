package vnode

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/pingnode/pingnode/nodeapply"
)

// heldBy sums what the pods bound to the node hold on the backend, as the
// scheduler sums a pod's requests (init containers, sidecars, pod
// overhead, resized resources), with their number as "pods". A pod counts
// once the backend runs it, by [nodeapply.RunsOnBackend] (phase Running,
// started before the ping at was sent), the one test of it that a held
// device's [devicepool.Device.Running] shares: a pod started since is not
// yet in the reply's available figures, and counting it would make the
// node claim room the backend does not have, for one interval. That errs
// to the safe side: a pod that started just before the ping but after the
// backend took its figures is missed once, and the node says a little
// less than it could.
func heldBy(pods []*corev1.Pod, at time.Time) corev1.ResourceList {
	held := corev1.ResourceList{}
	count := int64(0)
	for _, pod := range pods {
		if !nodeapply.RunsOnBackend(pod, at) {
			continue
		}
		count++
		for name, q := range resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{UseStatusResources: true}) {
			sum := held[name]
			sum.Add(q)
			held[name] = sum
		}
	}
	held[corev1.ResourcePods] = *resource.NewQuantity(count, resource.DecimalSI)
	return held
}

// Held sums what the pods bound to the node hold at the time of the ping,
// as the pod cache has them. A pod whose start the cache has not seen yet
// is missed for one ping: the safe side, as above.
func (p *Node) Held(at time.Time) corev1.ResourceList {
	return heldBy(p.caches.BoundPods(), at)
}
