package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/pingnode/pingnode/nodeapply"
)

const (
	nodeName = "vn"
	// replies of a plugin: its backend, then drained, then with fewer cpus.
	steady   = `{"status":"ok","resources":{"cpu":"64","memory":"250000Mi","pods":"500"},"taints":[]}`
	drained  = `{"status":"ok","resources":{"cpu":"64","memory":"250000Mi","pods":"500"},"taints":[{"key":"plugin.example.com/draining","value":"true","effect":"NoSchedule"}]}`
	fewerCPU = `{"status":"ok","resources":{"cpu":"32","memory":"250000Mi","pods":"500"},"taints":[]}`
)

// harness is a controller on a fake clientset, pinging a fake plugin
// through the real client, with a clock that the test steps.
type harness struct {
	t      *testing.T
	client *fake.Clientset
	ctrl   *controller

	mu     sync.Mutex
	now    time.Time
	status int    // the plugin's HTTP status
	body   string // and its reply
}

func newHarness(t *testing.T, objects ...runtime.Object) *harness {
	h := &harness{t: t, client: fake.NewClientset(objects...), now: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC), status: http.StatusOK, body: steady}
	plugin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		h.mu.Lock()
		status, body := h.status, h.body
		h.mu.Unlock()
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(plugin.Close)
	log := slog.New(slog.NewTextHandler(t.Output(), nil))
	ping, err := newPlugin(plugin.URL+"/status", 5*time.Second, h.clock)
	if err != nil {
		t.Fatal(err)
	}
	h.ctrl = newController(h.client.CoreV1().Nodes(), nodeName, ping.ping, log)
	return h
}

func (h *harness) clock() time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.now
}

// answer makes the plugin answer status and body from now on.
func (h *harness) answer(status int, body string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.status, h.body = status, body
}

// syncAfter steps the clock by d and syncs once; it returns the writes
// the sync sent.
func (h *harness) syncAfter(d time.Duration) []write {
	h.t.Helper()
	h.mu.Lock()
	h.now = h.now.Add(d)
	h.mu.Unlock()
	h.client.ClearActions()
	if err := h.ctrl.sync(context.Background()); err != nil {
		h.t.Fatalf("sync: %v", err)
	}
	return writes(h.client.Actions())
}

// node is the node as the fake stores it.
func (h *harness) node() *corev1.Node {
	h.t.Helper()
	node, err := h.client.CoreV1().Nodes().Get(context.Background(), nodeName, metav1.GetOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	return node
}

// write is a write the fake received: "create nodes", "patch nodes",
// "patch nodes/status", and a patch's body.
type write struct {
	what  string
	patch map[string]any
}

func writes(actions []k8stesting.Action) []write {
	var out []write
	for _, a := range actions {
		if a.GetVerb() == "get" || a.GetVerb() == "list" || a.GetVerb() == "watch" {
			continue
		}
		w := write{what: a.GetVerb() + " " + a.GetResource().Resource}
		if a.GetSubresource() != "" {
			w.what += "/" + a.GetSubresource()
		}
		if p, ok := a.(k8stesting.PatchAction); ok {
			if err := json.Unmarshal(p.GetPatch(), &w.patch); err != nil {
				panic(err)
			}
		}
		out = append(out, w)
	}
	return out
}

func whats(ws []write) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.what
	}
	return out
}

func condition(node *corev1.Node, t corev1.NodeConditionType) corev1.NodeCondition {
	for _, c := range node.Status.Conditions {
		if c.Type == t {
			return c
		}
	}
	return corev1.NodeCondition{}
}

func taints(node *corev1.Node) []string {
	var out []string
	for _, t := range node.Spec.Taints {
		out = append(out, t.ToString())
	}
	return out
}

const providerTaint = nodeapply.DefaultProtectedKey + "=pingnode:NoSchedule"

// TestSyncRegisters: the first ping registers the node with what it says.
func TestSyncRegisters(t *testing.T) {
	h := newHarness(t)
	if diff := cmp.Diff([]string{"create nodes"}, whats(h.syncAfter(0))); diff != "" {
		t.Errorf("writes (-want +got):\n%s", diff)
	}
	node := h.node()
	if got := node.Status.Capacity[corev1.ResourceCPU]; got.Cmp(resource.MustParse("64")) != 0 {
		t.Errorf("capacity cpu = %s, want 64", got.String())
	}
	if got := condition(node, corev1.NodeReady).Status; got != corev1.ConditionTrue {
		t.Errorf("Ready = %s, want True", got)
	}
	if diff := cmp.Diff([]string{providerTaint}, taints(node)); diff != "" {
		t.Errorf("taints (-want +got):\n%s", diff)
	}
}

// TestSyncWritesAChange: a change of a taint goes at once, as the object
// patch alone; with the figures too, both patches go.
func TestSyncWritesAChange(t *testing.T) {
	h := newHarness(t)
	h.syncAfter(0)
	node := h.node()
	node.ResourceVersion = "7" // as the API server would have it; the fake keeps none
	if err := h.client.Tracker().Update(corev1.SchemeGroupVersion.WithResource("nodes"), node, ""); err != nil {
		t.Fatal(err)
	}
	h.answer(http.StatusOK, drained)
	got := h.syncAfter(5 * time.Second)
	if diff := cmp.Diff([]string{"patch nodes"}, whats(got)); diff != "" {
		t.Fatalf("writes (-want +got):\n%s", diff)
	}
	if rv := got[0].patch["metadata"].(map[string]any)["resourceVersion"]; rv != "7" {
		t.Errorf("object patch with resourceVersion %v, want the one read, 7", rv)
	}
	if diff := cmp.Diff([]string{providerTaint, "plugin.example.com/draining=true:NoSchedule"}, taints(h.node())); diff != "" {
		t.Errorf("taints (-want +got):\n%s", diff)
	}

	h.answer(http.StatusOK, fewerCPU) // the taint goes, and the figures change with it
	if diff := cmp.Diff([]string{"patch nodes", "patch nodes/status"}, whats(h.syncAfter(5*time.Second))); diff != "" {
		t.Errorf("writes (-want +got):\n%s", diff)
	}
	if got := h.node().Status.Allocatable[corev1.ResourceCPU]; got.Cmp(resource.MustParse("32")) != 0 {
		t.Errorf("allocatable cpu = %s, want 32", got.String())
	}
}

