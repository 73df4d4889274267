package nodeapply_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/pingstatus"
)

func unlisted(at time.Duration) step { return step{at: at, unlisted: true} }

// partGoneCases are pings in order on a part's node whose part the
// plugin's reply stops listing; each has a golden file in
// testdata/partgone showing, after each ping, the changes, the warnings,
// the conditions, the taints and both patches (the object patch carries
// the part-gone taint's timeAdded).
var partGoneCases = []sequenceCase{
	// The part leaves at +30s: the taint at once, with that time, and
	// Ready as it was through the grace (50 s): still at +79s (no change),
	// False at +80s (read back after a restart: the time lives on the
	// node), then steady; listed again, the taint goes and Ready is True.
	{"part-leaves-and-returns", "interlink-node.json", nodeapply.Options{}, []step{
		ok(0), unlisted(30 * time.Second), unlisted(79 * time.Second),
		{at: 80 * time.Second, unlisted: true, restart: true}, unlisted(110 * time.Second), ok(140 * time.Second),
	}},
	// A failed ping changes no part: the taint stays with its time, and
	// the grace counts from it across the failure. A failed ping that says
	// Unlisted is a failed ping, with a warning.
	{"failed-ping-while-part-gone", "interlink-node.json", nodeapply.Options{}, []step{
		ok(0), unlisted(30 * time.Second), fail(60*time.Second, "HTTP 503"), unlisted(80 * time.Second),
		{at: 90 * time.Second, failure: "HTTP 503", unlisted: true}, ok(120 * time.Second),
	}},
	// A node with no Ready gets Ready Unknown through the grace, as with
	// failures, and False after it.
	{"part-gone-no-ready", "bare-node.json", nodeapply.Options{}, []step{
		unlisted(0), unlisted(30 * time.Second), unlisted(50 * time.Second), ok(60 * time.Second),
	}},
	// PartGrace is the part's own, whatever Grace says; a reply given
	// with Unlisted is ignored with a warning, the plugin's taints stay;
	// a clock that steps back before the part left counts as no time.
	{"part-grace-option", "node-with-plugin-taints.json", nodeapply.Options{Grace: 10 * time.Second, PartGrace: 2 * time.Minute, VirtualNodeConditions: true}, []step{
		{at: 0, reply: "slurm-taints.json"}, unlisted(30 * time.Second),
		{at: 60 * time.Second, reply: "spec-example.json", unlisted: true}, unlisted(20 * time.Second),
		unlisted(149 * time.Second), unlisted(150 * time.Second), {at: 180 * time.Second, reply: "slurm-taints.json"},
	}},
	// Once Ready is False for the part it stays False, on the same
	// transition time, whatever a ping's clock says: the part leaves at
	// +10s (PartGrace 60 s), Ready is False at +75s, and a ping stamped
	// +40s (a clock stepped back into the grace) changes nothing, nor does
	// +80s. (Unknown at +40s would move the transition time, cost a write,
	// and make the node lifecycle controller swap its not-ready taint for
	// the unreachable one, restarting the pods' toleration.)
	{"part-gone-clock-steps-back", "interlink-node.json", nodeapply.Options{PartGrace: time.Minute}, []step{
		ok(0), unlisted(10 * time.Second), unlisted(75 * time.Second), unlisted(40 * time.Second), unlisted(80 * time.Second),
	}},
	// Under UnreachableNoSchedule the plugin's unreachable taint goes at
	// the Unlisted ping (it answered) and the part-gone taint comes; Ready
	// stays as the failures left it through the part's grace.
	{"unreachable-then-unlisted", "interlink-node.json", nodeapply.Options{Unreachable: nodeapply.UnreachableNoSchedule}, []step{
		ok(0), fail(30*time.Second, "connection refused"), fail(80*time.Second, "connection refused"),
		unlisted(110 * time.Second), unlisted(160 * time.Second),
	}},
}

