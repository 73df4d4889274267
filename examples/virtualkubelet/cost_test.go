package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/vnode"
	"github.com/pingnode/pingnode/nodeapply"
)

// These tests count what a virtual node costs the control plane with the
// API server's own apiserver_request_total, and show liveness by Lease.

// requests are counters read from the API server's own /metrics: its
// apiserver_request_total by verb, resource and subresource (every code
// counted), and etcd_requests_total, what the API server asked etcd, by
// operation and resource. The figures are the control plane's, not the
// provider's.
type requests struct {
	api  map[string]float64 // "VERB resource[/subresource]"
	etcd map[string]float64 // "operation resource"
}

// readRequests scrapes the API server's /metrics.
func readRequests(ctx context.Context) (requests, error) {
	body, err := client.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return requests{}, err
	}
	r := requests{api: map[string]float64{}, etcd: map[string]float64{}}
	scanner := bufio.NewScanner(bytes.NewReader(body))
	scanner.Buffer(make([]byte, 1<<20), 1<<20)
	for scanner.Scan() {
		line := scanner.Text()
		name, rest, ok := strings.Cut(line, "{")
		if !ok || (name != "apiserver_request_total" && name != "etcd_requests_total") {
			continue
		}
		labelText, valueText, ok := strings.Cut(rest, "} ")
		if !ok {
			continue
		}
		value, err := strconv.ParseFloat(strings.TrimSpace(valueText), 64)
		if err != nil {
			return requests{}, fmt.Errorf("%s: %w", line, err)
		}
		labels := parseLabels(labelText)
		if name == "apiserver_request_total" {
			key := labels["verb"] + " " + labels["resource"]
			if labels["subresource"] != "" {
				key += "/" + labels["subresource"]
			}
			r.api[key] += value
		} else {
			r.etcd[labels["operation"]+" "+labels["resource"]] += value
		}
	}
	return r, scanner.Err()
}

// parseLabels reads Prometheus labels, name="value",...; the values read
// here hold no quotes or commas.
func parseLabels(text string) map[string]string {
	labels := map[string]string{}
	for pair := range strings.SplitSeq(text, ",") {
		k, v, ok := strings.Cut(pair, "=")
		if ok {
			labels[k] = strings.Trim(v, `"`)
		}
	}
	return labels
}

// since is what was counted from before to r.
func (r requests) since(before requests) requests {
	d := requests{api: map[string]float64{}, etcd: map[string]float64{}}
	for k, v := range r.api {
		if n := v - before.api[k]; n != 0 {
			d.api[k] = n
		}
	}
	for k, v := range r.etcd {
		if n := v - before.etcd[k]; n != 0 {
			d.etcd[k] = n
		}
	}
	return d
}

// mustReadRequests is readRequests for a test or benchmark.
func mustReadRequests(tb testing.TB) requests {
	tb.Helper()
	r, err := readRequests(context.Background())
	if err != nil {
		tb.Fatalf("reading the API server's metrics: %v", err)
	}
	return r
}

// String lists the counters, for a log.
func (r requests) String() string {
	var b strings.Builder
	for _, m := range []map[string]float64{r.api, r.etcd} {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "\n  %-40s %g", k, m[k])
		}
	}
	return b.String()
}

// total sums the requests the API server counted.
func (r requests) total() float64 {
	n := 0.0
	for _, v := range r.api {
		n += v
	}
	return n
}

// nodeWrites sums the writes of node objects, status or not.
func (r requests) nodeWrites() float64 {
	n := 0.0
	for _, verb := range []string{"PATCH", "PUT", "APPLY", "POST"} {
		n += r.api[verb+" nodes"] + r.api[verb+" nodes/status"]
	}
	return n
}

// leaseWrites sums the writes of Leases.
func (r requests) leaseWrites() float64 {
	return r.api["PUT leases"] + r.api["PATCH leases"] + r.api["POST leases"] + r.api["APPLY leases"]
}

// nodeLease reads the node's Lease.
func nodeLease(ctx context.Context, name string) (*coordinationv1.Lease, error) {
	return client.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, name, metav1.GetOptions{})
}

// firstLease waits for the node's Lease, which its first renewal creates
// once the provider's cache shows the node it registered (as a kubelet's
// first renewal creates it), and returns it.
func firstLease(t *testing.T, name string) *coordinationv1.Lease {
	t.Helper()
	var lease *coordinationv1.Lease
	eventually(t, "the node's Lease", func(ctx context.Context) (bool, string) {
		var err error
		lease, err = nodeLease(ctx, name)
		return err == nil, fmt.Sprint(err)
	})
	return lease
}

