package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/vnode"
	"github.com/pingnode/pingnode/nodeapply"
)

// nodeWrites are the writes of nodes among a fake clientset's actions:
// creates, updates and patches, of the node or of its status.
func nodeWrites(c *fake.Clientset) []string {
	var writes []string
	for _, a := range c.Actions() {
		if a.GetResource().Resource != "nodes" {
			continue
		}
		switch a.GetVerb() {
		case "create", "update", "patch":
			w := a.GetVerb()
			if s := a.GetSubresource(); s != "" {
				w += " " + s
			}
			if p, ok := a.(k8stesting.PatchAction); ok {
				w += " " + string(p.GetPatch())
			}
			writes = append(writes, w)
		}
	}
	return writes
}

// fakeNode is the node as the fake clientset holds it.
func fakeNode(ctx context.Context, t *testing.T, c *fake.Clientset, name string) *corev1.Node {
	t.Helper()
	node, err := c.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return node
}

// startFakeProvider runs a provider of the node against client, a fake
// clientset (no API server; its reactors are set before, as they cannot
// be while it is in use), and a fake plugin that answers goodReply, until
// the test ends, with the configuration of the other tests' providers
// (testConfig) changed by change. It returns once the node is registered
// and the ping loop is parked before its first ping: step lets pings
// through, one at a time (stepPings).
func startFakeProvider(t *testing.T, name string, client *fake.Clientset, change ...func(*vnode.Config)) (*vnode.Node, *fakePlugin, func(n int)) {
	t.Helper()
	plugin := &fakePlugin{}
	plugin.reply(http.StatusOK, goodReply, 0)
	server := httptest.NewServer(plugin)
	t.Cleanup(server.Close)
	cfg := testConfig(name, server.URL+"/status")
	for _, c := range change {
		c(&cfg)
	}
	p := vnode.New(cfg, client, slog.New(slog.NewTextHandler(t.Output(), nil)))
	runProvider(t, p, nil)
	return p, plugin, stepPings(t, p)
}

