package main

import (
	"context"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/vnode"
)

// TestRightsFence: with the provider's token, everything of another node
// is refused: reading or writing it, its taints, its status, its Lease;
// so are reading Secrets and ConfigMaps and deleting a node, its own
// included. What RBAC cannot name, it allows: the provider may create a
// node, and a Lease, of another name, and delete any pod. The admission
// policy of Access.Policy (deploy/node-policy.yaml) refuses them, events
// on another node, and the delete of a pod of another node or of a pod
// not being deleted, and allows the provider's own: the delete that
// finishes the deletion of a pod of its node.
func TestRightsFence(t *testing.T) {
	needsControlPlane(t)
	const own, own2, other, foreign = "vk-fence", "vk-fence-2", "vk-fence-other", "vk-fence-foreign"
	ctx := t.Context()
	createNode(t, readyNode(other)) // another node, as its kubelet keeps it
	leases := client.CoordinationV1().Leases(corev1.NamespaceNodeLease)
	holder, seconds := other, int32(40)
	if _, err := leases.Create(ctx, &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: other},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &seconds, RenewTime: &metav1.MicroTime{Time: time.Now()}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deleteNode(t, other) })
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "vk-fence-secret", Namespace: metav1.NamespaceDefault}, StringData: map[string]string{"password": "x"}}
	if _, err := client.CoreV1().Secrets(secret.Namespace).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := client.CoreV1().Secrets(secret.Namespace).Delete(context.Background(), secret.Name, metav1.DeleteOptions{}); err != nil {
			t.Error(err)
		}
	})

	configs := []vnode.Config{testConfig(own, "http://127.0.0.1:1/status"), testConfig(own2, "http://127.0.0.1:1/status")}
	configs[0].CountHeld = true // every pod, to count what its own hold
	id := grant(t, own, accessFor("", "", configs, nil))
	sa := id.client
	t.Cleanup(func() { deleteNode(t, own) })
	if _, err := sa.CoreV1().Nodes().Create(ctx, vnode.StaticNode(own), metav1.CreateOptions{}); err != nil {
		t.Fatalf("the provider registers its node: %v", err)
	}
	taints := []byte(`{"spec":{"taints":[{"key":"vendor.example.com/maintenance","value":"true","effect":"NoSchedule"}]}}`)
	if _, err := sa.CoreV1().Nodes().Patch(ctx, own, types.StrategicMergePatchType, taints, metav1.PatchOptions{}); err != nil {
		t.Fatalf("the provider patches its node's taints: %v", err)
	}

	otherNode := stored(ctx, t, other)
	otherNode.Labels["example.com/by"] = "provider"
	otherLease, err := leases.Get(ctx, other, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		what string
		do   func(context.Context) error
	}{
		{"read another node", func(ctx context.Context) error {
			_, err := sa.CoreV1().Nodes().Get(ctx, other, metav1.GetOptions{})
			return err
		}},
		{"list every node", func(ctx context.Context) error {
			_, err := sa.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
			return err
		}},
		{"watch another node by name", func(ctx context.Context) error {
			_, err := sa.CoreV1().Nodes().List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + other})
			return err
		}},
		{"update another node", func(ctx context.Context) error {
			_, err := sa.CoreV1().Nodes().Update(ctx, otherNode, metav1.UpdateOptions{})
			return err
		}},
		{"patch another node's taints", func(ctx context.Context) error {
			_, err := sa.CoreV1().Nodes().Patch(ctx, other, types.StrategicMergePatchType, taints, metav1.PatchOptions{})
			return err
		}},
		{"patch another node's status", func(ctx context.Context) error {
			_, err := sa.CoreV1().Nodes().Patch(ctx, other, types.StrategicMergePatchType, []byte(`{"status":{"capacity":{"cpu":"1"}}}`), metav1.PatchOptions{}, "status")
			return err
		}},
		{"delete its own node", func(ctx context.Context) error {
			return sa.CoreV1().Nodes().Delete(ctx, own, metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}})
		}},
		{"read another node's Lease", func(ctx context.Context) error {
			_, err := sa.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, other, metav1.GetOptions{})
			return err
		}},
		{"renew another node's Lease", func(ctx context.Context) error {
			_, err := sa.CoordinationV1().Leases(corev1.NamespaceNodeLease).Update(ctx, otherLease, metav1.UpdateOptions{})
			return err
		}},
		{"read a Secret", func(ctx context.Context) error {
			_, err := sa.CoreV1().Secrets(secret.Namespace).Get(ctx, secret.Name, metav1.GetOptions{})
			return err
		}},
		{"list Secrets", func(ctx context.Context) error {
			_, err := sa.CoreV1().Secrets(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
			return err
		}},
		{"list ConfigMaps", func(ctx context.Context) error {
			_, err := sa.CoreV1().ConfigMaps(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
			return err
		}},
	} {
		mustForbid(t, "the provider may "+c.what, c.do(ctx))
	}

	// Pods: one of each node being deleted (no kubelet ends them), and
	// one of its own node that is not.
	const ownPod, otherPod, livePod = "vk-fence-own-deleted", "vk-fence-other-deleted", "vk-fence-own-live"
	for pod, node := range map[string]string{ownPod: own, otherPod: other, livePod: own} {
		createTestPod(t, terminatingPod(pod, node))
	}
	uids := map[string]types.UID{ownPod: deleteGracefully(t, ownPod), otherPod: deleteGracefully(t, otherPod)}
	if live, err := client.CoreV1().Pods(metav1.NamespaceDefault).Get(ctx, livePod, metav1.GetOptions{}); err == nil {
		uids[livePod] = live.UID
	} else {
		t.Fatal(err)
	}
	finish := func(ctx context.Context, pod string) error {
		zero, uid := int64(0), uids[pod]
		return sa.CoreV1().Pods(metav1.NamespaceDefault).Delete(ctx, pod, metav1.DeleteOptions{
			DryRun: []string{metav1.DryRunAll}, GracePeriodSeconds: &zero, Preconditions: &metav1.Preconditions{UID: &uid},
		})
	}
	for _, pod := range []string{otherPod, livePod} {
		if err := finish(ctx, pod); err != nil {
			t.Errorf("RBAC alone: the provider deletes the pod %s: %v, want it deleted (a dry run)", pod, err)
		}
	}

	// What RBAC cannot name: a node, and a Lease, of another name.
	t.Cleanup(func() { deleteNode(t, foreign) })
	if _, err := sa.CoreV1().Nodes().Create(ctx, vnode.StaticNode(foreign), metav1.CreateOptions{}); err != nil {
		t.Errorf("RBAC alone: the provider creates the node %s: %v, want it created", foreign, err)
	}
	createLease := func(ctx context.Context, name string) error {
		_, err := sa.CoordinationV1().Leases(corev1.NamespaceNodeLease).Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name}},
			metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err
	}
	if err := createLease(ctx, foreign+"-lease"); err != nil {
		t.Errorf("RBAC alone: the provider creates a Lease of another name: %v, want it created", err)
	}

	// The admission policy fences them.
	policy := id.access.Policy()
	installPolicy(ctx, t, policy)
	register := func(ctx context.Context, name string) error {
		_, err := sa.CoreV1().Nodes().Create(ctx, vnode.StaticNode(name), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err
	}
	const policyRefusal = "may create only its own nodes"
	eventually(t, "the policy is in force", func(ctx context.Context) (bool, string) {
		err := register(ctx, foreign+"-2")
		return err != nil && strings.Contains(err.Error(), policyRefusal), errorText(err)
	})
	event := func(node string) error {
		_, err := sa.CoreV1().Events(metav1.NamespaceDefault).Create(ctx, &corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{GenerateName: node + "."},
			InvolvedObject: corev1.ObjectReference{Kind: "Node", Name: node, UID: types.UID(node)},
			Reason:         "Test", Message: "a test", Type: corev1.EventTypeNormal,
		}, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err
	}
	for _, c := range []struct {
		what    string
		err     error
		refusal string // "": allowed
	}{
		{"create a node of another name", register(ctx, foreign+"-3"), policyRefusal},
		{"create its own node", register(ctx, own2), ""},
		{"create a Lease of another name", createLease(ctx, foreign+"-lease"), "may create only its nodes' Leases"},
		{"create its node's Lease", createLease(ctx, own2), ""},
		{"record an event on another node", event(other), "may record events only on its own nodes"},
		{"record an event on its node", event(own), ""},
		{"delete a pod of another node", finish(ctx, otherPod), "may delete only pods bound to its own nodes that are being deleted"},
		{"delete a pod of its node that is not being deleted", finish(ctx, livePod), "may delete only pods bound to its own nodes that are being deleted"},
		{"finish the deletion of a pod of its node", finish(ctx, ownPod), ""},
	} {
		switch {
		case c.refusal == "" && c.err != nil:
			t.Errorf("with the policy, the provider may not %s: %v", c.what, c.err)
		case c.refusal != "":
			if msg := mustForbid(t, "with the policy, the provider may "+c.what, c.err); !strings.Contains(msg, c.refusal) {
				t.Errorf("%s: refused with %q, want the policy's %q", c.what, msg, c.refusal)
			}
		}
	}
}

// installPolicy creates the objects of an admission policy with the
// administrator's client, after deleting any that a run that was killed
// left, and deletes them when the test ends.
func installPolicy(ctx context.Context, t *testing.T, policy []runtime.Object) {
	t.Helper()
	for _, obj := range policy {
		if err := deleteObject(ctx, obj); err != nil {
			t.Fatal(err)
		}
		if err := createObject(ctx, obj); err != nil {
			t.Fatalf("%s: %v", describeObject(obj), err)
		}
	}
	t.Cleanup(func() {
		for _, obj := range policy {
			if err := deleteObject(context.Background(), obj); err != nil {
				t.Error(err)
			}
		}
	})
}
