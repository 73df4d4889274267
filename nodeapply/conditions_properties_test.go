package nodeapply_test

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"pgregory.net/rapid"

	"github.com/pingnode/pingnode/internal/gen"
	"github.com/pingnode/pingnode/internal/kuberules"
	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/pingstatus"
)

// conditionOptionsGen draws options for the reachability laws.
func conditionOptionsGen() *rapid.Generator[nodeapply.Options] {
	return rapid.Custom(func(t *rapid.T) nodeapply.Options {
		opts := optionsGen(true).Draw(t, "taint options")
		opts.Grace = rapid.SampledFrom([]time.Duration{0, -1, 10 * time.Second, 50 * time.Second, 5 * time.Minute}).Draw(t, "grace")
		opts.NoGrace = rapid.IntRange(0, 4).Draw(t, "no grace") == 0
		opts.ConnectivityCondition = rapid.SampledFrom([]corev1.NodeConditionType{"", "example.com/Connectivity"}).Draw(t, "connectivity type")
		opts.KeepPingResponse = rapid.Bool().Draw(t, "ping-response annotation")
		opts.VirtualNodeConditions = rapid.Bool().Draw(t, "virtual node conditions")
		opts.Unreachable = rapid.SampledFrom([]nodeapply.Unreachable{nodeapply.UnreachableNotReady, nodeapply.UnreachableNoSchedule}).Draw(t, "unreachable")
		opts.NotReadyAfter = rapid.SampledFrom([]time.Duration{0, 5 * time.Second, 90 * time.Second}).Draw(t, "not ready after")
		if rapid.Bool().Draw(t, "heartbeats") {
			opts.HeartbeatInterval = time.Minute
		}
		return opts
	})
}

func connectivityType(opts nodeapply.Options) corev1.NodeConditionType {
	if opts.ConnectivityCondition == "" {
		return nodeapply.DefaultConnectivityCondition
	}
	return opts.ConnectivityCondition
}

func graceOf(opts nodeapply.Options) time.Duration {
	switch {
	case opts.NoGrace:
		return -1 // at once, even on a clock that went back
	case opts.Grace <= 0:
		return nodeapply.DefaultGrace
	}
	return opts.Grace
}

// failingSince is when the run of failures under way began, as the node
// says it: the connectivity condition's transition time while it is False;
// zero when it is not.
func failingSince(node *corev1.Node, conn corev1.NodeConditionType) time.Time {
	if c := condition(node, conn); c != nil && c.Status == corev1.ConditionFalse {
		return c.LastTransitionTime.Time
	}
	return time.Time{}
}

func condition(node *corev1.Node, typ corev1.NodeConditionType) *corev1.NodeCondition {
	for i := range node.Status.Conditions {
		if node.Status.Conditions[i].Type == typ {
			return &node.Status.Conditions[i]
		}
	}
	return nil
}

// pingStep draws the next ping: answered with a reply, or failed in one of
// a few ways; at a time that usually moves forward, to the second or not,
// and sometimes back.
func pingStep(t *rapid.T, last time.Time, earlier *pingstatus.NodePatch) nodeapply.Ping {
	at := last.Add(time.Duration(rapid.IntRange(-30, 90).Draw(t, "seconds later")) * time.Second)
	if rapid.IntRange(0, 3).Draw(t, "sub-second") == 0 {
		at = at.Add(time.Duration(rapid.IntRange(1, 999).Draw(t, "ms")) * time.Millisecond)
	}
	if rapid.IntRange(0, 2).Draw(t, "fails") == 0 {
		ping := nodeapply.Ping{At: at, Failure: rapid.SampledFrom([]string{"HTTP 500", "timeout after 3s", "connection refused", "bad\x00\xff"}).Draw(t, "failure")}
		if rapid.IntRange(0, 3).Draw(t, "with a reply") == 0 {
			ping.Reply = validPatch(t) // ignored
		}
		return ping
	}
	ping := nodeapply.Ping{At: at, Body: []byte(rapid.SampledFrom([]string{"ok", `{"status":"ok"}`, "caf\xe9\n"}).Draw(t, "body"))}
	if rapid.Bool().Draw(t, "news") {
		ping.Reply = nextPing(t, earlier)
	}
	return ping
}

// virtualTypes are the conditions that Options.VirtualNodeConditions sets.
var virtualTypes = []corev1.NodeConditionType{corev1.NodeMemoryPressure, corev1.NodeDiskPressure, corev1.NodePIDPressure, corev1.NodeNetworkUnavailable}

// ours are the types of the conditions a ping with a time sets under opts.
func ours(opts nodeapply.Options) []corev1.NodeConditionType {
	types := []corev1.NodeConditionType{corev1.NodeReady, connectivityType(opts)}
	if opts.VirtualNodeConditions {
		types = append(types, virtualTypes...)
	}
	return types
}

