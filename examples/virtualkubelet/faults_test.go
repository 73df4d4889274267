package main

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/supervise"
	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/vnode"
	"github.com/pingnode/pingnode/nodeapply"
)

// The good reply most tests start from, what it stores, the taint it sets,
// and an administrator's taint beside it.
const (
	pluginTaint = "vendor.example.com/maintenance=true:NoSchedule"
	adminTaint  = "admin.example.org/hold=yes:NoExecute"
	goodReply   = `{"resources":{"cpu":"64","memory":"64Gi","accelerators":[{"resourceType":"nvidia.com/gpu","available":"4"}]},
		"taints":[{"key":"vendor.example.com/maintenance","value":"true","effect":"NoSchedule"}]}`
)

var goodResources = map[string]string{"cpu": "64", "memory": "64Gi", "nvidia.com/gpu": "4"}

// addAdminTaint is kubectl taint by an administrator: a JSON patch with a
// test of the resourceVersion, so it never overwrites a concurrent write.
func addAdminTaint(ctx context.Context, t *testing.T, name string) {
	t.Helper()
	node := stored(ctx, t, name)
	taints := append(node.Spec.Taints, corev1.Taint{Key: "admin.example.org/hold", Value: "yes", Effect: corev1.TaintEffectNoExecute})
	node.Spec.Taints = taints
	if _, err := client.CoreV1().Nodes().Update(ctx, node, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("the administrator's taint: %v", err)
	}
}

// nothingLost checks the node keeps the plugin's taint and its ownership
// annotation, the administrator's, the static and the protected taints,
// and the last good resources.
func nothingLost(ctx context.Context, t *testing.T, name string, admin bool) (bool, string) {
	t.Helper()
	node, err := client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return false, err.Error()
	}
	if ok, why := hasResources(node, goodResources); !ok {
		return false, why
	}
	taints := taintSet(node)
	want := []string{pluginTaint, protectedTaint, staticTaint}
	if admin {
		want = append(want, adminTaint)
	}
	for _, w := range want {
		if !taints[w] {
			return false, "taints " + strings.Join(keys(taints), ", ") + ": no " + w
		}
	}
	if got := node.Annotations[nodeapply.DefaultOwnershipAnnotation]; got != "vendor.example.com/maintenance:NoSchedule" {
		return false, "ownership annotation " + got
	}
	return true, ""
}

// startGood runs a provider whose plugin gives the good reply, and waits
// until the node has it.
func startGood(t *testing.T, name string, change ...func(*vnode.Config)) (*vnode.Node, *fakePlugin) {
	t.Helper()
	p, plugin := startProvider(t, name, time.Hour, change...)
	plugin.reply(http.StatusOK, goodReply, 0)
	eventually(t, "the good reply is stored", func(ctx context.Context) (bool, string) { return nothingLost(ctx, t, name, false) })
	return p, plugin
}

// noWriteErrors checks the API server refused none of the provider's
// writes.
func noWriteErrors(t *testing.T, p *vnode.Node) {
	t.Helper()
	if n := p.Count.WriteErrors.Load(); n != 0 {
		t.Errorf("the API server refused %d writes from the provider", n)
	}
}

// TestConflictRetried: an administrator's taint lands between the
// provider's read of the node and its object patch (a hook makes the race
// certain). The patch conflicts, the provider reads again and retries, and
// both taints end on the node.
func TestConflictRetried(t *testing.T) {
	needsControlPlane(t)
	const name = "vk-conflict"
	p, plugin := startProvider(t, name, time.Hour)
	// The node settles first (the first status write, the controller's
	// not-ready taint lifted), so the administrator's own write in the
	// hook races with nothing else.
	schedulable(t, name)
	var once sync.Once
	raced := make(chan struct{})
	p.BeforeObjectPatch.Set(func(ctx context.Context) {
		once.Do(func() {
			defer close(raced)
			// In the provider's goroutine: an error, never Fatal, and
			// kubectl's own retry should another write come between.
			err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
				node, err := client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
				if err != nil {
					return err
				}
				node.Spec.Taints = append(node.Spec.Taints, corev1.Taint{Key: "admin.example.org/hold", Value: "yes", Effect: corev1.TaintEffectNoExecute})
				_, err = client.CoreV1().Nodes().Update(ctx, node, metav1.UpdateOptions{})
				return err
			})
			if err != nil {
				t.Errorf("the administrator's taint: %v", err)
			}
		})
	})
	plugin.reply(http.StatusOK, goodReply, 0)
	select {
	case <-raced:
	case <-time.After(20 * time.Second):
		t.Fatal("the provider never sent an object patch")
	}
	eventually(t, "both taints on the node", func(ctx context.Context) (bool, string) {
		return nothingLost(ctx, t, name, true)
	})
	if n := p.Count.Conflicts.Load(); n < 1 {
		t.Errorf("%d conflicts, want the patch to have conflicted", n)
	}
	noWriteErrors(t, p)
}

