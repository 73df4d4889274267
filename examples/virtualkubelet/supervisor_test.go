package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/logcount"
	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/metrics"
	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/supervise"
	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/vnode"
	"github.com/pingnode/pingnode/nodeapply"
)

// testClock is the time of the pings of a test's plugin client
// (pingclient.Config.Now), which the test moves on by hand: the part
// grace then runs on the test's word, not on the wall clock.
type testClock struct {
	mu sync.Mutex
	at time.Time
}

func newTestClock() *testClock {
	return &testClock{at: time.Now().UTC().Truncate(time.Second)}
}

func (c *testClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.at
}

// advance moves the clock on by d.
func (c *testClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.at = c.at.Add(d)
}

// partsReply is a reply that lists the parts named, each with cpus cpus
// and 4Gi a cpu.
func partsReply(cpus int, names ...string) string {
	nodes := make([]map[string]any, len(names))
	for i, name := range names {
		nodes[i] = map[string]any{"name": name, "resources": map[string]string{"cpu": fmt.Sprint(cpus), "memory": fmt.Sprintf("%dGi", 4*cpus)}}
	}
	body, err := json.Marshal(map[string]any{"status": "ok", "nodes": nodes})
	if err != nil {
		panic(err)
	}
	return string(body)
}

// partsConfig is the configuration of a provider of the parts of the
// plugin at url, with the template and owner given and a part grace of
// grace, pinging as the other tests' providers do (testConfig).
func partsConfig(url, template, owner string, grace time.Duration) vnode.Config {
	cfg := testConfig("", url)
	cfg.Static, cfg.Parts = nil, &vnode.Parts{Template: template, Owner: owner, Grace: grace}
	return cfg
}

// startFakeSupervisor runs the supervisor of cfg against client, a fake
// clientset, which every part's node shares, until the test ends; its
// plugin is a fake one that answers reply. It returns once the supervisor
// is parked before its first ping: step lets pings through, one at a
// time (parkedSteps).
func startFakeSupervisor(t *testing.T, cfg vnode.Config, client *fake.Clientset, h slog.Handler, reply string) (*supervise.PartsSupervisor, *fakePlugin, func(n int)) {
	t.Helper()
	plugin := &fakePlugin{}
	plugin.reply(http.StatusOK, reply, 0)
	server := httptest.NewServer(plugin)
	t.Cleanup(server.Close)
	cfg.PluginURL = server.URL + "/status"
	s := supervise.NewParts(cfg, client, func() (kubernetes.Interface, error) { return client, nil }, slog.New(h))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("supervisor: %v", err)
		}
	})
	step := parkedSteps(t, func(hook func(context.Context)) {
		s.BeforePing.Set(hook)
	}, func() { go func() { done <- s.Run(ctx) }() })
	return s, plugin, step
}

// ownedNode is the node of part as a provider of parts with this template
// and owner registers it.
func ownedNode(template, owner, part string) *corev1.Node {
	cfg := vnode.Config{Parts: &vnode.Parts{Template: template, Owner: owner}}
	return cfg.ForPart(part).Static
}

// writesOf are the writes of the node name among a fake clientset's
// actions: creates, updates, patches and deletes, by verb.
func writesOf(c *fake.Clientset, name string) []string {
	var out []string
	for _, a := range c.Actions() {
		if a.GetResource().Resource != "nodes" {
			continue
		}
		var got string
		switch a := a.(type) {
		case k8stesting.CreateAction: // an update too: the same methods
			if n, ok := a.GetObject().(*corev1.Node); ok {
				got = n.Name
			}
		case k8stesting.PatchAction:
			got = a.GetName()
		case k8stesting.DeleteAction:
			got = a.GetName()
		default:
			continue
		}
		if got == name {
			out = append(out, a.GetVerb()+" "+a.GetSubresource())
		}
	}
	return out
}

// partGoneSince returns the time the node's part-gone taint was added,
// or nil without the taint.
func partGoneSince(node *corev1.Node) *metav1.Time {
	for _, t := range node.Spec.Taints {
		if t.Key == nodeapply.PartGoneTaintKey && t.Effect == corev1.TaintEffectNoSchedule {
			if t.TimeAdded == nil {
				return &metav1.Time{}
			}
			return t.TimeAdded
		}
	}
	return nil
}

