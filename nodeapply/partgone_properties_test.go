package nodeapply_test

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"pgregory.net/rapid"

	"github.com/pingnode/pingnode/internal/gen"
	"github.com/pingnode/pingnode/nodeapply"
)

// isPartGone reports whether t is pingnode's part-gone taint: its key
// with the effect NoSchedule.
func isPartGone(t corev1.Taint) bool {
	return t.Key == nodeapply.PartGoneTaintKey && t.Effect == corev1.TaintEffectNoSchedule
}

// partGones returns node's part-gone taints, in order.
func partGones(node *corev1.Node) []corev1.Taint { return taintsThat(node, isPartGone) }

// taintsThat returns node's taints that is holds of, in order; nil for
// none.
func taintsThat(node *corev1.Node, is func(corev1.Taint) bool) []corev1.Taint {
	var out []corev1.Taint
	for _, t := range node.Spec.Taints {
		if is(t) {
			out = append(out, t)
		}
	}
	return out
}

// withoutPingnode returns taints without pingnode's own (the
// unreachable, the part-gone and the backend-full taint), in order; nil
// when none is left.
func withoutPingnode(taints []corev1.Taint) []corev1.Taint {
	out := slices.DeleteFunc(withoutFence(taints), func(t corev1.Taint) bool { return isPartGone(t) || isBackendFull(t) })
	if len(out) == 0 {
		return nil
	}
	return out
}

func partGraceOf(opts nodeapply.Options) time.Duration {
	if opts.PartGrace <= 0 {
		return nodeapply.DefaultGrace
	}
	return opts.PartGrace
}

// partPing draws the next ping of a part's node: listed (answered, as
// pingStep draws it), Unlisted (sometimes with a reply or what the pods
// hold, both ignored), or failed (sometimes saying Unlisted, ignored); at
// a time that usually moves forward, sometimes back, and sometimes none.
func partPing(t *rapid.T, last time.Time) nodeapply.Ping {
	ping := pingStep(t, last, nil)
	if rapid.IntRange(0, 2).Draw(t, "unlisted") > 0 {
		ping.Unlisted = true
		if ping.Reached() && rapid.IntRange(0, 3).Draw(t, "reply kept") > 0 {
			ping.Reply = nil
		}
		if rapid.IntRange(0, 3).Draw(t, "held") == 0 {
			ping.Held = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")}
		}
	}
	return ping
}

// partNode draws a node of any history and conditions, sometimes with the
// part-gone taint as an earlier ping (or someone's edit: no time, a
// value) left it, and sometimes with its key and another effect, which is
// not pingnode's.
func partNode(t *rapid.T, opts nodeapply.Options) *corev1.Node {
	node, _ := nodeWithHistory(t, opts)
	node.Status.Conditions = gen.Conditions(connectivityType(opts), t0).Draw(t, "conditions")
	if i := slices.IndexFunc(node.Status.Conditions, func(c corev1.NodeCondition) bool { return c.Type == corev1.NodeReady }); i >= 0 && rapid.Bool().Draw(t, "ready says part gone") {
		node.Status.Conditions[i].Reason = nodeapply.ReasonPartGone
	}
	var extras []corev1.Taint
	if rapid.Bool().Draw(t, "part gone already") {
		taint := partGone(nil)
		if rapid.IntRange(0, 3).Draw(t, "time added") > 0 {
			taint.TimeAdded = timeAt(t0.Add(time.Duration(rapid.IntRange(-600, 60).Draw(t, "left")) * time.Second))
		}
		taint.Value = rapid.SampledFrom([]string{"", "", "edited"}).Draw(t, "value")
		extras = append(extras, taint)
	}
	if rapid.Bool().Draw(t, "other effect") {
		extras = append(extras, corev1.Taint{Key: nodeapply.PartGoneTaintKey, Effect: corev1.TaintEffectNoExecute})
	}
	for _, extra := range extras {
		at := rapid.IntRange(0, len(node.Spec.Taints)).Draw(t, "where")
		node.Spec.Taints = slices.Insert(slices.Clone(node.Spec.Taints), at, extra)
	}
	return node
}

// rest is what no ping of a part's node may change but the reply: the
// node without its conditions, pingnode's own taints and the
// ping-response annotation.
func rest(node *corev1.Node) *corev1.Node {
	n := node.DeepCopy()
	n.Status.Conditions = nil
	n.Spec.Taints = withoutPingnode(n.Spec.Taints)
	delete(n.Annotations, nodeapply.PingResponseAnnotation)
	if len(n.Annotations) == 0 {
		n.Annotations = nil
	}
	return n
}

// sameReady reports whether two Ready conditions say the same: status,
// reason, message and transition (the heartbeat may move with
// HeartbeatInterval).
func sameReady(a, b *corev1.NodeCondition) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Status == b.Status && a.Reason == b.Reason && a.Message == b.Message && a.LastTransitionTime.Equal(&b.LastTransitionTime)
}