// pressureConditions are the conditions a kubelet reports about its node's
// pressure, which the provider owns too.
var pressureConditions = []corev1.NodeConditionType{corev1.NodeMemoryPressure, corev1.NodeDiskPressure, corev1.NodePIDPressure}

// allConditionsSet reports whether the node has Ready and the connectivity
// condition True, and the three pressure conditions False.
func allConditionsSet(node *corev1.Node) (bool, string) {
	for _, c := range []corev1.NodeConditionType{corev1.NodeReady, nodeapply.DefaultConnectivityCondition} {
		if ok, why := conditionIs(node, c, corev1.ConditionTrue); !ok {
			return false, why
		}
	}
	for _, c := range pressureConditions {
		if ok, why := conditionIs(node, c, corev1.ConditionFalse); !ok {
			return false, why
		}
	}
	return true, ""
}

// TestSteadyCost: one node, a steady plugin, pinged every 100 ms, for three
// status report periods (5 minutes shrunk to 10 s, so the window stands for
// 15 minutes of a real node; the Lease keeps the kubelet's 40 s, renewed
// every 10 s). Counted by the API server: the node is written at most twice
// a period (the status report, and one more if a jittered report falls in
// the same period), the Lease is renewed, the node is never read at a
// ping (the node controller's read before each of its writes is all), no
// pod is listed, and pingnode itself reports no change.
func TestSteadyCost(t *testing.T) {
	needsControlPlane(t)
	const (
		name   = "vk-steady-cost"
		report = 10 * time.Second
		window = 3 * report
	)
	p, plugin := startProvider(t, name, report, func(c *vnode.Config) { c.Interval = 100 * time.Millisecond; c.CountHeld = true })
	plugin.reply(http.StatusOK, goodReply, 0)
	schedulable(t, name)
	eventually(t, "the good reply and every condition stored", func(ctx context.Context) (bool, string) {
		if ok, why := nothingLost(ctx, t, name, false); !ok {
			return false, why
		}
		return allConditionsSet(stored(ctx, t, name))
	})
	settled(t, p, name)
	lease := firstLease(t, name)
	// The API server renews a Lease of its own too: this node's renewals
	// are counted on a watch of its Lease.
	renewals, err := client.CoordinationV1().Leases(corev1.NamespaceNodeLease).Watch(t.Context(), metav1.ListOptions{
		FieldSelector: "metadata.name=" + name, ResourceVersion: lease.ResourceVersion,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer renewals.Stop()
	before, writes, reports, pings := mustReadRequests(t), p.Count.Writes.Load(), p.Count.Reports.Load(), p.Count.Pings.Load()
	renewed := 0
	for end := time.After(window); end != nil; {
		select {
		case ev := <-renewals.ResultChan():
			if ev.Type == watch.Modified {
				renewed++
			}
		case <-end:
			end = nil
		}
	}
	d := mustReadRequests(t).since(before)
	pinged := p.Count.Pings.Load() - pings
	t.Logf("%s, %d pings, %d status reports, %d renewals of the Lease; counted by the API server:%s", window, pinged, p.Count.Reports.Load()-reports, renewed, d)

	periods := float64(window / report)
	if n := d.nodeWrites(); n > 2*periods || n < 1 {
		t.Errorf("%g node writes in %g status report periods: want at least one, and at most two a period", n, periods)
	}
	if renewed < 2 || float64(renewed) > d.leaseWrites() {
		t.Errorf("the Lease renewed %d times in %s (%g Lease writes in all): want it every 10s", renewed, window, d.leaseWrites())
	}
	// The node controller reads the node (a quorum GET) before each status
	// write it makes; the provider reads it from its cache.
	if gets, statusWrites := d.api["GET nodes"], d.api["PATCH nodes/status"]; gets > statusWrites {
		t.Errorf("%g node GETs for %g status writes and %d pings: want none at a ping", gets, statusWrites, pinged)
	}
	if n := d.api["LIST pods"]; n != 0 {
		t.Errorf("%g pod LISTs: want the pods read from the cache", n)
	}
	if n := p.Count.Writes.Load() - writes; n != 0 {
		t.Errorf("pingnode reported %d changes of a steady node", n)
	}
	if pinged < 100 {
		t.Errorf("only %d pings", pinged)
	}
	noWriteErrors(t, p)
}

// nodeMonitorGrace is the node lifecycle controller's
// node-monitor-grace-period, its default, which testenv keeps.
const nodeMonitorGrace = 50 * time.Second

// conditionsBrief are a node's conditions as type: status reason message,
// the times left out.
func conditionsBrief(node *corev1.Node) map[corev1.NodeConditionType]string {
	out := map[corev1.NodeConditionType]string{}
	for _, c := range node.Status.Conditions {
		out[c.Type] = string(c.Status) + " " + c.Reason + " " + c.Message
	}
	return out
}

// TestProviderKilled: the provider's process is SIGKILLed. The node
// lifecycle controller, which judges the provider by the node's Lease,
// marks the node Unknown one grace period after the last renewal and
// taints it unreachable. A new provider process restores Ready and every
// other condition (the pressure conditions too, which the controller left
// Unknown) to what they were before the outage, and the controller lifts
// its taints; nothing else is lost.
func TestProviderKilled(t *testing.T) {
	needsControlPlane(t)
	const name = "vk-killed"
	plugin := &fakePlugin{}
	plugin.reply(http.StatusOK, goodReply, 0)
	server := httptest.NewServer(plugin)
	defer server.Close()
	// After the providers are killed (their cleanups run first): the
	// node, and its Lease, which a second run would otherwise find still
	// owned by this run's node.
	t.Cleanup(func() { deleteNode(t, name) })
	// A timeout just under the interval, as the flags allow: a ping of
	// the plugin beside it never fails for want of time, even under -race.
	args := []string{"-node", name, "-plugin", server.URL + "/status", "-interval", "250ms", "-timeout", "200ms"}

	first := startProviderProcess(t, args...)
	within(t, time.Minute, "the node registered, Ready, with the good reply", func(ctx context.Context) (bool, string) {
		if _, err := client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{}); err != nil {
			return false, err.Error()
		}
		if ok, why := nothingLost(ctx, t, name, false); !ok {
			return false, why
		}
		return allConditionsSet(stored(ctx, t, name))
	})
	schedulable(t, name)
	addAdminTaint(t.Context(), t, name)
	eventually(t, "the administrator's taint stored", func(ctx context.Context) (bool, string) { return nothingLost(ctx, t, name, true) })
	node := stored(t.Context(), t, name)
	lease := firstLease(t, name)
	if owners := lease.OwnerReferences; len(owners) != 1 || owners[0].Kind != "Node" || owners[0].Name != name || owners[0].UID != node.UID {
		t.Errorf("the Lease's owners: %+v, want the node", owners)
	}
	if d := lease.Spec.LeaseDurationSeconds; d == nil || *d != 40 {
		t.Errorf("lease duration %v, want 40 s", d)
	}
	before := conditionsBrief(node)

	first.kill(t)
	lease, err := nodeLease(t.Context(), name)
	if err != nil {
		t.Fatal(err)
	}
	lastRenewal := lease.Spec.RenewTime.Time
	t.Logf("killed; the last renewal at %s", lastRenewal.Format(time.RFC3339Nano))
	within(t, nodeMonitorGrace+30*time.Second, "Unknown and unreachable", func(ctx context.Context) (bool, string) {
		node := stored(ctx, t, name)
		if ok, why := conditionIs(node, corev1.NodeReady, corev1.ConditionUnknown); !ok {
			return false, why
		}
		taints := allTaints(node)
		return taints[corev1.TaintNodeUnreachable+":NoSchedule"], "taints " + strings.Join(keys(taints), ", ")
	})
	node = stored(t.Context(), t, name)
	unknownAt := vnode.ConditionNamed(node, corev1.NodeReady).LastTransitionTime.Time
	// Times are kept to the second; the controller looks every second.
	if after := unknownAt.Sub(lastRenewal); after < nodeMonitorGrace-time.Second || after > nodeMonitorGrace+5*time.Second {
		t.Errorf("Ready Unknown %s after the last renewal, want the grace %s", after, nodeMonitorGrace)
	}
	t.Logf("during the outage: %v", conditionsBrief(node))

	startProviderProcess(t, args...)
	within(t, time.Minute, "every condition as before the outage, no controller taint, nothing lost", func(ctx context.Context) (bool, string) {
		node := stored(ctx, t, name)
		now := conditionsBrief(node)
		for typ, was := range before {
			if now[typ] != was {
				return false, string(typ) + ": " + now[typ] + ", was " + was
			}
		}
		for _, taint := range node.Spec.Taints {
			if strings.HasPrefix(taint.Key, "node.kubernetes.io/") {
				return false, "taint " + taint.ToString()
			}
		}
		return nothingLost(ctx, t, name, true)
	})
	renewed, err := nodeLease(t.Context(), name)
	if err != nil {
		t.Fatal(err)
	}
	if !renewed.Spec.RenewTime.After(lastRenewal) {
		t.Errorf("the Lease was not renewed after the restart")
	}
}
