package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/supervise"
	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/vnode"
	"github.com/pingnode/pingnode/nodeapply"
)

// fakePlugin is the plugin's status endpoint, with a reply the test sets:
// a plugin of the ping alone, which answers a pod create or delete 404.
type fakePlugin struct {
	mu     sync.Mutex
	status int
	body   []byte
	delay  time.Duration
	// failNext makes the next requests answer 500, then the reply again.
	failNext int
	hits     atomic.Int64
	server   *httptest.Server
}

func (f *fakePlugin) reply(status int, body string, delay time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.status, f.body, f.delay = status, []byte(body), delay
}

func (f *fakePlugin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.hits.Add(1)
	_, _ = io.Copy(io.Discard, r.Body) // the ping's []; then the server sees a client that goes
	if strings.HasSuffix(r.URL.Path, "/create") || strings.HasSuffix(r.URL.Path, "/delete") {
		http.NotFound(w, r) // a plugin of the ping alone: no pod API
		return
	}
	f.mu.Lock()
	status, body, delay := f.status, f.body, f.delay
	if f.failNext > 0 {
		f.failNext--
		status, body, delay = http.StatusInternalServerError, []byte("down for a moment"), 0
	}
	f.mu.Unlock()
	select {
	case <-time.After(delay):
	case <-r.Context().Done():
		return
	}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// startProvider runs a provider for a node of this name against a fake
// plugin that first answers "ok", until the test ends; then it deletes
// what the provider left (deleteNode). statusReport is how often the
// status of a steady node is written. Each change edits the
// configuration first. The provider runs as a ServiceAccount of its own,
// bound to exactly the rights internal/rights gives its configuration
// (grant). It logs to the test's output.
func startProvider(t *testing.T, name string, statusReport time.Duration, change ...func(*vnode.Config)) (*vnode.Node, *fakePlugin) {
	t.Helper()
	return startProviderLogging(t, name, statusReport, slog.NewTextHandler(t.Output(), nil), change...)
}

// startProviderLogging is startProvider with the provider's log going to
// h.
func startProviderLogging(t *testing.T, name string, statusReport time.Duration, h slog.Handler, change ...func(*vnode.Config)) (*vnode.Node, *fakePlugin) {
	t.Helper()
	plugin := &fakePlugin{}
	plugin.reply(http.StatusOK, "ok", 0)
	server := httptest.NewServer(plugin)
	plugin.server = server
	cfg := vnode.Config{
		Static: vnode.StaticNode(name), StaticKeys: []string{vnode.StaticTaintKey}, PluginURL: server.URL + "/status",
		Interval: 50 * time.Millisecond, Timeout: 500 * time.Millisecond, StatusReport: statusReport,
	}
	for _, c := range change {
		c(&cfg)
	}
	id := grant(t, name, accessFor("", "", []vnode.Config{cfg}, nil))
	p := vnode.New(cfg, id.client, slog.New(h))
	runProvider(t, p, func() {
		plugin.closeServer()
		deleteNode(t, name)
	})
	eventually(t, "the node is registered and the provider pings", func(ctx context.Context) (bool, string) {
		_, err := client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		return err == nil && p.Count.Pings.Load() > 0, "no node yet"
	})
	return p, plugin
}

// runProvider runs p until the test ends, and then calls after, if not
// nil, once p has returned.
func runProvider(t *testing.T, p *vnode.Node, after func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- supervise.One(p).Run(ctx) }() // the node, and its ping loop
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("provider: %v", err)
		}
		if after != nil {
			after()
		}
	})
}

// deleteNode deletes what a provider of the node leaves in the cluster:
// the node, its Lease in kube-node-lease, and the events on it. The test
// environment runs no garbage collector, so a Lease left behind would
// still name, as its owner, a node that is gone, and the next run of the
// test (go test -count=N) would find it.
func deleteNode(tb testing.TB, name string) {
	tb.Helper()
	ctx := context.Background()
	for what, err := range map[string]error{
		"node":  client.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{}),
		"Lease": client.CoordinationV1().Leases(corev1.NamespaceNodeLease).Delete(ctx, name, metav1.DeleteOptions{}),
	} {
		if err != nil && !apierrors.IsNotFound(err) {
			tb.Errorf("deleting the %s of %s: %v", what, name, err)
		}
	}
	if err := deleteNodeEvents(ctx, name); err != nil {
		tb.Errorf("deleting the events of %s: %v", name, err)
	}
}

