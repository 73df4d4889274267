package main

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/vnode"
	"github.com/pingnode/pingnode/nodeapply"
)

// closeServer stops the plugin's server, if it runs.
func (f *fakePlugin) closeServer() {
	f.mu.Lock()
	server := f.server
	f.server = nil
	f.mu.Unlock()
	if server != nil {
		server.Close()
	}
}

// refuse stops the plugin's server, so that connections to it are refused;
// accept starts it again on the same address.
func (f *fakePlugin) refuse() string {
	addr := f.server.Listener.Addr().String()
	f.closeServer()
	return addr
}

func (f *fakePlugin) accept(t *testing.T, addr string) {
	t.Helper()
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listening again on %s: %v", addr, err)
	}
	server := httptest.NewUnstartedServer(f)
	_ = server.Listener.Close()
	server.Listener = l
	server.Start()
	f.mu.Lock()
	f.server = server
	f.mu.Unlock()
}

// conditionIs reports whether the node's condition t has the status.
func conditionIs(node *corev1.Node, t corev1.NodeConditionType, status corev1.ConditionStatus) (bool, string) {
	c := vnode.ConditionNamed(node, t)
	if c == nil {
		return false, string(t) + " absent"
	}
	return c.Status == status, string(t) + "=" + string(c.Status) + " (" + c.Reason + ": " + c.Message + ")"
}

const testGrace = 2 * time.Second

// TestUnreachablePlugin: for each way a plugin can fail, Ready turns False
// within the grace and one interval of the first failed ping, the plugin's
// resources and taints stay, and one answered ping restores Ready.
func TestUnreachablePlugin(t *testing.T) {
	needsControlPlane(t)
	const name = "vk-unreachable"
	p, plugin := startProvider(t, name, time.Hour, func(c *vnode.Config) { c.Grace = testGrace; c.Timeout = 300 * time.Millisecond })
	plugin.reply(http.StatusOK, goodReply, 0)
	eventually(t, "the good reply is stored and the node is Ready", func(ctx context.Context) (bool, string) {
		node := stored(ctx, t, name)
		if ok, why := hasResources(node, goodResources); !ok {
			return false, why
		}
		if ok, why := conditionIs(node, nodeapply.DefaultConnectivityCondition, corev1.ConditionTrue); !ok {
			return false, why
		}
		return conditionIs(node, corev1.NodeReady, corev1.ConditionTrue)
	})
	before := stored(t.Context(), t, name)

	for _, mode := range []struct {
		name    string
		fail    func() func()
		failure string // the failure the connectivity condition names
	}{
		{"HTTP 500", func() func() {
			plugin.reply(http.StatusInternalServerError, "<html>oops</html>", 0)
			return func() { plugin.reply(http.StatusOK, goodReply, 0) }
		}, "HTTP 500 Internal Server Error"},
		{"hangs past the timeout", func() func() {
			plugin.reply(http.StatusOK, goodReply, 2*time.Second)
			return func() { plugin.reply(http.StatusOK, goodReply, 0) }
		}, "timeout after 300ms"},
		{"refuses connections", func() func() {
			addr := plugin.refuse()
			return func() { plugin.accept(t, addr) }
		}, "connection refused"},
	} {
		t.Run(mode.name, func(t *testing.T) {
			failuresBefore := p.Count.Failures.Load()
			restore := mode.fail()
			eventually(t, "Ready turns False", func(ctx context.Context) (bool, string) {
				return conditionIs(stored(ctx, t, name), corev1.NodeReady, corev1.ConditionFalse)
			})
			node := stored(t.Context(), t, name)
			conn, ready := vnode.ConditionNamed(node, nodeapply.DefaultConnectivityCondition), vnode.ConditionNamed(node, corev1.NodeReady)
			if conn.Status != corev1.ConditionFalse || conn.Message != "the plugin did not answer its last ping: "+mode.failure {
				t.Errorf("connectivity: %s %q", conn.Status, conn.Message)
			}
			// The run began at the first failed ping; Ready turned False
			// at the first failed ping at least the grace later: within
			// one more interval, and a second for the times' rounding.
			took := ready.LastTransitionTime.Sub(conn.LastTransitionTime.Time)
			if took < testGrace || took > testGrace+p.Config().Interval+p.Config().Timeout+time.Second {
				t.Errorf("Ready turned False %s after the first failed ping; want between the grace %s and one interval more", took, testGrace)
			}
			if n := p.Count.Failures.Load() - failuresBefore; n < 2 {
				t.Errorf("only %d failed pings seen", n)
			}
			if ok, why := hasResources(node, goodResources); !ok {
				t.Errorf("the last good resources are gone: %s", why)
			}
			if !equalSets(taintSet(node), taintSet(before)) || !taintSet(node)[pluginTaint] {
				t.Errorf("taints %v, want %v", keys(taintSet(node)), keys(taintSet(before)))
			}
			if node.Annotations[nodeapply.DefaultOwnershipAnnotation] != before.Annotations[nodeapply.DefaultOwnershipAnnotation] {
				t.Errorf("ownership annotation %q, want %q", node.Annotations[nodeapply.DefaultOwnershipAnnotation], before.Annotations[nodeapply.DefaultOwnershipAnnotation])
			}

			restore()
			eventually(t, "one answered ping restores Ready and connectivity", func(ctx context.Context) (bool, string) {
				node := stored(ctx, t, name)
				if ok, why := conditionIs(node, nodeapply.DefaultConnectivityCondition, corev1.ConditionTrue); !ok {
					return false, why
				}
				return conditionIs(node, corev1.NodeReady, corev1.ConditionTrue)
			})
			node = stored(t.Context(), t, name)
			if ok, why := hasResources(node, goodResources); !ok {
				t.Errorf("after recovery: %s", why)
			}
			if !equalSets(taintSet(node), taintSet(before)) {
				t.Errorf("after recovery, taints %v, want %v", keys(taintSet(node)), keys(taintSet(before)))
			}
		})
	}
	noWriteErrors(t, p)
}

