package metrics

import (
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	corev1 "k8s.io/api/core/v1"

	"github.com/pingnode/pingnode/pingstatus"
)

// Label values of the provider's metrics: each label takes a small fixed
// set of values, or a node's name, or a resource the node holds; never a
// string from a plugin's reply but a resource name the node stores.
const (
	outcomeAnswered = "answered" // the plugin answered the ping (HTTP 200)
	outcomeFailed   = "failed"   // it did not: transport error, timeout, other status

	KindObject = "object" // an object patch (taints, labels, ownership annotations) sent to the API server
	KindStatus = "status" // a status patch sent to the API server
	KindReport = "report" // a steady node's status written for its periodic report
	// KindRegister is a new node registered with its first ping applied:
	// its status, taints and labels in the one create.
	KindRegister = "register"

	ToReachable   = "reachable"   // the connectivity condition turned True
	ToUnreachable = "unreachable" // it turned False
)

// Metrics are the provider's Prometheus metrics, shared by the nodes of
// one process: every per-node series carries the node's name. Build them
// with [New] on a registry of the caller's; nothing is registered
// in client_golang's global default registry.
type Metrics struct {
	pings        *prometheus.CounterVec   // node, outcome
	pingDuration *prometheus.HistogramVec // node, outcome
	lastSuccess  *prometheus.GaugeVec     // node
	transitions  *prometheus.CounterVec   // node, to
	writes       *prometheus.CounterVec   // node, kind
	conflicts    *prometheus.CounterVec   // node, kind
	writeErrors  *prometheus.CounterVec   // node, kind
	warnings     *prometheus.CounterVec   // node, subject, action
	allocatable  *prometheus.GaugeVec     // node, resource, unit
	startErrors  *prometheus.CounterVec   // node
	devicePools  *prometheus.CounterVec   // node
	deviceErrors *prometheus.CounterVec   // node
	leader       prometheus.Gauge

	health health // what /healthz and /readyz say (health.go)
}

// New creates the provider's metrics and registers them with reg.
func New(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		pings: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pingnode_pings_total",
			Help: "Pings of the plugin, by outcome: answered (HTTP 200) or failed (transport error, timeout, other HTTP status).",
		}, []string{"node", "outcome"}),
		pingDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "pingnode_ping_duration_seconds",
			Help:    "How long a ping of the plugin took, from the request to the reply read or the failure, by outcome.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"node", "outcome"}),
		lastSuccess: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "pingnode_last_successful_ping_timestamp_seconds",
			Help: "When the plugin last answered a ping, in seconds since the Unix epoch; absent until it first answers.",
		}, []string{"node"}),
		transitions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pingnode_reachability_transitions_total",
			Help: "Transitions of the node's connectivity condition, to reachable (True) or unreachable (False), counted when the write that makes them is stored; the condition's first setting on a new node is not one.",
		}, []string{"node", "to"}),
		writes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pingnode_node_writes_total",
			Help: "Writes of the node by the provider, by kind: object (an object patch of taints, labels and their ownership annotations sent, each attempt), status (a status patch of a change), report (a steady status written for its periodic report), register (a new node registered with its first ping's status, taints and labels in one create).",
		}, []string{"node", "kind"}),
		conflicts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pingnode_node_write_conflicts_total",
			Help: "Writes of the node that conflicted with another write (a resourceVersion precondition failed) and were retried, by kind.",
		}, []string{"node", "kind"}),
		writeErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pingnode_node_write_errors_total",
			Help: "Writes of the node the API server refused, by kind; a conflict that was retried is not one.",
		}, []string{"node", "kind"}),
		warnings: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pingnode_warnings_total",
			Help: "Parts of the plugin's replies, or of the pings, that were refused, repaired or ignored, by subject (reply, resource, taint, condition, annotation, label, device, part) and action (refused, repaired, ignored).",
		}, []string{"node", "subject", "action"}),
		allocatable: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "pingnode_node_allocatable",
			Help: "What the node advertises as allocatable, as stored, by resource, in the unit the unit label names: core (cpu), byte (memory, ephemeral-storage, hugepages-*), integer (pods, extended resources).",
		}, []string{"node", "resource", "unit"}),
		startErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pingnode_start_errors_total",
			Help: "Starts of the node that failed (the API server unreachable or refusing its registration, its caches not synced); each is tried again after a backoff.",
		}, []string{"node"}),
		devicePools: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pingnode_device_pools_total",
			Help: "Pools of devices handed to the node's ResourceSlice controller to publish (-dra-driver): the first of a run, then each that changed; the controller writes only the slices that differ.",
		}, []string{"node"}),
		deviceErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pingnode_device_publish_errors_total",
			Help: "Errors of the node's ResourceSlice controller while it publishes the node's devices (a slice write refused, a field dropped by the API server); it retries each with backoff.",
		}, []string{"node"}),
		leader: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "pingnode_leader",
			Help: "1 when this replica leads (serves the nodes and pings), 0 when it stands by.",
		}),
	}
	reg.MustRegister(m.pings, m.pingDuration, m.lastSuccess, m.transitions, m.writes,
		m.conflicts, m.writeErrors, m.warnings, m.allocatable, m.startErrors, m.devicePools, m.deviceErrors, m.leader)
	return m
}

