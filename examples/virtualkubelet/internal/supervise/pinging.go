package supervise

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/pingnode/pingnode/examples/internal/pingclient"
	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/jobs"
	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/metrics"
	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/vnode"
	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/pingstatus"
)

// The one ping loop of every node is a supervisor's, of one of two
// kinds: the supervisor of one node (NodeSupervisor, source.go), a node
// of its own, a fleet's or the only one; and the supervisor of a
// plugin's parts (PartsSupervisor, supervisor.go), a node for each part
// the reply lists. Each pings its plugin every interval and hands each
// node it serves the node's ping through the node's feed; everything
// after the ping, the step of vnode's ping.go, is the same for both. What both
// have is a pinging: the plugin's client, the ping itself, and the keeper
// of the jobs of the pods that wait on its nodes (confirm.go).

// pinging is what both supervisors have: the plugin's client and its
// pings, and the keeper of the jobs.
type pinging struct {
	cfg     vnode.Config
	opts    vnode.Options
	client  kubernetes.Interface // its reads and writes, its caches and its events
	log     *slog.Logger
	metrics metrics.Node // its pings and the reply's warnings
	// before is where a test steps it (vnode.Hook): before each ping of the
	// plugin, in its loop.
	before *vnode.Hook

	// What follows belongs to one run; only its loop touches it.
	pinger *pingclient.Client
	// jobs keeps the jobs of the pods of its nodes (confirm.go); nil
	// before a run.
	jobs *jobs.Keeper
	// lastFailure is the last ping's failure, "" when it was answered.
	lastFailure string

	// Pings and Failures are the pings of the plugin, and those it did
	// not answer, for logs and tests.
	Pings, Failures atomic.Int64
}

// served is what the keeper of the jobs reads of the nodes a supervisor
// serves (confirm.go).
type served interface {
	// servedNodes returns the nodes served, as the caches show them.
	servedNodes() []*corev1.Node
	// partOfNode returns the part of the node name; "" for a node of its
	// own.
	partOfNode(name string) string
	// boundTo returns the pods bound to the node name.
	boundTo(name string) []*corev1.Pod
}

// startRun starts a run: it checks the configuration, makes the plugin's
// client and starts the keeper of the jobs of the nodes of nodes; it
// returns what stops them.
func (s *pinging) startRun(ctx context.Context, nodes served) (stop func(), err error) {
	if err := s.cfg.Check(); err != nil {
		return nil, err
	}
	pinger, err := s.cfg.PingClient(s.log)
	if err != nil {
		return nil, fmt.Errorf("the plugin's client: %w", err)
	}
	s.pinger, s.lastFailure = pinger, ""
	stopJobs, err := s.startJobs(ctx, nodes)
	if err != nil {
		pinger.Close()
		return nil, err
	}
	return func() {
		stopJobs()
		pinger.Close()
	}, nil
}

// ping runs the hook, pings the plugin once, counts the ping (in the
// supervisor's counters, and in its metrics), and judges the reply with
// the reply's options. It returns the ping, with its reply when the
// plugin answered, and the reply's warnings; false when ctx ended first.
// A failure is logged when it begins or changes, not at every ping.
func (s *pinging) ping(ctx context.Context) (nodeapply.Ping, []pingstatus.Warning, bool) {
	if s.before.Run(ctx); ctx.Err() != nil {
		return nodeapply.Ping{}, nil, false
	}
	s.Pings.Add(1)
	start := time.Now()
	ping := s.pinger.Ping(ctx)
	if ctx.Err() != nil {
		return ping, nil, false // stopping: the failure is ours, not the plugin's
	}
	s.metrics.Ping(ping.Reached(), ping.At, time.Since(start))
	ping, warnings := nodeapply.Judge(ping, s.opts.Apply.Reply)
	if !ping.Reached() {
		s.Failures.Add(1)
		if ping.Failure != s.lastFailure { // said once, not at every ping of an outage
			s.log.Warn("plugin ping failed", "failure", ping.Failure)
		}
	}
	s.lastFailure = ping.Failure
	return ping, warnings, true
}

// Jobs returns the keeper of the jobs while it runs; nil before.
func (s *pinging) Jobs() *jobs.Keeper { return s.jobs }

// kickJobs asks the keeper of the jobs for a step after a ping the plugin
// answered: the backend is there to ask.
func (s *pinging) kickJobs(ping nodeapply.Ping) {
	if s.jobs != nil && ping.Reached() {
		s.jobs.Kick()
	}
}