// settled waits until the node has settled after a change: the node
// lifecycle controller has lifted its not-ready taint, and the status the
// provider last sent is stored. Until then, a write on its way may still
// change the node.
func settled(t *testing.T, p *vnode.Node, name string) {
	t.Helper()
	schedulable(t, name)
	eventually(t, "the status last sent is stored", func(ctx context.Context) (bool, string) {
		sent := p.LastSent()
		if sent == nil {
			return false, "nothing sent yet"
		}
		return sameStatus(sent, stored(ctx, t, name))
	})
}

// sameStatus reports whether the node stored has the status of want: the
// same allocatable and capacity, and the same conditions (but for their
// heartbeat times, which a status report moves).
func sameStatus(want, stored *corev1.Node) (bool, string) {
	for _, list := range []corev1.ResourceList{want.Status.Capacity, want.Status.Allocatable} {
		for name, q := range list {
			if ok, why := hasResources(stored, map[string]string{string(name): q.String()}); !ok {
				return false, why
			}
		}
	}
	for _, c := range want.Status.Conditions {
		got := vnode.ConditionNamed(stored, c.Type)
		if got == nil || got.Status != c.Status || got.Reason != c.Reason || got.Message != c.Message || !got.LastTransitionTime.Equal(&c.LastTransitionTime) {
			return false, fmt.Sprintf("%s: stored %+v, handed on %+v", c.Type, got, c)
		}
	}
	return true, ""
}

// stored reads the node from the API server.
func stored(ctx context.Context, t *testing.T, name string) *corev1.Node {
	t.Helper()
	node, err := client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return node
}

// hasResources reports whether capacity and allocatable both hold want.
func hasResources(node *corev1.Node, want map[string]string) (bool, string) {
	for name, v := range want {
		q := resource.MustParse(v)
		for _, list := range []corev1.ResourceList{node.Status.Capacity, node.Status.Allocatable} {
			got, ok := list[corev1.ResourceName(name)]
			if !ok || got.Cmp(q) != 0 {
				return false, "capacity " + format(node.Status.Capacity) + ", allocatable " + format(node.Status.Allocatable)
			}
		}
	}
	return true, ""
}

func format(list corev1.ResourceList) string {
	var parts []string
	for name, q := range list {
		parts = append(parts, string(name)+"="+q.String())
	}
	return strings.Join(parts, " ")
}

// taintSet is a node's taints as key=value:Effect strings, but for those
// of Kubernetes controllers, which come and go with the node lifecycle
// controller (allTaints has them too).
func taintSet(node *corev1.Node) map[string]bool {
	set := map[string]bool{}
	for _, t := range node.Spec.Taints {
		if !strings.HasPrefix(t.Key, "node.kubernetes.io/") {
			set[t.ToString()] = true
		}
	}
	return set
}

var (
	protectedTaint = nodeapply.DefaultProtectedKey + "=true:NoSchedule"
	staticTaint    = vnode.StaticTaintKey + "=remote:NoSchedule"
)

func TestRegistration(t *testing.T) {
	needsControlPlane(t)
	startProvider(t, "vk-registration", time.Hour)
	node := stored(t.Context(), t, "vk-registration")
	if ok, why := hasResources(node, map[string]string{"cpu": "100", "memory": "128Gi", "pods": "100"}); !ok {
		t.Errorf("static resources: %s", why)
	}
	if node.Labels["type"] != "virtual-kubelet" || node.Labels["kubernetes.io/role"] != "agent" {
		t.Errorf("labels = %v", node.Labels)
	}
	if taints := taintSet(node); !taints[protectedTaint] || !taints[staticTaint] || len(taints) != 2 {
		t.Errorf("taints = %v, want the protected and the static one", taints)
	}
	// The API server's admission adds node.kubernetes.io/not-ready at
	// registration; the node lifecycle controller lifts it once the first
	// ping made the node Ready.
	schedulable(t, "vk-registration")
}

