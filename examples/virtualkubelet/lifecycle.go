package main

import (
	"context"
	"errors"
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
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"

	"github.com/pingnode/pingnode/pingstatus"
)

// Provider pings a plugin and keeps a virtual node true to its replies and
// to whether it answers: it hands status changes (resources, conditions)
// to the Virtual Kubelet node controller and sends the object patch
// itself, since the node controller sends no spec. The node controller
// also renews the node's Lease (a part's node's, its supervisor's
// renewer: leases.go), by which the node lifecycle controller judges that
// the provider lives; the conditions say whether the plugin does.
//
// Its work is split by job: this file starts and stops it ([Provider.Run],
// [Provider.RunRetrying]); ping.go is the step at each ping; delivery.go,
// handoff.go and statuswrite.go bring what changed to the API server;
// cache.go holds its view of the node and its pods; podfinish.go finishes
// the deletion of its pods; devices.go, publish.go and poddevices.go
// publish its devices, with -dra-driver.
type Provider struct {
	cfg    Config
	opts   options
	client kubernetes.Interface
	nodes  corev1client.NodeInterface
	log    *slog.Logger
	// eventSink is where the node's events go.
	eventSink corev1client.EventInterface
	// source is where its pings come from: its plugin, or for a part's
	// node the parts supervisor (source.go).
	source  pingSource
	metrics nodeMetrics

	mu sync.Mutex // guards the hooks and handoff

	// What follows belongs to one run: Run sets it up before it starts
	// the ping loop and the node controller.

	// handoff passes the nodes the ping loop hands on to the node
	// controller (handoff.go).
	handoff *handoff
	// events records Kubernetes events on the node.
	events *nodeEvents
	// stale is set when the node controller's status write failed: the
	// next ping applies to the node as cached, not to pending.
	stale atomic.Bool
	// advertised is the allocatable list the metrics' gauges show; only
	// the node controller's goroutine touches it (statuswrite.go).
	advertised corev1.ResourceList

	// Only the ping loop touches what follows (ping.go, report.go,
	// devices.go), but live, the caches while they run, which the parts
	// supervisor reads too.
	caches *caches
	live   atomic.Pointer[caches]
	// devices is what the run keeps of the node's devices; nil without a
	// DRA driver.
	devices *deviceState
	// finish deletes the node's pods being deleted (podfinish.go).
	finish *finisher
	// devicesIgnored says that the log has said, once, that the plugin's
	// devices are ignored (no DRA driver).
	devicesIgnored bool
	// pending is the node as last written or handed to the node
	// controller; it stands in for the cached node while the cache shows
	// one of the versions in older.
	pending *corev1.Node
	older   map[string]bool
	// reportDue is when a steady node's status is next written, statusAt
	// the time of the ping whose status it last handed on (ping.go).
	reportDue, statusAt time.Time
	// lastWarnings are the warnings of the last ping's reply and of its
	// Apply: a warning is logged when it begins or changes, not at every
	// ping.
	lastWarnings map[pingstatus.Warning]bool

	// BeforePing, when set, runs before each ping, in the ping loop: a
	// hook for tests that step the provider one ping at a time.
	BeforePing func(ctx context.Context)

	// BeforeObjectPatch, when set, runs before each object patch is sent,
	// after the node it was computed from was read: a hook for tests of
	// conflicts.
	BeforeObjectPatch func(ctx context.Context)

	// BeforeStatusRead, when set, runs in the node controller's goroutine
	// before each read of the node that precedes its status patch: a
	// hook for tests of races with the node controller.
	BeforeStatusRead func(ctx context.Context)

	// Counters, for logs and tests.
	Pings       atomic.Int64 // plugin pings
	Failures    atomic.Int64 // pings the plugin did not answer
	Writes      atomic.Int64 // changes handed to the node controller, and object patches sent
	Reports     atomic.Int64 // a steady node handed to the node controller for its status report
	WriteErrors atomic.Int64 // writes the API server refused (a conflict, retried, is not one)
	Conflicts   atomic.Int64 // object patches that conflicted and were retried
	StartErrors atomic.Int64 // starts that failed, each tried again after a backoff
	// Foreign: the node as stored is another's (parts.go), and the parts
	// supervisor stops serving it.
	Foreign atomic.Bool
}