// withoutOurs is the node's conditions but those of the given types, in
// order.
func withoutOurs(conditions []corev1.NodeCondition, types []corev1.NodeConditionType) []corev1.NodeCondition {
	return slices.DeleteFunc(slices.Clone(conditions), func(c corev1.NodeCondition) bool {
		return slices.Contains(types, c.Type)
	})
}

// TestPropertyReachabilityLaws runs sequences of pings on nodes with any
// conditions and checks, at every ping:
//   - the input is never modified, and the output is valid;
//   - a condition's lastTransitionTime moves only when its status moves,
//     and then to the ping's time (to the second);
//   - Ready never turns False before the grace has passed since the first
//     failure of the current run of failures (to the second), nor, under
//     UnreachableNoSchedule, before NotReadyAfter (never without it);
//   - an answered ping always ends with both conditions True;
//   - with VirtualNodeConditions, every ping ends with MemoryPressure,
//     DiskPressure, PIDPressure and NetworkUnavailable False for the
//     reason VirtualNode, an existing one in its place and a new one at
//     the end;
//   - a failed ping changes nothing but the conditions, the ping-response
//     annotation and the unreachable taint, and the connectivity condition
//     is False;
//   - other conditions, and their order, never change;
//   - the same ping again changes nothing;
//   - an answered ping on a node that was already answered, with no news,
//     changes nothing (without HeartbeatInterval).
func TestPropertyReachabilityLaws(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		opts := conditionOptionsGen().Draw(t, "opts")
		conn := connectivityType(opts)
		node, earlier := nodeWithHistory(t, opts)
		node.Status.Conditions = gen.Conditions(conn, t0).Draw(t, "conditions")

		// The run of failures under way, from what the node says at the
		// start: the connectivity condition False since its transition.
		runStart := failingSince(node, conn)
		at := t0
		for step := range rapid.IntRange(1, 8).Draw(t, "pings") {
			ping := pingStep(t, at, earlier)
			at = ping.At
			sec := at.Truncate(time.Second)
			if !ping.Reached() && runStart.IsZero() {
				runStart = sec
			}
			before := node.DeepCopy()
			res := applyChecked(t, step, node, ping, opts)
			out := res.Node
			for _, typ := range ours(opts) {
				b, a := condition(before, typ), condition(out, typ)
				switch {
				case b != nil && a == nil:
					t.Fatalf("ping %d: %s removed", step, typ)
				case b != nil && b.Status == a.Status && !b.LastTransitionTime.Equal(&a.LastTransitionTime):
					t.Fatalf("ping %d: %s stayed %s but its transition time moved from %s to %s", step, typ, a.Status, b.LastTransitionTime, a.LastTransitionTime)
				case (b == nil || b.Status != a.Status) && a != nil && !a.LastTransitionTime.Time.Equal(sec):
					t.Fatalf("ping %d: %s turned %s with transition time %s, want the ping's %s", step, typ, a.Status, a.LastTransitionTime, sec)
				}
			}
			ready, connectivity := condition(out, corev1.NodeReady), condition(out, conn)
			if b := condition(before, corev1.NodeReady); ready != nil && ready.Status == corev1.ConditionFalse && (b == nil || b.Status != corev1.ConditionFalse) {
				if g := graceOf(opts); g >= 0 && sec.Sub(runStart) < g {
					t.Fatalf("ping %d: Ready turned False at %s, %s after the run of failures began at %s; the grace is %s", step, sec, sec.Sub(runStart), runStart, g)
				}
				if opts.Unreachable == nodeapply.UnreachableNoSchedule && (opts.NotReadyAfter <= 0 || sec.Sub(runStart) < opts.NotReadyAfter) {
					t.Fatalf("ping %d: Ready turned False at %s, %s after the run of failures began at %s, under NoSchedule with NotReadyAfter %s", step, sec, sec.Sub(runStart), runStart, opts.NotReadyAfter)
				}
			}
			if ping.Reached() {
				runStart = time.Time{}
				if ready == nil || ready.Status != corev1.ConditionTrue || connectivity == nil || connectivity.Status != corev1.ConditionTrue {
					t.Fatalf("ping %d: answered, but Ready %v and connectivity %v", step, ready, connectivity)
				}
			} else {
				if connectivity == nil || connectivity.Status != corev1.ConditionFalse {
					t.Fatalf("ping %d: failed, but connectivity %v", step, connectivity)
				}
				rest, restBefore := out.DeepCopy(), before.DeepCopy()
				for _, n := range []*corev1.Node{rest, restBefore} {
					n.Status.Conditions = nil
					n.Spec.Taints = withoutFence(n.Spec.Taints)
					delete(n.Annotations, nodeapply.PingResponseAnnotation)
					if len(n.Annotations) == 0 {
						n.Annotations = nil
					}
				}
				if diff := cmp.Diff(restBefore, rest, equateQuantities); diff != "" {
					t.Fatalf("ping %d: a failed ping changed more than the conditions:\n%s", step, diff)
				}
			}
			if opts.VirtualNodeConditions {
				checkVirtual(t, step, before, out)
			}
			if diff := cmp.Diff(withoutOurs(before.Status.Conditions, ours(opts)), withoutOurs(out.Status.Conditions, ours(opts)), cmpopts.EquateEmpty()); diff != "" {
				t.Fatalf("ping %d: other conditions changed:\n%s", step, diff)
			}
			if again := nodeapply.Apply(out, ping, opts); len(again.Changes) != 0 {
				t.Fatalf("ping %d: the same ping again changes %v", step, again.Changes)
			}
			if ping.Reached() && opts.HeartbeatInterval == 0 && !opts.KeepPingResponse {
				later := nodeapply.Ping{At: sec.Add(time.Duration(rapid.IntRange(0, 3600).Draw(t, "steady later")) * time.Second)}
				if steady := nodeapply.Apply(out, later, opts); len(steady.Changes) != 0 {
					t.Fatalf("ping %d: a later answered ping with no news changes %v", step, steady.Changes)
				}
			}
			if ping.Reached() && ping.Reply != nil {
				earlier = ping.Reply
			}
			node = out
		}
	})
}

