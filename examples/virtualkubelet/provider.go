package main

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/virtual-kubelet/virtual-kubelet/node"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"

	"github.com/pingnode/pingnode/examples/internal/pingclient"
	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/pingstatus"
)

// FieldManager names this provider's writes in the node's managedFields.
const FieldManager = "pingnode-provider"

// DefaultLeaseDuration is the duration of the node's Lease, the kubelet's;
// the Lease is renewed every quarter of it (10 s), as the kubelet does.
const DefaultLeaseDuration = 40 * time.Second

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
	// StatusReport is how often the status of a steady node is written
	// (see report.go); zero means [DefaultStatusReport]. A change is
	// written at once.
	StatusReport time.Duration
	// LeaseDuration is the duration of the node's Lease in kube-node-lease
	// (whole seconds); zero means [DefaultLeaseDuration]. LeaseRenew is how
	// often it is renewed; zero means a quarter of the duration.
	LeaseDuration, LeaseRenew time.Duration
	// Compat is interLink 0.6.2's taint rule.
	Compat bool
	// Grace is how long the plugin may fail to answer before Ready turns
	// False; zero means nodeapply.DefaultGrace.
	Grace time.Duration
	// ConnectivityCondition is the type of the condition that says whether
	// the plugin answered its last ping; empty means
	// nodeapply.DefaultConnectivityCondition.
	ConnectivityCondition corev1.NodeConditionType
	// CountHeld reads the plugin's figures as what the backend has
	// available now, and adds what this node's running pods hold (see
	// heldBy). Off, the figures are written as they are (interLink's
	// rule), for a plugin that reports the total the backend gives the
	// node.
	CountHeld bool
	// Metrics are where the provider counts its pings and writes; nil
	// counts them in metrics that no registry serves.
	Metrics *Metrics
}

func (c *Config) statusReport() time.Duration {
	if c.StatusReport <= 0 {
		return DefaultStatusReport
	}
	return c.StatusReport
}

// lease returns the Lease's duration in seconds and its renew interval.
func (c *Config) lease() (int32, time.Duration, error) {
	duration := c.LeaseDuration
	if duration == 0 {
		duration = DefaultLeaseDuration
	}
	seconds := int32(duration / time.Second)
	if seconds < 1 || duration%time.Second != 0 {
		return 0, 0, fmt.Errorf("lease duration %s: want whole seconds, at least one", duration)
	}
	renew := c.LeaseRenew
	if renew == 0 {
		renew = duration / 4
	}
	if renew <= 0 || renew >= duration {
		return 0, 0, fmt.Errorf("lease renew interval %s: want more than zero and less than the duration %s", renew, duration)
	}
	return seconds, renew, nil
}

// options are the library's options, built here from the configuration:
// the reply's (the protected keys among them) are part of them.
func (c *Config) options() options {
	return options{nodeapply.Options{
		Reply:                 pingstatus.Options{ProtectedKeys: c.StaticKeys},
		ReplaceAllTaints:      c.Compat,
		Grace:                 c.Grace,
		ConnectivityCondition: c.ConnectivityCondition,
		// MemoryPressure, DiskPressure, PIDPressure and NetworkUnavailable
		// False, with true transition times: after an outage, when the
		// node lifecycle controller set the pressures Unknown, or on a
		// node interLink left NetworkUnavailable, the next ping restores
		// them.
		VirtualNodeConditions: true,
	}}
}

type options struct{ apply nodeapply.Options }

// connectivity is the type of the connectivity condition in use.
func (o *options) connectivity() corev1.NodeConditionType {
	if o.apply.ConnectivityCondition == "" {
		return nodeapply.DefaultConnectivityCondition
	}
	return o.apply.ConnectivityCondition
}