// NewProvider returns a provider for cfg that talks to the API server
// through client.
func NewProvider(cfg Config, client kubernetes.Interface, log *slog.Logger) *Provider {
	metrics := cfg.Metrics
	if metrics == nil {
		metrics = NewMetrics(prometheus.NewRegistry())
	}
	var m nodeMetrics
	switch {
	case cfg.part != "": // a part's node counts in its template's series
		m = metrics.forParts(cfg.Parts.Template)
	case cfg.Static != nil: // else Run returns the configuration's error
		m = metrics.forNode(cfg.Static.Name)
	}
	return &Provider{
		cfg: cfg, opts: cfg.options(), client: client, nodes: leanNodes{client.CoreV1().Nodes()},
		eventSink: client.CoreV1().Events(metav1.NamespaceAll), log: log,
		source: &pluginSource{}, metrics: m,
	}
}

// Ping is the node controller's liveness check of the provider itself.
func (p *Provider) Ping(context.Context) error { return nil }

// RunRetrying runs the provider until ctx ends, and then returns nil. A
// start that fails (the API server unreachable or refusing the node's
// registration, the caches not synced, the node controller stopped) is
// logged, counted, and tried again after a backoff ([Config.StartRetry]),
// for as long as it takes. Only a configuration that cannot work is
// returned at once, as a *SettingError.
func (p *Provider) RunRetrying(ctx context.Context) error {
	if err := p.cfg.check(); err != nil {
		return err
	}
	// Sliding: each wait starts once Run has returned.
	_ = p.cfg.startRetry().DelayFunc().Until(ctx, true, true, func(ctx context.Context) (bool, error) {
		err := p.Run(ctx)
		if err == nil || ctx.Err() != nil {
			return true, nil
		}
		p.StartErrors.Add(1)
		p.metrics.startError()
		p.log.Error("the node did not start; trying again after a backoff", "error", err)
		return false, nil
	})
	return nil
}

