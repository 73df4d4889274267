package supervise

import (
	"context"
	"log/slog"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/record"

	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/caches"
	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/jobs"
	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/vnode"
	"github.com/pingnode/pingnode/nodeapply/dra/confirm"
)

// The pods' jobs: each supervisor keeps the jobs of the pods of its
// plugin's nodes (a jobs.Keeper, internal/jobs), which steps after each
// answered ping. With -confirm, a pod that asks waits before it binds to
// a node of the provider's until the backend runs it. The
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

// startJobs starts the keeper of the jobs of the pods on the supervisor's
// nodes, and returns what stops it: a pod bound to one of them gets its
// job on the plugin, with or without Confirm; with Confirm, the keeper
// also holds the pods that ask until the backend runs them. The caches it
// reads are the process's, or its own when it runs alone, and so are its
// events.
func (s *pinging) startJobs(ctx context.Context, nodes served) (stop func(), err error) {
	s.jobs = nil
	var stops []func()
	stop = func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	cfg := jobs.Config{
		Client: s.client, Plugin: s.pinger,
		Bound: nodes.boundTo, Nodes: nodes.servedNodes,
		Driver: confirm.DefaultDriver, Resource: confirm.DefaultResource,
		FieldManager: vnode.FieldManager, Deadline: s.cfg.ConfirmDeadline, Log: s.log,
		Part: nodes.partOfNode, Data: s.cfg.Process.Data,
	}
	cfg.PinAnnotation, cfg.PinFlag = vnode.PinOf(s.cfg.PartPin)
	if s.cfg.Confirm {
		if cfg.Claims, cfg.Waiting, err = s.confirmCaches(ctx, &stops); err != nil {
			stop()
			return nil, err
		}
		ensureClass(ctx, s.client, s.log)
	}
	broadcaster := s.cfg.Process.Events
	if broadcaster == nil {
		broadcaster = record.NewBroadcaster(record.WithContext(ctx))
		broadcaster.StartRecordingToSink(&corev1client.EventSinkImpl{Interface: s.client.CoreV1().Events(metav1.NamespaceAll)})
		stops = append(stops, broadcaster.Shutdown)
	}
	recorders := map[string]record.EventRecorder{} // by node; the keeper's loop's alone
	cfg.Events = func(node string) record.EventRecorder {
		if recorders[node] == nil {
			recorders[node] = broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: vnode.FieldManager, Host: node})
		}
		return recorders[node]
	}
	k := jobs.New(cfg)
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

// confirmCaches returns the caches of the claims and of the pods that
// wait, the process's or its own, whose stops it adds to stops.
func (s *pinging) confirmCaches(ctx context.Context, stops *[]func()) (func(driver, pool string) []*resourcev1.ResourceClaim, corev1listers.PodLister, error) {
	claims, waiting := s.cfg.Process.Claims, s.cfg.Process.Waiting
	if claims == nil {
		var stopClaims func()
		claims, stopClaims = caches.RunClaims(ctx, s.client)
		*stops = append(*stops, stopClaims)
		if err := claims.Wait(ctx); err != nil {
			return nil, nil, err
		}
	}
	if waiting == nil {
		w, stopWaiting, err := caches.Waiting(ctx, s.client)
		if err != nil {
			return nil, nil, err
		}
		waiting = w
		*stops = append(*stops, stopWaiting)
	}
	return claims.InPool, waiting, nil
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