// TestDriftCorrected: an administrator who deletes the plugin's taint sees
// it back at the next ping; the administrator's own taint is never
// touched.
func TestDriftCorrected(t *testing.T) {
	needsControlPlane(t)
	const name = "vk-drift"
	startGood(t, name)
	addAdminTaint(t.Context(), t, name)
	node := stored(t.Context(), t, name)
	var kept []corev1.Taint
	for _, taint := range node.Spec.Taints {
		if taint.ToString() != pluginTaint {
			kept = append(kept, taint)
		}
	}
	node.Spec.Taints = kept
	if _, err := client.CoreV1().Nodes().Update(t.Context(), node, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the plugin's taint is back, the administrator's kept", func(ctx context.Context) (bool, string) {
		return nothingLost(ctx, t, name, true)
	})
}

// TestFlapping: for a minute the plugin alternates between good replies,
// failures and garbage, faster than the grace. Ready never turns False,
// the writes are bounded by the reachability transitions, and nothing is
// lost.
func TestFlapping(t *testing.T) {
	needsControlPlane(t)
	const name = "vk-flapping"
	p, plugin := startGood(t, name, func(c *vnode.Config) { c.Grace = 5 * time.Second; c.Interval = 100 * time.Millisecond })
	addAdminTaint(t.Context(), t, name)
	// The administrator's taint is stored, the provider has pinged since
	// (a foreign taint makes no write of its own), and nothing it handed
	// on is still on its way.
	eventually(t, "the administrator's taint is stored", func(ctx context.Context) (bool, string) { return nothingLost(ctx, t, name, true) })
	pings := p.Count.Pings.Load()
	eventually(t, "three more pings", func(context.Context) (bool, string) { return p.Count.Pings.Load() >= pings+3, "pings" })
	settled(t, p, name)
	writes := p.Count.Writes.Load()

	// One cycle: good, two failures of each kind, garbage, a broken
	// object; each lasts a few pings.
	cycle := []struct {
		status int
		body   string
		delay  time.Duration
	}{
		{http.StatusOK, goodReply, 0},
		{http.StatusInternalServerError, "oops", 0},
		{http.StatusOK, goodReply, 0},
		{http.StatusOK, goodReply, time.Second}, // past the timeout
		{http.StatusOK, "\x00garbage{{", 0},
		{http.StatusOK, `{"resources":{"cpu":`, 0},
		{http.StatusBadGateway, "", 0},
	}
	transitions := 0 // answered -> failed, failed -> answered
	answered := true
	end := time.Now().Add(time.Minute)
	for i := 0; time.Now().Before(end); i++ {
		step := cycle[i%len(cycle)]
		plugin.reply(step.status, step.body, step.delay)
		if now := step.status == http.StatusOK && step.delay == 0; now != answered {
			transitions++
			answered = now
		}
		pings := p.Count.Pings.Load()
		eventually(t, "three pings", func(context.Context) (bool, string) { return p.Count.Pings.Load() >= pings+3, "pings" })
		if ok, why := conditionIs(stored(t.Context(), t, name), corev1.NodeReady, corev1.ConditionTrue); !ok {
			t.Fatalf("flap %d: %s", i, why)
		}
	}
	plugin.reply(http.StatusOK, goodReply, 0)
	transitions++
	eventually(t, "nothing lost", func(ctx context.Context) (bool, string) { return nothingLost(ctx, t, name, true) })
	got := p.Count.Writes.Load() - writes
	t.Logf("%d reachability transitions, %d writes, %d pings", transitions, got, p.Count.Pings.Load())
	// Each transition is one status write; a ping that straddles a
	// transition may write it once more while the node controller's
	// write is on its way.
	if got > int64(2*transitions) {
		t.Errorf("%d writes for %d transitions: want at most two each", got, transitions)
	}
	noWriteErrors(t, p)
}