// TestPropertyPartGone runs sequences of pings of a part's node (listed,
// Unlisted, failed, with a time or not, the clock sometimes stepping
// back) under any options and checks rule part-gone at every ping:
//   - the input node is never modified, and the output is valid;
//   - an Unlisted ping that the plugin answered leaves exactly one
//     part-gone taint: the node's own, as it was (its value, and its time
//     added, or the ping's when it had none), or a new one at the end with
//     no value and the ping's time to the second (none without a time);
//   - the time added never moves while the part stays unlisted, a failed
//     ping between included: a failed ping leaves the part-gone taint as
//     it was;
//   - an answered ping without Unlisted removes it, with or without a time;
//   - Ready never turns False, nor says PartGone, before PartGrace has
//     passed since the time added: until then an Unlisted ping leaves
//     Ready True as it is (or Unknown on a node whose Ready was not True,
//     or that had none), and after it Ready is False for the reason
//     PartGone, and stays so, its transition time unmoved, even at a ping
//     whose clock stepped back into the grace; the connectivity condition
//     is True;
//   - an Unlisted ping changes nothing but the conditions, pingnode's own
//     taints and the ping-response annotation (its reply and held are
//     ignored), and leaves the key with another effect alone;
//   - the same ping again, and a later Unlisted ping that does not end the
//     grace, make no change and return the input node;
//   - the node read back from JSON, as a restarted provider reads it, gives
//     the same changes and the same taints.
func TestPropertyPartGone(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		opts := conditionOptionsGen().Draw(t, "opts")
		opts.PartGrace = rapid.SampledFrom([]time.Duration{0, -1, 10 * time.Second, 50 * time.Second, 5 * time.Minute}).Draw(t, "part grace")
		conn := connectivityType(opts)
		node := partNode(t, opts)
		// left is the part-gone taint's time while the part stays
		// unlisted, as the first Unlisted ping with a time left it.
		var left *metav1.Time
		at := t0
		for step := range rapid.IntRange(1, 8).Draw(t, "pings") {
			ping := partPing(t, at)
			at = ping.At
			if rapid.IntRange(0, 5).Draw(t, "no time") == 0 {
				ping.At = time.Time{}
			}
			sec := ping.At.Truncate(time.Second)
			before := node.DeepCopy()
			res := applyChecked(t, step, node, ping, opts)
			out := res.Node
			gonesBefore, gonesAfter := partGones(before), partGones(out)
			switch {
			case !ping.Reached():
				if diff := cmp.Diff(gonesBefore, gonesAfter); diff != "" {
					t.Fatalf("ping %d: a failed ping changed the part-gone taint (-before +after):\n%s", step, diff)
				}
			case !ping.Unlisted:
				if len(gonesAfter) != 0 {
					t.Fatalf("ping %d: answered and listed, and the part-gone taint stays: %v", step, out.Spec.Taints)
				}
				left = nil
			default:
				if len(gonesAfter) != 1 {
					t.Fatalf("ping %d: Unlisted, and %d part-gone taints: %v", step, len(gonesAfter), out.Spec.Taints)
				}
				got := gonesAfter[0]
				want := partGone(nil)
				if len(gonesBefore) == 1 {
					want = gonesBefore[0]
				} else if last := out.Spec.Taints[len(out.Spec.Taints)-1]; !isPartGone(last) {
					t.Fatalf("ping %d: a new part-gone taint is not at the end: %v", step, out.Spec.Taints)
				}
				if want.TimeAdded == nil && !ping.At.IsZero() {
					want.TimeAdded = timeAt(sec)
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Fatalf("ping %d: the part-gone taint (-want +got):\n%s", step, diff)
				}
				checkPartReady(t, step, ping, opts, before, out, got.TimeAdded)
				if c := condition(out, conn); !ping.At.IsZero() && (c == nil || c.Status != corev1.ConditionTrue) {
					t.Fatalf("ping %d: Unlisted, and the connectivity condition is %v", step, c)
				}
				if diff := cmp.Diff(rest(before), rest(out), equateQuantities, cmpopts.EquateEmpty()); diff != "" {
					t.Fatalf("ping %d: an Unlisted ping changed more than the conditions and pingnode's taints (-before +after):\n%s", step, diff)
				}
				if fences(out) != 0 {
					t.Fatalf("ping %d: answered (Unlisted), and the unreachable taint stays: %v", step, out.Spec.Taints)
				}
				checkSteadyUnlisted(t, step, ping, opts, out)
			}
			if g := partGones(out); ping.Reached() && ping.Unlisted && g[0].TimeAdded != nil {
				if left != nil && !g[0].TimeAdded.Equal(left) {
					t.Fatalf("ping %d: the part stays unlisted, but its taint's time moved from %s to %s", step, left, g[0].TimeAdded)
				}
				left = g[0].TimeAdded
			}
			if slices.ContainsFunc(before.Spec.Taints, func(t corev1.Taint) bool { return t.Key == nodeapply.PartGoneTaintKey && !isPartGone(t) }) &&
				!slices.ContainsFunc(out.Spec.Taints, func(t corev1.Taint) bool { return t.Key == nodeapply.PartGoneTaintKey && !isPartGone(t) }) &&
				!opts.ReplaceAllTaints {
				t.Fatalf("ping %d: the key with another effect, someone else's, is gone: %v", step, out.Spec.Taints)
			}
			if again := nodeapply.Apply(out, ping, opts); len(again.Changes) != 0 || again.Node != out {
				t.Fatalf("ping %d: the same ping again changes %v", step, again.Changes)
			}
			restarted := nodeapply.Apply(roundTrip(t, node), ping, opts)
			if diff := cmp.Diff(res.Changes, restarted.Changes); diff != "" {
				t.Fatalf("ping %d: read back from JSON, the node changes otherwise (-in memory +read back):\n%s", step, diff)
			}
			if diff := cmp.Diff(out.Spec.Taints, restarted.Node.Spec.Taints); diff != "" {
				t.Fatalf("ping %d: read back from JSON, the taints come out otherwise (-in memory +read back):\n%s", step, diff)
			}
			node = out
		}
	})
}

