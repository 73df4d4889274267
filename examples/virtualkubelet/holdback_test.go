package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/vnode"
)

// partReply is a reply that lists the one part a, with cpus cpus and, if
// taint is not empty, the taint of that key.
func partReply(cpus int, taint string) string {
	part := map[string]any{"name": "a", "resources": map[string]string{"cpu": fmt.Sprint(cpus), "memory": "4Gi"}}
	if taint != "" {
		part["taints"] = []map[string]string{{"key": taint, "effect": "NoSchedule"}}
	}
	body, err := json.Marshal(map[string]any{"status": "ok", "nodes": []any{part}})
	if err != nil {
		panic(err)
	}
	return string(body)
}

// TestPartsFiguresHeldBack: a part's node's change of figures alone is
// written at most once in NodeStatusUpdateFrequency, by the pings' times
// (a test clock): five changes of cpu within it make one write, of the
// last; a taint within it goes at once, with its ping's figures; and the
// last figure held back is written once it has passed, nothing lost.
func TestPartsFiguresHeldBack(t *testing.T) {
	const template, owner = "vk-hold-{part}", "hold"
	const name = "vk-hold-a"
	client := fake.NewClientset()
	clock := newTestClock()
	cfg := partsConfig("", template, owner, time.Minute)
	cfg.Transport.Now = clock.now
	s, plugin, step := startFakeSupervisor(t, cfg, client, slog.NewTextHandler(t.Output(), nil), partReply(1, ""))
	statusWrites := func() int {
		n := 0
		for _, w := range writesOf(client, name) {
			if w == "patch status" {
				n++
			}
		}
		return n
	}
	pinged := 0
	// ping lets one ping through, answered with reply, after the clock
	// moved on by d, and waits until the part's node has taken it.
	ping := func(d time.Duration, reply string) {
		t.Helper()
		clock.advance(d)
		plugin.reply(http.StatusOK, reply, 0)
		step(1)
		pinged++
		within(t, 10*time.Second, fmt.Sprintf("the part's node takes ping %d", pinged), func(context.Context) (bool, string) {
			p := s.Node("a")
			return p != nil && p.Count.Pings.Load() >= int64(pinged), "not yet"
		})
	}
	stored := func(what string, check func(*corev1.Node) (bool, string)) {
		t.Helper()
		within(t, 10*time.Second, what, func(ctx context.Context) (bool, string) {
			n, err := client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			return check(n)
		})
	}
	cpu := func(want string) func(*corev1.Node) (bool, string) {
		return func(n *corev1.Node) (bool, string) { return hasResources(n, map[string]string{"cpu": want}) }
	}

	// The first ping: its conditions and figures go at once.
	ping(0, partReply(1, ""))
	stored("the first ping's cpu", cpu("1"))
	first := statusWrites()

	// Five changes of cpu within the 10 s: none written yet.
	for c := 2; c <= 6; c++ {
		ping(time.Second, partReply(c, ""))
	}
	time.Sleep(200 * time.Millisecond) // a write on its way would land by now
	stored("cpu still as first written", cpu("1"))
	// 10 s after the first write: the last of the five, in one write.
	ping(5*time.Second, partReply(6, ""))
	stored("the last cpu held back", cpu("6"))
	if n := statusWrites() - first; n != 1 {
		t.Errorf("%d status writes for five changes of cpu within %s, want 1", n, vnode.NodeStatusUpdateFrequency)
	}

	// A taint within the 10 s goes at once, with its ping's figures.
	ping(time.Second, partReply(7, "example.com/drain"))
	stored("the taint and its ping's cpu", func(n *corev1.Node) (bool, string) {
		for _, taint := range n.Spec.Taints {
			if taint.Key == "example.com/drain" {
				return cpu("7")(n)
			}
		}
		return false, fmt.Sprintf("taints %v", n.Spec.Taints)
	})
	afterTaint := statusWrites()

	// A figure just after: held back, and written once the 10 s passed.
	ping(time.Second, partReply(8, "example.com/drain"))
	time.Sleep(200 * time.Millisecond)
	stored("cpu held back after the taint", cpu("7"))
	if n := statusWrites() - afterTaint; n != 0 {
		t.Errorf("%d status writes of a figure 1 s after the last, want it held back", n)
	}
	ping(9*time.Second, partReply(8, "example.com/drain"))
	stored("the last cpu, after the 10 s", cpu("8"))
	if n := statusWrites() - afterTaint; n != 1 {
		t.Errorf("%d status writes of the figure held back, want 1", n)
	}
	if w := writesOf(client, name); !strings.HasPrefix(strings.Join(w, ","), "create ") {
		t.Errorf("writes %v, want a create first", w)
	}
}