// TestPingStepFakeClient: the provider's ping step, end to end, against a
// fake clientset (no API server): NewProvider and Run register the node,
// and the pings, one at a time (stepPings), apply the plugin's replies to
// it. A plugin (httptest) that answers with resources and a taint: the
// node gets them (capacity and allocatable, the taint in its spec) and the
// ownership annotation that claims the taint; a second identical reply
// writes nothing; a failed ping (with NoGrace) sets the connectivity
// condition and Ready False and keeps the resources and the taint; an
// answer again sets them True. The fake keeps no resourceVersion, so the
// preconditions and the cache's lag are the end-to-end tests' (internal/vnode's ping.go).
func TestPingStepFakeClient(t *testing.T) {
	const name = "vk-unit-ping"
	// NoGrace: Ready turns False at the first failed ping.
	client := fake.NewClientset()
	p, plugin, step := startFakeProvider(t, name, client, func(c *vnode.Config) { c.NoGrace = true })
	ctx := t.Context()

	registered := fakeNode(ctx, t, client, name)
	if ok, why := hasResources(registered, map[string]string{"cpu": "100", "memory": "128Gi", "pods": "100"}); !ok {
		t.Errorf("registered with the static resources: %s", why)
	}

	step(1)
	within(t, 10*time.Second, "the good reply on the node", func(ctx context.Context) (bool, string) {
		node := fakeNode(ctx, t, client, name)
		if ok, why := hasResources(node, goodResources); !ok {
			return false, why
		}
		if !taintSet(node)[pluginTaint] {
			return false, fmt.Sprintf("taints %v, want %s among them", keys(taintSet(node)), pluginTaint)
		}
		if got, want := node.Annotations[nodeapply.DefaultOwnershipAnnotation], "vendor.example.com/maintenance:NoSchedule"; got != want {
			return false, fmt.Sprintf("ownership annotation %q, want %q", got, want)
		}
		return conditionIs(node, nodeapply.DefaultConnectivityCondition, corev1.ConditionTrue)
	})
	node := fakeNode(ctx, t, client, name)
	for _, kept := range []string{protectedTaint, staticTaint} {
		if !taintSet(node)[kept] {
			t.Errorf("taints %v, want the static %s kept", keys(taintSet(node)), kept)
		}
	}
	if ok, why := conditionIs(node, corev1.NodeReady, corev1.ConditionTrue); !ok {
		t.Errorf("after a good reply: %s", why)
	}

	// The same reply again: nothing to write, neither by the provider nor
	// by the node controller it hands the status to.
	writes, handed := nodeWrites(client), p.Count.Writes.Load()
	step(2)
	time.Sleep(100 * time.Millisecond) // a hand-off on its way would be written by now
	if n := p.Count.Writes.Load() - handed; n != 0 {
		t.Errorf("two identical pings made %d writes, want none", n)
	}
	if more := nodeWrites(client)[len(writes):]; len(more) != 0 {
		t.Errorf("two identical pings wrote the node %d times, want none:\n%s", len(more), strings.Join(more, "\n"))
	}

	// The plugin fails: the condition says so; what it reported stays.
	plugin.reply(http.StatusServiceUnavailable, "busy", 0)
	step(1)
	if n := p.Count.Failures.Load(); n != 1 {
		t.Errorf("%d failed pings counted, want 1", n)
	}
	within(t, 10*time.Second, "the failure on the node", func(ctx context.Context) (bool, string) {
		node := fakeNode(ctx, t, client, name)
		if ok, why := conditionIs(node, corev1.NodeReady, corev1.ConditionFalse); !ok {
			return false, why
		}
		return conditionIs(node, nodeapply.DefaultConnectivityCondition, corev1.ConditionFalse)
	})
	node = fakeNode(ctx, t, client, name)
	if ok, why := hasResources(node, goodResources); !ok {
		t.Errorf("during the failure: %s, want the last reply's resources kept", why)
	}
	if !taintSet(node)[pluginTaint] {
		t.Errorf("during the failure: taints %v, want the plugin's %s kept", keys(taintSet(node)), pluginTaint)
	}

	// It answers again.
	plugin.reply(http.StatusOK, goodReply, 0)
	step(1)
	within(t, 10*time.Second, "the answer on the node", func(ctx context.Context) (bool, string) {
		node := fakeNode(ctx, t, client, name)
		if ok, why := conditionIs(node, corev1.NodeReady, corev1.ConditionTrue); !ok {
			return false, why
		}
		return conditionIs(node, nodeapply.DefaultConnectivityCondition, corev1.ConditionTrue)
	})
}

