package nodeapply_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/pingnode/pingnode/internal/golden"
	"github.com/pingnode/pingnode/internal/kuberules"
	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/pingstatus"
)

func readNode(t testing.TB, name string) *corev1.Node {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("../testdata/nodes", name))
	if err != nil {
		t.Fatal(err)
	}
	var node corev1.Node
	if err := json.Unmarshal(b, &node); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return &node
}

func readReply(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("../testdata/replies", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// goldenCases are (node before, reply body, options); each has a golden
// file in testdata holding the changes, warnings and node after.
var goldenCases = []struct {
	name  string
	node  string
	reply string
	opts  nodeapply.Options
}{
	{"partial-update", "interlink-node.json", "slurm.json", nodeapply.Options{}},
	{"spec-example", "interlink-node.json", "spec-example.json", nodeapply.Options{}},
	{"accelerator-gone", "node-with-plugin-taints.json", "gpu-gone.json", nodeapply.Options{}},
	{"same-values-other-spelling", "interlink-node.json", "same-values-other-spelling.json", nodeapply.Options{}},
	{"plugin-taints-replaced", "node-with-plugin-taints.json", "plugin-taints.json", nodeapply.Options{}},
	{"taints-empty-keeps-foreign", "node-with-plugin-taints.json", "taints-empty.json", nodeapply.Options{}},
	{"taints-empty-compat", "node-with-plugin-taints.json", "taints-empty.json", nodeapply.Options{ReplaceAllTaints: true}},
	{"taints-null-no-change", "node-with-plugin-taints.json", "taints-null.json", nodeapply.Options{}},
	{"static-protected-by-option", "node-with-plugin-taints.json", "foreign-collision.json", nodeapply.Options{Reply: pingstatus.Options{ProtectedKeys: []string{"site.example.com/static"}}}},
	{"foreign-collision", "node-with-plugin-taints.json", "foreign-collision.json", nodeapply.Options{}},
	{"duplicates", "interlink-node.json", "taint-duplicates.json", nodeapply.Options{}},
	{"bad-value-keeps-taint", "node-with-plugin-taints.json", "plugin-taint-bad-value.json", nodeapply.Options{}},
	{"invalid-node-repaired", "invalid-node.json", "legacy-ok.txt", nodeapply.Options{}},
	{"invalid-node-and-reply", "invalid-node.json", "spec-example.json", nodeapply.Options{}},
	{"bare-node", "bare-node.json", "spec-example.json", nodeapply.Options{}},
	{"bad-reply-fields", "node-with-plugin-taints.json", "wrong-types.json", nodeapply.Options{}},
	{"hand-edited-annotation", "hand-edited-annotation.json", "taints-empty.json", nodeapply.Options{}},
	// Labels: in the default namespaces, in one the provider allows, in
	// none, and beside an administrator's.
	{"labels-fresh-node", "interlink-node.json", "labels.json", nodeapply.Options{}},
	{"labels-gpu-not-allowed", "interlink-node.json", "labels-gpu.json", nodeapply.Options{}},
	{"labels-gpu-allowed", "interlink-node.json", "labels-gpu.json", gpuLabels},
	{"labels-beside-admin", "node-with-admin-labels.json", "labels-gpu.json", gpuLabels},
	{"labels-empty-keeps-admin", "node-with-admin-labels.json", "labels-empty.json", gpuLabels},
	{"labels-null-no-change", "node-with-admin-labels.json", "labels-null.json", gpuLabels},
	{"labels-forbidden", "interlink-node.json", "labels-forbidden.json", gpuLabels},
	{"labels-bad-values-kept", "node-with-admin-labels.json", "labels-bad-values.json", gpuLabels},
	{"labels-protected-by-option", "node-with-admin-labels.json", "labels-gpu.json", nodeapply.Options{Reply: pingstatus.Options{LabelNamespaces: []string{"nvidia.com"}, ProtectedLabels: []string{"nvidia.com/gpu.family"}}}},
	// Scratch space and huge pages, which the scheduler counts like cpu.
	{"scratch-and-hugepages", "interlink-node.json", "scratch-and-hugepages.json", nodeapply.Options{}},
	{"scratch-and-hugepages-mistakes", "interlink-node.json", "scratch-and-hugepages-mistakes.json", nodeapply.Options{}},
	// Replies that plugins send today change nothing.
	{"real-legacy-ok", "node-with-plugin-taints.json", "legacy-ok.txt", nodeapply.Options{}},
	{"real-legacy-zero", "node-with-plugin-taints.json", "legacy-zero.txt", nodeapply.Options{}},
	{"real-legacy-empty", "node-with-plugin-taints.json", "legacy-empty.txt", nodeapply.Options{}},
	{"real-legacy-sinfo", "node-with-plugin-taints.json", "legacy-sinfo.txt", nodeapply.Options{}},
	{"real-docker-null", "node-with-plugin-taints.json", "docker-null.json", nodeapply.Options{}},
	{"real-kubernetes-array", "node-with-plugin-taints.json", "kubernetes-pods.json", nodeapply.Options{}},
	{"real-htcondor", "node-with-plugin-taints.json", "htcondor.json", nodeapply.Options{}},
	// interLink's Slurm plugin when its cluster is full: no new pod, the
	// capacity kept (rule backend-full).
	{"real-slurm-full", "node-with-plugin-taints.json", "slurm-full.json", nodeapply.Options{}},
}

// gpuLabels are the options of a provider that lets its plugin label
// nodes with GPU feature discovery's names.
var gpuLabels = nodeapply.Options{Reply: pingstatus.Options{LabelNamespaces: []string{"nvidia.com"}}}

// nodeParts is what a golden shows of a node: the fields Apply may write.
type nodeParts struct {
	Labels      map[string]string   `json:"labels,omitempty"`
	Annotations map[string]string   `json:"annotations,omitempty"`
	Taints      []corev1.Taint      `json:"taints,omitempty"`
	Capacity    corev1.ResourceList `json:"capacity,omitempty"`
	Allocatable corev1.ResourceList `json:"allocatable,omitempty"`
}

func TestGolden(t *testing.T) {
	for _, tc := range goldenCases {
		t.Run(tc.name, func(t *testing.T) {
			node := readNode(t, tc.node)
			before := node.DeepCopy()
			patch, parseWarnings := pingstatus.Parse(readReply(t, tc.reply), tc.opts.Reply)
			res := nodeapply.Apply(node, nodeapply.Ping{Reply: &patch}, tc.opts)

			var b strings.Builder
			fmt.Fprintf(&b, "node %s, reply %s, options %+v\n", tc.node, tc.reply, tc.opts)
			fmt.Fprintf(&b, "returns the input node: %v\n", res.Node == node)
			golden.Section(&b, "parse warnings", parseWarnings)
			golden.Section(&b, "changes", res.Changes)
			golden.Section(&b, "apply warnings", res.Warnings)
			out, err := json.MarshalIndent(nodeParts{res.Node.Labels, res.Node.Annotations, res.Node.Spec.Taints, res.Node.Status.Capacity, res.Node.Status.Allocatable}, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "node after:\n%s\n", out)
			golden.Check(t, filepath.Join("testdata", tc.name+".golden"), []byte(b.String()))

			if p := kuberules.NodeProblems(res.Node); p != nil {
				t.Errorf("the node after is invalid: %v", p)
			}
			if diff := nodeDiff(before, node); diff != "" {
				t.Errorf("Apply modified its input (-before +after):\n%s", diff)
			}
			if (len(res.Changes) == 0) != (res.Node == node) {
				t.Errorf("%d changes, but returns the input node: %v", len(res.Changes), res.Node == node)
			}
		})
	}
}

// TestTimeAddedKeptWhenValueChanges pins down that a plugin taint whose
// value changes keeps the time it was added (the taint manager counts
// tolerationSeconds from it), and that a new one has none (Apply has no
// clock).
func TestTimeAddedKeptWhenValueChanges(t *testing.T) {
	added := metav1.NewTime(time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC))
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{nodeapply.DefaultOwnershipAnnotation: "a.io/drain:NoExecute"}},
		Spec:       corev1.NodeSpec{Taints: []corev1.Taint{{Key: "a.io/drain", Value: "soon", Effect: corev1.TaintEffectNoExecute, TimeAdded: &added}}},
	}
	patch := &pingstatus.NodePatch{ReplaceTaints: true, Taints: []corev1.Taint{
		{Key: "a.io/drain", Value: "now", Effect: corev1.TaintEffectNoExecute},
		{Key: "a.io/new", Effect: corev1.TaintEffectNoExecute},
	}}
	res := nodeapply.Apply(node, nodeapply.Ping{Reply: patch}, nodeapply.Options{})
	want := []corev1.Taint{
		{Key: "a.io/drain", Value: "now", Effect: corev1.TaintEffectNoExecute, TimeAdded: &added},
		{Key: "a.io/new", Effect: corev1.TaintEffectNoExecute},
	}
	if diff := cmp.Diff(want, res.Node.Spec.Taints); diff != "" {
		t.Errorf("taints (-want +got):\n%s", diff)
	}
	if res.Node.Spec.Taints[0].TimeAdded == node.Spec.Taints[0].TimeAdded {
		t.Error("the new node shares TimeAdded with the input")
	}
}