// TestRestartWhileEmpty: the provider stops, and a new one starts while
// the plugin reports taints: []. The plugin's taint goes (the ownership
// annotation says it was the plugin's), the administrator's, the static
// and the protected ones stay, and the resources are the last good ones.
func TestRestartWhileEmpty(t *testing.T) {
	needsControlPlane(t)
	const name = "vk-restart"
	plugin := &fakePlugin{}
	plugin.reply(http.StatusOK, goodReply, 0)
	server := httptest.NewServer(plugin)
	defer server.Close()
	cfg := vnode.Config{
		Static: vnode.StaticNode(name), StaticKeys: []string{vnode.StaticTaintKey}, PluginURL: server.URL,
		Interval: 50 * time.Millisecond, Timeout: 500 * time.Millisecond, StatusReport: time.Hour,
	}
	// One ServiceAccount for both runs, as a pod restarted keeps its own.
	id := grant(t, name, accessFor("", "", []vnode.Config{cfg}, nil))
	run := func() (*vnode.Node, func()) {
		p := vnode.New(cfg, id.client, slog.New(slog.NewTextHandler(t.Output(), nil)))
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- supervise.One(p).Run(ctx) }() // the node, and its ping loop
		return p, func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("provider: %v", err)
			}
		}
	}
	t.Cleanup(func() { deleteNode(t, name) })

	_, stop := run()
	eventually(t, "the good reply is stored", func(ctx context.Context) (bool, string) { return nothingLost(ctx, t, name, false) })
	addAdminTaint(t.Context(), t, name)
	stop()

	plugin.reply(http.StatusOK, `{"taints":[]}`, 0)
	p, stop := run()
	defer stop()
	eventually(t, "the plugin's taint is gone, nothing else", func(ctx context.Context) (bool, string) {
		node := stored(ctx, t, name)
		if ok, why := hasResources(node, goodResources); !ok {
			return false, why
		}
		want := map[string]bool{protectedTaint: true, staticTaint: true, adminTaint: true}
		if got := taintSet(node); !equalSets(got, want) {
			return false, "taints " + strings.Join(keys(got), ", ")
		}
		if v, ok := node.Annotations[nodeapply.DefaultOwnershipAnnotation]; ok {
			return false, "ownership annotation still " + v
		}
		return true, ""
	})
	noWriteErrors(t, p)
}

// TestNodeDeleted: an administrator deletes the node while the provider
// runs. The provider registers it again, and the next ping brings back
// the plugin's resources and taint (the administrator's taint went with
// the node they deleted).
func TestNodeDeleted(t *testing.T) {
	needsControlPlane(t)
	const name = "vk-deleted"
	p, _ := startGood(t, name)
	old := stored(t.Context(), t, name)
	if err := client.CoreV1().Nodes().Delete(t.Context(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the node is back with what the plugin reports", func(ctx context.Context) (bool, string) {
		node, err := client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		if node.UID == old.UID {
			return false, "not deleted yet"
		}
		if ok, why := conditionIs(node, corev1.NodeReady, corev1.ConditionTrue); !ok {
			return false, why
		}
		return nothingLost(ctx, t, name, false)
	})
	noWriteErrors(t, p)
}

// TestControlPlaneRestart: the whole control plane stops and starts again
// on the same etcd data while the provider runs, and the plugin keeps
// answering. The provider's reads and writes fail meanwhile; it carries
// on afterwards, with nothing lost, and takes the plugin's next change.
func TestControlPlaneRestart(t *testing.T) {
	needsControlPlane(t)
	const name = "vk-restart-control-plane"
	p, plugin := startGood(t, name)
	addAdminTaint(t.Context(), t, name)
	eventually(t, "the administrator's taint is stored", func(ctx context.Context) (bool, string) { return nothingLost(ctx, t, name, true) })
	restartEnv(t, func() {
		pings := p.Count.Pings.Load()
		eventually(t, "five pings while the API server is down", func(context.Context) (bool, string) {
			return p.Count.Pings.Load() >= pings+5, "pings"
		})
	})
	eventually(t, "nothing lost", func(ctx context.Context) (bool, string) { return nothingLost(ctx, t, name, true) })
	plugin.reply(http.StatusOK, strings.Replace(goodReply, `"cpu":"64"`, `"cpu":"48"`, 1), 0)
	eventually(t, "the plugin's next change is stored", func(ctx context.Context) (bool, string) {
		node, err := client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return hasResources(node, map[string]string{"cpu": "48"})
	})
}
