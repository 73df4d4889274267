package caches

import (
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"
)

// podsByNode is the index of a pod cache by the node each pod is bound
// to (spec.nodeName).
const podsByNode = "spec.nodeName"

// Pods is a pod informer indexed by node, read by the nodes whose
// pods it holds: one node's (a node of its own, a fleet's node), or every
// part's node of a provider of parts (Owned). It has one event
// handler, which hands each pod added or updated to the handlers of its
// node alone, so that 5,000 nodes cost one handler's goroutines, not
// 5,000.
type Pods struct {
	informer cache.SharedIndexInformer
	mu       sync.Mutex
	handlers map[string][]*podHandler // by node name
}

// podHandler is one handler of a node's pods; its pointer is its
// identity, for its removal.
type podHandler struct{ handle func(*corev1.Pod) }

// newPods returns the cache of informer, which must not have started:
// it adds the index by node, and its one handler. The managed fields of
// the pods are not kept: no reader needs them.
func newPods(informer cache.SharedIndexInformer) (*Pods, error) {
	c := &Pods{informer: informer, handlers: map[string][]*podHandler{}}
	if err := informer.SetTransform(stripManagedFields); err != nil {
		return nil, err
	}
	if err := informer.AddIndexers(cache.Indexers{podsByNode: func(obj any) ([]string, error) {
		if pod, ok := obj.(*corev1.Pod); ok && pod.Spec.NodeName != "" {
			return []string{pod.Spec.NodeName}, nil
		}
		return nil, nil
	}}); err != nil {
		return nil, err
	}
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.dispatch,
		UpdateFunc: func(_, obj any) { c.dispatch(obj) },
	}); err != nil {
		return nil, err
	}
	return c, nil
}

// dispatch hands obj, a pod, to the handlers of its node.
func (c *Pods) dispatch(obj any) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	c.mu.Lock()
	handlers := slices.Clone(c.handlers[pod.Spec.NodeName])
	c.mu.Unlock()
	for _, h := range handlers {
		h.handle(pod)
	}
}

// Bound returns the pods bound to the node name, as cached: shared
// objects, read-only.
func (c *Pods) Bound(name string) []*corev1.Pod {
	objs, _ := c.informer.GetIndexer().ByIndex(podsByNode, name) // the index exists
	pods := make([]*corev1.Pod, 0, len(objs))
	for _, obj := range objs {
		if pod, ok := obj.(*corev1.Pod); ok {
			pods = append(pods, pod)
		}
	}
	return pods
}

// On calls handle with each pod bound to the node name that the cache
// adds or updates, those it holds already first, and returns what stops
// it. A pod may be handed twice as it starts: handle must not mind.
func (c *Pods) On(name string, handle func(*corev1.Pod)) (remove func()) {
	h := &podHandler{handle: handle}
	c.mu.Lock()
	c.handlers[name] = append(c.handlers[name], h)
	c.mu.Unlock()
	for _, pod := range c.Bound(name) {
		handle(pod)
	}
	return func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.handlers[name] = slices.DeleteFunc(c.handlers[name], func(o *podHandler) bool { return o == h })
		if len(c.handlers[name]) == 0 {
			delete(c.handlers, name)
		}
	}
}
