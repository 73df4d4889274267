package nodeapply_test

import (
	"testing"

	"github.com/pingnode/pingnode/internal/golden"
	"github.com/pingnode/pingnode/internal/kuberules"
	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/pingstatus"
)

// FuzzParseApply: bytes to Parse to Apply, on a node with plugin,
// administrator, static and protected taints and on a node the API server
// would refuse, never panics, never modifies the node, and always yields a
// valid node that a second Apply leaves as it is.
func FuzzParseApply(f *testing.F) {
	for _, in := range golden.Inputs(f, "../testdata/replies/*") {
		f.Add(in.Data, false)
	}
	nodes := []string{"node-with-plugin-taints.json", "invalid-node.json", "bare-node.json"}
	f.Fuzz(func(t *testing.T, body []byte, compat bool) {
		patch, _ := pingstatus.Parse(body, pingstatus.Options{})
		for _, name := range nodes {
			node := readNode(t, name)
			before := node.DeepCopy()
			opts := nodeapply.Options{ReplaceAllTaints: compat}
			res := nodeapply.Apply(node, nodeapply.Ping{Reply: &patch}, opts)
			if p := kuberules.NodeProblems(res.Node); p != nil {
				t.Fatalf("%s with %q: invalid node: %v", name, body, p)
			}
			if diff := nodeDiff(before, node); diff != "" {
				t.Fatalf("%s with %q: Apply modified its input:\n%s", name, body, diff)
			}
			if again := nodeapply.Apply(res.Node, nodeapply.Ping{Reply: &patch}, opts); len(again.Changes) != 0 {
				t.Fatalf("%s with %q: a second Apply changes %v", name, body, again.Changes)
			}
		}
	})
}
