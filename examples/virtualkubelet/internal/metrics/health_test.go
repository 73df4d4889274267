package metrics

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// TestReadiness: what /readyz says of each state of a replica, and that
// /healthz answers whatever the state.
func TestReadiness(t *testing.T) {
	tests := []struct {
		name                      string
		nodes                     int
		election                  bool
		running, leading, reached int64
		want                      bool
	}{
		{"no election, every node running", 2, false, 2, 0, 0, true},
		{"no election, a node not started", 2, false, 1, 0, 0, false},
		{"the leader, every node running", 1, true, 1, 1, 0, true},
		{"the leader, its node not started yet", 1, true, 0, 1, 0, false},
		{"a standby that reached the Lease", 1, true, 0, 0, 1, true},
		{"a standby that could not", 1, true, 0, 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := New(prometheus.NewRegistry())
			m.Expect(tt.nodes, tt.election)
			m.health.running.Store(tt.running)
			m.health.leading.Store(tt.leading)
			m.health.reached.Store(tt.reached)
			ready := httptest.NewRecorder()
			m.health.readyz(ready, httptest.NewRequest(http.MethodGet, "/readyz", nil))
			if got := ready.Code == http.StatusOK; got != tt.want {
				t.Errorf("/readyz %d (%s), want ready: %v", ready.Code, ready.Body, tt.want)
			}
			live := httptest.NewRecorder()
			healthz(live, httptest.NewRequest(http.MethodGet, "/healthz", nil))
			if live.Code != http.StatusOK {
				t.Errorf("/healthz %d", live.Code)
			}
		})
	}
}
