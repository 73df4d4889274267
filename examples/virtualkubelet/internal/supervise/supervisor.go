package supervise

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"

	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/caches"
	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/leases"
	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/metrics"
	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/vnode"
	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/nodeapply/parts"
	"github.com/pingnode/pingnode/pingstatus"
)

// The parts supervisor (-parts): at each interval it pings the plugin
// once, parses the reply, and asks nodeapply/parts (parts.Step) what
// becomes of each part's node, given the nodes it serves: each node's
// runner, a vnode.Node fed by the supervisor (source.go), is handed the
// part's ping (Ping, Leave), started (Register), or stopped and its node
// deleted (Delete). What it must remember is on the nodes: it serves the
// nodes with its ownership label (vnode's parts.go), adopted at every start, so
// that a provider killed and started again, or a new leader, carries on
// where the last left off. It never touches another node, even one whose
// name is a part's: that part is not served, and the log says why, once.
// Part nodes are served by runners of their own (partnode.go).

// PartsSupervisor serves the nodes of one plugin's parts (see pinging.go
// for the two kinds of supervisor).
type PartsSupervisor struct {
	pinging
	// newClient is the client of a part's node: in a process, the
	// supervisor's, whose rate limit allows the whole fleet (partsQPS).
	newClient func() (kubernetes.Interface, error)
	all       *metrics.Metrics

	// BeforePing is where a test steps it (vnode.Hook): before each ping of
	// the plugin, in its loop.
	BeforePing vnode.Hook

	// What follows belongs to one run; only its loop touches it.
	owned       *caches.Caches          // the nodes with its ownership label, and every node's pods
	events      record.EventBroadcaster // the events of every part's node
	leases      *leases.Renewer         // the Leases of every part's node
	nodes       map[string]*partNode    // the nodes served, by part
	registering chan struct{}           // a place for each new node whose registration is on its way (registrars)
	skipped     map[string]string       // what is not served (a part, or "node/" and a node's name), and why, as last said
	deleted     map[string]types.UID    // the nodes it deleted that its cache may still show: name to UID
	// lastWarnings are the warnings of the last reply, logged when they
	// appear or change.
	lastWarnings map[pingstatus.Warning]bool

	// Count is what it did, for logs and tests.
	Count struct {
		Registered atomic.Int64 // parts' nodes registered
		Adopted    atomic.Int64 // parts' nodes served as stored: at a start, or registered by another replica
		Deleted    atomic.Int64 // parts' nodes deleted
	}
}

// NewParts returns the supervisor of cfg, a configuration with
// Parts, which reads and deletes nodes through client and gives each
// part's node a client of newClient.
func NewParts(cfg vnode.Config, client kubernetes.Interface, newClient func() (kubernetes.Interface, error), log *slog.Logger) *PartsSupervisor {
	if cfg.Metrics == nil {
		cfg.Metrics = metrics.New(prometheus.NewRegistry())
	}
	template := ""
	if cfg.Parts != nil { // else Run returns the configuration's error
		template = cfg.Parts.Template
	}
	s := &PartsSupervisor{newClient: newClient, all: cfg.Metrics}
	s.pinging = pinging{cfg: cfg, opts: cfg.Options(), client: client, log: log, metrics: cfg.Metrics.ForParts(template), before: &s.BeforePing}
	return s
}

// RunParts runs the supervisor of cfg, a configuration with Parts, until
// ctx ends, with client, whose rate limit is that of every part's node
// (PartsRestConfig); it returns an error only for a configuration that
// cannot work (see [PartsSupervisor.RunRetrying]).
func RunParts(ctx context.Context, restConfig *rest.Config, client kubernetes.Interface, cfg vnode.Config, log *slog.Logger) error {
	claims, stopClaims, err := caches.SharedClaims(ctx, restConfig, cfg.DRADriver != "" || cfg.Confirm)
	if err != nil {
		return err
	}
	defer stopClaims()
	waiting, stopWaiting, err := StartWaiting(ctx, client, cfg)
	if err != nil {
		return err
	}
	defer stopWaiting()
	cfg.Process.Claims, cfg.Process.Waiting = claims, waiting
	newClient := func() (kubernetes.Interface, error) { return client, nil }
	log = log.With("parts", cfg.Parts.Template)
	log.Info("provider of parts starting", "plugin", cfg.PluginURL, "owner", vnode.OwnerLabel+"="+cfg.Parts.Owner)
	return NewParts(cfg, client, newClient, log).RunRetrying(ctx)
}

