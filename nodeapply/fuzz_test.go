package nodeapply_test

import (
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/pingnode/pingnode/internal/golden"
	"github.com/pingnode/pingnode/internal/kuberules"
	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/pingstatus"
)

// FuzzParseApply: bytes to Parse to Apply, answered or failed at a time
// around the nodes' own, on a node with plugin, administrator, static and
// protected taints, on a node the API server would refuse, and on a bare
// one, never panics, never modifies the node, and always yields a valid
// node that the same ping again leaves as it is.
//
// The nodes are read once; each execution deep-copies them, and compares
// the input after Apply with the original by reflect.DeepEqual first, so
// that the costly exact comparison runs only when something differs.
func FuzzParseApply(f *testing.F) {
	for _, in := range golden.Inputs(f, "../testdata/replies/*") {
		f.Add(in.Data, false, int16(0), "")
	}
	f.Add([]byte("ok"), false, int16(90), "HTTP 500")
	f.Add([]byte(`{"resources":{"cpu":"1"}}`), true, int16(-30), "timeout\x00\xff")
	var nodes []*corev1.Node
	for _, name := range []string{"node-with-plugin-taints.json", "invalid-node.json", "bare-node.json", "node-with-admin-labels.json"} {
		nodes = append(nodes, readNode(f, name))
	}
	base := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC) // the nodes' conditions' heartbeat
	f.Fuzz(func(t *testing.T, body []byte, compat bool, seconds int16, failure string) {
		opts := nodeapply.Options{ReplaceAllTaints: compat, KeepPingResponse: compat}
		if compat {
			opts.Reply.LabelNamespaces = []string{"nvidia.com"}
		}
		patch, _ := pingstatus.Parse(body, opts.Reply)
		ping := nodeapply.Ping{Reply: &patch, Body: body, Failure: failure}
		if seconds != 0 {
			ping.At = base.Add(time.Duration(seconds) * time.Second)
		}
		for i, original := range nodes {
			node := original.DeepCopy()
			res := nodeapply.Apply(node, ping, opts)
			if p := kuberules.NodeProblems(res.Node); p != nil {
				t.Fatalf("node %d with %q: invalid node: %v", i, body, p)
			}
			for k, v := range foreignLabels(original) {
				if got, ok := res.Node.Labels[k]; !ok || got != v {
					t.Fatalf("node %d with %q: foreign label %s=%s is now %q (present %v)", i, body, k, v, got, ok)
				}
			}
			check := kuberules.LabelCheck{Namespaces: opts.Reply.LabelNamespaces}
			for _, k := range pluginLabelKeys(res.Node) {
				// one in a namespace the options do not allow may stay until the plugin's next labels
				if p := check.Check(k, res.Node.Labels[k]); !p.Valid() || p.Forbidden != "" || p.Protected {
					t.Fatalf("node %d with %q: the plugin's label %s=%s breaks a rule: %+v", i, body, k, res.Node.Labels[k], p)
				}
			}
			if !reflect.DeepEqual(original, node) { // cheap; then the exact comparison
				if diff := nodeDiff(original, node); diff != "" {
					t.Fatalf("node %d with %q: Apply modified its input:\n%s", i, body, diff)
				}
			}
			if again := nodeapply.Apply(res.Node, ping, opts); len(again.Changes) != 0 {
				t.Fatalf("node %d with %q: the same ping again changes %v", i, body, again.Changes)
			}
		}
	})
}