func TestResources(t *testing.T) {
	needsControlPlane(t)
	const name = "vk-resources"
	_, plugin := startProvider(t, name, time.Hour)
	plugin.reply(http.StatusOK, `{"status":"ok","resources":{"cpu":"64","memory":"250000Mi","pods":"500","accelerators":[
		{"resourceType":"nvidia.com/gpu","available":"8"},{"resourceType":"xilinx.com/fpga","available":"2"}]}}`, 0)
	all := map[string]string{"cpu": "64", "memory": "250000Mi", "pods": "500", "nvidia.com/gpu": "8", "xilinx.com/fpga": "2"}
	eventually(t, "the reported resources are stored", func(ctx context.Context) (bool, string) {
		return hasResources(stored(ctx, t, name), all)
	})

	plugin.reply(http.StatusOK, `{"resources":{"cpu":"32"}}`, 0)
	all["cpu"] = "32"
	eventually(t, "a partial reply changes only cpu", func(ctx context.Context) (bool, string) {
		return hasResources(stored(ctx, t, name), all)
	})

	plugin.reply(http.StatusOK, `{"resources":{"accelerators":[{"resourceType":"nvidia.com/gpu","available":"0"}]}}`, 0)
	all["nvidia.com/gpu"] = "0"
	eventually(t, "a GPU count of 0 is stored as 0", func(ctx context.Context) (bool, string) {
		return hasResources(stored(ctx, t, name), all)
	})
}