// NewRegistry returns a registry with the provider's metrics and the Go
// runtime's and the process's, as a /metrics endpoint serves them.
func NewRegistry() (*prometheus.Registry, *Metrics) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg, New(reg)
}

// SetLeader records whether this replica leads.
func (m *Metrics) SetLeader(leads bool) {
	v := 0.0
	if leads {
		v = 1
	}
	m.leader.Set(v)
	m.health.leading.Store(int64(v))
}

// ReachedElection records whether a standby's read of the election Lease
// succeeded.
func (m *Metrics) ReachedElection(ok bool) {
	v := int64(0)
	if ok {
		v = 1
	}
	m.health.reached.Store(v)
}

// Node are the metrics of one node, or of every part's node of a
// template (ForParts).
type Node struct {
	m    *Metrics
	node string
	// parts says that the series are the template's, which every part's
	// node counts in: they have no allocatable gauges, a node's own.
	parts bool
}

// ForNode returns the metrics of the node, and creates its series that
// take a fixed set of labels at zero, so that a rate over them is defined
// from the start.
func (m *Metrics) ForNode(node string) Node {
	for _, o := range []string{outcomeAnswered, outcomeFailed} {
		m.pings.WithLabelValues(node, o)
	}
	for _, to := range []string{ToReachable, ToUnreachable} {
		m.transitions.WithLabelValues(node, to)
	}
	for _, k := range []string{KindObject, KindStatus, KindReport, KindRegister} {
		m.writes.WithLabelValues(node, k)
	}
	for _, k := range []string{KindObject, KindStatus} {
		m.writeErrors.WithLabelValues(node, k)
	}
	m.conflicts.WithLabelValues(node, KindObject)
	m.startErrors.WithLabelValues(node)
	for s := pingstatus.SubjectReply; s <= pingstatus.SubjectPart; s++ {
		for a := pingstatus.Refused; a <= pingstatus.Ignored; a++ {
			m.warnings.WithLabelValues(node, s.String(), a.String())
		}
	}
	return Node{m: m, node: node}
}

// ForParts returns the metrics of the parts' nodes of a template, and of
// their supervisor's pings: the template's series, in which every part's
// node counts, so that a provider of 5,000 parts has the series of one
// node (per-node series would be 40 each, 200,000 in all, a scrape of
// tens of megabytes and 25 KB of memory a node). A part's allocatable is
// on its node, not in a gauge.
func (m *Metrics) ForParts(template string) Node {
	n := m.ForNode(template)
	n.parts = true
	return n
}

// Ping records a ping that took d: answered at, or failed.
func (n Node) Ping(answered bool, at time.Time, d time.Duration) {
	outcome := outcomeFailed
	if answered {
		outcome = outcomeAnswered
		n.m.lastSuccess.WithLabelValues(n.node).Set(float64(at.UnixNano()) / 1e9)
	}
	n.m.pings.WithLabelValues(n.node, outcome).Inc()
	n.m.pingDuration.WithLabelValues(n.node, outcome).Observe(d.Seconds())
}