// RunRetrying runs the supervisor until ctx ends, and then returns nil: a
// start that fails (the plugin's client, the cache of the owned nodes) is
// logged, counted and tried again after a backoff, by the lifecycle a
// node's start has too (vnode.RunRetrying). Only a configuration that cannot
// work is returned at once.
func (s *PartsSupervisor) RunRetrying(ctx context.Context) error {
	return vnode.RunRetrying(ctx, s.cfg, s.Run, func(err error) {
		s.metrics.StartError()
		s.log.Error("the provider of parts did not start; trying again after a backoff", "error", err)
	})
}

// Run starts the supervisor once: the plugin's client, and the cache of
// the nodes with its ownership label, each of which it serves at once;
// then it pings every interval until ctx ends, and returns nil once every
// part's node it started has stopped. A start that fails returns at once.
func (s *PartsSupervisor) Run(ctx context.Context) error {
	stop, err := s.startRun(ctx, s)
	if err != nil {
		return err
	}
	defer stop()
	owned, err := caches.Owned(ctx, s.client, labels.Set{vnode.OwnerLabel: s.cfg.Parts.Owner})
	if err != nil {
		return err
	}
	defer owned.Stop()
	s.events = record.NewBroadcaster(record.WithContext(ctx))
	s.events.StartRecordingToSink(&corev1client.EventSinkImpl{Interface: s.client.CoreV1().Events(metav1.NamespaceAll)})
	defer s.events.Shutdown() // once every part's node has stopped
	// The renewer of every part's node's Lease, the process's; stopped
	// after them.
	var stopLeases func()
	s.leases, stopLeases = vnode.StartRenewer(ctx, s.cfg, s.client, leases.MaxWorkers, s.log)
	defer stopLeases()
	s.owned, s.nodes, s.registering = owned, map[string]*partNode{}, make(chan struct{}, registrars)
	s.skipped, s.deleted, s.lastWarnings = map[string]string{}, map[string]types.UID{}, nil
	defer s.stopAll()
	s.adopt(ctx)
	s.all.ExpectNodes(len(s.nodes))
	wait.NonSlidingUntilWithContext(ctx, s.pingOnce, s.cfg.Interval)
	return nil
}

// pingOnce pings the plugin once and does what parts.Step says of each
// part's node.
func (s *PartsSupervisor) pingOnce(ctx context.Context) {
	ping, warnings, ok := s.ping(ctx)
	if !ok {
		return
	}
	if ping.Reached() && !ping.Reply.ReplaceParts {
		warnings = append(warnings, noParts)
	}
	defer s.kickJobs(ping)
	s.lastWarnings = vnode.LogNewWarnings(s.log, s.lastWarnings, warnings)
	s.metrics.Warnings(warnings)
	ping.Body = nil // the parts' pings need only their patches
	s.dropForeign()
	s.adopt(ctx) // a node a replica registered just before this one led, say
	decisions := parts.Step(ping, s.served(), s.opts.Apply)
	stored := s.readNew(ctx, decisions)
	for _, d := range decisions {
		switch d.Action {
		case parts.Register:
			s.register(ctx, d.Part, d.NodePing(ping), stored[d.Part])
		case parts.Delete:
			s.remove(ctx, d, ping)
		case parts.Leave:
			s.leave(d, ping)
		default: // Ping
			s.nodes[d.Part].p.Feed().Put(d.NodePing(ping), nil)
		}
	}
	s.all.ExpectNodes(len(s.nodes))
}

