package main

import (
	"context"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/metrics"
	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/vnode"
)

// stepPings makes p's ping loop park before each ping, with a hook, and
// waits until it is parked. step lets n more pings through, one at a
// time, and returns once the loop is parked again: each ping it let
// through is then done.
func stepPings(t *testing.T, p *vnode.Node) (step func(n int)) {
	t.Helper()
	return parkedSteps(t, func(hook func(context.Context)) {
		p.BeforePing.Set(hook)
	}, nil)
}

// parkedSteps is stepPings for any loop whose hook before each ping
// install sets (the provider's, the parts supervisor's), and that start,
// if not nil, starts once the hook is in place.
func parkedSteps(t *testing.T, install func(hook func(context.Context)), start func()) (step func(n int)) {
	t.Helper()
	entered, proceed := make(chan struct{}), make(chan struct{})
	install(func(ctx context.Context) {
		select {
		case entered <- struct{}{}:
		case <-ctx.Done():
			return
		}
		select {
		case <-proceed:
		case <-ctx.Done():
		}
	})
	park := func() {
		t.Helper()
		select {
		case <-entered:
		case <-time.After(10 * time.Second):
			t.Fatal("the ping loop did not reach the hook")
		}
	}
	if start != nil {
		start()
	}
	park()
	return func(n int) {
		t.Helper()
		for range n {
			proceed <- struct{}{}
			park()
		}
	}
}

// warningLog is a slog handler that writes to the test's output, as the
// other tests' providers log, and keeps the path of each warning of a
// reply that is logged.
type warningLog struct {
	slog.Handler
	mu    *sync.Mutex
	paths *[]string
}

func newWarningLog(t *testing.T) warningLog {
	return warningLog{Handler: slog.NewTextHandler(t.Output(), nil), mu: new(sync.Mutex), paths: new([]string)}
}

func (h warningLog) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == "plugin reply" {
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "path" {
				h.mu.Lock()
				*h.paths = append(*h.paths, a.Value.String())
				h.mu.Unlock()
			}
			return true
		})
	}
	return h.Handler.Handle(ctx, r)
}

func (h warningLog) WithAttrs(attrs []slog.Attr) slog.Handler {
	h.Handler = h.Handler.WithAttrs(attrs)
	return h
}

func (h warningLog) WithGroup(name string) slog.Handler {
	h.Handler = h.Handler.WithGroup(name)
	return h
}

// take returns the paths of the warnings logged since the last take.
func (h warningLog) take() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	paths := *h.paths
	*h.paths = nil
	return paths
}

// TestRefusalLoggedWhenItAppears: a plugin that sends the same refused
// label at every ping (the sample plugin's -label nvidia.com/gpu.product=…
// to a provider without -label-namespaces) makes one log line when the
// refusal appears, not one at every ping; a refusal that joins it is
// logged, one that changes (the same label, another value refused) or
// goes away and comes back is logged again. The metric counts the refusal
// at every ping that has it.
func TestRefusalLoggedWhenItAppears(t *testing.T) {
	needsControlPlane(t)
	const name = "vk-refusal-log"
	const nfdKey = "feature.node.kubernetes.io/cpu-model.vendor_id" // a namespace the provider allows
	const gpuPath, otherPath, nfdPath = "labels[" + gpuProduct + "]", "labels[example.org/x]", "labels[" + nfdKey + "]"
	reg, all := metrics.NewRegistry()
	log := newWarningLog(t)
	p, plugin := startProviderLogging(t, name, time.Hour, log, func(c *vnode.Config) { c.Metrics = all })
	step := stepPings(t, p)
	refused := func() float64 {
		n, _ := gather(t, reg).value("pingnode_warnings_total", "node", name, "subject", "label", "action", "refused")
		return n
	}

	replies := []struct {
		name    string
		labels  map[string]string
		pings   int
		logged  []string // the warnings logged over these pings, by path
		counted float64  // the refusals the metric counts over them
	}{
		{"no label", map[string]string{}, 2, nil, 0},
		{"a refused label", map[string]string{gpuProduct: "NVIDIA-A100-SXM4-80GB"}, 5, []string{gpuPath}, 5},
		{"another refused label besides", map[string]string{gpuProduct: "NVIDIA-A100-SXM4-80GB", "example.org/x": "y"}, 3, []string{otherPath}, 6},
		{"no label again", map[string]string{}, 2, nil, 0},
		{"the refused label again", map[string]string{gpuProduct: "NVIDIA-A100-SXM4-80GB"}, 3, []string{gpuPath}, 3},
		{"a refused value", map[string]string{nfdKey: "not a value!"}, 3, []string{nfdPath}, 3},
		{"the refused value changed", map[string]string{nfdKey: "still not one!"}, 3, []string{nfdPath}, 3},
	}
	step(1) // a ping after the hook is in place, with the plugin's first reply
	log.take()
	for _, r := range replies {
		plugin.reply(http.StatusOK, labelReply(r.labels), 0)
		before := refused()
		step(r.pings)
		got := log.take()
		slices.Sort(got)
		if diff := cmp.Diff(r.logged, got); diff != "" {
			t.Errorf("%s, %d pings: warnings logged (-want +got):\n%s", r.name, r.pings, diff)
		}
		if n := refused() - before; n != r.counted {
			t.Errorf("%s, %d pings: pingnode_warnings_total counted %g refused labels, want %g", r.name, r.pings, n, r.counted)
		}
	}
}
