package parts_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/nodeapply/parts"
	"github.com/pingnode/pingnode/pingstatus"
)

// TestStepRules pins down each rule of the contract on one ping, with
// the default part grace of 50 s unless a case says otherwise.
func TestStepRules(t *testing.T) {
	a, b, c := part("a", "8"), part("b", "16"), part("c", "32")
	longGone := goneTaint(at(-3600))
	foreign := corev1.Taint{Key: "vendor.io/maintenance", Effect: corev1.TaintEffectNoSchedule}
	tests := []struct {
		name  string
		ping  nodeapply.Ping
		nodes []parts.Node
		opts  nodeapply.Options
		want  []string
	}{
		{
			name:  "a failed ping changes no part (rule parts-failed)",
			ping:  nodeapply.Ping{Failure: "HTTP 503", At: at(0), Reply: listing(c)},
			nodes: []parts.Node{served("a", 0), served("b", 0, longGone)},
			want:  []string{"a: Ping node vk-a, no news", "b: Ping node vk-b, no news"},
		},
		{
			name:  "a nil reply keeps each node where it is (rule parts-no-news)",
			ping:  nodeapply.Ping{At: at(0)},
			nodes: []parts.Node{served("a", 0), served("b", 0, longGone)},
			want:  []string{"a: Ping node vk-a, no news", "b: Leave node vk-b"},
		},
		{
			name:  "a reply without parts is no news of them (rule parts-no-news)",
			ping:  nodeapply.Ping{At: at(0), Reply: &pingstatus.NodePatch{Kind: pingstatus.Structured, ReplaceTaints: true}},
			nodes: []parts.Node{served("a", 0), served("b", 0, longGone)},
			want:  []string{"a: Ping node vk-a, no news", "b: Leave node vk-b"},
		},
		{
			name: "a listing pings, registers, brings back, leaves and deletes (rule parts-listed)",
			ping: nodeapply.Ping{At: at(100), Reply: listing(a, b, c, part("d", "1"))},
			nodes: []parts.Node{
				served("a", 3),
				served("b", 2, goneTaint(at(0))), // back, with its pods
				served("e", 1),
				served("f", 0, goneTaint(at(50))), // gone for the grace, no pod
				served("g", 0, goneTaint(at(51))), // one second short
				served("h", 1, goneTaint(at(0))),  // a pod holds it
			},
			want: []string{
				"a: Ping node vk-a, with the part's patch",
				"b: Ping node vk-b, with the part's patch",
				"c: Register, with the part's patch",
				"d: Register, with the part's patch",
				"e: Leave node vk-e",
				"f: Delete node vk-f",
				"g: Leave node vk-g",
				"h: Leave node vk-h",
			},
		},
		{
			name:  "an empty list leaves every part (rule parts-listed)",
			ping:  nodeapply.Ping{At: at(0), Reply: listing()},
			nodes: []parts.Node{served("a", 0), served("b", 1)},
			want:  []string{"a: Leave node vk-a", "b: Leave node vk-b"},
		},
		{
			name:  "an incomplete listing leaves and deletes nothing (rule parts-incomplete)",
			ping:  nodeapply.Ping{At: at(0), Reply: incomplete(a, c)},
			nodes: []parts.Node{served("a", 0), served("b", 0), served("d", 0, longGone)},
			want: []string{
				"a: Ping node vk-a, with the part's patch",
				"b: Ping node vk-b, no news",
				"c: Register, with the part's patch",
				"d: Leave node vk-d",
			},
		},
		{
			name:  "no time added, no deletion (rule parts-delete)",
			ping:  nodeapply.Ping{At: at(0), Reply: listing()},
			nodes: []parts.Node{served("a", 0, goneTaint(time.Time{}))},
			want:  []string{"a: Leave node vk-a"},
		},
		{
			name:  "a zero time added is no time added (rule parts-delete)",
			ping:  nodeapply.Ping{At: at(0), Reply: listing()},
			nodes: []parts.Node{served("a", 0, corev1.Taint{Key: nodeapply.PartGoneTaintKey, Effect: corev1.TaintEffectNoSchedule, TimeAdded: &metav1.Time{}})},
			want:  []string{"a: Leave node vk-a"},
		},
		{
			name:  "a ping without a time deletes nothing, whatever the time added (rule parts-delete)",
			ping:  nodeapply.Ping{Reply: listing()},
			nodes: []parts.Node{served("a", 0, longGone), served("b", 0, goneTaint(time.Time{}.Add(-time.Hour)))},
			want:  []string{"a: Leave node vk-a", "b: Leave node vk-b"},
		},
		{
			name:  "a clock that stepped back counts no time (rule parts-delete)",
			ping:  nodeapply.Ping{At: at(0), Reply: listing()},
			nodes: []parts.Node{served("a", 0, goneTaint(at(3600)))},
			want:  []string{"a: Leave node vk-a"},
		},
		{
			name:  "At counts to the second: 49.9 s is 49 s (rule parts-delete)",
			ping:  nodeapply.Ping{At: at(49.9), Reply: listing()},
			nodes: []parts.Node{served("a", 0, goneTaint(at(0)))},
			want:  []string{"a: Leave node vk-a"},
		},
		{
			name:  "At counts to the second: 50.5 s is 50 s (rule parts-delete)",
			ping:  nodeapply.Ping{At: at(50.5), Reply: listing()},
			nodes: []parts.Node{served("a", 0, goneTaint(at(0)))},
			want:  []string{"a: Delete node vk-a"},
		},
		{
			name:  "At counts to the second with a grace of a fraction of one (rule parts-delete)",
			ping:  nodeapply.Ping{At: at(49.7), Reply: listing()},
			nodes: []parts.Node{served("a", 0, goneTaint(at(0)))},
			opts:  nodeapply.Options{PartGrace: 49500 * time.Millisecond},
			want:  []string{"a: Leave node vk-a"},
		},
		{
			name:  "the part grace of the options (rule parts-delete)",
			ping:  nodeapply.Ping{At: at(600), Reply: listing()},
			nodes: []parts.Node{served("a", 0, goneTaint(at(1))), served("b", 0, goneTaint(at(0)))},
			opts:  nodeapply.Options{PartGrace: 10 * time.Minute},
			want:  []string{"a: Leave node vk-a", "b: Delete node vk-b"},
		},
		{
			name:  "a negative count of pods is no count (rule parts-delete)",
			ping:  nodeapply.Ping{At: at(0), Reply: listing()},
			nodes: []parts.Node{served("a", -1, longGone)},
			want:  []string{"a: Leave node vk-a"},
		},
		{
			name: "the part-gone key with another effect is not the taint (rule parts-gone-taint)",
			ping: nodeapply.Ping{At: at(0)},
			nodes: []parts.Node{served("a", 0, corev1.Taint{
				Key: nodeapply.PartGoneTaintKey, Effect: corev1.TaintEffectNoExecute, TimeAdded: longGone.TimeAdded,
			}, foreign)},
			want: []string{"a: Ping node vk-a, no news"},
		},
		{
			name:  "of two part-gone taints the last counts (rule parts-gone-taint)",
			ping:  nodeapply.Ping{At: at(0), Reply: listing()},
			nodes: []parts.Node{served("a", 0, longGone, foreign, goneTaint(time.Time{})), served("b", 0, goneTaint(time.Time{}), longGone)},
			want:  []string{"a: Leave node vk-a", "b: Delete node vk-b"},
		},
		{
			name: "of two nodes of a listed part, the first by name gets the patch (rule parts-one-node)",
			ping: nodeapply.Ping{At: at(0), Reply: listing(a)},
			nodes: []parts.Node{
				named(served("a", 0, longGone), "vk-a-2"),
				served("a", 0),
				named(served("a", 0), "vk-a-3"),
			},
			want: []string{
				"a: Ping node vk-a, with the part's patch",
				"a: Leave node vk-a-2",
				"a: Ping node vk-a-3, no news",
			},
		},
		{
			name:  "the nodes of a part not listed go on their own (rule parts-one-node)",
			ping:  nodeapply.Ping{At: at(0), Reply: listing()},
			nodes: []parts.Node{served("a", 1, longGone), named(served("a", 0, longGone), "vk-a-2")},
			want:  []string{"a: Leave node vk-a", "a: Delete node vk-a-2"},
		},
		{
			name:  "parts out of order, one listed twice (rule parts-order)",
			ping:  nodeapply.Ping{At: at(0), Reply: listing(c, a, part("c", "64"))},
			nodes: []parts.Node{served("c", 0), served("b", 0)},
			want: []string{
				"a: Register, with the part's patch",
				"b: Leave node vk-b",
				"c: Ping node vk-c, with the part's patch",
			},
		},
		{
			name:  "a nil node is a node without taints",
			ping:  nodeapply.Ping{At: at(0)},
			nodes: []parts.Node{{Part: "a"}},
			want:  []string{"a: Ping, no news"},
		},
		{
			name: "no node and no part, no decision",
			ping: nodeapply.Ping{At: at(0), Reply: listing()},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := parts.Step(tt.ping, tt.nodes, tt.opts)
			if diff := cmp.Diff(tt.want, decisionLines(got)); diff != "" {
				t.Errorf("Step (-want +got):\n%s", diff)
			}
			checkLaws(t, tt.ping, tt.nodes, tt.opts, got)
		})
	}
}

