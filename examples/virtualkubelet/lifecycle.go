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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"

	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/caches"
	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/metrics"
	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/pods"
	"github.com/pingnode/pingnode/pingstatus"
)

// Provider pings a plugin and keeps a virtual node true to its replies and
// to whether it answers: it hands status changes (resources, conditions)
// to the Virtual Kubelet node controller and sends the object patch
// itself, since the node controller sends no spec. The node's Lease, by
// which the node lifecycle controller judges that the provider lives, is
// renewed by the renewer of its process (internal/leases); the conditions say
// whether the plugin does.
//
// Its work is split by job: this file starts and stops it ([Provider.Run],
// [Provider.RunRetrying]); ping.go is the step at each ping; delivery.go,
// handoff.go and statuswrite.go bring what changed to the API server;
// internal/caches holds its view of the node and its pods; internal/pods
// finishes the deletion of its pods; devices.go and poddevices.go, with
// internal/devices, publish its devices, with -dra-driver.
type Provider struct {
	cfg    Config
	opts   options
	client kubernetes.Interface
	nodes  corev1client.NodeInterface
	log    *slog.Logger
	// eventSink is where the node's events go.
	eventSink corev1client.EventInterface
	// feed is where its pings come from: its supervisor, which pings
	// the plugin for it, or for every part's node (source.go).
	feed    *feed
	metrics metrics.Node

	mu sync.Mutex // guards handoff

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
	caches *caches.Caches
	live   atomic.Pointer[caches.Caches]
	// devices is what the run keeps of the node's devices; nil without a
	// DRA driver.
	devices *deviceState
	// finish deletes the node's pods being deleted (podfinish.go).
	finish *pods.Finisher
	// devicesIgnored says that the log has said, once, that the plugin's
	// devices are ignored (no DRA driver).
	devicesIgnored bool
	// pending is the node as last written or handed to the node
	// controller; it stands in for the cached node while the cache shows
	// one of the versions in older.
	pending *corev1.Node
	older   map[string]bool
	// unseen says that pending is the node as the run registered it, which
	// the cache has not shown yet: it stands in for the cached node at the
	// first ping, not read again (current).
	unseen bool
	// known is the node as its supervisor read it just before the node's
	// first run, which registration takes instead of reading it again; nil
	// once taken, and for a node of its own.
	known *read
	// reportDue is when a steady node's status is next written, statusAt
	// the time of the ping whose status it last handed on (ping.go).
	reportDue, statusAt time.Time
	// lastWarnings are the warnings of the last ping's reply and of its
	// Apply: a warning is logged when it begins or changes, not at every
	// ping.
	lastWarnings map[pingstatus.Warning]bool

	// beforePing, beforeObjectPatch and beforeStatusRead are where a
	// test steps it (hooks.go): before each ping of its supervisor of one
	// node; before each object patch is sent, after the node it was
	// computed from was read; and in the node controller's goroutine,
	// before each read of the node that precedes its status patch.
	beforePing, beforeObjectPatch, beforeStatusRead hook

	// count is what it did, for logs and tests.
	count struct {
		pings       atomic.Int64 // plugin pings
		failures    atomic.Int64 // pings the plugin did not answer
		writes      atomic.Int64 // changes handed to the node controller, and object patches sent
		reports     atomic.Int64 // a steady node handed to the node controller for its status report
		writeErrors atomic.Int64 // writes the API server refused (a conflict, retried, is not one)
		conflicts   atomic.Int64 // object patches that conflicted and were retried
		startErrors atomic.Int64 // starts that failed, each tried again after a backoff
	}
	// another says that the node as stored is another's (parts.go): the
	// parts supervisor stops serving it.
	another atomic.Bool
}