// Write, Conflict, WriteError, StartError, DevicesHanded and
// DevicePublishError count one of their kind.
func (n Node) Write(kind string)      { n.m.writes.WithLabelValues(n.node, kind).Inc() }
func (n Node) Conflict(kind string)   { n.m.conflicts.WithLabelValues(n.node, kind).Inc() }
func (n Node) WriteError(kind string) { n.m.writeErrors.WithLabelValues(n.node, kind).Inc() }
func (n Node) StartError()            { n.m.startErrors.WithLabelValues(n.node).Inc() }
func (n Node) DevicesHanded()         { n.m.devicePools.WithLabelValues(n.node).Inc() }
func (n Node) DevicePublishError()    { n.m.deviceErrors.WithLabelValues(n.node).Inc() }

// DevicesInUse creates the node's device series at zero, when it
// publishes devices.
func (n Node) DevicesInUse() {
	n.m.devicePools.WithLabelValues(n.node)
	n.m.deviceErrors.WithLabelValues(n.node)
}

// Running records that the node started (+1) or stopped (-1), for /readyz.
func (n Node) Running(delta int64) { n.m.health.running.Add(delta) }

// Warnings counts the warnings by their subject and action, never by path.
func (n Node) Warnings(warnings []pingstatus.Warning) {
	for _, w := range warnings {
		n.m.warnings.WithLabelValues(n.node, w.Subject.String(), w.Action.String()).Inc()
	}
}

// Transition counts a transition of the connectivity condition, which
// was was and is now now, if there is one (now is nil when it did not
// change): a condition that was absent (a new node) has none.
func (n Node) Transition(was, now *corev1.NodeCondition) {
	cond := now
	switch {
	case was == nil, cond == nil:
	case cond.Status == corev1.ConditionTrue:
		n.m.transitions.WithLabelValues(n.node, ToReachable).Inc()
	case cond.Status == corev1.ConditionFalse:
		n.m.transitions.WithLabelValues(n.node, ToUnreachable).Inc()
	}
}

// Advertise sets the allocatable gauges to list, what the node
// advertises, if it differs from was, what they show now; it removes the
// gauges of resources the node no longer has. It returns what they show.
func (n Node) Advertise(was, list corev1.ResourceList) corev1.ResourceList {
	if n.parts || sameQuantities(was, list) {
		return was
	}
	n.m.allocatable.DeletePartialMatch(prometheus.Labels{"node": n.node})
	for name, q := range list {
		n.m.allocatable.WithLabelValues(n.node, string(name), unitOf(name)).Set(q.AsApproximateFloat64())
	}
	return list.DeepCopy()
}

func sameQuantities(a, b corev1.ResourceList) bool {
	if a == nil || len(a) != len(b) {
		return false
	}
	for name, q := range a {
		if other, ok := b[name]; !ok || q.Cmp(other) != 0 {
			return false
		}
	}
	return true
}

// unitOf is the unit of a resource's quantity as a float: cores for cpu,
// bytes for memory and storage, a count for the rest.
func unitOf(name corev1.ResourceName) string {
	switch {
	case name == corev1.ResourceCPU:
		return "core"
	case name == corev1.ResourceMemory, name == corev1.ResourceEphemeralStorage, name == corev1.ResourceStorage,
		strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix):
		return "byte"
	}
	return "integer"
}

// Serve serves reg's metrics at /metrics on addr until the server
// is closed, and the probes of m: /healthz, the liveness probe, and
// /readyz, the readiness probe (health.go). It returns the server and the
// address it listens on (addr may end in :0).
func Serve(addr string, reg *prometheus.Registry, m *Metrics, log *slog.Logger) (*http.Server, string, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, "", err
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	mux.HandleFunc("/healthz", healthz)
	mux.HandleFunc("/readyz", m.health.readyz)
	server := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := server.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics server stopped", "error", err)
		}
	}()
	return server, l.Addr().String(), nil
}
