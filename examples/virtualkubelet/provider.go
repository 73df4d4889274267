package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/virtual-kubelet/virtual-kubelet/node"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/pingstatus"
)

// FieldManager names this provider's writes in the node's managedFields.
const FieldManager = "pingnode-provider"

// Config is what the provider is told at start.
type Config struct {
	// Static is the node as configured: name, labels, capacity, and the
	// taints of the static configuration (the protected one among them).
	Static *corev1.Node
	// StaticKeys are the keys of the static taints besides the default
	// protected one; no plugin may set or remove them.
	StaticKeys []string
	// PluginURL is the plugin's status endpoint.
	PluginURL string
	// Interval is how often the plugin is pinged; Timeout bounds one ping.
	Interval, Timeout time.Duration
	// Heartbeat is the node controller's own status interval.
	Heartbeat time.Duration
	// Compat is interLink 0.6.2's taint rule.
	Compat bool
}

// Provider pings a plugin and keeps a virtual node true to its replies: it
// hands status changes to the Virtual Kubelet node controller and sends the
// taints patch itself, since the node controller sends no spec.
type Provider struct {
	cfg   Config
	nodes corev1client.NodeInterface
	log   *slog.Logger
	http  *http.Client

	mu     sync.Mutex
	notify func(*corev1.Node) // the node controller's, once it runs

	// node is the provider's node: the static configuration plus what the
	// plugin reported. Only the ping loop touches it.
	node *corev1.Node

	// Counters, for logs and tests.
	Pings       atomic.Int64 // plugin pings
	Writes      atomic.Int64 // nodes handed to the node controller, and taints patches sent
	WriteErrors atomic.Int64 // writes the API server refused (a conflict, retried, is not one)
}

// NewProvider returns a provider for cfg that writes through nodes.
func NewProvider(cfg Config, nodes corev1client.NodeInterface, log *slog.Logger) *Provider {
	return &Provider{cfg: cfg, nodes: nodes, log: log, http: &http.Client{Timeout: cfg.Timeout}, node: cfg.Static.DeepCopy()}
}

func (p *Provider) applyOptions() nodeapply.Options {
	return nodeapply.Options{ProtectedKeys: p.cfg.StaticKeys, ReplaceAllTaints: p.cfg.Compat}
}

// Ping is the node controller's liveness check of the provider itself.
func (p *Provider) Ping(context.Context) error { return nil }

// NotifyNodeStatus keeps the node controller's callback.
func (p *Provider) NotifyNodeStatus(_ context.Context, cb func(*corev1.Node)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.notify = cb
}

// Run registers the node, then pings the plugin every interval until ctx
// ends.
func (p *Provider) Run(ctx context.Context) error {
	controller, err := node.NewNodeController(p, p.cfg.Static, p.nodes,
		node.WithNodePingInterval(p.cfg.Heartbeat),
		node.WithNodeStatusUpdateErrorHandler(func(ctx context.Context, err error) error {
			p.WriteErrors.Add(1)
			p.log.Error("node status update refused", "error", err)
			return err
		}))
	if err != nil {
		return err
	}
	go func() { _ = controller.Run(ctx) }()
	select {
	case <-controller.Ready():
	case <-controller.Done():
		return fmt.Errorf("node controller: %w", controller.Err())
	case <-ctx.Done():
		return ctx.Err()
	}
	if err := p.adoptServerState(ctx); err != nil {
		return err
	}
	ticker := time.NewTicker(p.cfg.Interval)
	defer ticker.Stop()
	for {
		p.PingOnce(ctx)
		select {
		case <-ctx.Done():
			<-controller.Done()
			return nil
		case <-ticker.C:
		}
	}
}

