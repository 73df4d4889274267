package metrics

import (
	"fmt"
	"net/http"
	"sync/atomic"
)

// health is what the probes of the metrics server say, /healthz and
// /readyz, kept beside the metrics since every part of the provider that
// has something to say holds them.
type health struct {
	// nodes is how many nodes the process runs, and election whether it
	// takes part in an election; both are set once, before anything runs
	// (see [Metrics.Expect]).
	nodes    atomic.Int64
	election atomic.Bool
	// running counts the nodes registered and running; leading is whether this replica leads; reached is
	// whether a standby's last try at the election Lease reached the API
	// server and was allowed (the provider's election says, [Metrics.ReachedElection]).
	running, leading, reached atomic.Int64
}

// Expect says how many nodes this process runs, and whether it takes part
// in an election: what /readyz waits for.
func (m *Metrics) Expect(nodes int, election bool) {
	m.health.nodes.Store(int64(nodes))
	m.health.election.Store(election)
}

// ExpectNodes says how many nodes this process runs now: the parts
// supervisor runs as many as it serves parts.
func (m *Metrics) ExpectNodes(n int) { m.health.nodes.Store(int64(n)) }

// ready reports whether this replica is ready, and says why. A replica
// that leads (or runs without an election) is ready once every node it
// runs has started: its node registered, its pings taken.
// A standby is ready once its last try at the election Lease was allowed
// (a read of the Lease another replica holds, or a write): it reaches the
// API server, with its rights, and can take over.
func (h *health) ready() (bool, string) {
	running, nodes := h.running.Load(), h.nodes.Load()
	if h.election.Load() && h.leading.Load() == 0 {
		if h.reached.Load() == 1 {
			return true, "standing by: the election Lease was read"
		}
		return false, "standing by: the election Lease could not be read or written yet"
	}
	if running < nodes {
		return false, fmt.Sprintf("%d of %d nodes running", running, nodes)
	}
	return true, fmt.Sprintf("%d of %d nodes running", running, nodes)
}

// Ready reports whether this replica is ready, and says why, as /readyz
// does.
func (m *Metrics) Ready() (bool, string) { return m.health.ready() }

// healthz is the liveness probe: the process runs and serves. Nothing a
// restart would mend is left to it: a start that fails is retried with
// backoff, and a leader that cannot renew its Lease exits by itself.
func healthz(w http.ResponseWriter, _ *http.Request) {
	_, _ = fmt.Fprintln(w, "ok")
}

// readyz is the readiness probe (see [health.ready]): 200 when ready, 503
// when not, with the reason as the body.
func (h *health) readyz(w http.ResponseWriter, _ *http.Request) {
	ok, why := h.ready()
	if !ok {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	_, _ = fmt.Fprintln(w, why)
}
