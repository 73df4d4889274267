package nodeapply_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"pgregory.net/rapid"

	"github.com/pingnode/pingnode/internal/gen"
	"github.com/pingnode/pingnode/internal/kuberules"
	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/pingstatus"
)

// isBackendFull reports whether t is pingnode's backend-full taint: its
// key with the effect NoSchedule.
func isBackendFull(t corev1.Taint) bool {
	return t.Key == nodeapply.BackendFullTaintKey && t.Effect == corev1.TaintEffectNoSchedule
}

// backendFulls returns node's backend-full taints, in order; nil for
// none.
func backendFulls(node *corev1.Node) []corev1.Taint { return taintsThat(node, isBackendFull) }

// withoutBackendFull returns taints without pingnode's backend-full
// taint, in order; nil when none is left.
func withoutBackendFull(taints []corev1.Taint) []corev1.Taint {
	out := slices.DeleteFunc(slices.Clone(taints), isBackendFull)
	if len(out) == 0 {
		return nil
	}
	return out
}

// hasNewsOfRoom reports whether a judged patch says anything of the
// backend's cpu or memory now, as the package comment words it (rule
// backend-full): a figure of either, or that it has none of one free.
func hasNewsOfRoom(p *pingstatus.NodePatch) bool {
	_, cpu := p.Resources[corev1.ResourceCPU]
	_, memory := p.Resources[corev1.ResourceMemory]
	return cpu || memory || len(p.Full) > 0
}

// fullValue is the value the backend-full taint has for full: the
// resources joined with ".", "" for none.
func fullValue(full []corev1.ResourceName) string {
	names := make([]string, len(full))
	for i, name := range full {
		names[i] = string(name)
	}
	return strings.Join(names, ".")
}

// roomPing draws the next ping of a node whose plugin is interLink's
// Slurm plugin, or one like it: answered with a reply of free cpu and
// memory, often a full cluster's zero (gen.RoomReply), or a patch built by
// hand, or no reply; sometimes without a time; sometimes Unlisted or
// failed, with a reply that is then ignored.
func roomPing(t *rapid.T, last time.Time, opts nodeapply.Options) nodeapply.Ping {
	at := last.Add(time.Duration(rapid.IntRange(0, 60).Draw(t, "seconds later")) * time.Second)
	body := gen.RoomReply().Draw(t, "body")
	patch, _ := pingstatus.Parse(body, opts.Reply)
	ping := nodeapply.Ping{At: at, Body: body, Reply: &patch}
	switch rapid.IntRange(0, 9).Draw(t, "ping kind") {
	case 0:
		ping.Failure = "HTTP 500"
	case 1:
		ping.Unlisted = true
	case 2:
		ping.Reply, ping.Body = nil, nil // a body without a reply is parsed (Judge)
	case 3:
		ping.Reply = validPatch(t)
	}
	if rapid.IntRange(0, 4).Draw(t, "no time") == 0 {
		ping.At = time.Time{}
	}
	return ping
}

