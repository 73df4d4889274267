package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/virtual-kubelet/virtual-kubelet/node"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"

	"github.com/pingnode/pingnode/examples/internal/ping"
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
	// Grace is how long the plugin may fail to answer before Ready turns
	// False; zero means nodeapply.DefaultGrace.
	Grace time.Duration
	// CountHeld reads the plugin's figures as what the backend has
	// available now, and adds what this node's running pods hold (see
	// heldBy). Off, the figures are written as they are (interLink's
	// rule), for a plugin that reports the total the backend gives the
	// node.
	CountHeld bool
}

// Provider pings a plugin and keeps a virtual node true to its replies and
// to whether it answers: it hands status changes (resources, conditions)
// to the Virtual Kubelet node controller and sends the taints patch
// itself, since the node controller sends no spec.
//
// Each ping is applied to the node as stored, read at every ping (one GET
// an interval: cheap at interLink's 30 s), so what an administrator or a
// controller changed meanwhile is seen at once, and drift (the plugin's
// taint deleted by hand) is corrected at the next ping. The node last
// handed to the node controller stands in for the stored one until the
// stored one moves past the version it was built on, so that a write still
// on its way is not made twice.
type Provider struct {
	cfg   Config
	nodes corev1client.NodeInterface
	pods  corev1client.PodInterface
	log   *slog.Logger
	// eventSink is where the node's events go.
	eventSink corev1client.EventInterface
	ping      *ping.Client

	mu     sync.Mutex
	notify func(*corev1.Node) // the node controller's, once it runs

	// pending is the node last handed to the node controller, built on the
	// stored node of resourceVersion pendingBase. Only the ping loop
	// touches them.
	pending     *corev1.Node
	pendingBase string

	// events records Kubernetes events on the node, once Run starts.
	events *nodeEvents

	// BeforeTaintsPatch, when set, runs between the provider's read of the
	// node and its taints patch: a hook for tests of conflicts.
	BeforeTaintsPatch func(ctx context.Context)

	// Counters, for logs and tests.
	Pings       atomic.Int64 // plugin pings
	Failures    atomic.Int64 // pings the plugin did not answer
	Writes      atomic.Int64 // nodes handed to the node controller, and taints patches sent
	WriteErrors atomic.Int64 // writes the API server refused (a conflict, retried, is not one)
	Conflicts   atomic.Int64 // taints patches that conflicted and were retried
}

// NewProvider returns a provider for cfg that talks to the API server
// through core.
func NewProvider(cfg Config, core corev1client.CoreV1Interface, log *slog.Logger) *Provider {
	return &Provider{
		cfg: cfg, nodes: core.Nodes(), pods: core.Pods(metav1.NamespaceAll), eventSink: core.Events(metav1.NamespaceAll), log: log,
		ping: &ping.Client{URL: cfg.PluginURL, Timeout: cfg.Timeout, HTTP: &http.Client{}},
	}
}

func (p *Provider) applyOptions() nodeapply.Options {
	return nodeapply.Options{ProtectedKeys: p.cfg.StaticKeys, ReplaceAllTaints: p.cfg.Compat, Grace: p.cfg.Grace}
}