// TestPartsSupervisorFakeClient: the parts supervisor, against a fake
// clientset (no API server), turns a sequence of replies into
// registrations, pings, leaves and deletions, one ping at a time, the
// part grace on a clock of the test's. The node it owns from before is
// adopted (served, not registered again); a node of a part's name that is
// not its own is never written, and said once; a part that leaves is
// tainted part-gone at once, kept through the grace, and deleted at the
// first ping after it; a failed ping registers and deletes nothing and
// turns each node's connectivity False; a reply without parts changes no
// part, said once; a part that comes back after its deletion is
// registered anew; a gone part's node that someone deletes is not.
func TestPartsSupervisorFakeClient(t *testing.T) {
	const template, owner = "vk-unit-{part}", "unit"
	const grace = 2 * time.Second
	name := func(part string) string { return "vk-unit-" + part }
	foreign := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name("foreign"), Labels: map[string]string{"team": "theirs"}}}
	client := fake.NewClientset(ownedNode(template, owner, "old"), foreign)
	clock := newTestClock()
	cfg := partsConfig("", template, owner, grace)
	cfg.Transport.Now = clock.now
	reg, all := metrics.NewRegistry()
	cfg.Metrics = all
	warnings := newWarningLog(t)
	log := logcount.Wrap(warnings, "not served")
	s, plugin, step := startFakeSupervisor(t, cfg, client, log, partsReply(1, "a", "b", "foreign", "old"))
	ctx := t.Context()
	node := func(part string) (*corev1.Node, error) {
		return client.CoreV1().Nodes().Get(ctx, name(part), metav1.GetOptions{})
	}
	connectivity := func(status corev1.ConditionStatus, parts ...string) {
		t.Helper()
		within(t, 10*time.Second, fmt.Sprintf("connectivity %s on %v", status, parts), func(ctx context.Context) (bool, string) {
			for _, part := range parts {
				n, err := node(part)
				if err != nil {
					return false, err.Error()
				}
				if ok, why := conditionIs(n, nodeapply.DefaultConnectivityCondition, status); !ok {
					return false, part + ": " + why
				}
			}
			return true, ""
		})
	}

	// The node owned from before is served at start, before any ping.
	if n := s.Count.Adopted.Load(); n != 1 {
		t.Errorf("%d nodes adopted at start, want the one owned from before", n)
	}
	step(1)
	if n := s.Count.Registered.Load(); n != 2 {
		t.Errorf("%d parts registered, want a and b", n)
	}
	within(t, 10*time.Second, "each listed part's node has its part's cpu", func(context.Context) (bool, string) {
		for _, part := range []string{"a", "b", "old"} {
			n, err := node(part)
			if err != nil {
				return false, err.Error()
			}
			if ok, why := hasResources(n, map[string]string{"cpu": "1", "memory": "4Gi"}); !ok {
				return false, part + ": " + why
			}
			if n.Labels[vnode.PartLabel] != part || n.Labels[vnode.OwnerLabel] != owner {
				return false, fmt.Sprintf("%s: labels %v", part, n.Labels)
			}
		}
		return true, ""
	})
	connectivity(corev1.ConditionTrue, "a", "b", "old")
	checkPartsSeries(t, gather(t, reg), template)
	for _, part := range []string{"a", "b"} {
		if w := writesOf(client, name(part)); !slices.Equal(w, []string{"create "}) {
			t.Errorf("%s: writes %v, want one create, with what the first ping says", part, w)
		}
	}
	if w := writesOf(client, name("old")); slices.Contains(w, "create ") {
		t.Errorf("the node owned from before: writes %v, want it served as stored, not created", w)
	}

	// b leaves: tainted at once, with the ping's time.
	clock.advance(10 * time.Second)
	left := metav1.NewTime(clock.now())
	plugin.reply(http.StatusOK, partsReply(1, "a", "foreign", "old"), 0)
	step(1)
	within(t, 10*time.Second, "b is tainted part-gone, in the supervisor's cache too", func(context.Context) (bool, string) {
		n, err := node("b")
		if err != nil {
			return false, err.Error()
		}
		if since := partGoneSince(n); since == nil || !since.Equal(&left) {
			return false, fmt.Sprintf("part-gone since %v, want %v; taints %v", since, left, n.Spec.Taints)
		}
		cached, err := s.Owned().Node.Get(name("b"))
		return err == nil && partGoneSince(cached) != nil, "not in the cache yet"
	})
	// Within the grace: still there.
	clock.advance(grace / 2)
	step(1)
	if _, err := node("b"); err != nil || s.Count.Deleted.Load() != 0 {
		t.Fatalf("within the grace: b %v, %d deleted, want it kept", err, s.Count.Deleted.Load())
	}
	// The grace over, no pod on it: deleted, at this ping.
	clock.advance(grace / 2)
	step(1)
	if _, err := node("b"); !apierrors.IsNotFound(err) || s.Count.Deleted.Load() != 1 {
		t.Fatalf("after the grace: b %v, %d deleted, want it deleted", err, s.Count.Deleted.Load())
	}
	if _, err := node("a"); err != nil {
		t.Fatalf("a: %v, want it kept", err)
	}

	// A failed ping changes no part.
	plugin.reply(http.StatusServiceUnavailable, "busy", 0)
	clock.advance(time.Second)
	step(1)
	connectivity(corev1.ConditionFalse, "a", "old")
	if s.Count.Registered.Load() != 2 || s.Count.Deleted.Load() != 1 || s.Failures.Load() != 1 {
		t.Errorf("after a failed ping: %d registered, %d deleted, %d failures; want 2, 1, 1", s.Count.Registered.Load(), s.Count.Deleted.Load(), s.Failures.Load())
	}

	// A reply without parts is no news of them: said once, counted at
	// each ping.
	plugin.reply(http.StatusOK, `{"status":"ok","resources":{"cpu":"8"}}`, 0)
	warnings.take()
	before, _ := gather(t, reg).value("pingnode_warnings_total", "node", template, "subject", "part", "action", "ignored")
	clock.advance(time.Second)
	step(2)
	connectivity(corev1.ConditionTrue, "a", "old")
	if n, err := node("a"); err != nil || !hasCPU(n, "1") {
		t.Errorf("a reply without parts changed a: %v %v", err, n.Status.Allocatable)
	}
	if got := warnings.take(); !slices.Equal(got, []string{"nodes"}) {
		t.Errorf("warnings logged over two replies without parts: %v, want one at nodes", got)
	}
	if after, _ := gather(t, reg).value("pingnode_warnings_total", "node", template, "subject", "part", "action", "ignored"); after-before != 2 {
		t.Errorf("pingnode_warnings_total counted %g replies without parts, want 2", after-before)
	}

	// b comes back: a new node.
	plugin.reply(http.StatusOK, partsReply(2, "a", "b", "foreign", "old"), 0)
	clock.advance(time.Second)
	step(1)
	within(t, 10*time.Second, "b registered anew, with its cpu", func(context.Context) (bool, string) {
		n, err := node("b")
		if err != nil {
			return false, err.Error()
		}
		return hasResources(n, map[string]string{"cpu": "2"})
	})
	if n := s.Count.Registered.Load(); n != 3 {
		t.Errorf("%d registrations, want b's second", n)
	}

	// Someone deletes the node of a part gone: it is not registered again.
	plugin.reply(http.StatusOK, partsReply(2, "b", "foreign", "old"), 0)
	clock.advance(time.Second)
	step(1)
	within(t, 10*time.Second, "a is tainted part-gone", func(context.Context) (bool, string) {
		n, err := node("a")
		if err != nil {
			return false, err.Error()
		}
		return partGoneSince(n) != nil, fmt.Sprintf("taints %v", n.Spec.Taints)
	})
	if err := client.CoreV1().Nodes().Delete(ctx, name("a"), metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	within(t, 10*time.Second, "the supervisor's cache no longer shows a", func(context.Context) (bool, string) {
		_, err := s.Owned().Node.Get(name("a"))
		return apierrors.IsNotFound(err), "still there"
	})
	clock.advance(time.Second)
	step(2)
	if _, err := node("a"); !apierrors.IsNotFound(err) {
		t.Errorf("a gone part's node deleted by someone: %v, want it not registered again", err)
	}
	if s.Node("a") != nil {
		t.Error("a gone part's node deleted by someone is still served")
	}

	// The other's node was never written, and said once.
	if w := writesOf(client, name("foreign")); len(w) != 0 {
		t.Errorf("the node that is not the provider's was written: %v", w)
	}
	if n := log.Count(); n != 1 {
		t.Errorf("%d lines say what is not served, want one for the other's node", n)
	}
	if n, _ := node("foreign"); n.Labels[vnode.OwnerLabel] != "" || len(n.Spec.Taints) != 0 {
		t.Errorf("the other's node: labels %v, taints %v", n.Labels, n.Spec.Taints)
	}
}