// TestPropertyBackendFullTaint runs sequences of pings, the replies of a
// plugin that sends free cpu and memory (a full cluster's zero among
// them) and others, on nodes with any taints (among them the
// backend-full taint as an earlier run or someone's edit left it, and
// one with its key and another effect, which is not pingnode's), and
// checks at every ping:
//   - the node has the backend-full taint, once, exactly while the last
//     news of cpu and memory said the backend had none of one of them
//     free, its value what it had none of; a ping with no such news (a
//     legacy reply, no reply, a failed or Unlisted ping) leaves it as it
//     was;
//   - it is never recorded as the plugin's, and the taint with its key
//     and another effect is never touched;
//   - every other taint comes out as it does on the same node without
//     the backend-full taint: it never changes what a ping does to a
//     taint it does not own;
//   - a full backend never takes cpu or memory from the node's capacity
//     and allocatable;
//   - the output is valid, the same ping again changes nothing, and the
//     node read back from JSON, as a restarted provider reads it, gives
//     the same changes: the taint's state lives on the node.
func TestPropertyBackendFullTaint(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		opts := conditionOptionsGen().Draw(t, "opts")
		node, _ := nodeWithHistory(t, opts)
		var extras []corev1.Taint
		if rapid.Bool().Draw(t, "full already") {
			value := rapid.SampledFrom([]string{"cpu", "memory", "cpu.memory", "", "edited"}).Draw(t, "value")
			extras = append(extras, corev1.Taint{Key: nodeapply.BackendFullTaintKey, Value: value, Effect: corev1.TaintEffectNoSchedule})
		}
		if rapid.IntRange(0, 3).Draw(t, "other effect") == 0 {
			extras = append(extras, corev1.Taint{Key: nodeapply.BackendFullTaintKey, Value: "x", Effect: corev1.TaintEffectNoExecute})
		}
		for _, extra := range extras {
			if slices.ContainsFunc(node.Spec.Taints, func(t corev1.Taint) bool { return kuberules.IDOf(&t) == kuberules.IDOf(&extra) }) {
				continue
			}
			at := rapid.IntRange(0, len(node.Spec.Taints)).Draw(t, "where")
			node.Spec.Taints = slices.Insert(slices.Clone(node.Spec.Taints), at, extra)
		}
		want := backendFulls(node) // what the last news asked for, as the node says it
		otherEffect := func(n *corev1.Node) []corev1.Taint {
			return slices.DeleteFunc(slices.Clone(n.Spec.Taints), func(t corev1.Taint) bool {
				return t.Key != nodeapply.BackendFullTaintKey || t.Effect == corev1.TaintEffectNoSchedule
			})
		}
		at := t0
		for step := range rapid.IntRange(1, 8).Draw(t, "pings") {
			ping := roomPing(t, at, opts)
			if !ping.At.IsZero() {
				at = ping.At
			}
			res := nodeapply.Apply(node, ping, opts)
			out := res.Node

			var judged *pingstatus.NodePatch
			if ping.Reached() && !ping.Unlisted && ping.Reply != nil {
				judged, _ = opts.Reply.Check(ping.Reply)
			}
			if judged != nil && hasNewsOfRoom(judged) {
				want = nil
				if len(judged.Full) > 0 {
					want = []corev1.Taint{{Key: nodeapply.BackendFullTaintKey, Value: fullValue(judged.Full), Effect: corev1.TaintEffectNoSchedule}}
				}
			}
			got := backendFulls(out)
			if len(got) != len(want) || len(got) == 1 && got[0].Value != want[0].Value {
				t.Fatalf("ping %d (%q, %+v): backend-full taints %v, want %v", step, ping.Body, ping, got, want)
			}
			if diff := cmp.Diff(otherEffect(node), otherEffect(out), cmpopts.EquateEmpty()); diff != "" {
				t.Fatalf("ping %d: the taint with the backend-full key and another effect changed (-before +after):\n%s", step, diff)
			}
			for id := range ownedIDs(out) {
				if kuberules.IsPingnodeKey(id.Key) {
					t.Fatalf("ping %d: %s is recorded as the plugin's", step, id)
				}
			}
			bare := node.DeepCopy()
			bare.Spec.Taints = withoutBackendFull(bare.Spec.Taints)
			if diff := cmp.Diff(withoutBackendFull(nodeapply.Apply(bare, ping, opts).Node.Spec.Taints), withoutBackendFull(out.Spec.Taints)); diff != "" {
				t.Fatalf("ping %d: the backend-full taint changed what the ping does to the other taints (-without +with):\n%s", step, diff)
			}
			if judged != nil {
				for _, name := range judged.Full {
					for _, list := range [][2]corev1.ResourceList{{node.Status.Capacity, out.Status.Capacity}, {node.Status.Allocatable, out.Status.Allocatable}} {
						before, had := list[0][name]
						after, has := list[1][name]
						if had != has || had && before.Cmp(after) != 0 {
							t.Fatalf("ping %d: the backend has no free %s, and the node's %s went from %s to %s", step, name, name, before.String(), after.String())
						}
					}
				}
			}
			if p := kuberules.NodeProblems(out); p != nil {
				t.Fatalf("ping %d: invalid node: %v", step, p)
			}
			if again := nodeapply.Apply(out, ping, opts); len(again.Changes) != 0 {
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
