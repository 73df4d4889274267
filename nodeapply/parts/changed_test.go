package parts_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"pgregory.net/rapid"

	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/nodeapply/parts"
	"github.com/pingnode/pingnode/pingstatus"
)

// TestPropertyChangedReplyStepsAsAfresh: a reply judged, then changed
// by its provider (its parts put in another order in place, a part
// repeated, a taint appended to a part), gives the decisions of the same
// reply built by hand and judged afresh: a served part is never both
// left and registered.
func TestPropertyChangedReplyStepsAsAfresh(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var ps []pingstatus.Part
		for k := range rapid.IntRange(1, 5).Draw(t, "parts") {
			ps = append(ps, part(rapid.SampledFrom(partNames[:5]).Draw(t, "name"), fmt.Sprint(k+1)))
		}
		reply := listing(ps...)
		for range rapid.IntRange(1, 3).Draw(t, "edits") {
			switch n := len(reply.Parts); rapid.IntRange(0, 2).Draw(t, "edit") {
			case 0:
				copy(reply.Parts, rapid.Permutation(reply.Parts).Draw(t, "order"))
			case 1:
				reply.Parts = append(reply.Parts, reply.Parts[rapid.IntRange(0, n-1).Draw(t, "repeated")])
			default:
				p := &reply.Parts[rapid.IntRange(0, n-1).Draw(t, "tainted")].Patch
				p.ReplaceTaints = true
				p.Taints = append(p.Taints, rapid.SampledFrom([]corev1.Taint{
					{Key: "vendor.io/maintenance", Effect: corev1.TaintEffectNoSchedule},
					{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoExecute},
				}).Draw(t, "taint"))
			}
		}
		nodes := nodesGen().Draw(t, "nodes")
		at := timeGen().Draw(t, "at")
		got := parts.Step(nodeapply.Ping{At: at, Reply: reply}, nodes, nodeapply.Options{})
		b, err := json.Marshal(reply)
		if err != nil {
			t.Fatal(err)
		}
		var fresh pingstatus.NodePatch
		if err := json.Unmarshal(b, &fresh); err != nil {
			t.Fatal(err)
		}
		want := parts.Step(nodeapply.Ping{At: at, Reply: &fresh}, nodes, nodeapply.Options{})
		if diff := cmp.Diff(want, got, sameDecisions); diff != "" {
			t.Fatalf("the changed reply (-afresh +judged then changed):\n%s", diff)
		}
	})
}