// hasCPU reports whether the node's allocatable cpu is cpu.
func hasCPU(node *corev1.Node, cpu string) bool {
	ok, _ := hasResources(node, map[string]string{"cpu": cpu})
	return ok
}

// checkPartsSeries checks that the parts' nodes count in the template's
// series, summed, and in no series of their own: the series of a
// provider of parts are as many for 5,000 parts as for one. The status
// writes of the parts' nodes are the template's.
func checkPartsSeries(t *testing.T, s scrape, template string) {
	t.Helper()
	for name, family := range s {
		for _, m := range family.Metric {
			for _, l := range m.Label {
				if l.GetName() == "node" && l.GetValue() != template {
					t.Errorf("%s has a series of node %q: want only the template's, %q", name, l.GetValue(), template)
				}
			}
		}
	}
	status, _ := s.value("pingnode_node_writes_total", "node", template, "kind", metrics.KindStatus)
	registered, _ := s.value("pingnode_node_writes_total", "node", template, "kind", metrics.KindRegister)
	if status+registered < 3 {
		t.Errorf("pingnode_node_writes_total{node=%q}: %g of kind status, %g of kind register; want the three parts' nodes' first status writes at least", template, status, registered)
	}
	if _, ok := s.value("pingnode_node_allocatable", "node", template); ok {
		t.Errorf("pingnode_node_allocatable has the template's series: want none, a part's allocatable is its node's")
	}
}
