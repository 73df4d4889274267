package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"

	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/metrics"
	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/vnode"
	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/pingstatus"
)

// scrape is one scrape of a /metrics endpoint, parsed with Prometheus's
// text parser.
type scrape map[string]*dto.MetricFamily

// scrapeMetrics reads url over HTTP, lints what it serves with promlint
// (promtool check metrics's library) and parses it.
func scrapeMetrics(t *testing.T, url string) scrape {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s: %s", url, resp.Status, body)
	}
	problems, err := promlint.New(bytes.NewReader(body)).Lint()
	if err != nil {
		t.Fatalf("promlint: %v", err)
	}
	for _, p := range problems {
		t.Errorf("promlint: %s: %s", p.Metric, p.Text)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("parsing the scrape: %v", err)
	}
	return families
}

// gather reads the metrics of reg, as a scrape would.
func gather(t *testing.T, reg *prometheus.Registry) scrape {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	s := scrape{}
	for _, f := range families {
		s[f.GetName()] = f
	}
	return s
}

// value is the sum of the values of the series of the metric name whose
// labels include want (a histogram's: its count of observations), and
// whether there is any.
func (s scrape) value(name string, want ...string) (float64, bool) {
	family := s[name]
	if family == nil {
		return 0, false
	}
	sum, found := 0.0, false
	for _, m := range family.Metric {
		labels := map[string]string{}
		for _, l := range m.Label {
			labels[l.GetName()] = l.GetValue()
		}
		match := true
		for i := 0; i+1 < len(want); i += 2 {
			match = match && labels[want[i]] == want[i+1]
		}
		if !match {
			continue
		}
		found = true
		switch {
		case m.Counter != nil:
			sum += m.Counter.GetValue()
		case m.Gauge != nil:
			sum += m.Gauge.GetValue()
		case m.Histogram != nil:
			sum += float64(m.Histogram.GetSampleCount())
		}
	}
	return sum, found
}

// since is what the metric name with labels want counted from before to s.
func (s scrape) since(before scrape, name string, want ...string) float64 {
	now, _ := s.value(name, want...)
	was, _ := before.value(name, want...)
	return now - was
}

