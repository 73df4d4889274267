package nodeapply_test

// The properties of this file are of the taints: the plugin's applied,
// the others kept, and the ownership annotation that tells them apart.

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"pgregory.net/rapid"

	"github.com/pingnode/pingnode/internal/kuberules"
	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/pingstatus"
)

func TestPropertyForeignAndProtectedTaintsSurvive(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		opts := optionsGen(false).Draw(t, "opts")
		node := withPluginHistory(t, opts)
		owned := ownedIDs(node)
		res := nodeapply.Apply(node, nodeapply.Ping{Reply: patchGen().Draw(t, "patch")}, opts)
		for _, taint := range node.Spec.Taints {
			if isBackendFull(taint) {
				continue // pingnode's own, which the reply's news of cpu and memory decides (rule backend-full)
			}
			id := kuberules.IDOf(&taint)
			protected := kuberules.IsProtectedKey(taint.Key, opts.Reply.ProtectedKeys) || kuberules.IsReservedKey(taint.Key)
			if owned[id] && !protected {
				continue // the plugin's: may change
			}
			if !hasTaint(res.Node, taint) {
				t.Fatalf("foreign or protected taint %v is gone or changed: %v", taint, res.Node.Spec.Taints)
			}
		}
	})
}

// TestPropertyPatchIsApplied: every valid quantity of the patch ends in
// capacity and allocatable, and every plugin taint stands on the node
// (as the plugin's, or already as someone else's with the same key and
// effect).
func TestPropertyPatchIsApplied(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		opts := optionsGen(true).Draw(t, "opts")
		node, earlier := nodeWithHistory(t, opts)
		ownedBefore := ownedIDs(node)
		patch := nextPing(t, earlier)
		if cpu, ok := node.Status.Capacity[corev1.ResourceCPU]; ok && rapid.Bool().Draw(t, "report capacity cpu") {
			if patch.Resources == nil { // the node's capacity, when allocatable may be lower
				patch.Resources = corev1.ResourceList{}
			}
			patch.Resources[corev1.ResourceCPU] = cpu.DeepCopy()
		}
		res := nodeapply.Apply(node, nodeapply.Ping{Reply: patch}, opts)
		for name, q := range patch.Resources {
			c, okc := res.Node.Status.Capacity[name]
			a, oka := res.Node.Status.Allocatable[name]
			if !okc || !oka || c.Cmp(q) != 0 || a.Cmp(q) != 0 {
				t.Fatalf("%s = %s not applied: capacity %s, allocatable %s", name, q.String(), c.String(), a.String())
			}
		}
		for _, w := range patch.Taints {
			if kuberules.IsProtectedKey(w.Key, opts.Reply.ProtectedKeys) {
				continue
			}
			found := false
			for _, taint := range res.Node.Spec.Taints {
				found = found || kuberules.IDOf(&taint) == kuberules.IDOf(&w) && (taint.Value == w.Value || !opts.ReplaceAllTaints)
			}
			if !found {
				t.Fatalf("plugin taint %v missing from %v", w, res.Node.Spec.Taints)
			}
		}
		if patch.ReplaceTaints && !opts.ReplaceAllTaints {
			owned := ownedIDs(res.Node)
			for _, taint := range res.Node.Spec.Taints {
				if owned[kuberules.IDOf(&taint)] && !wantsOrKeeps(patch, &taint) {
					t.Fatalf("%v is still the plugin's, but the plugin no longer lists it", taint)
				}
			}
			for _, taint := range node.Spec.Taints { // a kept key keeps the plugin's taints it had
				if ownedBefore[kuberules.IDOf(&taint)] && slices.Contains(patch.KeptTaintKeys, taint.Key) && !wants(patch, &taint) && !hasTaint(res.Node, taint) {
					t.Fatalf("%v was the plugin's and its key is kept, but it is gone", taint)
				}
			}
		}
	})
}

func wantsOrKeeps(p *pingstatus.NodePatch, taint *corev1.Taint) bool {
	return wants(p, taint) || slices.Contains(p.KeptTaintKeys, taint.Key)
}

func wants(p *pingstatus.NodePatch, taint *corev1.Taint) bool {
	for _, w := range p.Taints {
		if kuberules.IDOf(&w) == kuberules.IDOf(taint) {
			return true
		}
	}
	return false
}

func hasTaint(node *corev1.Node, want corev1.Taint) bool {
	for _, t := range node.Spec.Taints {
		if t.Key == want.Key && t.Value == want.Value && t.Effect == want.Effect {
			return true
		}
	}
	return false
}

// ownedIDs reads the ownership annotation the way a reader of the
// documented format would.
func ownedIDs(node *corev1.Node) map[kuberules.TaintID]bool {
	owned := map[kuberules.TaintID]bool{}
	for _, t := range node.Spec.Taints {
		for _, entry := range splitOwned(node.Annotations[nodeapply.DefaultOwnershipAnnotation]) {
			if entry == kuberules.IDOf(&t).String() {
				owned[kuberules.IDOf(&t)] = true
			}
		}
	}
	return owned
}

func splitOwned(s string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ',' {
			if i > start {
				out = append(out, s[start:i])
			}
			start = i + 1
		}
	}
	return out
}