func TestTaints(t *testing.T) {
	needsControlPlane(t)
	const name = "vk-taints"
	p, plugin := startProvider(t, name, time.Hour)

	plugin.reply(http.StatusOK, `{"taints":[{"key":"vendor.example.com/maintenance","value":"true","effect":"NoSchedule"}]}`, 0)
	eventually(t, "the plugin's taint is in spec.taints", func(ctx context.Context) (bool, string) {
		taints := taintSet(stored(ctx, t, name))
		return taints[pluginTaint] && taints[protectedTaint] && taints[staticTaint], "taints " + strings.Join(keys(taints), ", ")
	})

	err := retry.RetryOnConflict(retry.DefaultRetry, func() error { // kubectl taint, by an administrator
		node := stored(t.Context(), t, name)
		node.Spec.Taints = append(node.Spec.Taints, corev1.Taint{Key: "admin.example.org/hold", Value: "yes", Effect: corev1.TaintEffectNoExecute})
		_, err := client.CoreV1().Nodes().Update(t.Context(), node, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}

	plugin.reply(http.StatusOK, `{"taints":[]}`, 0)
	want := map[string]bool{protectedTaint: true, staticTaint: true, adminTaint: true}
	eventually(t, "taints: [] removes only the plugin's taint", func(ctx context.Context) (bool, string) {
		taints := taintSet(stored(ctx, t, name))
		return equalSets(taints, want), "taints " + strings.Join(keys(taints), ", ")
	})
	pings := p.Count.Pings.Load()
	eventually(t, "five more pings", func(context.Context) (bool, string) { return p.Count.Pings.Load() >= pings+5, "pings" })
	node := stored(t.Context(), t, name)
	if taints := taintSet(node); !equalSets(taints, want) {
		t.Errorf("five pings later, taints = %v, want %v", keys(taints), keys(want))
	}
}

func keys(set map[string]bool) []string {
	var out []string
	for k := range set {
		out = append(out, k)
	}
	return out
}

func equalSets(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}

func TestBadReplies(t *testing.T) {
	needsControlPlane(t)
	const name = "vk-bad-replies"
	p, plugin := startProvider(t, name, time.Hour)
	plugin.reply(http.StatusOK, goodReply, 0)
	last := maps.Clone(goodResources)
	eventually(t, "the good reply is stored", func(ctx context.Context) (bool, string) {
		node := stored(ctx, t, name)
		ok, why := hasResources(node, last)
		return ok && taintSet(node)[pluginTaint], why
	})
	before := stored(t.Context(), t, name)

	bad := []struct {
		name   string
		status int
		body   string
		delay  time.Duration
	}{
		{"garbage", http.StatusOK, "\x00\x01 not a reply {{{", 0},
		{"broken JSON object", http.StatusOK, `{"resources":{"cpu":"8"`, 0},
		{"negative cpu", http.StatusOK, `{"resources":{"cpu":"-8"}}`, 0},
		{"fractional GPUs", http.StatusOK, `{"resources":{"accelerators":[{"resourceType":"nvidia.com/gpu","available":"1.5"}]}}`, 0},
		{"a total of zero memory", http.StatusOK, `{"resources":{"memory":"0","basis":"total"}}`, 0}, // among free figures, a full backend: TestFullBackend
		{"duplicate taints", http.StatusOK, `{"taints":[{"key":"vendor.example.com/maintenance","value":"true","effect":"NoSchedule"},{"key":"vendor.example.com/maintenance","value":"true","effect":"NoSchedule"}]}`, 0},
		{"invalid keys", http.StatusOK, `{"taints":[{"key":"vendor.example.com/maintenance","value":"true","effect":"NoSchedule"},{"key":"not a key!","effect":"NoSchedule"},{"key":"node.kubernetes.io/unschedulable","effect":"NoSchedule"},{"key":"` + vnode.StaticTaintKey + `","effect":"NoExecute"}]}`, 0},
		{"bad value of the plugin's taint", http.StatusOK, `{"taints":[{"key":"vendor.example.com/maintenance","value":"not a value","effect":"NoSchedule"}]}`, 0},
		{"10 MiB body", http.StatusOK, `{"status":"` + strings.Repeat("x", 10<<20) + `","resources":{"cpu":"1"}}`, 0},
		{"HTTP 500", http.StatusInternalServerError, `{"resources":{"cpu":"1"}}`, 0},
		{"hangs past the timeout", http.StatusOK, `{"resources":{"cpu":"1"}}`, 2 * time.Second},
	}
	for _, b := range bad {
		plugin.reply(b.status, b.body, b.delay)
		pings := p.Count.Pings.Load()
		eventually(t, b.name+": three more pings", func(context.Context) (bool, string) {
			return p.Count.Pings.Load() >= pings+3, "pings"
		})
		node := stored(t.Context(), t, name)
		if ok, why := hasResources(node, last); !ok {
			t.Errorf("%s: the last good values are gone: %s", b.name, why)
		}
		if !equalSets(taintSet(node), taintSet(before)) {
			t.Errorf("%s: taints %v, want %v", b.name, keys(taintSet(node)), keys(taintSet(before)))
		}
	}
	noWriteErrors(t, p)
	plugin.reply(http.StatusOK, `{"resources":{"cpu":"48"}}`, 0)
	last["cpu"] = "48"
	eventually(t, "the provider still works after the bad replies", func(ctx context.Context) (bool, string) {
		return hasResources(stored(ctx, t, name), last)
	})
}

// TestSteadyState: identical replies make no write. The status report
// runs once an hour here, so once the node has settled (the node
// lifecycle controller's taint lifted, the last status handed on
// stored), any change of the node's resourceVersion would be a write of
// the provider's; the provider's own write counter is checked too.
func TestSteadyState(t *testing.T) {
	needsControlPlane(t)
	const name = "vk-steady"
	p, plugin := startProvider(t, name, time.Hour)
	plugin.reply(http.StatusOK, `{"status":"ok","resources":{"cpu":"64","memory":"250000Mi"},
		"taints":[{"key":"vendor.example.com/maintenance","value":"true","effect":"NoSchedule"}]}`, 0)
	eventually(t, "the reply is stored", func(ctx context.Context) (bool, string) {
		node := stored(ctx, t, name)
		ok, why := hasResources(node, map[string]string{"cpu": "64", "memory": "250000Mi"})
		return ok && len(taintSet(node)) == 3, why
	})
	settled(t, p, name)
	node := stored(t.Context(), t, name)
	for _, c := range []corev1.NodeConditionType{corev1.NodeReady, nodeapply.DefaultConnectivityCondition} {
		if ok, why := conditionIs(node, c, corev1.ConditionTrue); !ok {
			t.Fatalf("conditions are not in play: %s", why)
		}
	}
	rv, writes, pings := node.ResourceVersion, p.Count.Writes.Load(), p.Count.Pings.Load()
	eventually(t, "50 more identical replies", func(context.Context) (bool, string) {
		return p.Count.Pings.Load() >= pings+50, "pings"
	})
	if got := p.Count.Writes.Load() - writes; got != 0 {
		t.Errorf("the provider wrote %d times during 50 identical replies", got)
	}
	if got := stored(t.Context(), t, name).ResourceVersion; got != rv {
		t.Errorf("resourceVersion went from %s to %s during 50 identical replies", rv, got)
	}
	t.Logf("%d identical replies, %d writes, resourceVersion %s unchanged", p.Count.Pings.Load()-pings, p.Count.Writes.Load()-writes, rv)
}
