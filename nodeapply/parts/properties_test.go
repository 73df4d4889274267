package parts_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"pgregory.net/rapid"

	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/nodeapply/parts"
	"github.com/pingnode/pingnode/pingstatus"
)

// partNames are the names the generators draw parts from, few so that
// served and listed parts meet often.
var partNames = []string{"a", "b", "c", "d", "e", ""}

// graceGen draws a part grace: the default (zero or less), or one of
// its own.
func graceGen() *rapid.Generator[time.Duration] {
	return rapid.SampledFrom([]time.Duration{0, -time.Second, 20 * time.Second, 10 * time.Minute})
}

// timeGen draws a time near t0, or, now and then, none.
func timeGen() *rapid.Generator[time.Time] {
	return rapid.Custom(func(t *rapid.T) time.Time {
		if rapid.IntRange(0, 7).Draw(t, "timeless") == 0 {
			return time.Time{}
		}
		return t0.Add(time.Duration(rapid.Int64Range(-600_000, 7_200_000).Draw(t, "ms")) * time.Millisecond)
	})
}

// taintsGen draws a node's taints: often the part-gone taint, with or
// without a time added, sometimes twice or with another effect, and
// someone else's.
func taintsGen() *rapid.Generator[[]corev1.Taint] {
	return rapid.Custom(func(t *rapid.T) []corev1.Taint {
		var taints []corev1.Taint
		for range rapid.IntRange(0, 3).Draw(t, "taints") {
			switch rapid.IntRange(0, 3).Draw(t, "taint") {
			case 0:
				taints = append(taints, goneTaint(timeGen().Draw(t, "added")))
			case 1:
				taints = append(taints, corev1.Taint{Key: nodeapply.PartGoneTaintKey, Effect: corev1.TaintEffectNoExecute})
			case 2:
				taints = append(taints, corev1.Taint{Key: "vendor.io/maintenance", Effect: corev1.TaintEffectNoSchedule})
			default:
				added := metav1.NewTime(timeGen().Draw(t, "added"))
				taints = append(taints, corev1.Taint{Key: nodeapply.PartGoneTaintKey, Effect: corev1.TaintEffectNoSchedule, TimeAdded: &added})
			}
		}
		return taints
	})
}

// nodesGen draws the nodes a provider serves, in any order, unique by
// part or not.
func nodesGen() *rapid.Generator[[]parts.Node] {
	return rapid.Custom(func(t *rapid.T) []parts.Node {
		unique := rapid.Bool().Draw(t, "unique")
		var nodes []parts.Node
		for range rapid.IntRange(0, 8).Draw(t, "nodes") {
			name := rapid.SampledFrom(partNames).Draw(t, "part")
			if unique && slices.ContainsFunc(nodes, func(n parts.Node) bool { return n.Part == name }) {
				continue
			}
			n := parts.Node{Part: name, Pods: rapid.SampledFrom([]int{0, 0, 1, 3, -1}).Draw(t, "pods")}
			if rapid.IntRange(0, 15).Draw(t, "nil") > 0 {
				n.Node = &corev1.Node{
					ObjectMeta: metav1.ObjectMeta{Name: "vk-" + name + rapid.SampledFrom([]string{"", "", "-2", "-x"}).Draw(t, "suffix")},
					Spec:       corev1.NodeSpec{Taints: taintsGen().Draw(t, "taints")},
				}
			}
			nodes = append(nodes, n)
		}
		return nodes
	})
}

// replyGen draws a reply: none, one without parts, or a list of parts,
// complete or not, as Parse gives it (in name order, each once) or
// built by hand in any order.
func replyGen() *rapid.Generator[*pingstatus.NodePatch] {
	return rapid.Custom(func(t *rapid.T) *pingstatus.NodePatch {
		switch rapid.IntRange(0, 4).Draw(t, "reply") {
		case 0:
			return nil
		case 1:
			return &pingstatus.NodePatch{Kind: pingstatus.Legacy}
		}
		var ps []pingstatus.Part
		for k := range rapid.IntRange(0, 6).Draw(t, "parts") {
			ps = append(ps, part(rapid.SampledFrom(partNames).Draw(t, "name"), fmt.Sprint(k+1)))
		}
		if rapid.IntRange(0, 2).Draw(t, "parsed") > 0 {
			slices.SortStableFunc(ps, func(x, y pingstatus.Part) int { return strings.Compare(x.Name, y.Name) })
			ps = slices.CompactFunc(ps, func(x, y pingstatus.Part) bool { return x.Name == y.Name })
		}
		r := rawListing(ps...)
		r.PartsIncomplete = rapid.IntRange(0, 3).Draw(t, "incomplete") == 0
		return r
	})
}