// Run starts the provider, once: it reads the node, starts its caches and
// the node controller, which registers the node and renews its Lease,
// then pings the plugin every interval until ctx ends, and returns nil.
// If the start fails, or the node controller stops before ctx ends, Run
// stops what it started and returns the error at once: nothing it waits
// for outlives it. [Provider.RunRetrying] tries again.
func (p *Provider) Run(ctx context.Context) error {
	if err := p.cfg.check(); err != nil {
		return err
	}
	leaseSeconds, renew, _ := p.cfg.lease() // checked
	broadcaster := p.cfg.events
	if broadcaster == nil {
		broadcaster = record.NewBroadcaster(record.WithContext(ctx))
		broadcaster.StartRecordingToSink(&corev1client.EventSinkImpl{Interface: p.eventSink})
		defer broadcaster.Shutdown()
	}
	p.events = newNodeEvents(broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: FieldManager, Host: p.cfg.Static.Name}), p.cfg.Static.Name)
	p.setHandoff(newHandoff())
	p.pending, p.older, p.statusAt = nil, nil, time.Time{}
	p.stale.Store(false)

	// The plugin's client first: a file it names (a CA, a certificate, a
	// token) that cannot be used yet is a start that failed, tried again.
	closeSource, err := p.source.open(p)
	if err != nil {
		return fmt.Errorf("the plugin's client: %w", err)
	}
	defer closeSource()

	// Then a read, which fails at once if the API server cannot be
	// reached or refuses this provider.
	registration, err := p.registration(ctx)
	if err != nil {
		return fmt.Errorf("reading the node: %w", err)
	}
	caches, err := startCaches(ctx, p.client, p.cfg.Static.Name, cacheSet{driver: p.cfg.DRADriver, claims: p.cfg.claims, shared: p.cfg.shared})
	if err != nil {
		return err
	}
	defer caches.stop()
	p.caches = caches
	p.live.Store(caches)
	defer p.live.Store(nil)
	defer p.startDevices()()     // the device controller stops before the caches
	defer p.finishDeletes(ctx)() // and so do the deletes of pods

	// The node controller runs until Run returns, and Run waits for it.
	running, stop := context.WithCancel(ctx)
	// The provider hands the node on at each status report itself, with
	// jitter (report.go); the controller's own interval is a backstop it
	// always beats.
	backstop := 2 * p.cfg.statusReport()
	lease := []node.NodeControllerOpt{
		// The Lease, renewed as the kubelet does, with the node as its
		// owner; its first renewal waits for the node to be registered.
		node.WithNodeEnableLeaseV1WithRenewInterval(p.client.CoordinationV1().Leases(corev1.NamespaceNodeLease), leaseSeconds, renew),
		node.WithNodeStatusUpdateInterval(backstop),
	}
	if p.cfg.leases != nil {
		// A part's node: its supervisor renews the Lease (leases.go).
		// Without one, the controller's interval is its ping interval.
		lease = []node.NodeControllerOpt{node.WithNodePingInterval(backstop)}
	}
	controller, err := node.NewNodeController(p, registration,
		&statusWatch{NodeInterface: p.nodes, delivered: p.delivered, beforeRead: p.beforeStatusRead},
		append(lease, node.WithNodeStatusUpdateErrorHandler(p.statusRefused))...)
	if err != nil {
		stop()
		return fmt.Errorf("node controller: %w", err)
	}
	go func() { _ = controller.Run(running) }()
	defer func() {
		stop()
		<-controller.Done()
	}()
	select {
	case <-controller.Ready():
	case <-controller.Done():
		return fmt.Errorf("registering the node: %w", controller.Err())
	case <-ctx.Done():
		return nil
	}
	p.metrics.running(1)
	defer p.metrics.running(-1)
	if p.cfg.leases != nil {
		p.cfg.leases.serve(p.cfg.Static.Name)
		defer p.cfg.leases.drop(p.cfg.Static.Name)
	}

	go p.handoff.run(running)
	p.reportAfter(time.Now(), true) // the controller has just written the status
	// Ping until ctx ends, or until the node controller stops on its own.
	pinging, stopPinging := context.WithCancel(running)
	defer stopPinging()
	go func() {
		select {
		case <-controller.Done():
			stopPinging()
		case <-pinging.Done():
		}
	}()
	p.source.loop(pinging, p)
	if ctx.Err() != nil {
		return nil
	}
	return errors.New("the node controller stopped")
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
	stored, err := p.ours(p.nodes.Get(ctx, node.Name, metav1.GetOptions{}))
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

// runProviders runs a provider for each configuration until ctx ends.
// Each node starts, and retries its start, on its own: one node that
// cannot start never stops the others. Each node has its own client, so
// its own rate limit, as a kubelet has; client-go shares the connections
// of clients with the same configuration. It returns an error only for
// a configuration that cannot work, before any node starts. A
// configuration with Parts (-parts) is run by the parts supervisor.
func runProviders(ctx context.Context, restConfig *rest.Config, configs []Config, log *slog.Logger) error {
	if len(configs) == 1 && configs[0].Parts != nil {
		return runParts(ctx, restConfig, configs[0], log) // one plugin, a node for each of its parts
	}
	clients := make([]kubernetes.Interface, len(configs))
	for i := range configs {
		if err := configs[i].check(); err != nil {
			return err
		}
		client, err := kubernetes.NewForConfig(restConfig)
		if err != nil {
			return err
		}
		clients[i] = client
	}
	claims, stopClaims, err := sharedClaims(ctx, restConfig, configs)
	if err != nil {
		return err
	}
	defer stopClaims()
	var wg sync.WaitGroup
	for i, cfg := range configs {
		cfg.claims = claims
		nodeLog := log.With("node", cfg.Static.Name)
		nodeLog.Info("provider starting", "plugin", cfg.PluginURL)
		p := NewProvider(cfg, clients[i], nodeLog)
		wg.Go(func() { _ = p.RunRetrying(ctx) }) // checked above
	}
	wg.Wait()
	return nil
}
