package nodeapply_test

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"pgregory.net/rapid"

	"github.com/pingnode/pingnode/internal/gen"
	"github.com/pingnode/pingnode/nodeapply"
)

// isFence reports whether t is pingnode's unreachable taint: its key with
// the effect NoSchedule.
func isFence(t corev1.Taint) bool {
	return t.Key == nodeapply.UnreachableTaintKey && t.Effect == corev1.TaintEffectNoSchedule
}

// withoutFence returns taints without pingnode's unreachable taint, in
// order; nil when none is left.
func withoutFence(taints []corev1.Taint) []corev1.Taint {
	out := slices.DeleteFunc(slices.Clone(taints), isFence)
	if len(out) == 0 {
		return nil
	}
	return out
}

// fences counts pingnode's unreachable taints on node.
func fences(node *corev1.Node) int {
	n := 0
	for _, t := range node.Spec.Taints {
		if isFence(t) {
			n++
		}
	}
	return n
}

// TestPropertyUnreachableTaint runs sequences of pings, under either
// policy, on nodes with any taints (among them the unreachable taint as
// an earlier run left it, and one with its key and another effect, which
// is not pingnode's) and checks at every ping:
//   - an answered ping, with a time or without, leaves no unreachable
//     taint behind;
//   - after a failed ping with a time, the node has exactly one
//     unreachable taint when the policy is UnreachableNoSchedule and the
//     run of failures has lasted the grace, and none otherwise; a failed
//     ping without a time leaves it as it was;
//   - a failed ping leaves every other taint exactly as it was (order,
//     values, times), and an answered one does to the other taints what it
//     does on the same node without the unreachable taint: pingnode's
//     taint never removes or changes one it does not own;
//   - the node read back from JSON, as a restarted provider reads it,
//     gives the same changes and the same node: the taint's state lives on
//     the node.
func TestPropertyUnreachableTaint(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		opts := conditionOptionsGen().Draw(t, "opts")
		conn := connectivityType(opts)
		node, earlier := nodeWithHistory(t, opts)
		node.Status.Conditions = gen.Conditions(conn, t0).Draw(t, "conditions")
		for _, extra := range []corev1.Taint{
			{Key: nodeapply.UnreachableTaintKey, Effect: corev1.TaintEffectNoSchedule},
			{Key: nodeapply.UnreachableTaintKey, Effect: corev1.TaintEffectNoExecute},
		} {
			if rapid.Bool().Draw(t, "has "+extra.ToString()) {
				at := rapid.IntRange(0, len(node.Spec.Taints)).Draw(t, "where")
				node.Spec.Taints = slices.Insert(slices.Clone(node.Spec.Taints), at, extra)
			}
		}
		runStart := failingSince(node, conn)
		at := t0
		for step := range rapid.IntRange(1, 8).Draw(t, "pings") {
			ping := pingStep(t, at, earlier)
			at = ping.At
			if rapid.IntRange(0, 5).Draw(t, "no time") == 0 {
				ping.At = time.Time{}
			}
			sec := ping.At.Truncate(time.Second)
			if !ping.Reached() && !ping.At.IsZero() && runStart.IsZero() {
				runStart = sec
			}
			res := nodeapply.Apply(node, ping, opts)
			out := res.Node

			switch {
			case ping.Reached():
				if n := fences(out); n != 0 {
					t.Fatalf("ping %d: answered, and %d unreachable taints are left: %v", step, n, out.Spec.Taints)
				}
				bare := node.DeepCopy()
				bare.Spec.Taints = withoutFence(bare.Spec.Taints)
				if diff := cmp.Diff(withoutFence(nodeapply.Apply(bare, ping, opts).Node.Spec.Taints), withoutFence(out.Spec.Taints)); diff != "" {
					t.Fatalf("ping %d: the unreachable taint changed what an answered ping does to the other taints (-without +with):\n%s", step, diff)
				}
			case ping.At.IsZero():
				if fences(out) != fences(node) {
					t.Fatalf("ping %d: a failed ping without a time took the unreachable taints from %d to %d", step, fences(node), fences(out))
				}
			default:
				want := 0
				pastGrace := opts.NoGrace || max(sec.Sub(runStart), 0) >= graceOf(opts)
				if opts.Unreachable == nodeapply.UnreachableNoSchedule && pastGrace {
					want = 1
				}
				if n := fences(out); n != want {
					t.Fatalf("ping %d: failed %s after the run began at %s (grace %s, policy %s): %d unreachable taints, want %d",
						step, sec.Sub(runStart), runStart, graceOf(opts), opts.Unreachable, n, want)
				}
			}
			if !ping.Reached() {
				if diff := cmp.Diff(withoutFence(node.Spec.Taints), withoutFence(out.Spec.Taints)); diff != "" {
					t.Fatalf("ping %d: a failed ping changed taints that are not pingnode's (-before +after):\n%s", step, diff)
				}
			}
			restarted := nodeapply.Apply(roundTrip(t, node), ping, opts)
			if diff := cmp.Diff(res.Changes, restarted.Changes); diff != "" {
				t.Fatalf("ping %d: read back from JSON, the node changes otherwise (-in memory +read back):\n%s", step, diff)
			}
			if diff := cmp.Diff(out.Spec.Taints, restarted.Node.Spec.Taints); diff != "" {
				t.Fatalf("ping %d: read back from JSON, the taints come out otherwise (-in memory +read back):\n%s", step, diff)
			}
			if ping.Reached() {
				if !ping.At.IsZero() { // without a time, the conditions say the run goes on
					runStart = time.Time{}
				}
				if ping.Reply != nil {
					earlier = ping.Reply
				}
			}
			node = out
		}
	})
}
