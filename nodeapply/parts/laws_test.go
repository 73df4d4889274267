package parts_test

import (
	"reflect"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/nodeapply/parts"
	"github.com/pingnode/pingnode/pingstatus"
)

// checkLaws checks what every result of Step must be, whatever the
// input: sorted by part, then node name; one decision for each node
// given and one Register for each listed part no node serves; a failed
// ping only pings, with no patch; a patch only for a listed part, its
// last entry in the reply itself, and for the first of its nodes by
// name; nothing left without a reply that answered, nothing deleted but
// by rule parts-delete, never while a pod holds the node.
func checkLaws(t tester, ping nodeapply.Ping, nodes []parts.Node, opts nodeapply.Options, got []parts.Decision) {
	t.Helper()
	grace := opts.PartGrace
	if grace <= 0 {
		grace = nodeapply.DefaultGrace
	}
	listing := ping.Reached() && ping.Reply != nil && ping.Reply.ReplaceParts
	last := map[string]int{} // a listed part's last entry
	if listing {
		for k, p := range ping.Reply.Parts {
			last[p.Name] = k
		}
	}
	servedParts := map[string]bool{}
	firstNode := map[string]string{} // a part's first node by name
	byNode := map[*corev1.Node]parts.Node{}
	for _, n := range nodes {
		if name, ok := firstNode[n.Part]; !ok || nodeName(n.Node) < name {
			firstNode[n.Part] = nodeName(n.Node)
		}
		servedParts[n.Part] = true
		byNode[n.Node] = n
	}
	want := len(nodes)
	for name := range last {
		if !servedParts[name] {
			want++
		}
	}
	if len(got) != want {
		t.Fatalf("%d decisions, want %d (%d nodes, %d new parts): %v", len(got), want, len(nodes), want-len(nodes), got)
	}
	if !slices.IsSortedFunc(got, func(x, y parts.Decision) int {
		if c := strings.Compare(x.Part, y.Part); c != 0 {
			return c
		}
		return strings.Compare(nodeName(x.Node), nodeName(y.Node))
	}) {
		t.Fatalf("decisions not sorted: %v", got)
	}
	at := ping.At.UTC().Truncate(time.Second)
	patched := map[string]bool{}
	for _, d := range got {
		_, listed := last[d.Part]
		if listing && listed && servedParts[d.Part] && nodeName(d.Node) == firstNode[d.Part] && !patched[d.Part] &&
			(d.Action != parts.Ping || d.Patch == nil) {
			t.Fatalf("%v: a listed part's first node must get Ping with its patch", d)
		}
		if d.Patch != nil {
			if !listing || !listed || d.Patch != &ping.Reply.Parts[last[d.Part]].Patch || patched[d.Part] {
				t.Fatalf("%v: not the patch of the part's last entry in the reply, given once", d)
			}
			patched[d.Part] = true
		}
		if !ping.Reached() && (d.Action != parts.Ping || d.Patch != nil) {
			t.Fatalf("%v: a failed ping must only ping, with no patch", d)
		}
		switch d.Action {
		case parts.Register:
			if d.Patch == nil || d.Node != nil || servedParts[d.Part] {
				t.Fatalf("%v: a registered part must be listed and not served", d)
			}
		case parts.Ping:
			if d.Patch != nil && nodeName(d.Node) != firstNode[d.Part] {
				t.Fatalf("%v: the patch must go to the part's first node, %s", d, firstNode[d.Part])
			}
		case parts.Leave:
			if d.Patch != nil {
				t.Fatalf("%v: Leave has no patch", d)
			}
		case parts.Delete:
			n, ok := byNode[d.Node]
			since, gone := lastGone(d.Node)
			switch {
			case !ok || d.Node == nil || d.Patch != nil:
				t.Fatalf("%v: not a node given", d)
			case n.Pods != 0:
				t.Fatalf("%v: deleted while %d pods hold it", d, n.Pods)
			case !listing || ping.Reply.PartsIncomplete:
				t.Fatalf("%v: deleted without a complete list of parts", d)
			case listed:
				t.Fatalf("%v: deleted though listed", d)
			case !gone || since.IsZero() || at.IsZero() || at.Sub(since.UTC().Truncate(time.Second)) < grace:
				t.Fatalf("%v: deleted at %v, gone %v since %v, before the grace %v", d, at, gone, since, grace)
			}
		default:
			t.Fatalf("%v: unknown action", d)
		}
	}
}

// tester is what the checks need of a *testing.T or a *rapid.T.
type tester interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
}

// lastGone returns the time added of the node's last part-gone taint
// (zero when it has none), and whether it has one.
func lastGone(n *corev1.Node) (time.Time, bool) {
	if n == nil {
		return time.Time{}, false
	}
	for i := len(n.Spec.Taints) - 1; i >= 0; i-- {
		if t := n.Spec.Taints[i]; t.Key == nodeapply.PartGoneTaintKey && t.Effect == corev1.TaintEffectNoSchedule {
			if t.TimeAdded == nil {
				return time.Time{}, true
			}
			return t.TimeAdded.Time, true
		}
	}
	return time.Time{}, false
}

func nodeName(n *corev1.Node) string {
	if n == nil {
		return ""
	}
	return n.Name
}

// snapshot is a deep copy of Step's inputs, to check that Step left
// them as they were.
type snapshot struct {
	nodes []parts.Node
	reply *pingstatus.NodePatch
	parts []pingstatus.Part // the reply's list itself, element by element
}

func snap(ping nodeapply.Ping, nodes []parts.Node) snapshot {
	s := snapshot{nodes: slices.Clone(nodes)}
	for i := range s.nodes {
		s.nodes[i].Node = s.nodes[i].Node.DeepCopy()
	}
	if ping.Reply != nil {
		r := *ping.Reply
		r.Parts = slices.Clone(r.Parts)
		for i := range r.Parts {
			r.Parts[i].Patch.Resources = r.Parts[i].Patch.Resources.DeepCopy()
		}
		s.reply, s.parts = &r, ping.Reply.Parts
	}
	return s
}

// check fails the test if ping or nodes differ from the snapshot.
func (s snapshot) check(t tester, ping nodeapply.Ping, nodes []parts.Node) {
	t.Helper()
	if !reflect.DeepEqual(s.nodes, nodes) {
		t.Fatal("Step modified its nodes")
	}
	if s.reply != nil && (!reflect.DeepEqual(s.reply, ping.Reply) || len(s.parts) > 0 && &s.parts[0] != &ping.Reply.Parts[0]) {
		t.Fatal("Step modified the reply")
	}
}
