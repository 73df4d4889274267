package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/vnode"
)

// TestPartsRestart: a provider of parts, run as an operator runs it (a
// process with its flags and its ServiceAccount's kubeconfig), SIGKILLed
// (nothing of it runs after: no deferred call, no last write) and started
// again, serves its parts' nodes as stored, with nothing lost: the same
// nodes (their UIDs), the pod on one still bound, the part that had left
// still tainted part-gone since the same time, and no node registered
// anew. Then it serves them as before: new figures, the part back.
func TestPartsRestart(t *testing.T) {
	needsControlPlane(t)
	const template, owner = "vk-prestart-{part}", "vk-prestart"
	parts := &vnode.Parts{Template: template, Owner: owner}
	plugin := startPartsPlugin(t, partsReply(4, "cn1", "cn2"))
	args := []string{"-parts", "-node", template, "-parts-owner", owner, "-plugin", plugin.server.URL + "/status",
		"-interval", "200ms", "-part-grace", "1h", "-status-report", "1h"}
	names := []string{parts.NodeName("cn1"), parts.NodeName("cn2")}
	for _, name := range names {
		deleteNode(t, name) // left by a run that was killed
	}
	forgetNodes(t, names...)
	id := grant(t, owner, accessOfArgs(t, args))
	kubeconfig := id.kubeconfig(t, envHost)

	first := runProviderProcess(t, kubeconfig, args...)
	uids := partsReady(t, parts, "4", "cn1", "cn2")
	pod := partPod("prestart-run", owner, nil, "1")
	pod.Spec.NodeName = parts.NodeName("cn1")
	createTestPod(t, pod)
	plugin.reply(http.StatusOK, partsReply(4, "cn1"), 0)
	var since metav1.Time
	eventually(t, "cn2 is tainted part-gone", func(ctx context.Context) (bool, string) {
		node := stored(ctx, t, names[1])
		if s := partGoneSince(node); s != nil && !s.IsZero() {
			since = *s
			return true, ""
		}
		return false, fmt.Sprintf("taints %v", node.Spec.Taints)
	})
	first.kill(t)
	if n := strings.Count(first.tail(1000), `msg="a new part: registering its node"`); n != 2 {
		t.Errorf("the first provider registered %d nodes, want both parts':\n%s", n, first.tail(20))
	}

	second := runProviderProcess(t, kubeconfig, args...)
	eventually(t, "the second provider serves both nodes as stored", func(context.Context) (bool, string) {
		return strings.Count(second.tail(1000), `msg="serving a part's node as stored"`) == 2, second.tail(5)
	})
	hits := plugin.hits.Load()
	eventually(t, "the second provider pings", func(context.Context) (bool, string) {
		return plugin.hits.Load() >= hits+5, "not yet"
	})
	kept := func(ctx context.Context) (bool, string) {
		if ok, why := partsKept(ctx, parts, uids, map[string]string{"prestart-run": names[0]}); !ok {
			return false, why
		}
		if s := partGoneSince(stored(ctx, t, names[1])); s == nil || !s.Equal(&since) {
			return false, fmt.Sprintf("cn2 part-gone since %v, want %v still", s, since)
		}
		return true, ""
	}
	if ok, why := kept(t.Context()); !ok {
		t.Fatalf("after the restart: %s", why)
	}

	plugin.reply(http.StatusOK, partsReply(8, "cn1", "cn2"), 0)
	eventually(t, "the second provider serves the parts: new figures, cn2 back", func(ctx context.Context) (bool, string) {
		for _, name := range names {
			node := stored(ctx, t, name)
			if ok, why := hasResources(node, map[string]string{"cpu": "8"}); !ok {
				return false, name + ": " + why
			}
			if partGoneSince(node) != nil {
				return false, name + " is tainted part-gone"
			}
		}
		return partsKept(ctx, parts, uids, map[string]string{"prestart-run": names[0]})
	})
	if strings.Contains(second.tail(1000), "registering its node") {
		t.Errorf("the second provider registered a node:\n%s", second.tail(20))
	}
}