// named returns n with its node renamed.
func named(n parts.Node, name string) parts.Node {
	n.Node.Name = name
	return n
}

// TestPatchesPointIntoTheReply pins down that the patch of a decision is
// the judged reply's own entry (rule parts-input), and that a reply built
// by hand is read as judged: in name order, of a name listed twice the
// last (rule parts-order).
func TestPatchesPointIntoTheReply(t *testing.T) {
	entries := []pingstatus.Part{part("b", "1"), part("a", "2"), part("b", "3")}
	reply := listing(entries...)
	got := parts.Step(nodeapply.Ping{Reply: reply}, []parts.Node{served("b", 0)}, nodeapply.Options{})
	if len(got) != 2 || got[0].Patch != &reply.Parts[0].Patch || got[1].Patch != &reply.Parts[1].Patch {
		t.Errorf("Step(%v) = %v, want the patches of the judged reply's entries", reply.Parts, got)
	}
	got = parts.Step(nodeapply.Ping{Reply: rawListing(entries...)}, []parts.Node{served("b", 0)}, nodeapply.Options{})
	cpu := func(d parts.Decision) string { q := d.Patch.Resources[corev1.ResourceCPU]; return q.String() }
	if len(got) != 2 || got[0].Part != "a" || cpu(got[0]) != "2" || got[1].Part != "b" || cpu(got[1]) != "3" {
		t.Errorf("Step of the reply as built, %v = %v, want a with cpu 2 and b with cpu 3, its last entry", entries, got)
	}
}

