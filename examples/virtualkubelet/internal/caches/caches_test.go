package caches

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
)

// TestNodesHeldWithoutManagedFields: every node the provider's client of
// nodes returns, and every node or pod its caches take, is without its
// managed fields; what else it has is kept.
func TestNodesHeldWithoutManagedFields(t *testing.T) {
	managed := []metav1.ManagedFieldsEntry{{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate}}
	stored := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "vk-unit-lean", Labels: map[string]string{"a": "b"}, ManagedFields: managed}}
	nodes := LeanNodes{NodeInterface: fake.NewClientset(stored).CoreV1().Nodes()}
	ctx := t.Context()
	check := func(what string, node *corev1.Node, err error) {
		t.Helper()
		switch {
		case err != nil:
			t.Fatalf("%s: %v", what, err)
		case node.ManagedFields != nil:
			t.Errorf("%s: managed fields %v, want none", what, node.ManagedFields)
		case node.Labels["a"] != "b":
			t.Errorf("%s: labels %v, want the stored ones", what, node.Labels)
		}
	}
	got, err := nodes.Get(ctx, stored.Name, metav1.GetOptions{})
	check("get", got, err)
	got, err = nodes.Patch(ctx, stored.Name, types.StrategicMergePatchType, []byte(`{"metadata":{"labels":{"c":"d"}}}`), metav1.PatchOptions{})
	check("patch", got, err)
	other := stored.DeepCopy()
	other.Name = "vk-unit-lean-2"
	got, err = nodes.Create(ctx, other, metav1.CreateOptions{})
	check("create", got, err)
	if other.ManagedFields == nil {
		t.Error("create: the node handed in lost its managed fields: want only the one returned without")
	}
	got, err = nodes.Update(ctx, other, metav1.UpdateOptions{})
	check("update", got, err)
	got, err = nodes.UpdateStatus(ctx, other, metav1.UpdateOptions{})
	check("update status", got, err)

	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", ManagedFields: managed}}
	for _, obj := range []metav1.Object{stored.DeepCopy(), pod} {
		out, err := stripManagedFields(obj)
		if err != nil || out.(metav1.Object).GetManagedFields() != nil {
			t.Errorf("the cache's transform of %T: managed fields %v (%v), want none", obj, out.(metav1.Object).GetManagedFields(), err)
		}
	}
}
