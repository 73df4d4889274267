package parts_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/nodeapply/parts"
	"github.com/pingnode/pingnode/pingstatus"
)

// steadyParts returns n parts' nodes as a provider serves them, sorted
// by part, and a ping whose reply lists each of them, as Parse gives it:
// nothing changes.
func steadyParts(n int) (nodeapply.Ping, []parts.Node) {
	nodes := make([]parts.Node, n)
	ps := make([]pingstatus.Part, n)
	for i := range n {
		name := fmt.Sprintf("cn%05d", i)
		nodes[i] = served(name, i%3)
		ps[i] = part(name, "64")
	}
	return nodeapply.Ping{At: at(0), Reply: listing(ps...)}, nodes
}

// TestSteadyPartsAllocateOnlyTheResult pins down rule parts-cost: with every
// part listed and served, Step allocates the returned list and nothing
// else, for 50 parts as for 5,000.
func TestSteadyPartsAllocateOnlyTheResult(t *testing.T) {
	for _, n := range []int{50, 5000} {
		ping, nodes := steadyParts(n)
		var got []parts.Decision
		allocs := testing.AllocsPerRun(20, func() {
			got = parts.Step(ping, nodes, nodeapply.Options{})
		})
		if allocs != 1 {
			t.Errorf("%d parts: %v allocations, want 1 (the result)", n, allocs)
		}
		for i, d := range got {
			if d.Action != parts.Ping || d.Node != nodes[i].Node || d.Patch != &ping.Reply.Parts[i].Patch {
				t.Fatalf("%d parts: decision %d is %v", n, i, d)
			}
		}
	}
}

// TestChangingPartsAllocateOnlyTheResult pins down rule parts-cost when parts
// come, go and come back: sorted input, one allocation.
func TestChangingPartsAllocateOnlyTheResult(t *testing.T) {
	ping, nodes := steadyParts(50)
	listed := append(slices.Clone(ping.Reply.Parts[:20]), ping.Reply.Parts[30:]...) // 10 leave
	ping.Reply = listing(append(listed, part("zz", "1"))...)                        // one new
	for i := 20; i < 30; i++ {
		nodes[i] = served(nodes[i].Part, 0, goneTaint(at(-3600))) // to delete
	}
	nodes[0] = served(nodes[0].Part, 0, goneTaint(at(-10))) // back
	var got []parts.Decision
	allocs := testing.AllocsPerRun(20, func() {
		got = parts.Step(ping, nodes, nodeapply.Options{})
	})
	if allocs != 1 {
		t.Errorf("%v allocations, want 1 (the result)", allocs)
	}
	if len(got) != 51 || got[20].Action != parts.Delete || got[50].Action != parts.Register {
		t.Errorf("decisions %v", got)
	}
}

// BenchmarkSteadyParts measures Step with every part listed and served,
// for 50 and 5,000 parts: one allocation, the result, at either size.
//
//	go test ./nodeapply/parts -run '^$' -bench SteadyParts -count 10 > parts.txt
//	benchstat parts.txt
func BenchmarkSteadyParts(b *testing.B) {
	for _, n := range []int{50, 5000} {
		ping, nodes := steadyParts(n)
		b.Run(fmt.Sprintf("parts=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if got := parts.Step(ping, nodes, nodeapply.Options{}); len(got) != n {
					b.Fatal(len(got))
				}
			}
		})
	}
}
