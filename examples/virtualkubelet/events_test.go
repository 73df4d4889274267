package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/vnode"
)

// nodeEventsOf lists the events on the node, as kubectl describe node
// finds them.
func nodeEventsOf(ctx context.Context, t *testing.T, name string) []corev1.Event {
	t.Helper()
	list, err := client.CoreV1().Events(metav1.NamespaceAll).List(ctx, metav1.ListOptions{
		FieldSelector: "involvedObject.kind=Node,involvedObject.name=" + name,
	})
	if err != nil {
		t.Fatal(err)
	}
	return list.Items
}

// clearNodeEvents deletes the events an earlier run left on the node, if
// it could not (a run killed before its cleanup), so that each run counts
// only its own.
func clearNodeEvents(t *testing.T, name string) {
	t.Helper()
	if err := deleteNodeEvents(t.Context(), name); err != nil {
		t.Fatal(err)
	}
}

// deleteNodeEvents deletes the events on the node of this name.
func deleteNodeEvents(ctx context.Context, name string) error {
	list, err := client.CoreV1().Events(metav1.NamespaceAll).List(ctx, metav1.ListOptions{
		FieldSelector: "involvedObject.kind=Node,involvedObject.name=" + name,
	})
	if err != nil {
		return err
	}
	for _, e := range list.Items {
		err := client.CoreV1().Events(e.Namespace).Delete(ctx, e.Name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	return nil
}

func eventsWith(events []corev1.Event, reason string) []corev1.Event {
	var out []corev1.Event
	for _, e := range events {
		if e.Reason == reason {
			out = append(out, e)
		}
	}
	return out
}

// fromProvider are the events of events that the provider recorded.
func fromProvider(events []corev1.Event) []corev1.Event {
	var out []corev1.Event
	for _, e := range events {
		if e.Source.Component == vnode.FieldManager {
			out = append(out, e)
		}
	}
	return out
}

func describe(events []corev1.Event) string {
	var b strings.Builder
	for _, e := range events {
		fmt.Fprintf(&b, "\n  %s %s x%d: %s", e.Type, e.Reason, e.Count, e.Message)
	}
	return b.String()
}

// TestRefusalEvent: a plugin that sends the same refused field 50 times
// makes exactly one Warning event on the node, whose count grows and whose
// message names the path. client-go's correlator also limits each kind of
// event on a node to a burst of 25, then one every five minutes, so the
// count stops at 25 here: not one write per ping.
func TestRefusalEvent(t *testing.T) {
	needsControlPlane(t)
	const name = "vk-events"
	clearNodeEvents(t, name)
	p, plugin := startProvider(t, name, time.Hour, func(c *vnode.Config) { c.Interval = 100 * time.Millisecond })
	plugin.reply(http.StatusOK, `{"resources":{"cpu":"-8","memory":"64Gi"}}`, 0)
	pings := p.Count.Pings.Load()
	var refused []corev1.Event
	eventually(t, "an event for the refused cpu", func(ctx context.Context) (bool, string) {
		refused = eventsWith(nodeEventsOf(ctx, t, name), vnode.ReasonResourceRefused)
		return len(refused) == 1, describe(refused)
	})
	first := refused[0].Count
	eventually(t, "its count grows", func(ctx context.Context) (bool, string) {
		refused = eventsWith(nodeEventsOf(ctx, t, name), vnode.ReasonResourceRefused)
		return len(refused) == 1 && refused[0].Count > first, describe(refused)
	})
	eventually(t, "50 pings with the same mistake", func(context.Context) (bool, string) {
		return p.Count.Pings.Load() >= pings+50, "pings"
	})
	all := nodeEventsOf(t.Context(), t, name)
	refused = eventsWith(all, vnode.ReasonResourceRefused)
	if len(refused) != 1 {
		t.Fatalf("%d events for the refused cpu, want 1:%s", len(refused), describe(all))
	}
	e := refused[0]
	if e.Type != corev1.EventTypeWarning || !strings.HasPrefix(e.Message, "resources.cpu: ") || !strings.Contains(e.Message, "-8") {
		t.Errorf("event: %s %s: %q", e.Type, e.Reason, e.Message)
	}
	if e.InvolvedObject.Kind != "Node" || e.InvolvedObject.Name != name || e.Source.Component != vnode.FieldManager {
		t.Errorf("event on %+v from %+v", e.InvolvedObject, e.Source)
	}
	if e.Count < 2 || e.Count > 26 {
		t.Errorf("count %d after 50 pings, want it grown and held by the rate limit (at most 26)", e.Count)
	}
	t.Logf("after %d pings, %d at the first read:%s", p.Count.Pings.Load()-pings, first, describe(all))
}

// TestReachabilityEvents: the plugin going away and coming back shows on
// the node as the kubelet's NodeNotReady and NodeReady, and a Warning
// PluginPingFailed naming the failure.
func TestReachabilityEvents(t *testing.T) {
	needsControlPlane(t)
	const name = "vk-reachability-events"
	clearNodeEvents(t, name)
	_, plugin := startProvider(t, name, time.Hour, func(c *vnode.Config) { c.Grace = testGrace })
	eventually(t, "NodeReady", func(ctx context.Context) (bool, string) {
		events := nodeEventsOf(ctx, t, name)
		return len(eventsWith(events, vnode.ReasonNodeReady)) == 1, describe(events)
	})
	plugin.reply(http.StatusServiceUnavailable, "busy", 0)
	eventually(t, "PluginPingFailed and NodeNotReady", func(ctx context.Context) (bool, string) {
		events := nodeEventsOf(ctx, t, name)
		failed, notReady := eventsWith(events, vnode.ReasonPingFailed), eventsWith(events, vnode.ReasonNodeNotReady)
		return len(failed) == 1 && failed[0].Type == corev1.EventTypeWarning &&
			strings.Contains(failed[0].Message, "HTTP 503 Service Unavailable") && len(notReady) == 1, describe(events)
	})
	plugin.reply(http.StatusOK, "ok", 0)
	eventually(t, "PluginPingSucceeded and NodeReady again", func(ctx context.Context) (bool, string) {
		events := nodeEventsOf(ctx, t, name)
		ready := eventsWith(events, vnode.ReasonNodeReady)
		return len(eventsWith(events, vnode.ReasonPingSucceeded)) >= 1 && len(ready) == 1 && ready[0].Count == 2, describe(events)
	})
}