// TestDeliveryFakeClient: the object patch (the taints and their ownership
// annotation), as the provider sends it, against a fake clientset whose
// reactor answers the patches of the node (not of its status) as the test
// says. A conflict is read again and patched again, at the same ping,
// counted as a conflict and not as a write error. A patch refused (a
// taint an admission policy refuses) is counted as a write error at each
// ping that sends it again; the status goes on all the same (the new cpu
// figure reaches the node), and the ownership annotation never claims the
// refused taint. Once the patch is taken, the taint is delivered.
func TestDeliveryFakeClient(t *testing.T) {
	const name = "vk-unit-delivery"
	const (
		pass = iota
		conflictOnce
		refuse
	)
	var mode atomic.Int32
	var refused atomic.Int32
	client := fake.NewClientset()
	client.PrependReactor("patch", "nodes", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "" {
			return false, nil, nil // the node controller's status patch
		}
		switch mode.Load() {
		case conflictOnce:
			mode.Store(pass)
			return true, nil, apierrors.NewConflict(schema.GroupResource{Resource: "nodes"}, name, errors.New("the object has been modified"))
		case refuse:
			refused.Add(1)
			return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "nodes"}, name, errors.New("the taint is refused"))
		}
		return false, nil, nil
	})
	p, plugin, step := startFakeProvider(t, name, client)
	ctx := t.Context()
	gets := func() int {
		n := 0
		for _, a := range client.Actions() {
			if a.GetVerb() == "get" && a.GetResource().Resource == "nodes" {
				n++
			}
		}
		return n
	}
	owned := func(node *corev1.Node) string { return node.Annotations[nodeapply.DefaultOwnershipAnnotation] }

	step(1)
	within(t, 10*time.Second, "the good reply on the node", func(ctx context.Context) (bool, string) {
		node := fakeNode(ctx, t, client, name)
		return taintSet(node)[pluginTaint], fmt.Sprintf("taints %v", keys(taintSet(node)))
	})

	// A conflict: read again, patched again.
	const secondKey, secondTaint = "second.example.com/drain", "second.example.com/drain=yes:NoSchedule"
	mode.Store(conflictOnce)
	before := gets()
	plugin.reply(http.StatusOK, strings.Replace(goodReply, `"taints":[`, `"taints":[{"key":"`+secondKey+`","value":"yes","effect":"NoSchedule"},`, 1), 0)
	step(1)
	if n := p.Count.Conflicts.Load(); n != 1 {
		t.Errorf("%d conflicts counted, want 1", n)
	}
	if n := gets() - before; n < 1 {
		t.Errorf("no read of the node after the conflict, want the node read again")
	}
	if n := p.Count.WriteErrors.Load(); n != 0 {
		t.Errorf("a conflict retried counted %d write errors, want none", n)
	}
	node := fakeNode(ctx, t, client, name)
	if !taintSet(node)[secondTaint] || !strings.Contains(owned(node), secondKey+":NoSchedule") {
		t.Errorf("after the conflict, at the same ping: taints %v, ownership %q, want %s delivered and claimed", keys(taintSet(node)), owned(node), secondTaint)
	}

	// Refused: counted at each ping; the status goes on.
	const refusedKey, refusedTaint = "refused.example.com/hold", "refused.example.com/hold=x:NoSchedule"
	mode.Store(refuse)
	refusedReply := strings.Replace(goodReply, `"cpu":"64"`, `"cpu":"48"`, 1)
	refusedReply = strings.Replace(refusedReply, `"taints":[`, `"taints":[{"key":"`+refusedKey+`","value":"x","effect":"NoSchedule"},`, 1)
	plugin.reply(http.StatusOK, refusedReply, 0)
	step(3)
	if n := refused.Load(); n != 3 {
		t.Errorf("%d object patches refused in three pings, want one at each", n)
	}
	if n := p.Count.WriteErrors.Load(); n != 3 {
		t.Errorf("%d write errors counted in three refused pings, want 3", n)
	}
	within(t, 10*time.Second, "the new cpu figure, though the taints are refused", func(ctx context.Context) (bool, string) {
		return hasResources(fakeNode(ctx, t, client, name), map[string]string{"cpu": "48", "memory": "64Gi", "nvidia.com/gpu": "4"})
	})
	node = fakeNode(ctx, t, client, name)
	if taintSet(node)[refusedTaint] || strings.Contains(owned(node), refusedKey) {
		t.Errorf("taints %v, ownership %q: want the refused taint neither on the node nor claimed", keys(taintSet(node)), owned(node))
	}
	if !taintSet(node)[pluginTaint] || !taintSet(node)[secondTaint] {
		t.Errorf("taints %v: want the plugin's %s still, and %s (gone from the reply) still too, since the patch that removes it is refused", keys(taintSet(node)), pluginTaint, secondTaint)
	}

	// Allowed again: the next ping delivers it.
	mode.Store(pass)
	step(1)
	node = fakeNode(ctx, t, client, name)
	if !taintSet(node)[refusedTaint] || !strings.Contains(owned(node), refusedKey+":NoSchedule") || taintSet(node)[secondTaint] {
		t.Errorf("once allowed: taints %v, ownership %q, want %s delivered and claimed, and %s gone", keys(taintSet(node)), owned(node), refusedTaint, secondTaint)
	}
	if n := p.Count.WriteErrors.Load(); n != 3 {
		t.Errorf("%d write errors counted, want still 3", n)
	}
}