// pingGen draws a ping of the plugin: failed or not, with any reply.
func pingGen() *rapid.Generator[nodeapply.Ping] {
	return rapid.Custom(func(t *rapid.T) nodeapply.Ping {
		p := nodeapply.Ping{At: timeGen().Draw(t, "at"), Reply: replyGen().Draw(t, "reply")}
		if rapid.IntRange(0, 4).Draw(t, "failed") == 0 {
			p.Failure = "HTTP 503"
		}
		return p
	})
}

// TestPropertyStepLaws: whatever the ping and the nodes, Step keeps the laws of
// checkLaws (sorted; one decision a node and one a new part; a patch
// only the part's own, in the reply; a failed ping only pings; no Delete
// while a pod holds the node, nor before the grace), and leaves its
// inputs as they were. A reply built by hand (its parts in any order, a
// name twice) gets the decisions of the same reply judged by
// pingstatus.Check, which the laws hold to (rule parts-order).
func TestPropertyStepLaws(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ping, nodes := pingGen().Draw(t, "ping"), nodesGen().Draw(t, "nodes")
		opts := nodeapply.Options{PartGrace: graceGen().Draw(t, "grace")}
		before := snap(ping, nodes)
		got := parts.Step(ping, nodes, opts)
		before.check(t, ping, nodes)
		judged := ping
		judged.Reply, _ = opts.Reply.Check(ping.Reply)
		want := parts.Step(judged, nodes, opts)
		if diff := cmp.Diff(want, got, sameDecisions); diff != "" {
			t.Fatalf("the reply as built and as judged give other decisions (-judged +built):\n%s", diff)
		}
		checkLaws(t, judged, nodes, opts, want)
	})
}

// TestPropertyFailedPingChangesNoPart: a failed ping, whatever its reply,
// registers, leaves and deletes nothing: each node gets Ping with no
// patch.
func TestPropertyFailedPingChangesNoPart(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ping, nodes := pingGen().Draw(t, "ping"), nodesGen().Draw(t, "nodes")
		ping.Failure = "connection refused"
		got := parts.Step(ping, nodes, nodeapply.Options{})
		if len(got) != len(nodes) {
			t.Fatalf("%d decisions for %d nodes", len(got), len(nodes))
		}
		for _, d := range got {
			if d.Action != parts.Ping || d.Patch != nil {
				t.Fatalf("%v after a failed ping", d)
			}
		}
	})
}

// TestPropertyNoDeleteWhilePodsHold: nodes gone long ago, whose parts the reply
// does not list, are never deleted while a pod holds them.
func TestPropertyNoDeleteWhilePodsHold(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		nodes := nodesGen().Draw(t, "nodes")
		for i := range nodes {
			nodes[i].Pods = rapid.IntRange(1, 100).Draw(t, "pods")
			if nodes[i].Node != nil {
				nodes[i].Node.Spec.Taints = append(nodes[i].Node.Spec.Taints, goneTaint(at(-86400)))
			}
		}
		ping := nodeapply.Ping{At: timeGen().Draw(t, "at"), Reply: listing()}
		for _, d := range parts.Step(ping, nodes, nodeapply.Options{PartGrace: graceGen().Draw(t, "grace")}) {
			if d.Action == parts.Delete {
				t.Fatalf("%v while pods hold it", d)
			}
		}
	})
}

// markAfter returns node after ping as the contract of
// [nodeapply.Ping.Unlisted] says Apply keeps its part-gone taint: put at
// the first Unlisted ping, added at its time to the second (none for a
// ping without a time), then kept as it is; removed by an answered ping
// without Unlisted; left by a failed one. It models Apply's taint so that
// the tests of the step do not depend on Apply; TestSequenceWithApply
// runs the two together.
func markAfter(node *corev1.Node, ping nodeapply.Ping) *corev1.Node {
	out := node.DeepCopy()
	_, gone := lastGone(node)
	switch {
	case !ping.Reached():
	case ping.Unlisted && !gone:
		out.Spec.Taints = append(out.Spec.Taints, goneTaint(ping.At.UTC().Truncate(time.Second)))
	case !ping.Unlisted:
		out.Spec.Taints = slices.DeleteFunc(out.Spec.Taints, func(t corev1.Taint) bool {
			return t.Key == nodeapply.PartGoneTaintKey && t.Effect == corev1.TaintEffectNoSchedule
		})
	}
	return out
}

