package nodeapply_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/pingstatus"
)

// steady returns a node on which patch is already applied, and the patch:
// the state of a provider whose backend does not change.
func steady(t testing.TB) (*corev1.Node, *pingstatus.NodePatch) {
	t.Helper()
	node := readNode(t, "node-with-plugin-taints.json")
	patch, warnings := pingstatus.Parse(readReply(t, "slurm-taints.json"), pingstatus.Options{})
	if len(warnings) != 0 {
		t.Fatal(warnings)
	}
	return nodeapply.Apply(node, nodeapply.Ping{Reply: &patch}, nodeapply.Options{}).Node, &patch
}

// withoutTaints returns patch without its taints, judged, as Parse gives
// a reply that has none: a patch changed after its judgement is judged
// afresh, at a cost.
func withoutTaints(patch *pingstatus.NodePatch) *pingstatus.NodePatch {
	edited := *patch
	edited.ReplaceTaints, edited.Taints = false, nil
	judged, _ := pingstatus.Options{}.Check(&edited)
	return judged
}

// maxMergeAllocs is the most allocations of the merge of a steady ping's
// taints, or of its labels, with a few of them: the merge's own slices
// and set (rule merge-pure). A copy of the node would be more: node.DeepCopy()
// of the steady nodes of these tests allocates 7 times or more.
const maxMergeAllocs = 6

// TestSteadyPingMakesNoCopy pins down the contract for a steady backend:
// the input node back, with no change and no copy; without taints and
// labels in the reply, no allocation at all; with them, only their
// merge's own few.
func TestSteadyPingMakesNoCopy(t *testing.T) {
	node, patch := steady(t)
	noTaints := withoutTaints(patch)
	for _, c := range []struct {
		name   string
		patch  *pingstatus.NodePatch
		allocs float64
	}{{"with taints", patch, maxMergeAllocs}, {"without taints", noTaints, 0}} {
		var res nodeapply.Result
		allocs := testing.AllocsPerRun(100, func() { res = nodeapply.Apply(node, nodeapply.Ping{Reply: c.patch}, nodeapply.Options{}) })
		if allocs > c.allocs {
			t.Errorf("%s: a steady ping allocates %v times, want at most %v", c.name, allocs, c.allocs)
		}
		if copies := testing.AllocsPerRun(10, func() { _ = node.DeepCopy() }); allocs >= copies {
			t.Errorf("%s: a steady ping allocates %v times, as many as a copy of the node (%v)", c.name, allocs, copies)
		}
		if res.Node != node || len(res.Changes) != 0 {
			t.Errorf("%s: a steady ping returned a new node or changes: %v", c.name, res.Changes)
		}
	}
}

// withTaints returns a node with n plugin-owned taints, a patch that
// changes the value of one of them, judged once as Parse gives a reply,
// and the options that take n taints.
func withTaints(n int) (*corev1.Node, *pingstatus.NodePatch, nodeapply.Options) {
	opts := nodeapply.Options{Reply: pingstatus.Options{MaxTaints: n}}
	node := &corev1.Node{}
	patch := &pingstatus.NodePatch{Kind: pingstatus.Structured, ReplaceTaints: true}
	for i := range n {
		patch.Taints = append(patch.Taints, corev1.Taint{Key: fmt.Sprintf("vendor.example.com/t%d", i), Value: "v", Effect: corev1.TaintEffectNoSchedule})
	}
	node = nodeapply.Apply(node, nodeapply.Ping{Reply: patch}, opts).Node
	next := pingstatus.NodePatch{Kind: pingstatus.Structured, ReplaceTaints: true, Taints: slices.Clone(patch.Taints)}
	next.Taints[n/2].Value = "changed"
	judged, _ := opts.Reply.Check(&next)
	return node, judged, opts
}