// TestNodePing pins down the ping of each decision for its node.
func TestNodePing(t *testing.T) {
	patch := &pingstatus.NodePatch{Kind: pingstatus.Structured}
	ping := nodeapply.Ping{At: at(0), Failure: "HTTP 503", Body: []byte("{}"), Held: corev1.ResourceList{}, Reply: listing()}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "vk-a"}}
	tests := []struct {
		d    parts.Decision
		want nodeapply.Ping
	}{
		{parts.Decision{Part: "a", Action: parts.Ping, Node: node, Patch: patch}, nodeapply.Ping{Reply: patch, Failure: "HTTP 503", At: at(0)}},
		{parts.Decision{Part: "a", Action: parts.Ping, Node: node}, nodeapply.Ping{Failure: "HTTP 503", At: at(0)}},
		{parts.Decision{Part: "a", Action: parts.Register, Patch: patch}, nodeapply.Ping{Reply: patch, Failure: "HTTP 503", At: at(0)}},
		{parts.Decision{Part: "a", Action: parts.Leave, Node: node}, nodeapply.Ping{Unlisted: true, At: at(0)}},
		{parts.Decision{Part: "a", Action: parts.Delete, Node: node}, nodeapply.Ping{}},
	}
	for _, tt := range tests {
		got := tt.d.NodePing(ping)
		if diff := cmp.Diff(tt.want, got, cmpopts.IgnoreUnexported(pingstatus.NodePatch{})); diff != "" || got.Reply != tt.want.Reply {
			t.Errorf("%v: NodePing (-want +got):\n%s", tt.d, diff)
		}
	}
}

// TestActionText pins down the names of the actions, as text.
func TestActionText(t *testing.T) {
	for _, a := range []parts.Action{parts.Ping, parts.Register, parts.Leave, parts.Delete} {
		text, err := a.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		var back parts.Action
		if err := back.UnmarshalText(text); err != nil || back != a || string(text) != a.String() {
			t.Errorf("%v: MarshalText %q, UnmarshalText %v, %v", a, text, back, err)
		}
	}
	if got := parts.Action(4).String(); got != "Action(?)" {
		t.Errorf("Action(4).String() = %q", got)
	}
	if _, err := parts.Action(-1).MarshalText(); err == nil {
		t.Error("Action(-1).MarshalText: no error")
	}
	var a parts.Action
	if err := a.UnmarshalText([]byte("Deregister")); err == nil {
		t.Error(`UnmarshalText("Deregister"): no error`)
	}
}