// TestNilNodeAndPatch pins down that a nil node is read as an empty one,
// so that Result.Node is never nil, and a nil patch changes nothing.
func TestNilNodeAndPatch(t *testing.T) {
	empty, _ := pingstatus.Parse([]byte("ok"), pingstatus.Options{})
	for _, ping := range []nodeapply.Ping{{}, {Reply: &empty}} {
		res := nodeapply.Apply(nil, ping, nodeapply.Options{})
		if res.Node == nil || !equality.Semantic.DeepEqual(res.Node, &corev1.Node{}) || len(res.Changes) != 0 || res.Warnings != nil {
			t.Errorf("Apply(nil, %+v) = %+v, want an empty node and nothing else", ping, res)
		}
		if res.ObjectPatch() != nil || res.StatusPatch() != nil {
			t.Errorf("Apply(nil, %+v): patches %s and %s, want none", ping, res.ObjectPatch(), res.StatusPatch())
		}
	}
	node := readNode(t, "interlink-node.json")
	if res := nodeapply.Apply(node, nodeapply.Ping{}, nodeapply.Options{}); res.Node != node || len(res.Changes) != 0 {
		t.Errorf("Apply(node, nil) changed %v", res.Changes)
	}
	patch, _ := pingstatus.Parse(readReply(t, "spec-example.json"), pingstatus.Options{})
	res := nodeapply.Apply(nil, nodeapply.Ping{Reply: &patch}, nodeapply.Options{})
	if res.Node == nil || len(res.Changes) != 12 {
		t.Fatalf("Apply(nil, the example reply) = %d changes, want 12: %v", len(res.Changes), res.Changes)
	}
	if q := res.Node.Status.Allocatable[corev1.ResourceCPU]; q.String() != "128" || len(res.Node.Spec.Taints) != 1 {
		t.Errorf("Apply(nil, the example reply): cpu %s, taints %v", q.String(), res.Node.Spec.Taints)
	}
}