// BenchmarkApply measures Apply beside node.DeepCopy of the same node, in
// the same run. For the ratios:
//
//	go test ./nodeapply -run '^$' -bench Apply -count 10 > apply.txt
//	benchstat -col /op apply.txt
func BenchmarkApply(b *testing.B) {
	node, patch := steady(b)
	changing := *patch
	changing.Resources = patch.Resources.DeepCopy()
	changing.Resources[corev1.ResourceCPU] = resource.MustParse("48")

	run := func(name string, node *corev1.Node, patch *pingstatus.NodePatch, opts nodeapply.Options, changes bool) {
		b.Run("case="+name+"/op=apply", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if res := nodeapply.Apply(node, nodeapply.Ping{Reply: patch}, opts); (len(res.Changes) > 0) != changes {
					b.Fatalf("changes: %v", res.Changes)
				}
			}
		})
		b.Run("case="+name+"/op=deepcopy", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = node.DeepCopy()
			}
		})
	}
	run("noop", node, patch, nodeapply.Options{}, false)
	run("change", node, &changing, nodeapply.Options{}, true)
	for _, n := range []int{10, 100, 1000} {
		node, patch, opts := withTaints(n)
		run(fmt.Sprintf("taints%d", n), node, patch, opts, true)
	}
	for _, n := range []int{10, 100} {
		node, patch := withLabels(n)
		run(fmt.Sprintf("labels%d-noop", n), node, patch, nodeapply.Options{}, false)
		changing := *patch
		changing.Labels = maps.Clone(patch.Labels)
		changing.Labels["feature.node.kubernetes.io/l0"] = "changed"
		run(fmt.Sprintf("labels%d", n), node, &changing, nodeapply.Options{}, true)
	}
}

// withLabels returns a node with n labels of the plugin's besides the
// provider's, and the patch that set them.
func withLabels(n int) (*corev1.Node, *pingstatus.NodePatch) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"type": "virtual-kubelet", "kubernetes.io/hostname": "vk"}}}
	patch := &pingstatus.NodePatch{Kind: pingstatus.Structured, ReplaceLabels: true, Labels: map[string]string{}}
	for i := range n {
		patch.Labels[fmt.Sprintf("feature.node.kubernetes.io/l%d", i)] = "true"
	}
	patch, _ = pingstatus.Options{}.Check(patch) // as Parse gives it: judged once
	return nodeapply.Apply(node, nodeapply.Ping{Reply: patch}, nodeapply.Options{}).Node, patch
}

// BenchmarkSteadyPing is a provider's whole ping on a steady backend:
// Parse of the reply, then Apply with the conditions in play, beside a
// bare json.Unmarshal of the same body, in the same run:
//
//	go test ./nodeapply -run '^$' -bench SteadyPing -count 10 > ping.txt
//	benchstat -col /op ping.txt
func BenchmarkSteadyPing(b *testing.B) {
	body := readReply(b, "slurm-taints.json")
	node, patch := steady(b)
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	node = nodeapply.Apply(node, nodeapply.Ping{Reply: patch, At: at}, nodeapply.Options{}).Node
	b.Run("op=parse+apply", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			patch, _ := pingstatus.Parse(body, pingstatus.Options{})
			at = at.Add(30 * time.Second)
			if res := nodeapply.Apply(node, nodeapply.Ping{Reply: &patch, At: at, Body: body}, nodeapply.Options{}); len(res.Changes) != 0 {
				b.Fatalf("changes: %v", res.Changes)
			}
		}
	})
	b.Run("op=apply", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			at = at.Add(30 * time.Second)
			if res := nodeapply.Apply(node, nodeapply.Ping{Reply: patch, At: at, Body: body}, nodeapply.Options{}); len(res.Changes) != 0 {
				b.Fatalf("changes: %v", res.Changes)
			}
		}
	})
	b.Run("op=unmarshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var v pingstatus.PingResponse
			if err := json.Unmarshal(body, &v); err != nil {
				b.Fatal(err)
			}
		}
	})
}
