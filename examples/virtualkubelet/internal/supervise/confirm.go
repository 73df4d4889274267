package supervise

import (
	"context"
	"log/slog"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	corev1listers "k8s.io/client-go/listers/core/v1"

	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/caches"
	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/jobs"
	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/vnode"
	"github.com/pingnode/pingnode/nodeapply/dra/confirm"
)

// The backend's confirmation (-confirm): a pod that asks waits before it
// binds to a node of the provider's until the backend runs it. Each
// supervisor keeps the jobs of its plugin's pods that wait (a
// jobs.Keeper, internal/jobs), which steps after each answered ping. The
// class that serves the confirmation devices as an extended resource is
// created at the start, once for the cluster: the same for every
// provider.

// StartWaiting starts the process's cache of the pods not bound to a
// node, with cfg's Confirm, and returns it and what stops it; nil and a
// no-op without.
func StartWaiting(ctx context.Context, client kubernetes.Interface, cfg vnode.Config) (corev1listers.PodLister, func(), error) {
	if !cfg.Confirm {
		return nil, func() {}, nil
	}
	return caches.Waiting(ctx, client)
}

// startJobs starts, with Confirm, the keeper of the jobs of the pods that
// wait on the supervisor's nodes, and returns what stops it; the caches
// it reads are the process's, or its own when it runs alone.
func (s *pinging) startJobs(ctx context.Context, nodes served) (stop func(), err error) {
	s.jobs = nil
	if !s.cfg.Confirm {
		return func() {}, nil
	}
	var stops []func()
	stop = func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	claims, waiting := s.cfg.Process.Claims, s.cfg.Process.Waiting
	if claims == nil {
		var stopClaims func()
		claims, stopClaims = caches.RunClaims(ctx, s.client)
		stops = append(stops, stopClaims)
		if err := claims.Wait(ctx); err != nil {
			stop()
			return nil, err
		}
	}
	if waiting == nil {
		var stopWaiting func()
		if waiting, stopWaiting, err = caches.Waiting(ctx, s.client); err != nil {
			stop()
			return nil, err
		}
		stops = append(stops, stopWaiting)
	}
	ensureClass(ctx, s.client, s.log)
	pinAnnotation, pinFlag := vnode.PinOf(s.cfg.PartPin)
	k := jobs.New(jobs.Config{
		Client: s.client, Plugin: s.pinger,
		Claims: claims.InPool, Waiting: waiting,
		Bound: nodes.boundTo, Nodes: nodes.servedNodes,
		Driver: confirm.DefaultDriver, Resource: confirm.DefaultResource,
		FieldManager: vnode.FieldManager, Deadline: s.cfg.ConfirmDeadline, Log: s.log,
		Part: nodes.partOfNode, PinAnnotation: pinAnnotation, PinFlag: pinFlag,
	})
	running, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		k.Run(running)
	}()
	stops = append(stops, func() { cancel(); <-done })
	s.jobs = k
	return stop, nil
}

// ensureClass creates the DeviceClass that serves the confirmation
// devices, unless it exists. A class that cannot be created is logged:
// pods that ask then stay pending, as without the class.
func ensureClass(ctx context.Context, client kubernetes.Interface, log *slog.Logger) {
	class := confirm.Class(confirm.DefaultClass, confirm.DefaultDriver, confirm.DefaultResource)
	_, err := client.ResourceV1().DeviceClasses().Create(ctx, class, metav1.CreateOptions{FieldManager: vnode.FieldManager})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		log.Warn("the DeviceClass of the backend's confirmation could not be created: pods that ask for it stay pending", "class", class.Name, "error", err)
	}
}

// servedNodes returns the node served, as its cache shows it.
func (s *NodeSupervisor) servedNodes() []*corev1.Node {
	view := s.node.Caches()
	if view == nil {
		return nil
	}
	node, err := view.Node.Get(s.node.Config().Static.Name)
	if err != nil {
		return nil
	}
	return []*corev1.Node{node}
}

// partOfNode is "": a node of its own.
func (s *NodeSupervisor) partOfNode(string) string { return "" }

// boundTo returns the pods bound to the node served.
func (s *NodeSupervisor) boundTo(string) []*corev1.Pod {
	view := s.node.Caches()
	if view == nil {
		return nil
	}
	return view.BoundPods()
}

// servedNodes returns the parts' nodes served, as the cache of the owned
// nodes shows them.
func (s *PartsSupervisor) servedNodes() []*corev1.Node {
	nodes, _ := s.owned.Node.List(labels.SelectorFromSet(labels.Set{vnode.OwnerLabel: s.cfg.Parts.Owner})) // a cache lister never fails
	return nodes
}

// partOfNode returns the part of the node name, one of the supervisor's.
func (s *PartsSupervisor) partOfNode(name string) string {
	node, err := s.owned.Node.Get(name)
	if err != nil {
		return ""
	}
	part, _ := s.cfg.Parts.PartOf(node)
	return part
}

// boundTo returns the pods bound to the node name, one of the
// supervisor's.
func (s *PartsSupervisor) boundTo(name string) []*corev1.Pod {
	return s.owned.BoundTo(name)
}