// TestPartsFence: with the token of a provider of parts, RBAC allows
// writes of every node and of every Lease in kube-node-lease; the
// admission policy -print-node-policy prints for it fences them to its
// own, as they were and as they will be: it may create a node only of
// its template, with its ownership label and the label of the part that
// names it; change and delete only a node with those labels; change a
// label of its own node only in the allowed namespaces, never the
// ownership label or the part's; and create and renew only Leases and
// record events only of names of its template.
func TestPartsFence(t *testing.T) {
	needsControlPlane(t)
	const template, owner = "vk-pfence-{part}", "vk-pfence"
	cfg := partsConfig("http://127.0.0.1:1/status", template, owner, 0)
	ctx := t.Context()
	own, foreign := cfg.Parts.NodeName("own"), cfg.Parts.NodeName("foreign")
	for _, name := range []string{own, foreign} {
		deleteNode(t, name)
	}
	t.Cleanup(func() { deleteNode(t, own) })
	createNode(t, readyNode(foreign))       // an administrator's node of a part's name, without the labels
	const otherLease = "other-pfence-lease" // not a name of the template
	leases := client.CoordinationV1().Leases(corev1.NamespaceNodeLease)
	if _, err := leases.Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: otherLease}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = leases.Delete(context.Background(), otherLease, metav1.DeleteOptions{}) })

	id := grant(t, owner, accessFor("", "", []vnode.Config{cfg}, nil))
	sa := id.client
	dry := []string{metav1.DryRunAll}
	create := func(ctx context.Context, node *corev1.Node) error {
		_, err := sa.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{DryRun: dry})
		return err
	}
	ownNode := cfg.ForPart("own").Static
	if _, err := sa.CoreV1().Nodes().Create(ctx, ownNode, metav1.CreateOptions{}); err != nil {
		t.Fatalf("the provider registers its part's node: %v", err)
	}
	installPolicy(ctx, t, id.access.Policy())
	unlabelled := vnode.StaticNode(cfg.Parts.NodeName("x"))
	const createRefusal = "may create only its own nodes"
	eventually(t, "the policy is in force", func(ctx context.Context) (bool, string) {
		err := create(ctx, unlabelled)
		return err != nil && strings.Contains(err.Error(), createRefusal), errorText(err)
	})

	relabel := func(change func(*corev1.Node)) *corev1.Node {
		n := cfg.ForPart("y").Static
		change(n)
		return n
	}
	patch := func(name, body string, subresources ...string) func(context.Context) error {
		return func(ctx context.Context) error {
			_, err := sa.CoreV1().Nodes().Patch(ctx, name, types.StrategicMergePatchType, []byte(body), metav1.PatchOptions{DryRun: dry}, subresources...)
			return err
		}
	}
	lease := func(name string) func(context.Context) error {
		return func(ctx context.Context) error {
			_, err := sa.CoordinationV1().Leases(corev1.NamespaceNodeLease).Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{DryRun: dry})
			return err
		}
	}
	renew := func(ctx context.Context) error {
		l, err := sa.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, otherLease, metav1.GetOptions{})
		if err != nil {
			return err
		}
		_, err = sa.CoordinationV1().Leases(corev1.NamespaceNodeLease).Update(ctx, l, metav1.UpdateOptions{DryRun: dry})
		return err
	}
	event := func(node string) func(context.Context) error {
		return func(ctx context.Context) error {
			_, err := sa.CoreV1().Events(metav1.NamespaceDefault).Create(ctx, &corev1.Event{
				ObjectMeta:     metav1.ObjectMeta{GenerateName: node + "."},
				InvolvedObject: corev1.ObjectReference{Kind: "Node", Name: node, UID: types.UID(node)},
				Reason:         "Test", Message: "a test", Type: corev1.EventTypeNormal,
			}, metav1.CreateOptions{DryRun: dry})
			return err
		}
	}
	remove := func(name string) func(context.Context) error {
		return func(ctx context.Context) error {
			return sa.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{DryRun: dry})
		}
	}
	nodeOf := func(n *corev1.Node) func(context.Context) error {
		return func(ctx context.Context) error { return create(ctx, n) }
	}
	for _, c := range []struct {
		what    string
		do      func(context.Context) error
		refusal string // "": allowed
	}{
		{"create a part's node", nodeOf(cfg.ForPart("y").Static), ""},
		{"create a node of its template without its labels", nodeOf(unlabelled), createRefusal},
		{"create a node of its template owned by another", nodeOf(relabel(func(n *corev1.Node) { n.Labels[vnode.OwnerLabel] = "other" })), createRefusal},
		{"create a node whose part label names another node", nodeOf(relabel(func(n *corev1.Node) { n.Labels[vnode.PartLabel] = "z" })), createRefusal},
		{"create a node of another name, with its labels", nodeOf(relabel(func(n *corev1.Node) { n.Name = "other-y" })), createRefusal},
		{"set a label of its own node in an allowed namespace", patch(own, `{"metadata":{"labels":{"feature.node.kubernetes.io/x":"y"}}}`), ""},
		{"taint its own node", patch(own, `{"spec":{"taints":[{"key":"vendor.example.com/maintenance","value":"true","effect":"NoSchedule"}]}}`), ""},
		{"patch its own node's status", patch(own, `{"status":{"capacity":{"cpu":"1"}}}`, "status"), ""},
		{"remove the ownership label of its own node", patch(own, `{"metadata":{"labels":{"`+vnode.OwnerLabel+`":null}}}`), "may change its nodes' labels only in"},
		{"change the part label of its own node", patch(own, `{"metadata":{"labels":{"`+vnode.PartLabel+`":"other"}}}`), "may change its nodes' labels only in"},
		{"label its own node out of the allowed namespaces", patch(own, `{"metadata":{"labels":{"example.org/x":"y"}}}`), "may change its nodes' labels only in"},
		{"taint a node of its template that is not its own", patch(foreign, `{"spec":{"taints":[{"key":"vendor.example.com/maintenance","value":"true","effect":"NoSchedule"}]}}`), "may change only its own nodes"},
		{"label a node of its template that is not its own as its own", patch(foreign, `{"metadata":{"labels":{"`+vnode.OwnerLabel+`":"`+owner+`","`+vnode.PartLabel+`":"foreign"}}}`), "may change only its own nodes"},
		{"patch the status of a node that is not its own", patch(foreign, `{"status":{"capacity":{"cpu":"1"}}}`, "status"), "may change only its own nodes"},
		{"delete a node that is not its own", remove(foreign), "may delete only its own nodes"},
		{"delete its own node", remove(own), ""},
		{"create its node's Lease", lease(own), ""},
		{"create a Lease of another name", lease("other-node"), "may create and renew only its nodes' Leases"},
		{"renew a Lease of another name", renew, "may create and renew only its nodes' Leases"},
		{"record an event on its node", event(own), ""},
		{"record an event on another node", event("other-node"), "may record events only on its own nodes"},
	} {
		err := c.do(ctx)
		switch {
		case c.refusal == "" && err != nil:
			t.Errorf("with the policy, the provider may not %s: %v", c.what, err)
		case c.refusal != "":
			if msg := mustForbid(t, "with the policy, the provider may "+c.what, err); !strings.Contains(msg, c.refusal) {
				t.Errorf("%s: refused with %q, want the policy's %q", c.what, msg, c.refusal)
			}
		}
	}
}