// checkPartReady checks Ready after an answered Unlisted ping: True as an
// answered ping's (PluginReachable), or Unknown (PartGone) on a node whose Ready was not True or that
// had none, while less than PartGrace has passed since the part left;
// False (PartGone) after it. Without a time, the conditions are left
// alone.
func checkPartReady(t *rapid.T, step int, ping nodeapply.Ping, opts nodeapply.Options, before, out *corev1.Node, left *metav1.Time) {
	b, a := condition(before, corev1.NodeReady), condition(out, corev1.NodeReady)
	if ping.At.IsZero() {
		if !sameReady(b, a) {
			t.Fatalf("ping %d: Unlisted without a time, and Ready moved from %v to %v", step, b, a)
		}
		return
	}
	sec := ping.At.Truncate(time.Second)
	lasted := max(sec.Sub(left.Time), 0)
	switch {
	case lasted >= partGraceOf(opts):
		if a == nil || a.Status != corev1.ConditionFalse || a.Reason != nodeapply.ReasonPartGone {
			t.Fatalf("ping %d: the part left %s ago (grace %s), and Ready is %v", step, lasted, partGraceOf(opts), a)
		}
	case b != nil && b.Status == corev1.ConditionFalse && b.Reason == nodeapply.ReasonPartGone:
		// False for the part stays False, on the same transition: a clock
		// that stepped back brings no grace back.
		if a == nil || a.Status != corev1.ConditionFalse || a.Reason != nodeapply.ReasonPartGone || !a.LastTransitionTime.Equal(&b.LastTransitionTime) {
			t.Fatalf("ping %d: the part left %s ago (grace %s) from a node whose Ready was %v, and Ready is %v", step, lasted, partGraceOf(opts), b, a)
		}
	case b == nil || b.Status != corev1.ConditionTrue:
		if a == nil || a.Status != corev1.ConditionUnknown || a.Reason != nodeapply.ReasonPartGone {
			t.Fatalf("ping %d: the part left %s ago (grace %s) from a node whose Ready was %v, and Ready is %v", step, lasted, partGraceOf(opts), b, a)
		}
	case a == nil || a.Status != corev1.ConditionTrue || a.Reason != nodeapply.ReasonPluginReachable:
		t.Fatalf("ping %d: the part left %s ago (grace %s), and Ready moved from %v to %v, not an answered ping's", step, lasted, partGraceOf(opts), b, a)
	}
}

// checkSteadyUnlisted checks that a later Unlisted ping on out, which
// already has the Unlisted ping's merge, makes no change and returns out
// itself, unless it ends the grace (without HeartbeatInterval and
// KeepPingResponse, which move on their own).
func checkSteadyUnlisted(t *rapid.T, step int, ping nodeapply.Ping, opts nodeapply.Options, out *corev1.Node) {
	if opts.HeartbeatInterval != 0 || opts.KeepPingResponse || ping.At.IsZero() {
		return
	}
	sec := ping.At.Truncate(time.Second)
	later := nodeapply.Ping{At: sec.Add(time.Duration(rapid.IntRange(0, 600).Draw(t, "steady later")) * time.Second), Unlisted: true, Held: ping.Held}
	left := partGones(out)[0].TimeAdded.Time
	ready := condition(out, corev1.NodeReady)
	endsGrace := later.At.Sub(left) >= partGraceOf(opts) && (ready == nil || ready.Status != corev1.ConditionFalse || ready.Reason != nodeapply.ReasonPartGone)
	if endsGrace {
		return
	}
	if steady := nodeapply.Apply(out, later, opts); len(steady.Changes) != 0 || steady.Node != out {
		t.Fatalf("ping %d: a later steady Unlisted ping, +%s, changes %v", step, later.At.Sub(sec), steady.Changes)
	}
}