// Provider pings a plugin and keeps a virtual node true to its replies and
// to whether it answers: it hands status changes (resources, conditions)
// to the Virtual Kubelet node controller and sends the taints patch
// itself, since the node controller sends no spec. The node controller
// also renews the node's Lease, by which the node lifecycle controller
// judges that the provider lives; the conditions say whether the plugin
// does.
//
// Each ping is applied to the node as cached (an informer on this node
// alone: no read of the API server at a ping), so what an administrator or
// a controller changed meanwhile is seen within moments, and drift (the
// plugin's taint deleted by hand) is corrected at the next ping. Writes
// carry preconditions: the taints patch the resourceVersion of the node it
// was computed from, so a cache that lags costs a conflict, a read of the
// node as stored and a retry, never a lost taint.
//
// A cache lags the provider's own writes too. So that a write on its way
// is not made twice, the node last written (or handed to the node
// controller) stands in for the cached one while the cache shows a version
// the provider knows to be older than that write: the one the write was
// built on, any the provider read on the way, and the result of its own
// taints patch when the status is still to come. A cache shows versions in
// order, so any other version is newer and holds the write, or another
// writer's change, which the next Apply sees.
type Provider struct {
	cfg    Config
	opts   options
	client kubernetes.Interface
	nodes  corev1client.NodeInterface
	log    *slog.Logger
	// eventSink is where the node's events go.
	eventSink corev1client.EventInterface
	pinger    *pingclient.Client

	mu     sync.Mutex
	notify func(*corev1.Node) // the node controller's, once it runs

	// Only the ping loop touches what follows, once Run has started it.
	caches *caches
	// pending is the node as last written or handed to the node
	// controller; it stands in for the cached node while the cache shows
	// one of the versions in older.
	pending *corev1.Node
	older   map[string]bool
	// reportDue is when a steady node's status is next written.
	reportDue time.Time

	// events records Kubernetes events on the node, once Run starts.
	events *nodeEvents
	// metrics are the node's Prometheus metrics; advertised is the
	// allocatable list their gauges show.
	metrics    nodeMetrics
	advertised corev1.ResourceList

	// BeforePing, when set, runs before each ping, in the ping loop: a
	// hook for tests that step the provider one ping at a time.
	BeforePing func(ctx context.Context)

	// BeforeTaintsPatch, when set, runs between the provider's read of the
	// node and its taints patch: a hook for tests of conflicts.
	BeforeTaintsPatch func(ctx context.Context)

	// Counters, for logs and tests.
	Pings       atomic.Int64 // plugin pings
	Failures    atomic.Int64 // pings the plugin did not answer
	Writes      atomic.Int64 // changes handed to the node controller, and taints patches sent
	Reports     atomic.Int64 // a steady node handed to the node controller for its status report
	WriteErrors atomic.Int64 // writes the API server refused (a conflict, retried, is not one)
	Conflicts   atomic.Int64 // taints patches that conflicted and were retried
}

// NewProvider returns a provider for cfg that talks to the API server
// through client.
func NewProvider(cfg Config, client kubernetes.Interface, log *slog.Logger) *Provider {
	metrics := cfg.Metrics
	if metrics == nil {
		metrics = NewMetrics(prometheus.NewRegistry())
	}
	return &Provider{
		cfg: cfg, opts: cfg.options(), client: client, nodes: client.CoreV1().Nodes(),
		eventSink: client.CoreV1().Events(metav1.NamespaceAll), log: log,
		metrics: metrics.forNode(cfg.Static.Name),
	}
}

// Ping is the node controller's liveness check of the provider itself.
func (p *Provider) Ping(context.Context) error { return nil }

// NotifyNodeStatus keeps the node controller's callback.
func (p *Provider) NotifyNodeStatus(_ context.Context, cb func(*corev1.Node)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.notify = cb
}

func (p *Provider) notifier() func(*corev1.Node) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.notify
}

