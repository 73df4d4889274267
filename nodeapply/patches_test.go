package nodeapply_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/strategicpatch"

	"github.com/pingnode/pingnode/internal/golden"
	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/pingstatus"
)

// TestPatches pins the bytes of both patches for every golden case, and
// applies each with apimachinery's own strategic merge patch to the old
// node: the result has the new node's taints, annotations, capacity and
// allocatable, labels, and the object patch carries the old
// resourceVersion.
func TestPatches(t *testing.T) {
	for _, tc := range goldenCases {
		t.Run(tc.name, func(t *testing.T) {
			old := readNode(t, tc.node)
			patch, _ := pingstatus.Parse(readReply(t, tc.reply), tc.opts.Reply)
			res := nodeapply.Apply(old, nodeapply.Ping{Reply: &patch}, tc.opts)
			taints := res.ObjectPatch()
			status := res.StatusPatch()
			golden.Check(t, filepath.Join("testdata", tc.name+".patches.golden"),
				fmt.Appendf(nil, "object patch: %s\nstatus patch: %s\n", orNone(taints), orNone(status)))

			if len(res.Changes) == 0 && (taints != nil || status != nil) {
				t.Error("a patch to send, though nothing changed")
			}
			got := applyPatch(t, old, taints)
			if diff := cmp.Diff(res.Node.Spec.Taints, got.Spec.Taints); diff != "" {
				t.Errorf("taints after the object patch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(res.Node.Annotations, got.Annotations); diff != "" {
				t.Errorf("annotations after the object patch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(res.Node.Labels, got.Labels); diff != "" {
				t.Errorf("labels after the object patch (-want +got):\n%s", diff)
			}
			if got.ResourceVersion != old.ResourceVersion {
				t.Errorf("resourceVersion %q, want the old %q", got.ResourceVersion, old.ResourceVersion)
			}
			if taints != nil && old.ResourceVersion != "" && !jsonHas(t, taints, "metadata", "resourceVersion") {
				t.Error("the object patch has no resourceVersion precondition")
			}
			got = applyPatch(t, old, status)
			for _, l := range []struct{ want, got corev1.ResourceList }{
				{res.Node.Status.Capacity, got.Status.Capacity}, {res.Node.Status.Allocatable, got.Status.Allocatable},
			} {
				if diff := cmp.Diff(l.want, l.got, equateQuantities); diff != "" {
					t.Errorf("resources after the status patch (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func orNone[T ~string | ~[]byte](b T) string {
	if len(b) == 0 {
		return "none"
	}
	return string(b)
}

// applyPatch applies a strategic merge patch to node with apimachinery.
func applyPatch(t *testing.T, node *corev1.Node, patch []byte) *corev1.Node {
	t.Helper()
	if patch == nil {
		return node.DeepCopy()
	}
	original, err := json.Marshal(node)
	if err != nil {
		t.Fatal(err)
	}
	patched, err := strategicpatch.StrategicMergePatch(original, patch, corev1.Node{})
	if err != nil {
		t.Fatalf("strategic merge patch %s: %v", patch, err)
	}
	var out corev1.Node
	if err := json.Unmarshal(patched, &out); err != nil {
		t.Fatal(err)
	}
	return &out
}

func jsonHas(t *testing.T, b []byte, path ...string) bool {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return false
		}
		if v, ok = m[p]; !ok {
			return false
		}
	}
	return true
}
