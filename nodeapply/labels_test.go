package nodeapply_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pingnode/pingnode/internal/golden"
	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/pingstatus"
)

// TestLabelsSequence pins down one plugin's labels over a run of replies,
// each applied to the node the one before left: on a node with an
// administrator's labels (one with a key the plugin also sends, another
// value; one equal to the plugin's), the GPU labels, then the plugin's
// backend reconfigured, then {}, then null, then the labels again. The
// golden holds each step's warnings, changes, labels, ownership
// annotation and object patch.
func TestLabelsSequence(t *testing.T) {
	opts := gpuLabels
	node := readNode(t, "node-with-admin-labels.json")
	steps := []struct{ name, body string }{
		{"labels-gpu.json", string(readReply(t, "labels-gpu.json"))},
		{"reconfigured: H100s, no driver label", `{"labels":{"nvidia.com/gpu.product":"NVIDIA-H100-80GB-HBM3","nvidia.com/gpu.count":"4","nvidia.com/gpu.family":"hopper","feature.node.kubernetes.io/cpu-model.vendor_id":"AMD"}}`},
		{"labels-empty.json", string(readReply(t, "labels-empty.json"))},
		{"labels-null.json", string(readReply(t, "labels-null.json"))},
		{"labels-gpu.json again", string(readReply(t, "labels-gpu.json"))},
	}
	var b strings.Builder
	fmt.Fprintf(&b, "node node-with-admin-labels.json, label namespaces %v\n", opts.Reply.LabelNamespaces)
	for i, step := range steps {
		patch, warnings := pingstatus.Parse([]byte(step.body), opts.Reply)
		res := nodeapply.Apply(node, nodeapply.Ping{Reply: &patch}, opts)
		fmt.Fprintf(&b, "\n# step %d: %s\n", i+1, step.name)
		golden.Section(&b, "parse warnings", warnings)
		golden.Section(&b, "changes", res.Changes)
		golden.Section(&b, "apply warnings", res.Warnings)
		labels, err := json.MarshalIndent(res.Node.Labels, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "labels after:\n%s\n", labels)
		fmt.Fprintf(&b, "%s: %q\n", nodeapply.DefaultLabelOwnershipAnnotation, res.Node.Annotations[nodeapply.DefaultLabelOwnershipAnnotation])
		fmt.Fprintf(&b, "object patch: %s\n", orNone(res.ObjectPatch()))
		if again := nodeapply.Apply(res.Node, nodeapply.Ping{Reply: &patch}, opts); len(again.Changes) != 0 {
			t.Errorf("step %d: the same reply again changes %v", i+1, again.Changes)
		}
		node = roundTrip(t, res.Node)
	}
	golden.Check(t, filepath.Join("testdata", "labels-sequence.golden"), []byte(b.String()))
}