// adoptServerState takes from the stored node what an earlier run of the
// provider, the plugin or an administrator left there: the taints, the
// ownership annotation and the last reported resources.
func (p *Provider) adoptServerState(ctx context.Context) error {
	server, err := p.nodes.Get(ctx, p.cfg.Static.Name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	p.node.Spec.Taints = server.Spec.Taints
	p.node.Status.Capacity = server.Status.Capacity
	p.node.Status.Allocatable = server.Status.Allocatable
	if owned, ok := server.Annotations[nodeapply.OwnershipAnnotation]; ok {
		if p.node.Annotations == nil {
			p.node.Annotations = map[string]string{}
		}
		p.node.Annotations[nodeapply.OwnershipAnnotation] = owned
	}
	return nil
}

// PingOnce asks the plugin once and writes what changed. A failed ping is
// no news: the node keeps its last good values.
func (p *Provider) PingOnce(ctx context.Context) {
	p.Pings.Add(1)
	body, err := p.fetch(ctx)
	if err != nil {
		p.log.Warn("plugin ping failed; node left as it is", "error", err)
		return
	}
	patch, warnings := pingstatus.Parse(body, pingstatus.Options{ProtectedKeys: p.cfg.StaticKeys})
	res := nodeapply.Apply(p.node, nodeapply.Ping{Reply: &patch}, p.applyOptions())
	for _, w := range append(warnings, res.Warnings...) {
		p.log.Warn("plugin reply", "path", w.Path, "problem", w.Message)
	}
	if len(res.Changes) == 0 {
		return
	}
	for _, c := range res.Changes {
		p.log.Info("node change", "path", c.Path, "op", c.Op.String(), "old", c.Old, "new", c.New)
	}
	updated := res.Node // new, and ours to edit
	if nodeapply.TaintsPatch(p.node, updated, p.applyOptions()) != nil {
		server, err := p.deliverTaints(ctx, &patch)
		if err != nil {
			p.log.Error("taints not delivered; the provider's taints left as they were", "error", err)
			server = p.node
		}
		updated.Spec.Taints = server.Spec.Taints
		setOwnership(updated, server)
	}
	p.node = updated
	p.mu.Lock()
	notify := p.notify
	p.mu.Unlock()
	if notify != nil {
		p.Writes.Add(1)
		notify(updated.DeepCopy()) // the node controller sends status, labels and annotations
	}
}

func setOwnership(dst, src *corev1.Node) {
	owned, ok := src.Annotations[nodeapply.OwnershipAnnotation]
	if !ok {
		delete(dst.Annotations, nodeapply.OwnershipAnnotation)
		return
	}
	if dst.Annotations == nil {
		dst.Annotations = map[string]string{}
	}
	dst.Annotations[nodeapply.OwnershipAnnotation] = owned
}

// deliverTaints applies the patch to the stored node and sends the taints
// patch, with the stored node's resourceVersion as a precondition. On a
// conflict (someone changed the node meanwhile) it reads the node again
// and retries. It returns the node as stored after the patch.
func (p *Provider) deliverTaints(ctx context.Context, patch *pingstatus.NodePatch) (*corev1.Node, error) {
	const attempts = 5
	for range attempts {
		server, err := p.nodes.Get(ctx, p.cfg.Static.Name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		res := nodeapply.Apply(server, nodeapply.Ping{Reply: patch}, p.applyOptions())
		body := nodeapply.TaintsPatch(server, res.Node, p.applyOptions())
		if body == nil {
			return server, nil // stored as the plugin wants already
		}
		p.Writes.Add(1)
		stored, err := p.nodes.Patch(ctx, server.Name, types.StrategicMergePatchType, body, metav1.PatchOptions{FieldManager: FieldManager})
		if err == nil {
			return stored, nil
		}
		if !apierrors.IsConflict(err) {
			p.WriteErrors.Add(1)
			return nil, err
		}
		p.log.Info("taints patch conflicted with another write; reading the node again")
	}
	return nil, fmt.Errorf("taints patch still conflicting after %d attempts", attempts)
}

// fetch GETs the plugin's reply, reading at most one byte past the body
// limit so that Parse can tell an oversized reply.
func (p *Provider) fetch(ctx context.Context) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.cfg.PluginURL, nil)
	if err != nil {
		return nil, err
	}
	resp, err := p.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return nil, errors.New("plugin answered " + resp.Status)
	}
	return io.ReadAll(io.LimitReader(resp.Body, pingstatus.DefaultMaxBodyBytes+1))
}