func (p *Provider) parseOptions() pingstatus.Options {
	return pingstatus.Options{ProtectedKeys: p.cfg.StaticKeys}
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
	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	broadcaster.StartRecordingToSink(&corev1client.EventSinkImpl{Interface: p.eventSink})
	defer broadcaster.Shutdown()
	p.events = newNodeEvents(broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: FieldManager, Host: p.cfg.Static.Name}), p.cfg.Static.Name)
	registration, err := p.registration(ctx)
	if err != nil {
		return err
	}
	controller, err := node.NewNodeController(p, registration, p.nodes,
		node.WithNodePingInterval(p.cfg.Heartbeat),
		node.WithNodeStatusUpdateErrorHandler(func(ctx context.Context, err error) error {
			if apierrors.IsNotFound(err) { // deleted by someone: register it again
				p.log.Warn("the node is gone; registering it again")
				_, err := p.nodes.Create(ctx, p.cfg.Static, metav1.CreateOptions{FieldManager: FieldManager})
				if err == nil || apierrors.IsAlreadyExists(err) {
					return nil // the node controller sends the status again
				}
			}
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

// registration is the node handed to the node controller: the static
// configuration, or, when the node is stored already (the provider
// restarted), the stored status, labels and annotations over it. The
// controller's first write replaces the stored status with this one, and
// its later writes remove what it wrote before and this one lacks, so
// starting from the static node would drop the plugin's last resources,
// the conditions and the ownership annotation.
func (p *Provider) registration(ctx context.Context) (*corev1.Node, error) {
	node := p.cfg.Static.DeepCopy()
	stored, err := p.nodes.Get(ctx, node.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return node, nil
	}
	if err != nil {
		return nil, err
	}
	status := stored.Status.DeepCopy()
	status.NodeInfo = node.Status.NodeInfo // this provider's version
	node.Status = *status
	labels := stored.Labels
	for k, v := range node.Labels {
		if labels == nil {
			labels = map[string]string{}
		}
		labels[k] = v
	}
	node.Labels, node.Annotations = labels, stored.Annotations
	return node, nil
}

// PingOnce asks the plugin once, applies the outcome to the stored node,
// and writes what changed.
func (p *Provider) PingOnce(ctx context.Context) {
	p.Pings.Add(1)
	ping := p.ping.Ping(ctx)
	if ctx.Err() != nil {
		return // stopping: the failure is ours, not the plugin's
	}
	var warnings []pingstatus.Warning
	if ping.Reached() {
		patch, w := pingstatus.Parse(ping.Body, p.parseOptions())
		ping.Reply, warnings = &patch, w
		if p.cfg.CountHeld {
			held, err := p.held(ctx, ping.At)
			if err != nil {
				p.log.Error("listing the node's pods; the reply's figures used alone", "error", err)
			}
			ping.Held = held
		}
	} else {
		p.Failures.Add(1)
		p.log.Warn("plugin ping failed", "failure", ping.Failure)
	}
	base, err := p.current(ctx)
	if err != nil {
		p.log.Error("reading the node", "error", err)
		return
	}
	res := nodeapply.Apply(base, ping, p.applyOptions())
	warnings = append(warnings, res.Warnings...)
	for _, w := range warnings {
		p.log.Warn("plugin reply", "path", w.Path, "problem", w.Message)
	}
	p.events.warnings(warnings)
	if len(res.Changes) == 0 {
		return
	}
	p.logChanges(res.Changes)
	p.events.transitions(res.Changes, res.Node, nodeapply.DefaultConnectivityCondition)
	if nodeapply.TaintsPatch(base, res.Node, p.applyOptions()) != nil {
		stored, err := p.deliverTaints(ctx, ping)
		if err != nil {
			p.log.Error("taints not delivered; the next ping tries again", "error", err)
			return
		}
		base = stored
		res = nodeapply.Apply(stored, ping, p.applyOptions())
	}
	if nodeapply.StatusPatch(base, res.Node) == nil {
		return
	}
	p.mu.Lock()
	notify := p.notify
	p.mu.Unlock()
	if notify != nil {
		p.Writes.Add(1)
		p.pending, p.pendingBase = res.Node, base.ResourceVersion
		notify(res.Node.DeepCopy()) // the node controller sends status, labels and annotations
	}
}

// current returns the node to apply the next ping to: the stored node, or
// the node last handed to the node controller while the stored node has
// not moved past the version that one was built on. A node deleted by
// someone is registered again, as the static configuration has it; the
// ping then brings back what the plugin reports.
func (p *Provider) current(ctx context.Context) (*corev1.Node, error) {
	stored, err := p.nodes.Get(ctx, p.cfg.Static.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) { // deleted by someone: register it again
		p.log.Warn("the node is gone; registering it again")
		stored, err = p.nodes.Create(ctx, p.cfg.Static, metav1.CreateOptions{FieldManager: FieldManager})
	}
	if err != nil {
		return nil, err
	}
	if p.pending != nil && stored.ResourceVersion == p.pendingBase {
		return p.pending, nil
	}
	p.pending = nil
	return stored, nil
}

// logChanges logs every change, and the conditions' transitions apart, at
// the level an operator wants them.
func (p *Provider) logChanges(changes []nodeapply.Change) {
	for _, c := range changes {
		p.log.Info("node change", "path", c.Path, "op", c.Op.String(), "old", c.Old, "new", c.New)
		if strings.HasPrefix(c.Path, "status.conditions[") && (strings.HasSuffix(c.Path, "].status") || c.Op == nodeapply.Added) {
			level := slog.LevelInfo
			if !strings.HasPrefix(c.New, string(corev1.ConditionTrue)) {
				level = slog.LevelWarn
			}
			p.log.Log(context.Background(), level, "node condition transition", "condition", c.Path, "from", c.Old, "to", c.New)
		}
	}
}

// deliverTaints applies the ping to the stored node and sends the taints
// patch, with the stored node's resourceVersion as a precondition. On a
// conflict (someone changed the node meanwhile) it reads the node again
// and retries. It returns the node as stored after the patch.
func (p *Provider) deliverTaints(ctx context.Context, ping nodeapply.Ping) (*corev1.Node, error) {
	const attempts = 5
	for range attempts {
		server, err := p.nodes.Get(ctx, p.cfg.Static.Name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		res := nodeapply.Apply(server, ping, p.applyOptions())
		body := nodeapply.TaintsPatch(server, res.Node, p.applyOptions())
		if body == nil {
			return server, nil // stored as the plugin wants already
		}
		p.mu.Lock()
		hook := p.BeforeTaintsPatch
		p.mu.Unlock()
		if hook != nil {
			hook(ctx)
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
		p.Conflicts.Add(1)
		p.log.Info("taints patch conflicted with another write; reading the node again")
	}
	return nil, fmt.Errorf("taints patch still conflicting after %d attempts", attempts)
}