// noParts is the warning of a reply without a list of parts to a provider
// that serves parts: it is no news of them, and every part's node stays as
// it is (nodeapply/parts rule parts-no-news).
var noParts = pingstatus.Warning{
	Subject: pingstatus.SubjectPart, Action: pingstatus.Ignored, Path: "nodes",
	Message: "the reply lists no parts: every part's node stays as it is, and what else the reply says is ignored",
}

// served returns the nodes it serves, sorted by part, as parts.Step reads
// them: each as its cache of the owned nodes has it (none yet for a node
// being registered), with the pods that hold it.
func (s *PartsSupervisor) served() []parts.Node {
	out := make([]parts.Node, 0, len(s.nodes))
	for _, part := range slices.Sorted(maps.Keys(s.nodes)) {
		n := s.nodes[part]
		node, err := s.owned.Node.Get(n.name)
		if err != nil || !s.cfg.Parts.Owns(node) {
			node = nil
		}
		n.seen = n.seen || node != nil
		out = append(out, parts.Node{Part: part, Node: node, Pods: n.pods()})
	}
	return out
}

// adopt serves each node of the cache with its ownership label that it
// does not serve yet: at a start, the nodes it served before (it was
// killed and started again, or another replica led). A node labelled as
// its own whose part label does not name it is not served.
func (s *PartsSupervisor) adopt(ctx context.Context) {
	nodes, _ := s.owned.Node.List(labels.Everything()) // a cache lister never fails
	slices.SortFunc(nodes, func(a, b *corev1.Node) int { return strings.Compare(a.Name, b.Name) })
	seen := make(map[string]bool, len(s.deleted))
	for _, node := range nodes {
		if uid, gone := s.deleted[node.Name]; gone && uid == node.UID {
			seen[node.Name] = true
			continue // deleted, and the cache has yet to say so
		}
		if node.Labels[vnode.OwnerLabel] != s.cfg.Parts.Owner {
			continue
		}
		part, ok := s.cfg.Parts.PartOf(node)
		if !ok {
			s.skip("node/"+node.Name, fmt.Sprintf("the node %s has the label %s=%s, but its label %s=%q does not name it (the part's node would be %q): not served",
				node.Name, vnode.OwnerLabel, s.cfg.Parts.Owner, vnode.PartLabel, part, s.cfg.Parts.NodeName(part)))
			continue
		}
		if _, served := s.nodes[part]; served {
			continue
		}
		s.log.Info("serving a part's node as stored", "part", part, "node", node.Name)
		if s.start(ctx, part, nil) != nil {
			s.Count.Adopted.Add(1)
		}
	}
	maps.DeleteFunc(s.deleted, func(name string, _ types.UID) bool { return !seen[name] })
}

// leave hands a part's node the ping of its part gone, unless someone
// deleted the node (the cache showed it, and shows it no more): a node of
// its own is registered again, a gone part's is not, and its runner
// stops.
func (s *PartsSupervisor) leave(d parts.Decision, ping nodeapply.Ping) {
	n := s.nodes[d.Part]
	if d.Node == nil && n.seen {
		s.log.Info("a gone part's node was deleted: not registered again", "part", d.Part, "node", n.name)
		n.halt()
		delete(s.nodes, d.Part)
		return
	}
	n.p.Feed().Put(d.NodePing(ping), nil)
}

// dropForeign stops serving each node its runner found to be another's:
// its ownership label was removed, or another's node of its name
// replaced it. Its part is then a new part, and register leaves the node
// alone.
func (s *PartsSupervisor) dropForeign() {
	for part, n := range s.nodes {
		if n.p.Another() {
			s.log.Warn("a part's node is not this provider's any more (its ownership label is gone): not served", "part", part, "node", n.name)
			n.halt()
			delete(s.nodes, part)
		}
	}
}

// skip says, once, why what is named key is not served.
func (s *PartsSupervisor) skip(key, why string) {
	if s.skipped[key] != why {
		s.log.Warn("not served", "what", key, "why", why)
		s.skipped[key] = why
	}
}