// NewProvider returns a provider for cfg that talks to the API server
// through client.
func NewProvider(cfg Config, client kubernetes.Interface, log *slog.Logger) *Provider {
	all := cfg.Metrics
	if all == nil {
		all = metrics.New(prometheus.NewRegistry())
	}
	var m metrics.Node
	switch {
	case cfg.part != "": // a part's node counts in its template's series
		m = all.ForParts(cfg.Parts.Template)
	case cfg.Static != nil: // else Run returns the configuration's error
		m = all.ForNode(cfg.Static.Name)
	}
	return &Provider{
		cfg: cfg, opts: cfg.options(), client: client, nodes: caches.LeanNodes{NodeInterface: client.CoreV1().Nodes()},
		eventSink: client.CoreV1().Events(metav1.NamespaceAll), log: log,
		feed: newFeed(), metrics: m,
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
	return runRetrying(ctx, p.cfg, p.Run, p.startFailed)
}

// startFailed says that a start of the node failed, and is tried again:
// its own, or its supervisor of one node's (the plugin's client).
func (p *Provider) startFailed(err error) {
	p.count.startErrors.Add(1)
	p.metrics.StartError()
	p.log.Error("the node did not start; trying again after a backoff", "error", err)
}

// runRetrying is the lifecycle of what the provider runs, a node or its
// supervisor: run, with cfg, until ctx ends, and then return
// nil. A start that fails (run returns an error before ctx ends) is said
// by failed and tried again after a backoff ([Config.StartRetry]), for as
// long as it takes; each wait starts once run has returned. Only a
// configuration that cannot work is returned at once, as a
// *SettingError.
func runRetrying(ctx context.Context, cfg Config, run func(context.Context) error, failed func(error)) error {
	if err := cfg.check(); err != nil {
		return err
	}
	_ = cfg.startRetry().DelayFunc().Until(ctx, true, true, func(ctx context.Context) (bool, error) {
		err := run(ctx)
		if err == nil || ctx.Err() != nil {
			return true, nil
		}
		failed(err)
		return false, nil
	})
	return nil
}

// Run starts the provider, once: it reads the node, starts its caches and
// the node controller, which registers the node, has its Lease renewed,
// then steps each ping its supervisor hands it (supervisor.go) until ctx
// ends, and returns nil.
// If the start fails, or the node controller stops before ctx ends, Run
// stops what it started and returns the error at once: nothing it waits
// for outlives it. [Provider.RunRetrying] tries again.
func (p *Provider) Run(ctx context.Context) error {
	if err := p.cfg.check(); err != nil {
		return err
	}
	broadcaster := p.cfg.events
	if broadcaster == nil {
		broadcaster = record.NewBroadcaster(record.WithContext(ctx))
		broadcaster.StartRecordingToSink(&corev1client.EventSinkImpl{Interface: p.eventSink})
		defer broadcaster.Shutdown()
	}
	p.events = newNodeEvents(broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: FieldManager, Host: p.cfg.Static.Name}), p.cfg.Static.Name)
	p.setHandoff(newHandoff())
	p.pending, p.older, p.unseen, p.statusAt = nil, nil, false, time.Time{}
	p.stale.Store(false)

	// A read first, which fails at once if the API server cannot be
	// reached or refuses this provider.
	registration, stored, err := p.registration(ctx)
	if err != nil {
		return fmt.Errorf("reading the node: %w", err)
	}
	view, err := caches.Start(ctx, p.client, p.cfg.Static.Name, caches.Set{Driver: p.cfg.DRADriver, Claims: p.cfg.claims, Shared: p.cfg.shared})
	if err != nil {
		return err
	}
	defer view.Stop()
	p.caches = view
	p.live.Store(view)
	defer p.live.Store(nil)
	applied := false
	if !stored {
		registration, applied = p.withFirstPing(registration)
	}
	defer p.startDevices()()     // the device controller stops before the caches
	defer p.finishDeletes(ctx)() // and so do the deletes of pods

	// The Lease, renewed as the kubelet renews it, with the node as its
	// owner, by the renewer of the process (internal/leases).
	leases, stopLeases := renewer(ctx, p.cfg, p.client, 1, p.log)
	defer stopLeases()

	// The node controller runs until Run returns, and Run waits for it.
	running, stop := context.WithCancel(ctx)
	// The provider hands the node on at each status report itself, with
	// jitter (report.go); the controller's own interval (with no Lease of
	// its, its ping interval) is a backstop it always beats.
	backstop := 2 * p.cfg.statusReport()
	watch := &statusWatch{NodeInterface: p.nodes, delivered: p.delivered, beforeRead: &p.beforeStatusRead}
	watch.absent.Store(!stored)
	controller, err := node.NewNodeController(p, registration, watch,
		node.WithNodePingInterval(backstop), node.WithNodeStatusUpdateErrorHandler(p.statusRefused))
	if err != nil {
		stop()
		return fmt.Errorf("node controller: %w", err)
	}
	registered := p.registrar(ctx, !stored)
	go func() { _ = controller.Run(running) }()
	defer func() {
		stop()
		<-controller.Done()
	}()
	select {
	case <-controller.Ready():
		registered()
	case <-controller.Done():
		registered()
		return fmt.Errorf("registering the node: %w", controller.Err())
	case <-ctx.Done():
		registered()
		return nil
	}
	created := watch.registered()
	if created != nil {
		// The node as registered stands in for the cached node until the
		// cache shows it, at the first ping (current).
		p.setPending(created, nil)
		p.unseen = true
		if applied {
			p.count.writes.Add(1)
			p.metrics.Write(metrics.KindRegister)
		}
	}
	p.metrics.Running(1)
	defer p.metrics.Running(-1)
	leases.Serve(p.cfg.Static.Name, view.Node, created != nil)
	defer leases.Drop(p.cfg.Static.Name)

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
	p.feed.attach()
	defer p.feed.detach()
	for pinging.Err() == nil {
		p.PingOnce(pinging)
	}
	if ctx.Err() != nil {
		return nil
	}
	return errors.New("the node controller stopped")
}