// TestMetricsScrape: a provider whose plugin answers, then fails, then
// answers, stepped one ping at a time by a hook; its /metrics, scraped
// over HTTP and parsed with Prometheus's text parser, agrees with what
// the test did and with the provider's own counters (each transition
// counted once, when stored), and promlint finds no problem in it.
func TestMetricsScrape(t *testing.T) {
	needsControlPlane(t)
	const name = "vk-metrics"
	reg, all := metrics.NewRegistry()
	server, addr, err := metrics.Serve("127.0.0.1:0", reg, all, slog.New(slog.NewTextHandler(t.Output(), nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = server.Close() })
	url := "http://" + addr + "/metrics"

	p, plugin := startProvider(t, name, time.Hour, func(c *vnode.Config) { c.Metrics = all })
	step := stepPings(t, p)

	plugin.reply(http.StatusOK, goodReply, 0)
	step(1) // a ping with the good reply, after the hook is in place
	eventually(t, "the good reply is stored and the plugin is reachable", func(ctx context.Context) (bool, string) {
		node := stored(ctx, t, name)
		if ok, why := hasResources(node, goodResources); !ok {
			return false, why
		}
		return conditionIs(node, nodeapply.DefaultConnectivityCondition, corev1.ConditionTrue)
	})
	before := scrapeMetrics(t, url)
	pings, failures, writes, conflicts := p.Count.Pings.Load(), p.Count.Failures.Load(), p.Count.Writes.Load(), p.Count.Conflicts.Load()

	// Answers: two good replies, one with a refused cpu; fails three
	// times; answers twice.
	step(2)
	plugin.reply(http.StatusOK, strings.Replace(goodReply, `"cpu":"64"`, `"cpu":"-8"`, 1), 0)
	step(1)
	plugin.reply(http.StatusServiceUnavailable, "busy", 0)
	step(3)
	plugin.reply(http.StatusOK, goodReply, 0)
	lastAnswered := time.Now()
	step(2)
	// The loop is parked. A transition is counted when the node
	// controller's write that stores it has been taken: wait for the
	// last one.
	var after scrape
	eventually(t, "the turn back to reachable is stored and counted", func(context.Context) (bool, string) {
		after = scrapeMetrics(t, url)
		n := after.since(before, "pingnode_reachability_transitions_total", "node", name, "to", "reachable")
		return n >= 1, fmt.Sprintf("%g transitions to reachable", n)
	})

	const answered, failed = 5, 3
	if got, want := p.Count.Pings.Load()-pings, int64(answered+failed); got != want {
		t.Errorf("the provider counted %d pings, want %d", got, want)
	}
	if got := p.Count.Failures.Load() - failures; got != failed {
		t.Errorf("the provider counted %d failures, want %d", got, failed)
	}
	node := []string{"node", name}
	for _, c := range []struct {
		metric string
		labels []string
		want   float64
	}{
		{"pingnode_pings_total", []string{"outcome", "answered"}, answered},
		{"pingnode_pings_total", []string{"outcome", "failed"}, failed},
		{"pingnode_ping_duration_seconds", []string{"outcome", "answered"}, answered},
		{"pingnode_ping_duration_seconds", []string{"outcome", "failed"}, failed},
		{"pingnode_reachability_transitions_total", []string{"to", "unreachable"}, 1},
		{"pingnode_reachability_transitions_total", []string{"to", "reachable"}, 1},
		// Turning unreachable and reachable again changes the status;
		// nothing else does (the refused cpu leaves the node as it is).
		{"pingnode_node_writes_total", []string{"kind", "status"}, 2},
		{"pingnode_node_writes_total", []string{"kind", "object"}, 0},
		{"pingnode_node_writes_total", nil, float64(p.Count.Writes.Load() - writes)},
		{"pingnode_node_write_conflicts_total", nil, float64(p.Count.Conflicts.Load() - conflicts)},
		{"pingnode_node_write_errors_total", nil, 0},
		{"pingnode_warnings_total", []string{"subject", "resource", "action", "refused"}, 1},
	} {
		labels := append(slices.Clone(node), c.labels...)
		if got := after.since(before, c.metric, labels...); got != c.want {
			t.Errorf("%s%v: %g counted during the test, want %g", c.metric, c.labels, got, c.want)
		}
	}
	for _, c := range []struct {
		resource, unit string
		want           float64
	}{
		{"cpu", "core", 64},
		{"memory", "byte", 64 << 30},
		{"nvidia.com/gpu", "integer", 4},
	} {
		got, ok := after.value("pingnode_node_allocatable", "node", name, "resource", c.resource, "unit", c.unit)
		if !ok || got != c.want {
			t.Errorf("pingnode_node_allocatable{resource=%q,unit=%q} = %g (present %v), want %g", c.resource, c.unit, got, ok, c.want)
		}
	}
	last, ok := after.value("pingnode_last_successful_ping_timestamp_seconds", node...)
	if at := time.Unix(0, int64(last*1e9)); !ok || at.Before(lastAnswered.Add(-time.Second)) || at.After(time.Now()) {
		t.Errorf("last successful ping at %s (present %v), want after %s", at, ok, lastAnswered)
	}
	if _, ok := after.value("pingnode_leader"); !ok {
		t.Error("no pingnode_leader")
	}
	noWriteErrors(t, p)
	if t.Failed() {
		t.Log(describeScrape(after))
	}
}

// describeScrape lists the pingnode_ series of a scrape, for a failed
// test's log.
func describeScrape(s scrape) string {
	var b strings.Builder
	for _, name := range slices.Sorted(maps.Keys(s)) {
		if !strings.HasPrefix(name, "pingnode_") {
			continue
		}
		for _, m := range s[name].Metric {
			var labels []string
			for _, l := range m.Label {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			v, _ := scrape{name: &dto.MetricFamily{Metric: []*dto.Metric{m}}}.value(name)
			fmt.Fprintf(&b, "\n  %s{%s} %g", name, strings.Join(labels, ","), v)
		}
	}
	return b.String()
}

// TestWarningsBySubject: every subject's series exists at zero from the
// start, labels' among them, and a warning is counted once under its
// subject and action, never its path.
func TestWarningsBySubject(t *testing.T) {
	const node = "vk-warnings-by-subject"
	reg := prometheus.NewRegistry()
	m := metrics.New(reg).ForNode(node)
	for s := pingstatus.SubjectReply; s <= pingstatus.SubjectLabel; s++ {
		if _, ok := gather(t, reg).value("pingnode_warnings_total", "node", node, "subject", s.String(), "action", "refused"); !ok {
			t.Errorf("no pingnode_warnings_total{subject=%q,action=\"refused\"} at the start", s)
		}
	}
	m.Warnings([]pingstatus.Warning{
		{Path: `labels["kubernetes.io/hostname"]`, Subject: pingstatus.SubjectLabel, Action: pingstatus.Refused},
		{Path: `labels["node-restriction.kubernetes.io/dedicated"]`, Subject: pingstatus.SubjectLabel, Action: pingstatus.Refused},
		{Path: "resources.cpu", Subject: pingstatus.SubjectResource, Action: pingstatus.Refused},
	})
	for _, c := range []struct {
		subject string
		want    float64
	}{{"label", 2}, {"resource", 1}, {"taint", 0}} {
		if got, _ := gather(t, reg).value("pingnode_warnings_total", "node", node, "subject", c.subject, "action", "refused"); got != c.want {
			t.Errorf("pingnode_warnings_total{subject=%q,action=\"refused\"} = %g, want %g", c.subject, got, c.want)
		}
	}
}