// checkVirtual fails unless out has the virtual node's four conditions
// False for the reason VirtualNode, each that before had in its place
// (the types before the first one before lacked stand as they stood), the
// new ones at the end.
func checkVirtual(t *rapid.T, step int, before, out *corev1.Node) {
	for _, typ := range virtualTypes {
		c := condition(out, typ)
		if c == nil || c.Status != corev1.ConditionFalse || c.Reason != nodeapply.ReasonVirtualNode || c.Message == "" {
			t.Fatalf("ping %d: %s is %v, want False for the reason %s", step, typ, c, nodeapply.ReasonVirtualNode)
		}
	}
	n := len(before.Status.Conditions)
	if len(out.Status.Conditions) < n {
		t.Fatalf("ping %d: %d conditions before, %d after", step, n, len(out.Status.Conditions))
	}
	for i := range before.Status.Conditions {
		if got, want := out.Status.Conditions[i].Type, before.Status.Conditions[i].Type; got != want {
			t.Fatalf("ping %d: condition %d is %s, was %s: a condition moved", step, i, got, want)
		}
	}
}

// TestSteadyReachablePingDoesNotAllocate: a steady ping with conditions in
// play (both True already, the same news), with or without what the
// provider's pods hold, with or without the virtual node conditions, makes no
// copy and, but for its taints' merge (TestSteadyPingMakesNoCopy), no
// allocation.
func TestSteadyReachablePingDoesNotAllocate(t *testing.T) {
	for _, virtual := range []bool{false, true} {
		for _, held := range []corev1.ResourceList{nil, {corev1.ResourceCPU: resource.MustParse("8"), corev1.ResourceMemory: resource.MustParse("16Gi")}} {
			opts := nodeapply.Options{VirtualNodeConditions: virtual}
			node, patch := steady(t)
			ping := nodeapply.Ping{Reply: withoutTaints(patch), At: t0, Held: held}
			node = nodeapply.Apply(node, ping, opts).Node
			ping.At = t0.Add(time.Hour)
			var res nodeapply.Result
			allocs := testing.AllocsPerRun(100, func() { res = nodeapply.Apply(node, ping, opts) })
			if allocs != 0 {
				t.Errorf("virtual %v, held %v: a steady reachable ping allocates %v times, want 0", virtual, held, allocs)
			}
			if res.Node != node || len(res.Changes) != 0 {
				t.Errorf("virtual %v, held %v: a steady reachable ping returned a new node or changes: %v", virtual, held, res.Changes)
			}
		}
	}
}

// applyChecked applies ping to node, the step-th of a sequence, and fails
// unless Apply left its input as it was and returned a node the API
// server takes.
func applyChecked(t *rapid.T, step int, node *corev1.Node, ping nodeapply.Ping, opts nodeapply.Options) nodeapply.Result {
	before := node.DeepCopy()
	res := nodeapply.Apply(node, ping, opts)
	if diff := nodeDiff(before, node); diff != "" {
		t.Fatalf("ping %d: Apply modified its input:\n%s", step, diff)
	}
	if p := kuberules.NodeProblems(res.Node); p != nil {
		t.Fatalf("ping %d: invalid node: %v", step, p)
	}
	return res
}
