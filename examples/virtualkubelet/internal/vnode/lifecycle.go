package vnode

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"

	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/caches"
	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/leases"
	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/metrics"
	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/pods"
	"github.com/pingnode/pingnode/pingstatus"
)

// Node keeps a virtual node true to its plugin's replies, which its
// supervisor pings for and hands it (internal/supervise), and to whether
// the plugin answers: it registers the node, and sends the library's
// patches itself, the object patch (taints, labels) and the status patch
// (resources, conditions), as the template does. The node's Lease, by
// which the node lifecycle controller judges that the provider lives, is
// renewed by the renewer of its process (internal/leases); the conditions say
// whether the plugin does.
//
// Its work is split by job: this file starts and stops it ([Node.Run],
// [Node.RunRetrying]); register.go registers the node; ping.go is the
// step at each ping; delivery.go and status.go write what changed, and
// report.go a steady node's status report;
// internal/caches holds its view of the node and its pods; internal/pods
// finishes the deletion of its pods; devices.go and poddevices.go, with
// internal/devices, publish its devices, with -dra-driver.
type Node struct {
	cfg    Config
	opts   Options
	client kubernetes.Interface
	nodes  corev1client.NodeInterface
	log    *slog.Logger
	// eventSink is where the node's events go.
	eventSink corev1client.EventInterface
	// feed is where its pings come from: its supervisor, which pings
	// the plugin for it, or for every part's node (internal/supervise).
	feed    *Feed
	metrics metrics.Node

	// What follows belongs to one run: Run sets it up before it starts
	// the ping loop, and only the ping loop touches it (ping.go,
	// report.go, devices.go), but live, the caches while they run, which
	// the parts supervisor reads too, and sent, which tests read.

	// events records Kubernetes events on the node.
	events *nodeEvents
	// advertised is the allocatable list the metrics' gauges show
	// (status.go).
	advertised corev1.ResourceList
	caches     *caches.Caches
	live       atomic.Pointer[caches.Caches]
	// devices is what the run keeps of the node's devices; nil without a
	// DRA driver.
	devices *deviceState
	// finish deletes the node's pods being deleted (podfinish.go).
	finish *pods.Finisher
	// devicesIgnored says that the log has said, once, that the plugin's
	// devices are ignored (no DRA driver).
	devicesIgnored bool
	// pending is the node as its last write stored it; it stands in for
	// the cached node while the cache shows one of the versions in older.
	pending *corev1.Node
	older   map[string]bool
	// unseen says that pending is the node as the run registered it, which
	// the cache has not shown yet: it stands in for the cached node at the
	// first ping, not read again (current).
	unseen bool
	// Known is the node as its supervisor read it just before the node's
	// first run, which registration takes instead of reading it again; nil
	// once taken, and for a node of its own.
	Known *Read
	// reportDue is when a steady node's status is next written, statusAt
	// the time of the ping whose status it last wrote (ping.go).
	reportDue, statusAt time.Time
	// lastWarnings are the warnings of the last ping's reply and of its
	// Apply: a warning is logged when it begins or changes, not at every
	// ping.
	lastWarnings map[pingstatus.Warning]bool

	// sent is the node whose status it last sent (status.go).
	sent atomic.Pointer[corev1.Node]

	// BeforePing, BeforeObjectPatch and BeforeStatusPatch are where a
	// test steps it (hooks.go): before each ping of its supervisor of one
	// node; before each object patch is sent, after the node it was
	// computed from was read; and before each status patch is sent.
	BeforePing, BeforeObjectPatch, BeforeStatusPatch Hook

	// Count is what it did, for logs and tests.
	Count struct {
		Pings       atomic.Int64 // plugin pings
		Failures    atomic.Int64 // pings the plugin did not answer
		Writes      atomic.Int64 // writes of a change: object and status patches, a registration with its first ping
		Reports     atomic.Int64 // status reports of a steady node
		WriteErrors atomic.Int64 // writes the API server refused (a conflict, retried, is not one)
		Conflicts   atomic.Int64 // object patches that conflicted and were retried
		StartErrors atomic.Int64 // starts that failed, each tried again after a backoff
	}
	// another says that the node as stored is another's (parts.go): the
	// parts supervisor stops serving it.
	another atomic.Bool
}

// New returns the node of cfg, which talks to the API server through
// client.
func New(cfg Config, client kubernetes.Interface, log *slog.Logger) *Node {
	all := cfg.Metrics
	if all == nil {
		all = metrics.New(prometheus.NewRegistry())
	}
	var m metrics.Node
	switch {
	case cfg.Part != "": // a part's node counts in its template's series
		m = all.ForParts(cfg.Parts.Template)
	case cfg.Static != nil: // else Run returns the configuration's error
		m = all.ForNode(cfg.Static.Name)
	}
	return &Node{
		cfg: cfg, opts: cfg.Options(), client: client, nodes: caches.LeanNodes{NodeInterface: client.CoreV1().Nodes()},
		eventSink: client.CoreV1().Events(metav1.NamespaceAll), log: log,
		feed: newFeed(), metrics: m,
	}
}

// Config returns the configuration of the node.
func (p *Node) Config() Config { return p.cfg }

// Client returns the client of its reads and writes.
func (p *Node) Client() kubernetes.Interface { return p.client }

// Log returns its log.
func (p *Node) Log() *slog.Logger { return p.log }

// Metrics returns the series it counts in.
func (p *Node) Metrics() metrics.Node { return p.metrics }

