package nodeapply_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"pgregory.net/rapid"

	"github.com/pingnode/pingnode/internal/gen"
	"github.com/pingnode/pingnode/internal/kuberules"
	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/pingstatus"
)

// heldGen draws what a provider's own pods hold: some of cpu, memory,
// pods, ephemeral-storage, huge pages and extended resources, whole and
// within the limits.
func heldGen() *rapid.Generator[corev1.ResourceList] {
	return rapid.Custom(func(t *rapid.T) corev1.ResourceList {
		if rapid.IntRange(0, 4).Draw(t, "nil held") == 0 {
			return nil
		}
		held := corev1.ResourceList{}
		for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourcePods, corev1.ResourceEphemeralStorage, "hugepages-2Mi"} {
			if rapid.Bool().Draw(t, "holds "+string(name)) {
				held[name] = resource.MustParse(gen.WholeQuantity(0).Draw(t, "held "+string(name)))
			}
		}
		for range rapid.IntRange(0, 2).Draw(t, "held extended") {
			held[gen.ExtendedResourceName().Draw(t, "held name")] = resource.MustParse(gen.WholeQuantity(0).Draw(t, "held value"))
		}
		return held
	})
}

// TestPropertyHeld: with what the provider's pods hold, every resource
// the reply names is written as available + held (as it is when the
// reply's basis is total), to capacity and allocatable; held for a resource the reply omits changes nothing; an
// empty held gives exactly the result without it; the same ping twice
// changes nothing.
func TestPropertyHeld(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		opts := optionsGen(true).Draw(t, "opts")
		node, earlier := nodeWithHistory(t, opts)
		patch := nextPing(t, earlier)
		patch.Basis = rapid.SampledFrom([]pingstatus.Basis{"", pingstatus.BasisAvailable, pingstatus.BasisTotal}).Draw(t, "basis")
		held := heldGen().Draw(t, "held")
		res := nodeapply.Apply(node, nodeapply.Ping{Reply: patch, Held: held}, opts)
		out := res.Node

		for name, available := range patch.Resources {
			want := available.DeepCopy()
			if h, ok := held[name]; ok && patch.Basis != pingstatus.BasisTotal {
				want.Add(h)
				if kuberules.TooLarge(name, want) { // refused: the reply's figure alone
					want = available
				}
			}
			for _, list := range []corev1.ResourceList{out.Status.Capacity, out.Status.Allocatable} {
				if got, ok := list[name]; !ok || got.Cmp(want) != 0 {
					t.Fatalf("%s: reply %s, held %v: node has %v, want %s", name, available.String(), held[name], got, want.String())
				}
			}
		}
		for name := range held {
			if _, named := patch.Resources[name]; named {
				continue
			}
			for _, l := range []struct{ before, after corev1.ResourceList }{
				{node.Status.Capacity, out.Status.Capacity}, {node.Status.Allocatable, out.Status.Allocatable},
			} {
				b, hadBefore := l.before[name]
				a, hasAfter := l.after[name]
				if hadBefore != hasAfter || hadBefore && b.Cmp(a) != 0 {
					t.Fatalf("%s is not in the reply, but held %v changed it from %v to %v", name, held[name], b, a)
				}
			}
		}

		without := nodeapply.Apply(node, nodeapply.Ping{Reply: patch}, opts)
		empty := nodeapply.Apply(node, nodeapply.Ping{Reply: patch, Held: corev1.ResourceList{}}, opts)
		if diff := cmp.Diff(without.Changes, empty.Changes); diff != "" {
			t.Fatalf("an empty held changes other things than no held (-none +empty):\n%s", diff)
		}
		if diff := cmp.Diff(without.Node, empty.Node, exactQuantities); diff != "" {
			t.Fatalf("an empty held gives another node than no held (-none +empty):\n%s", diff)
		}

		if again := nodeapply.Apply(out, nodeapply.Ping{Reply: patch, Held: held}, opts); len(again.Changes) != 0 {
			t.Fatalf("the same ping with the same held again changes %v", again.Changes)
		}
	})
}
