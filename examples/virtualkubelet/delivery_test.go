package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"

	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/metrics"
	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/vnode"
	"github.com/pingnode/pingnode/nodeapply"
)

// eventCount sums the counts of the events on the node with this reason.
func eventCount(ctx context.Context, t *testing.T, name, reason string) int32 {
	t.Helper()
	n := int32(0)
	for _, e := range eventsWith(nodeEventsOf(ctx, t, name), reason) {
		n += e.Count
	}
	return n
}

// TestTaintsRefused: the API server refuses the object patch (an
// admission policy refuses a taint the plugin reports). The plugin's
// turn back to reachable and its new resources reach the node all the
// same, at once; the transition is told once, as one event and one count
// of the metric, though every ping sends the object patch again and has
// it refused, each refusal counted as a write error. Nothing else is
// lost, the ownership annotation never claims the refused taint, and once
// the policy is gone the next ping delivers it.
func TestTaintsRefused(t *testing.T) {
	needsControlPlane(t)
	const (
		name       = "vk-taints-refused"
		refusedKey = "refused.example.com/hold"
	)
	clearNodeEvents(t, name)
	reg := prometheus.NewRegistry()
	all := metrics.New(reg)
	p, plugin := startGood(t, name, func(c *vnode.Config) { c.Metrics = all })
	settled(t, p, name)
	policy := refuseTaint(t, name, refusedKey)

	plugin.reply(http.StatusServiceUnavailable, "busy", 0)
	eventually(t, "the failure is stored", func(ctx context.Context) (bool, string) {
		return conditionIs(stored(ctx, t, name), nodeapply.DefaultConnectivityCondition, corev1.ConditionFalse)
	})
	settled(t, p, name)
	reachable := func() float64 {
		n, _ := gather(t, reg).value("pingnode_reachability_transitions_total", "node", name, "to", metrics.ToReachable)
		return n
	}
	taintErrors := func() float64 {
		n, _ := gather(t, reg).value("pingnode_node_write_errors_total", "node", name, "kind", metrics.KindObject)
		return n
	}
	transitions, refusals, writeErrors := reachable(), taintErrors(), p.Count.WriteErrors.Load()
	// The recorder sends events in order: once the failure's is stored,
	// so is the first ping's PluginPingSucceeded, and the count below is
	// the transition's alone.
	eventually(t, "the failure's event", func(ctx context.Context) (bool, string) {
		return eventCount(ctx, t, name, vnode.ReasonPingFailed) >= 1, describe(nodeEventsOf(ctx, t, name))
	})
	succeeded := eventCount(t.Context(), t, name, vnode.ReasonPingSucceeded)

	// Back, with a new cpu figure and a taint the API server refuses.
	refusedReply := strings.Replace(goodReply, `"cpu":"64"`, `"cpu":"48"`, 1)
	refusedReply = strings.Replace(refusedReply, `"taints":[`, `"taints":[{"key":"`+refusedKey+`","value":"x","effect":"NoSchedule"},`, 1)
	plugin.reply(http.StatusOK, refusedReply, 0)
	eventually(t, "reachable again, with the new cpu, though the taint is refused", func(ctx context.Context) (bool, string) {
		node := stored(ctx, t, name)
		if ok, why := conditionIs(node, nodeapply.DefaultConnectivityCondition, corev1.ConditionTrue); !ok {
			return false, why
		}
		return hasResources(node, map[string]string{"cpu": "48", "memory": "64Gi", "nvidia.com/gpu": "4"})
	})
	pings := p.Count.Pings.Load()
	eventually(t, "twenty more pings, each with the taint refused", func(context.Context) (bool, string) {
		return p.Count.Pings.Load() >= pings+20, fmt.Sprintf("%d pings", p.Count.Pings.Load()-pings)
	})
	eventually(t, "the event of the transition", func(ctx context.Context) (bool, string) {
		n := eventCount(ctx, t, name, vnode.ReasonPingSucceeded) - succeeded
		return n >= 1, fmt.Sprintf("%d %s events", n, vnode.ReasonPingSucceeded)
	})
	if n := eventCount(t.Context(), t, name, vnode.ReasonPingSucceeded) - succeeded; n != 1 {
		t.Errorf("%d %s events for one transition, want 1:%s", n, vnode.ReasonPingSucceeded, describe(nodeEventsOf(t.Context(), t, name)))
	}
	if n := reachable() - transitions; n != 1 {
		t.Errorf("pingnode_reachability_transitions_total{to=%q} counted %g for one transition, want 1", metrics.ToReachable, n)
	}
	// The loop still runs: read each count once, both at least twenty.
	if n := taintErrors() - refusals; n < 20 {
		t.Errorf("pingnode_node_write_errors_total{kind=%q} counted %g refusals in twenty pings and more, want each counted", metrics.KindObject, n)
	}
	if n := p.Count.WriteErrors.Load() - writeErrors; n < 20 {
		t.Errorf("the provider counted %d write errors in twenty pings and more, want each refusal counted", n)
	}
	node := stored(t.Context(), t, name)
	if taints := taintSet(node); !equalSets(taints, map[string]bool{pluginTaint: true, protectedTaint: true, staticTaint: true}) {
		t.Errorf("taints %v, want the plugin's, the protected and the static one", keys(taints))
	}
	if got := node.Annotations[nodeapply.DefaultOwnershipAnnotation]; got != "vendor.example.com/maintenance:NoSchedule" {
		t.Errorf("ownership annotation %q, want only the taint the node has", got)
	}
	if ok, why := conditionIs(node, corev1.NodeReady, corev1.ConditionTrue); !ok {
		t.Errorf("Ready: %s", why)
	}

	policy.remove()
	eventually(t, "the refused taint delivered once allowed", func(ctx context.Context) (bool, string) {
		node := stored(ctx, t, name)
		owned := node.Annotations[nodeapply.DefaultOwnershipAnnotation]
		return taintSet(node)[refusedKey+"=x:NoSchedule"] && strings.Contains(owned, refusedKey+":NoSchedule") && strings.Contains(owned, "vendor.example.com/maintenance:NoSchedule"),
			"taints " + strings.Join(keys(taintSet(node)), ", ") + "; ownership " + owned
	})
}