// Feed returns the feed by which its supervisor hands it its pings.
func (p *Node) Feed() *Feed { return p.feed }

// Caches returns the caches of its run while it runs, and nil between
// runs.
func (p *Node) Caches() *caches.Caches { return p.live.Load() }

// Another says that the node as stored is another's (parts.go): the
// parts supervisor stops serving it.
func (p *Node) Another() bool { return p.another.Load() }

// RunRetrying runs the provider until ctx ends, and then returns nil. A
// start that fails (the API server unreachable or refusing the node's
// registration, the caches not synced) is
// logged, counted, and tried again after a backoff ([Config.StartRetry]),
// for as long as it takes. Only a configuration that cannot work is
// returned at once, as a *SettingError.
func (p *Node) RunRetrying(ctx context.Context) error {
	return RunRetrying(ctx, p.cfg, p.Run, p.StartFailed)
}

// StartFailed says that a start of the node failed, and is tried again:
// its own, or its supervisor of one node's (the plugin's client).
func (p *Node) StartFailed(err error) {
	p.Count.StartErrors.Add(1)
	p.metrics.StartError()
	p.log.Error("the node did not start; trying again after a backoff", "error", err)
}

// RunRetrying is the lifecycle of what the provider runs, a node or its
// supervisor: run, with cfg, until ctx ends, and then return
// nil. A start that fails (run returns an error before ctx ends) is said
// by failed and tried again after a backoff ([Config.StartRetry]), for as
// long as it takes; each wait starts once run has returned. Only a
// configuration that cannot work is returned at once, as a
// *SettingError.
func RunRetrying(ctx context.Context, cfg Config, run func(context.Context) error, failed func(error)) error {
	if err := cfg.Check(); err != nil {
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

// Run starts the provider, once: it reads the node, starts its caches,
// registers the node (or refreshes the node as stored: register.go), has
// its Lease renewed, then steps each ping its supervisor hands it
// (internal/supervise) until ctx ends, and returns nil. If the start fails, Run
// stops what it started and returns the error at once: nothing it starts
// outlives it. [Node.RunRetrying] tries again.
func (p *Node) Run(ctx context.Context) error {
	if err := p.cfg.Check(); err != nil {
		return err
	}
	broadcaster := p.cfg.Process.Events
	if broadcaster == nil {
		broadcaster = record.NewBroadcaster(record.WithContext(ctx))
		broadcaster.StartRecordingToSink(&corev1client.EventSinkImpl{Interface: p.eventSink})
		defer broadcaster.Shutdown()
	}
	p.events = newNodeEvents(broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: FieldManager, Host: p.cfg.Static.Name}), p.cfg.Static.Name)
	p.pending, p.older, p.unseen, p.statusAt = nil, nil, false, time.Time{}

	// A read first, which fails at once if the API server cannot be
	// reached or refuses this provider.
	stored, err := p.storedNode(ctx)
	if err != nil {
		return fmt.Errorf("reading the node: %w", err)
	}
	view, err := caches.Start(ctx, p.client, p.cfg.Static.Name, caches.Set{Driver: p.cfg.DRADriver, Claims: p.cfg.Process.Claims, Shared: p.cfg.Process.Caches})
	if err != nil {
		return err
	}
	defer view.Stop()
	p.caches = view
	p.live.Store(view)
	defer p.live.Store(nil)
	defer p.startDevices()()     // the device controller stops before the caches
	defer p.finishDeletes(ctx)() // and so do the deletes of pods

	// The Lease, renewed as the kubelet renews it, with the node as its
	// owner, by the renewer of the process (internal/leases).
	leases, stopLeases := StartRenewer(ctx, p.cfg, p.client, 1, p.log)
	defer stopLeases()

	registered := p.registrar(ctx, stored == nil)
	node, err := p.register(ctx, stored)
	registered()
	if err != nil {
		return fmt.Errorf("registering the node: %w", err)
	}
	// The node as registered stands in for the cached node until the
	// cache shows it, at the first ping (current).
	p.setPending(node, nil)
	p.unseen = true
	p.delivered(nil, node)
	p.metrics.Running(1)
	defer p.metrics.Running(-1)
	leases.Serve(p.cfg.Static.Name, view.Node, stored == nil)
	defer leases.Drop(p.cfg.Static.Name)

	p.reportAfter(time.Now(), true) // the node was just registered or refreshed
	p.feed.attach()
	defer p.feed.detach()
	for ctx.Err() == nil {
		p.PingOnce(ctx)
	}
	return nil
}

// StartRenewer returns the renewer of the nodes' Leases of cfg's process,
// cfg.Process.Leases, or for what runs alone (a provider or a supervisor that a
// test runs), one of its own for that many nodes, through client, with
// cfg's Lease settings (checked), run until stop is called; stop returns
// once it has stopped.
func StartRenewer(ctx context.Context, cfg Config, client kubernetes.Interface, nodes int, log *slog.Logger) (r *leases.Renewer, stop func()) {
	if cfg.Process.Leases != nil {
		return cfg.Process.Leases, func() {}
	}
	seconds, renew, _ := cfg.Lease()
	r = leases.New(client.CoordinationV1().Leases(corev1.NamespaceNodeLease), FieldManager, nodes, seconds, renew, clock.RealClock{}, log)
	ctx, cancel := context.WithCancel(ctx)
	var running sync.WaitGroup
	running.Go(func() { r.Run(ctx) })
	return r, func() {
		cancel()
		running.Wait()
	}
}
