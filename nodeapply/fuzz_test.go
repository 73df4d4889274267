package nodeapply_test

import (
	"reflect"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/pingnode/pingnode/internal/golden"
	"github.com/pingnode/pingnode/internal/kuberules"
	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/pingstatus"
)

// FuzzParseApply: bytes to Parse to Apply, answered or failed at a time
// around the nodes' own, listed or Unlisted, on a node with plugin,
// administrator, static and protected taints, on a node the API server
// would refuse, and on a bare one, never panics, never modifies the node,
// and always yields a valid node that the same ping again leaves as it
// is, with the part-gone taint once after an answered Unlisted ping, none
// after another answered one, and as it was after a failed one.
//
// The nodes are read once; each execution deep-copies them, and compares
// the input after Apply with the original by reflect.DeepEqual first, so
// that the costly exact comparison runs only when something differs.
func FuzzParseApply(f *testing.F) {
	for _, in := range golden.Inputs(f, "../testdata/replies/*") {
		f.Add(in.Data, false, int16(0), "", false)
	}
	f.Add([]byte("ok"), false, int16(90), "HTTP 500", false)
	f.Add([]byte(`{"resources":{"cpu":"1"}}`), true, int16(-30), "timeout\x00\xff", false)
	f.Add([]byte("ok"), false, int16(60), "", true)
	f.Add([]byte(`{"resources":{"cpu":"1"},"taints":[]}`), true, int16(0), "", true)
	f.Add([]byte("ok"), false, int16(30), "HTTP 500", true)
	var nodes []*corev1.Node
	for _, name := range []string{"node-with-plugin-taints.json", "invalid-node.json", "bare-node.json", "node-with-admin-labels.json"} {
		nodes = append(nodes, readNode(f, name))
	}
	// The first node with the part-gone taint as someone left it: no time
	// added, amid the others.
	gone := nodes[0].DeepCopy()
	gone.Spec.Taints = slices.Insert(gone.Spec.Taints, 1, corev1.Taint{Key: nodeapply.PartGoneTaintKey, Effect: corev1.TaintEffectNoSchedule})
	nodes = append(nodes, gone)
	base := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC) // the nodes' conditions' heartbeat
	f.Fuzz(func(t *testing.T, body []byte, compat bool, seconds int16, failure string, unlisted bool) {
		opts := nodeapply.Options{ReplaceAllTaints: compat, KeepPingResponse: compat}
		if compat {
			opts.Reply.LabelNamespaces = []string{"nvidia.com"}
		}
		patch, _ := pingstatus.Parse(body, opts.Reply)
		ping := nodeapply.Ping{Reply: &patch, Body: body, Failure: failure, Unlisted: unlisted}
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
			switch gones := len(partGones(res.Node)); {
			case !ping.Reached() && gones != len(partGones(original)):
				t.Fatalf("node %d with %q: a failed ping took the part-gone taints from %d to %d", i, body, len(partGones(original)), gones)
			case ping.Reached() && unlisted && gones != 1:
				t.Fatalf("node %d with %q: an Unlisted ping left %d part-gone taints: %v", i, body, gones, res.Node.Spec.Taints)
			case ping.Reached() && !unlisted && gones != 0:
				t.Fatalf("node %d with %q: a listed ping left %d part-gone taints: %v", i, body, gones, res.Node.Spec.Taints)
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