// TestOneLostPing: a single failed ping turns the connectivity condition
// False and back, and Ready never leaves True: every version of the node
// the API server stored meanwhile is watched.
func TestOneLostPing(t *testing.T) {
	needsControlPlane(t)
	const name = "vk-one-lost-ping"
	p, plugin := startProvider(t, name, time.Hour, func(c *vnode.Config) { c.Grace = testGrace })
	eventually(t, "the node is Ready", func(ctx context.Context) (bool, string) {
		return conditionIs(stored(ctx, t, name), nodeapply.DefaultConnectivityCondition, corev1.ConditionTrue)
	})
	node := stored(t.Context(), t, name)
	readySince := vnode.ConditionNamed(node, corev1.NodeReady).LastTransitionTime
	w, err := client.CoreV1().Nodes().Watch(t.Context(), metav1.ListOptions{
		FieldSelector: "metadata.name=" + name, ResourceVersion: node.ResourceVersion,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	plugin.mu.Lock()
	plugin.failNext = 1
	plugin.mu.Unlock()
	failures := p.Count.Failures.Load()
	eventually(t, "the failed ping is seen, and 20 more pings", func(context.Context) (bool, string) {
		return p.Count.Failures.Load() > failures, "no failure yet"
	})
	pings := p.Count.Pings.Load()
	eventually(t, "20 more pings", func(context.Context) (bool, string) { return p.Count.Pings.Load() >= pings+20, "pings" })
	eventually(t, "connectivity is True again", func(ctx context.Context) (bool, string) {
		return conditionIs(stored(ctx, t, name), nodeapply.DefaultConnectivityCondition, corev1.ConditionTrue)
	})
	// Read what the watch holds: it must show the connectivity condition
	// False once, and Ready True throughout.
	last := stored(t.Context(), t, name).ResourceVersion
	sawFalse := false
	timeout := time.After(10 * time.Second)
	for done := false; !done; {
		select {
		case ev := <-w.ResultChan():
			n, ok := ev.Object.(*corev1.Node)
			if !ok || ev.Type != watch.Modified {
				continue
			}
			if ok, why := conditionIs(n, corev1.NodeReady, corev1.ConditionTrue); !ok {
				t.Errorf("version %s: %s", n.ResourceVersion, why)
			}
			if ok, _ := conditionIs(n, nodeapply.DefaultConnectivityCondition, corev1.ConditionFalse); ok {
				sawFalse = true
			}
			done = n.ResourceVersion == last
		case <-timeout:
			t.Fatalf("the watch did not reach version %s", last)
		}
	}
	if !sawFalse {
		t.Error("the connectivity condition never turned False")
	}
	if got := vnode.ConditionNamed(stored(t.Context(), t, name), corev1.NodeReady).LastTransitionTime; !got.Equal(&readySince) {
		t.Errorf("Ready's transition time moved from %s to %s", readySince, got)
	}
}