// TestPartGoneSequences runs the part-gone cases against their goldens in
// testdata/partgone.
func TestPartGoneSequences(t *testing.T) {
	for _, tc := range partGoneCases {
		t.Run(tc.name, func(t *testing.T) { runSequence(t, tc, "partgone", true) })
	}
}

// partGone is pingnode's part-gone taint, added at added (nil for none).
func partGone(added *metav1.Time) corev1.Taint {
	return corev1.Taint{Key: nodeapply.PartGoneTaintKey, Effect: corev1.TaintEffectNoSchedule, TimeAdded: added}
}

func timeAt(t time.Time) *metav1.Time { m := metav1.NewTime(t); return &m }

// answeredNode is interlink-node.json after an answered ping a minute
// before t0 (Ready and the connectivity condition True, so that a later
// ping's changes are those of the part-gone rule alone), with taints.
func answeredNode(t *testing.T, taints ...corev1.Taint) *corev1.Node {
	t.Helper()
	node := nodeapply.Apply(readNode(t, "interlink-node.json"), nodeapply.Ping{At: t0.Add(-time.Minute)}, nodeapply.Options{}).Node.DeepCopy()
	node.Spec.Taints = taints
	return node
}

var protectedTaint = corev1.Taint{Key: nodeapply.DefaultProtectedKey, Value: "true", Effect: corev1.TaintEffectNoSchedule}