// TestSyncSteady: pings that say the same write nothing.
func TestSyncSteady(t *testing.T) {
	h := newHarness(t)
	h.syncAfter(0)
	for i := range 20 {
		if got := h.syncAfter(5 * time.Second); len(got) != 0 {
			t.Fatalf("ping %d of a steady plugin wrote %v", i+2, whats(got))
		}
	}
}

// TestSyncHoldsFigures: a change of figures alone waits 10 s from the
// ping that found it, and goes with a change of another kind at once.
func TestSyncHoldsFigures(t *testing.T) {
	h := newHarness(t)
	h.syncAfter(0)
	h.answer(http.StatusOK, fewerCPU)
	for _, after := range []time.Duration{5 * time.Second, 5 * time.Second, 4 * time.Second} { // 0, 5 s, 9 s after it was found
		if got := h.syncAfter(after); len(got) != 0 {
			t.Fatalf("a change of figures alone written before 10 s: %v", whats(got))
		}
	}
	if diff := cmp.Diff([]string{"patch nodes/status"}, whats(h.syncAfter(time.Second))); diff != "" {
		t.Errorf("10 s after, writes (-want +got):\n%s", diff)
	}

	h.answer(http.StatusOK, steady) // figures back up: held
	if got := h.syncAfter(5 * time.Second); len(got) != 0 {
		t.Fatalf("a change of figures alone written at once: %v", whats(got))
	}
	h.answer(http.StatusOK, drained) // and a taint: both go at once
	if diff := cmp.Diff([]string{"patch nodes", "patch nodes/status"}, whats(h.syncAfter(time.Second))); diff != "" {
		t.Errorf("writes (-want +got):\n%s", diff)
	}
}

// TestSyncFailedPing: a failed ping turns the connectivity condition
// False at once, and Ready False after the grace (nodeapply.DefaultGrace,
// 50 s, from the first failed ping); an answer turns both True again.
func TestSyncFailedPing(t *testing.T) {
	h := newHarness(t)
	h.syncAfter(0)
	h.answer(http.StatusServiceUnavailable, "down for maintenance")
	if diff := cmp.Diff([]string{"patch nodes/status"}, whats(h.syncAfter(5*time.Second))); diff != "" {
		t.Errorf("the first failed ping's writes (-want +got):\n%s", diff)
	}
	node := h.node()
	if c := condition(node, nodeapply.DefaultConnectivityCondition); c.Status != corev1.ConditionFalse || c.Message == "" {
		t.Errorf("connectivity = %+v, want False, with why", c)
	}
	if got := condition(node, corev1.NodeReady).Status; got != corev1.ConditionTrue {
		t.Errorf("Ready = %s during the grace, want True", got)
	}
	for range 9 { // to 45 s after the first failure
		if got := h.syncAfter(5 * time.Second); len(got) != 0 {
			t.Fatalf("a failed ping during the grace wrote %v", whats(got))
		}
	}
	h.syncAfter(5 * time.Second) // 50 s
	if c := condition(h.node(), corev1.NodeReady); c.Status != corev1.ConditionFalse || c.Reason != nodeapply.ReasonPluginUnreachable {
		t.Errorf("Ready = %s (%s) after the grace, want False (%s)", c.Status, c.Reason, nodeapply.ReasonPluginUnreachable)
	}

	h.answer(http.StatusOK, steady)
	h.syncAfter(5 * time.Second)
	node = h.node()
	for _, c := range []corev1.NodeConditionType{corev1.NodeReady, nodeapply.DefaultConnectivityCondition} {
		if got := condition(node, c).Status; got != corev1.ConditionTrue {
			t.Errorf("%s = %s once the plugin answers, want True", c, got)
		}
	}
}

// TestSyncConflict: an object patch refused with 409 Conflict (the node
// changed since it was read) reads the node again, as stored, and
// applies the ping again.
func TestSyncConflict(t *testing.T) {
	h := newHarness(t)
	h.syncAfter(0)
	refused := false
	h.client.PrependReactor("patch", "nodes", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "" || refused {
			return false, nil, nil
		}
		refused = true
		return true, nil, apierrors.NewConflict(schema.GroupResource{Resource: "nodes"}, nodeName, nil)
	})
	h.answer(http.StatusOK, drained)
	h.syncAfter(5 * time.Second)

	var requests []string
	for _, a := range h.client.Actions() {
		switch a := a.(type) {
		case k8stesting.GetActionImpl:
			requests = append(requests, "get rv="+a.GetOptions.ResourceVersion)
		case k8stesting.PatchActionImpl:
			requests = append(requests, "patch")
		}
	}
	want := []string{"get rv=0", "patch", "get rv=", "patch"} // the cache, refused, as stored, sent
	if diff := cmp.Diff(want, requests); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	if !refused {
		t.Fatal("no patch was refused")
	}
	if !slices.Contains(taints(h.node()), "plugin.example.com/draining=true:NoSchedule") {
		t.Errorf("taints = %v, want the plugin's after the retry", taints(h.node()))
	}
}