// Run registers the node, then pings the plugin every interval until ctx
// ends.
func (p *Provider) Run(ctx context.Context) error {
	pinger, err := pingclient.New(pingclient.Config{URL: p.cfg.PluginURL, Timeout: p.cfg.Timeout})
	if err != nil {
		return err
	}
	defer pinger.Close()
	p.pinger = pinger
	leaseSeconds, renew, err := p.cfg.lease()
	if err != nil {
		return err
	}
	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	broadcaster.StartRecordingToSink(&corev1client.EventSinkImpl{Interface: p.eventSink})
	defer broadcaster.Shutdown()
	p.events = newNodeEvents(broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: FieldManager, Host: p.cfg.Static.Name}), p.cfg.Static.Name)

	caches, err := startCaches(ctx, p.client, p.cfg.Static.Name, p.cfg.CountHeld)
	if err != nil {
		return err
	}
	defer caches.stop()
	p.caches = caches
	registration, err := p.registration(ctx)
	if err != nil {
		return err
	}
	controller, err := node.NewNodeController(p, registration, p.nodes,
		// The Lease, renewed as the kubelet does, with the node as its
		// owner; its first renewal waits for the node to be registered.
		node.WithNodeEnableLeaseV1WithRenewInterval(p.client.CoordinationV1().Leases(corev1.NamespaceNodeLease), leaseSeconds, renew),
		// The provider hands the node on at each status report itself,
		// with jitter (report.go); this is a backstop it always beats.
		node.WithNodeStatusUpdateInterval(2*p.cfg.statusReport()),
		node.WithNodeStatusUpdateErrorHandler(func(ctx context.Context, err error) error {
			if apierrors.IsNotFound(err) { // deleted by someone: register it again
				p.log.Warn("the node is gone; registering it again")
				_, err := p.nodes.Create(ctx, p.cfg.Static, metav1.CreateOptions{FieldManager: FieldManager})
				if err == nil || apierrors.IsAlreadyExists(err) {
					return nil // the node controller sends the status again
				}
			}
			p.WriteErrors.Add(1)
			p.metrics.writeError(kindStatus)
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
	p.reportAfter(time.Now(), true) // the controller has just written the status
	p.advertised = p.metrics.advertise(p.advertised, registration.Status.Allocatable)
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
// the conditions and the ownership annotation. It reads the node as
// stored, once.
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

// PingOnce asks the plugin once, applies the outcome to the node, and
// writes what changed. When nothing conflicts, it reads the node once,
// from the cache, and calls Apply once.
func (p *Provider) PingOnce(ctx context.Context) {
	if hook := p.beforePing(); hook != nil {
		hook(ctx)
		if ctx.Err() != nil {
			return
		}
	}
	p.Pings.Add(1)
	start := time.Now()
	ping := p.pinger.Ping(ctx)
	if ctx.Err() != nil {
		return // stopping: the failure is ours, not the plugin's
	}
	p.metrics.ping(ping.Reached(), ping.At, time.Since(start))
	var warnings []pingstatus.Warning
	if ping.Reached() {
		patch, w := pingstatus.Parse(ping.Body, p.opts.apply.Reply)
		ping.Reply, warnings = &patch, w
		if p.cfg.CountHeld {
			ping.Held = p.held(ping.At)
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
	res := nodeapply.Apply(base, ping, p.opts.apply)
	warnings = append(warnings, res.Warnings...)
	for _, w := range warnings {
		p.log.Warn("plugin reply", "subject", w.Subject, "action", w.Action, "path", w.Path, "problem", w.Message)
	}
	p.events.warnings(warnings)
	p.metrics.warnings(warnings)
	if len(res.Changes) == 0 {
		p.reportIfDue(base, time.Now())
		return
	}
	p.logChanges(base, res)
	p.events.transitions(base, res.Node, p.opts.connectivity())
	p.metrics.transition(base, res.Node, p.opts.connectivity())
	older := []string{base.ResourceVersion}
	next := res.Node
	if res.NeedsTaintsPatch() {
		stored, delivered, seen, err := p.deliverTaints(ctx, ping, res)
		if err != nil {
			p.log.Error("taints not delivered; the next ping tries again", "error", err)
			return
		}
		older = append(older, seen...)
		// The node as stored now, with the status of the node the
		// delivered patch was computed from (the patch's precondition
		// makes stored exactly that node's spec and metadata).
		base, next, res = stored, stored.DeepCopy(), delivered
		next.Status = *res.Node.Status.DeepCopy()
		next.Annotations = res.Node.Annotations
	}
	if !res.NeedsStatusPatch() {
		p.setPending(next, older) // only the taints: nothing more is on its way
		return
	}
	notify := p.notifier()
	if notify == nil {
		return
	}
	p.Writes.Add(1)
	p.metrics.write(kindStatus)
	p.advertised = p.metrics.advertise(p.advertised, next.Status.Allocatable)
	p.setPending(next, append(older, base.ResourceVersion))
	p.reportAfter(time.Now(), true)
	notify(next.DeepCopy()) // the node controller sends status, labels and annotations
}

// setPending makes node stand in for the cached node while the cache
// shows one of the versions in older (or one already known older).
func (p *Provider) setPending(node *corev1.Node, older []string) {
	if p.pending == nil {
		p.older = map[string]bool{}
	}
	p.pending = node
	for _, rv := range older {
		p.older[rv] = true
	}
}

// current returns the node to apply the next ping to: the cached node,
// or the node last written while the cache has not caught up with it. A
// node deleted by someone is registered again, as the static
// configuration has it; the ping then brings back what the plugin
// reports. Only a node missing from the cache costs a read of the API
// server.
func (p *Provider) current(ctx context.Context) (*corev1.Node, error) {
	cached, err := p.caches.node.Get(p.cfg.Static.Name)
	if apierrors.IsNotFound(err) {
		// Deleted by someone, or registered too recently for the cache:
		// the API server says which.
		p.pending, p.older = nil, nil
		stored, err := p.nodes.Get(ctx, p.cfg.Static.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			p.log.Warn("the node is gone; registering it again")
			stored, err = p.nodes.Create(ctx, p.cfg.Static, metav1.CreateOptions{FieldManager: FieldManager})
		}
		return stored, err
	}
	if err != nil {
		return nil, err
	}
	if p.pending != nil && p.older[cached.ResourceVersion] {
		return p.pending, nil
	}
	p.pending, p.older = nil, nil
	return cached, nil
}

// logChanges logs every change, and the conditions' transitions apart, at
// the level an operator wants them: a warning when Ready or the
// connectivity condition is no longer True.
func (p *Provider) logChanges(base *corev1.Node, res nodeapply.Result) {
	for _, c := range res.Changes {
		p.log.Info("node change", "subject", c.Subject, "path", c.Path, "op", c.Op.String(), "old", c.Old, "new", c.New)
	}
	for i := range res.Node.Status.Conditions {
		t := res.Node.Status.Conditions[i].Type
		now := transitioned(base, res.Node, t)
		if now == nil {
			continue
		}
		from := corev1.ConditionStatus("")
		if was := conditionNamed(base, t); was != nil {
			from = was.Status
		}
		level := slog.LevelInfo
		if (t == corev1.NodeReady || t == p.opts.connectivity()) && now.Status != corev1.ConditionTrue {
			level = slog.LevelWarn
		}
		p.log.Log(context.Background(), level, "node condition transition", "condition", t, "from", from, "to", now.Status, "reason", now.Reason)
	}
}

// deliverTaints sends res's taints patch, computed from the node res was
// applied to, with its resourceVersion as a precondition. On a conflict
// (someone changed the node since, or the cache lagged) it reads the node
// as stored, applies the ping to it again, and retries. It returns the
// node as stored after the patch, the result whose patch was delivered,
// and the versions it read on the way (all older than the patch).
func (p *Provider) deliverTaints(ctx context.Context, ping nodeapply.Ping, res nodeapply.Result) (stored *corev1.Node, _ nodeapply.Result, seen []string, err error) {
	const attempts = 5
	name := res.Node.Name
	body := res.TaintsPatch()
	for range attempts {
		if hook := p.beforeTaintsPatch(); hook != nil {
			hook(ctx)
		}
		p.Writes.Add(1)
		p.metrics.write(kindTaints)
		stored, err := p.nodes.Patch(ctx, name, types.StrategicMergePatchType, body, metav1.PatchOptions{FieldManager: FieldManager})
		if err == nil {
			return stored, res, seen, nil
		}
		if !apierrors.IsConflict(err) {
			p.WriteErrors.Add(1)
			p.metrics.writeError(kindTaints)
			return nil, res, nil, err
		}
		p.Conflicts.Add(1)
		p.metrics.conflict(kindTaints)
		p.log.Info("taints patch conflicted with another write; reading the node again")
		base, err := p.nodes.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, res, nil, err
		}
		seen = append(seen, base.ResourceVersion)
		res = nodeapply.Apply(base, ping, p.opts.apply)
		if body = res.TaintsPatch(); body == nil {
			return base, res, seen, nil // stored as the plugin wants already
		}
	}
	return nil, res, nil, fmt.Errorf("taints patch still conflicting after %d attempts", attempts)
}

func (p *Provider) beforePing() func(context.Context) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.BeforePing
}

func (p *Provider) beforeTaintsPatch() func(context.Context) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.BeforeTaintsPatch
}