// TestPartGoneTaint pins down the part-gone taint of rule part-gone at one ping:
// where it goes, its time, what keeps it as it is, what removes it, what
// is ignored with a warning, and that no plugin may set it.
func TestPartGoneTaint(t *testing.T) {
	left := timeAt(t0.Add(-10 * time.Second))
	edited := partGone(left)
	edited.Value = "edited"
	noExecute := corev1.Taint{Key: nodeapply.PartGoneTaintKey, Effect: corev1.TaintEffectNoExecute}
	cpu := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
	for _, tc := range []struct {
		name     string
		node     *corev1.Node
		ping     nodeapply.Ping
		taints   []corev1.Taint
		changes  []string // Change.String()
		warnings []string // paths
		object   string   // in the object patch, or "" for none
	}{{
		name:    "added at the end with the ping's time to the second",
		node:    answeredNode(t, protectedTaint),
		ping:    nodeapply.Ping{At: t0.Add(700 * time.Millisecond), Unlisted: true},
		taints:  []corev1.Taint{protectedTaint, partGone(timeAt(t0))},
		changes: []string{"spec.taints[pingnode.io/part-gone:NoSchedule]: added pingnode.io/part-gone:NoSchedule"},
		object:  `{"key":"pingnode.io/part-gone","effect":"NoSchedule","timeAdded":"2026-11-30T00:00:00Z"}`,
	}, {
		name:   "one the node has stays as it is, value and time",
		node:   answeredNode(t, protectedTaint, edited),
		ping:   nodeapply.Ping{At: t0, Unlisted: true},
		taints: []corev1.Taint{protectedTaint, edited},
	}, {
		name:    "one without a time gets the ping's, in its place",
		node:    answeredNode(t, partGone(nil), protectedTaint),
		ping:    nodeapply.Ping{Unlisted: true, At: t0},
		taints:  []corev1.Taint{partGone(timeAt(t0)), protectedTaint},
		changes: []string{"spec.taints[pingnode.io/part-gone:NoSchedule].timeAdded: added 2026-11-30T00:00:00Z"},
		object:  `"taints":[{"key":"pingnode.io/part-gone","effect":"NoSchedule","timeAdded":"2026-11-30T00:00:00Z"},`,
	}, {
		name:    "a ping without a time adds it without one, and leaves the conditions",
		node:    &corev1.Node{},
		ping:    nodeapply.Ping{Unlisted: true},
		taints:  []corev1.Taint{partGone(nil)},
		changes: []string{"spec.taints[pingnode.io/part-gone:NoSchedule]: added pingnode.io/part-gone:NoSchedule"},
		object:  `"taints":[{"key":"pingnode.io/part-gone","effect":"NoSchedule"}]`,
	}, {
		name:   "a ping without a time leaves one without a time as it is",
		node:   &corev1.Node{Spec: corev1.NodeSpec{Taints: []corev1.Taint{partGone(nil)}}},
		ping:   nodeapply.Ping{Unlisted: true},
		taints: []corev1.Taint{partGone(nil)},
	}, {
		name:    "the key with another effect is not pingnode's",
		node:    answeredNode(t, protectedTaint, noExecute),
		ping:    nodeapply.Ping{At: t0, Unlisted: true},
		taints:  []corev1.Taint{protectedTaint, noExecute, partGone(timeAt(t0))},
		changes: []string{"spec.taints[pingnode.io/part-gone:NoSchedule]: added pingnode.io/part-gone:NoSchedule"},
		object:  `"timeAdded":"2026-11-30T00:00:00Z"`,
	}, {
		name:    "an answered ping without Unlisted removes it, and only it",
		node:    answeredNode(t, protectedTaint, partGone(left), noExecute),
		ping:    nodeapply.Ping{At: t0},
		taints:  []corev1.Taint{protectedTaint, noExecute},
		changes: []string{"spec.taints[pingnode.io/part-gone:NoSchedule]: removed pingnode.io/part-gone:NoSchedule"},
		object:  `"taints":[`,
	}, {
		name:    "so does one without a time",
		node:    answeredNode(t, protectedTaint, partGone(left)),
		ping:    nodeapply.Ping{},
		taints:  []corev1.Taint{protectedTaint},
		changes: []string{"spec.taints[pingnode.io/part-gone:NoSchedule]: removed pingnode.io/part-gone:NoSchedule"},
		object:  `"taints":[`,
	}, {
		name:   "a failed ping leaves it",
		node:   &corev1.Node{Spec: corev1.NodeSpec{Taints: []corev1.Taint{partGone(nil)}}},
		ping:   nodeapply.Ping{Failure: "HTTP 500"},
		taints: []corev1.Taint{partGone(nil)},
		// a failed ping without a time, as ever
		warnings: []string{"ping.at"},
	}, {
		name:     "a failed ping that says Unlisted is a failed ping",
		node:     answeredNode(t, protectedTaint),
		ping:     nodeapply.Ping{At: t0, Failure: "HTTP 500", Unlisted: true},
		taints:   []corev1.Taint{protectedTaint},
		changes:  connectivityFailed,
		warnings: []string{"ping.unlisted"},
	}, {
		name:     "a reply with Unlisted is ignored, and so is held",
		node:     answeredNode(t, protectedTaint),
		ping:     nodeapply.Ping{At: t0, Unlisted: true, Reply: &pingstatus.NodePatch{Resources: cpu, ReplaceTaints: true}, Held: cpu},
		taints:   []corev1.Taint{protectedTaint, partGone(timeAt(t0))},
		changes:  []string{"spec.taints[pingnode.io/part-gone:NoSchedule]: added pingnode.io/part-gone:NoSchedule"},
		warnings: []string{"ping.reply"},
		object:   `"timeAdded":"2026-11-30T00:00:00Z"`,
	}, {
		name:     "a hand-built patch may not set it",
		node:     answeredNode(t, protectedTaint),
		ping:     nodeapply.Ping{At: t0, Reply: &pingstatus.NodePatch{ReplaceTaints: true, Taints: []corev1.Taint{partGone(nil)}}},
		taints:   []corev1.Taint{protectedTaint},
		warnings: []string{"patch.taints[0].key"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			before := tc.node.DeepCopy()
			res := nodeapply.Apply(tc.node, tc.ping, nodeapply.Options{})
			if diff := nodeDiff(before, tc.node); diff != "" {
				t.Fatalf("Apply modified its input (-before +after):\n%s", diff)
			}
			if diff := cmp.Diff(tc.taints, res.Node.Spec.Taints, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("taints (-want +got):\n%s", diff)
			}
			var changes, warnings []string
			for _, c := range res.Changes {
				changes = append(changes, c.String())
			}
			for _, w := range res.Warnings {
				warnings = append(warnings, w.Path)
			}
			if diff := cmp.Diff(tc.changes, changes); diff != "" {
				t.Errorf("changes (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.warnings, warnings); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
			if (len(res.Changes) == 0) != (res.Node == tc.node) {
				t.Errorf("%d changes, and the input node back: %v", len(res.Changes), res.Node == tc.node)
			}
			object := string(res.ObjectPatch())
			if tc.object == "" && object != "" || !strings.Contains(object, tc.object) {
				t.Errorf("object patch %s, want one with %s", orNone(object), orNone(tc.object))
			}
			if tc.ping.Reply != nil && !tc.ping.Reached() || tc.ping.Unlisted {
				if diff := cmp.Diff(before.Status.Capacity, res.Node.Status.Capacity, equateQuantities); diff != "" {
					t.Errorf("an ignored reply changed the capacity (-before +after):\n%s", diff)
				}
			}
			if again := nodeapply.Apply(res.Node, tc.ping, nodeapply.Options{}); len(again.Changes) != 0 {
				t.Errorf("the same ping again changes %v", again.Changes)
			}
		})
	}
}

// connectivityFailed are the changes of a failed ping on answeredNode.
var connectivityFailed = []string{
	"status.conditions[InterlinkConnectivity].lastHeartbeatTime: 2026-11-29T23:59:00Z -> 2026-11-30T00:00:00Z",
	"status.conditions[InterlinkConnectivity].lastTransitionTime: 2026-11-29T23:59:00Z -> 2026-11-30T00:00:00Z",
	"status.conditions[InterlinkConnectivity].message: the plugin answered its last ping -> the plugin did not answer its last ping: HTTP 500",
	"status.conditions[InterlinkConnectivity].reason: InterlinkPingSuccessful -> InterlinkPingFailed",
	"status.conditions[InterlinkConnectivity].status: True -> False",
}

// TestSteadyUnlistedPingDoesNotAllocate: a steady Unlisted ping, on a
// node that has the part-gone taint already, within the grace and after
// it, with or without what the provider's pods hold (ignored) and the
// virtual node's conditions, is the input node back with no change, no
// copy and no allocation.
func TestSteadyUnlistedPingDoesNotAllocate(t *testing.T) {
	for _, virtual := range []bool{false, true} {
		for _, held := range []corev1.ResourceList{nil, {corev1.ResourceCPU: resource.MustParse("8")}} {
			opts := nodeapply.Options{VirtualNodeConditions: virtual}
			node, _ := steady(t)
			node = nodeapply.Apply(node, nodeapply.Ping{At: t0}, opts).Node
			node = nodeapply.Apply(node, nodeapply.Ping{At: t0, Unlisted: true}, opts).Node
			for _, later := range []time.Duration{10 * time.Second, time.Hour} {
				ping := nodeapply.Ping{At: t0.Add(later), Unlisted: true, Held: held}
				if later == time.Hour { // after the grace: Ready False, then steady
					node = nodeapply.Apply(node, ping, opts).Node
					ping.At = ping.At.Add(time.Minute)
				}
				var res nodeapply.Result
				allocs := testing.AllocsPerRun(100, func() { res = nodeapply.Apply(node, ping, opts) })
				if allocs != 0 {
					t.Errorf("virtual %v, held %v, +%s: a steady Unlisted ping allocates %v times, want 0", virtual, held, later, allocs)
				}
				if res.Node != node || len(res.Changes) != 0 || len(res.Warnings) != 0 {
					t.Errorf("virtual %v, held %v, +%s: a steady Unlisted ping returned a new node %v, changes %v, warnings %v",
						virtual, held, later, res.Node != node, res.Changes, res.Warnings)
				}
			}
		}
	}
}