// TestPropertySequence runs a provider over a run of pings, its nodes kept by
// the decisions (the part-gone taint by markAfter), pods coming and
// going. Besides the laws at each ping: part "keep", served at the start
// and listed by every reply that lists parts, only ever gets Ping, on
// its node, with exactly its patch (none without a list); and a part is
// deleted only once it has been gone for the grace, counted to the
// second from the time its taint was added, so a part that comes back
// before is never deleted, and keeps its node.
func TestPropertySequence(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		opts := nodeapply.Options{PartGrace: graceGen().Draw(t, "grace")}
		grace := opts.PartGrace
		if grace <= 0 {
			grace = nodeapply.DefaultGrace
		}
		pool := []string{"b", "c", "d", "keep"}
		cluster := map[string]parts.Node{"keep": served("keep", 0)}
		for _, name := range pool[:3] {
			if rapid.Bool().Draw(t, "served "+name) {
				cluster[name] = served(name, 0)
			}
		}
		now := t0
		for step := range rapid.IntRange(1, 16).Draw(t, "pings") {
			now = now.Add(time.Duration(rapid.Int64Range(-2_000, 40_000).Draw(t, "dt ms")) * time.Millisecond)
			ping := nodeapply.Ping{At: now}
			if rapid.IntRange(0, 19).Draw(t, "timeless") == 0 {
				ping.At = time.Time{}
			}
			switch rapid.IntRange(0, 5).Draw(t, "kind") {
			case 0:
				ping.Failure = "timeout after 3s"
			case 1: // no news
			default:
				var ps []pingstatus.Part
				for _, name := range pool {
					if name == "keep" || rapid.Bool().Draw(t, "lists "+name) {
						ps = append(ps, part(name, fmt.Sprint(step+1)))
					}
				}
				reply := rawListing(ps...)
				reply.PartsIncomplete = rapid.IntRange(0, 4).Draw(t, "incomplete") == 0
				ping.Reply = judge(reply)
			}
			for _, name := range pool {
				if n, ok := cluster[name]; ok {
					n.Pods = rapid.SampledFrom([]int{0, 0, 1, 2}).Draw(t, "pods "+name)
					cluster[name] = n
				}
			}
			nodes := make([]parts.Node, 0, len(cluster))
			for _, name := range pool {
				if n, ok := cluster[name]; ok {
					nodes = append(nodes, n)
				}
			}
			got := parts.Step(ping, nodes, opts)
			checkLaws(t, ping, nodes, opts, got)
			for _, d := range got {
				if d.Part == "keep" {
					checkKept(t, ping, cluster["keep"].Node, d)
				}
				switch d.Action {
				case parts.Register:
					cluster[d.Part] = parts.Node{Part: d.Part, Node: markAfter(served(d.Part, 0).Node, d.NodePing(ping))}
				case parts.Ping, parts.Leave:
					n := cluster[d.Part]
					n.Node = markAfter(n.Node, d.NodePing(ping))
					cluster[d.Part] = n
				case parts.Delete:
					since, _ := lastGone(d.Node)
					if gone := ping.At.UTC().Truncate(time.Second).Sub(since.UTC().Truncate(time.Second)); gone < grace {
						t.Fatalf("ping %d: %v, gone for %v only", step+1, d, gone)
					}
					delete(cluster, d.Part)
				}
			}
		}
	})
}

// checkKept checks the decision for part "keep", which every listing
// lists: Ping on its node, with its entry's patch, or none without a
// list.
func checkKept(t *rapid.T, ping nodeapply.Ping, node *corev1.Node, d parts.Decision) {
	var want *pingstatus.NodePatch
	if ping.Reached() && ping.Reply != nil {
		i := slices.IndexFunc(ping.Reply.Parts, func(p pingstatus.Part) bool { return p.Name == "keep" })
		want = &ping.Reply.Parts[i].Patch
	}
	if d.Action != parts.Ping || d.Node != node || d.Patch != want {
		t.Fatalf("part keep: %v, want Ping on its node with its patch %v", d, want != nil)
	}
}
