package nodeapply_test

import (
	"encoding/json"
	"maps"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"pgregory.net/rapid"

	"github.com/pingnode/pingnode/internal/gen"
	"github.com/pingnode/pingnode/internal/kuberules"
	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/pingstatus"
)

// patchGen draws a patch: most often parsed from an adversarial reply,
// sometimes built by hand from valid parts, sometimes built by hand with
// parts that pingstatus would have refused (Apply must still be safe).
func patchGen() *rapid.Generator[*pingstatus.NodePatch] {
	return rapid.Custom(func(t *rapid.T) *pingstatus.NodePatch {
		switch rapid.IntRange(0, 3).Draw(t, "patch kind") {
		case 0, 1:
			p, _ := pingstatus.Parse(gen.ReplyBody().Draw(t, "body"), pingstatus.Options{})
			return &p
		case 2:
			return validPatch(t)
		}
		p := validPatch(t)
		if p.Resources == nil {
			p.Resources = corev1.ResourceList{}
		}
		p.Resources[corev1.ResourceName(rapid.SampledFrom([]string{"cpu", "pods", "nvidia.com/gpu", "bad name!"}).Draw(t, "bad resource"))] =
			resource.MustParse(rapid.SampledFrom([]string{"-1", "1.5", "500m", "2"}).Draw(t, "bad quantity"))
		p.ReplaceTaints = true
		p.Taints = append(p.Taints, rapid.SampledFrom([]corev1.Taint{
			{Key: "bad key", Effect: corev1.TaintEffectNoSchedule},
			{Key: "a.io/x", Value: "bad value", Effect: corev1.TaintEffectNoSchedule},
			{Key: "a.io/x", Effect: "Evict"},
			{Key: kuberules.DefaultProtectedKey, Effect: corev1.TaintEffectNoSchedule},
			{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoExecute},
			{Key: gen.SharedKeys[0], Value: "dup", Effect: corev1.TaintEffectNoSchedule},
		}).Draw(t, "bad taint"))
		return p
	})
}

// validPatch draws a patch that pingstatus could have produced.
func validPatch(t *rapid.T) *pingstatus.NodePatch {
	p := &pingstatus.NodePatch{Kind: pingstatus.Structured}
	if rapid.Bool().Draw(t, "resources") {
		p.Resources = corev1.ResourceList{}
		for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourcePods, corev1.ResourceEphemeralStorage, "hugepages-2Mi"} {
			if rapid.Bool().Draw(t, "has "+string(name)) {
				p.Resources[name] = resource.MustParse(gen.WholeQuantity(1).Draw(t, string(name)))
			}
		}
		for range rapid.IntRange(0, 2).Draw(t, "accelerators") {
			p.Resources[gen.ExtendedResourceName().Draw(t, "accelerator")] = resource.MustParse(gen.WholeQuantity(0).Draw(t, "available"))
		}
	}
	if rapid.IntRange(0, 3).Draw(t, "full") == 0 { // the backend has none of these free now (rule resource-full)
		p.Full = rapid.SampledFrom([][]corev1.ResourceName{{corev1.ResourceCPU}, {corev1.ResourceMemory}, {corev1.ResourceCPU, corev1.ResourceMemory}}).Draw(t, "full resources")
		for _, name := range p.Full {
			delete(p.Resources, name)
		}
	}
	if rapid.Bool().Draw(t, "taints") {
		p.ReplaceTaints = true
		p.Taints = gen.UniqueTaints(5).Draw(t, "plugin taints")
		if rapid.IntRange(0, 2).Draw(t, "kept") == 0 {
			p.KeptTaintKeys = []string{rapid.SampledFrom(gen.SharedKeys).Draw(t, "kept key")}
		}
	}
	if rapid.Bool().Draw(t, "labels") {
		p.ReplaceLabels = true
		p.Labels = gen.Labels(5).Draw(t, "plugin labels")
		if rapid.IntRange(0, 2).Draw(t, "kept label") == 0 {
			p.KeptLabelKeys = []string{rapid.SampledFrom(gen.SharedLabelKeys).Draw(t, "kept label key")}
		}
	}
	return p
}

// optionsGen draws options: sometimes a protected key, and with
// compatMayBe, sometimes interLink 0.6.2's taint rule.
func optionsGen(compatMayBe bool) *rapid.Generator[nodeapply.Options] {
	return rapid.Custom(func(t *rapid.T) nodeapply.Options {
		return nodeapply.Options{
			Reply: pingstatus.Options{
				ProtectedKeys:   rapid.SliceOfN(rapid.SampledFrom(gen.SharedKeys), 0, 1).Draw(t, "protected"),
				LabelNamespaces: gen.LabelNamespaces,
				ProtectedLabels: rapid.SliceOfN(rapid.SampledFrom(gen.SharedLabelKeys), 0, 1).Draw(t, "protected labels"),
			},
			ReplaceAllTaints: compatMayBe && rapid.Bool().Draw(t, "compat"),
		}
	})
}

// withPluginHistory draws a node and applies a valid patch to it first, so
// that it has plugin-owned taints and the ownership annotation.
func withPluginHistory(t *rapid.T, opts nodeapply.Options) *corev1.Node {
	node, _ := nodeWithHistory(t, opts)
	return node
}

// nodeWithHistory is withPluginHistory that also returns the earlier
// patch, or nil.
func nodeWithHistory(t *rapid.T, opts nodeapply.Options) (*corev1.Node, *pingstatus.NodePatch) {
	node := gen.Node().Draw(t, "node")
	if !rapid.Bool().Draw(t, "history") {
		return node, nil
	}
	earlier := validPatch(t)
	return nodeapply.Apply(node, nodeapply.Ping{Reply: earlier}, opts).Node, earlier
}

// nextPing draws the plugin's next patch: a fresh one, or the earlier one
// with a taint's value changed, a resource changed, or its taints reordered.
func nextPing(t *rapid.T, earlier *pingstatus.NodePatch) *pingstatus.NodePatch {
	if earlier == nil || rapid.Bool().Draw(t, "fresh") {
		return validPatch(t)
	}
	p := deepCopyPatch(earlier)
	if len(p.Taints) > 0 && rapid.Bool().Draw(t, "change a value") {
		i := rapid.IntRange(0, len(p.Taints)-1).Draw(t, "which taint")
		p.Taints[i].Value = rapid.SampledFrom([]string{"changed", ""}).Draw(t, "new value")
	}
	if len(p.Taints) > 1 && rapid.Bool().Draw(t, "reorder") {
		p.Taints[0], p.Taints[len(p.Taints)-1] = p.Taints[len(p.Taints)-1], p.Taints[0]
	}
	if rapid.Bool().Draw(t, "change cpu") {
		if p.Resources == nil {
			p.Resources = corev1.ResourceList{}
		}
		p.Resources[corev1.ResourceCPU] = resource.MustParse(gen.WholeQuantity(1).Draw(t, "cpu"))
	}
	return p
}

func TestPropertyInputNeverModified(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		opts := optionsGen(true).Draw(t, "opts")
		node := withPluginHistory(t, opts)
		patch := patchGen().Draw(t, "patch")
		nodeBefore, patchBefore := node.DeepCopy(), deepCopyPatch(patch)
		res := nodeapply.Apply(node, nodeapply.Ping{Reply: patch}, opts)
		if diff := nodeDiff(nodeBefore, node); diff != "" {
			t.Fatalf("Apply modified the node (-before +after):\n%s", diff)
		}
		if !reflect.DeepEqual(patchBefore, patch) {
			t.Fatalf("Apply modified the patch: %+v, was %+v", patch, patchBefore)
		}
		if len(res.Changes) > 0 {
			if res.Node == node {
				t.Fatal("changes, but the input node was returned")
			}
			assertNoSharedMemory(t, node, res.Node)
		}
	})
}

func deepCopyPatch(p *pingstatus.NodePatch) *pingstatus.NodePatch {
	c := *p
	c.Resources = p.Resources.DeepCopy()
	if p.Full != nil {
		c.Full = append([]corev1.ResourceName{}, p.Full...)
	}
	if p.Taints != nil {
		c.Taints = make([]corev1.Taint, len(p.Taints))
		for i := range p.Taints {
			p.Taints[i].DeepCopyInto(&c.Taints[i])
		}
	}
	if p.KeptTaintKeys != nil {
		c.KeptTaintKeys = append([]string{}, p.KeptTaintKeys...)
	}
	c.Labels = maps.Clone(p.Labels)
	if p.KeptLabelKeys != nil {
		c.KeptLabelKeys = append([]string{}, p.KeptLabelKeys...)
	}
	return &c
}

// assertNoSharedMemory fails if the two nodes share a map or a slice's
// backing array.
func assertNoSharedMemory(t *rapid.T, a, b *corev1.Node) {
	same := func(x, y any) bool {
		vx, vy := reflect.ValueOf(x), reflect.ValueOf(y)
		return !vx.IsNil() && !vy.IsNil() && vx.UnsafePointer() == vy.UnsafePointer()
	}
	switch {
	case same(a.Labels, b.Labels), same(a.Annotations, b.Annotations),
		same(a.Status.Capacity, b.Status.Capacity), same(a.Status.Allocatable, b.Status.Allocatable):
		t.Fatal("the new node shares a map with the input")
	case len(a.Spec.Taints) > 0 && len(b.Spec.Taints) > 0 && &a.Spec.Taints[0] == &b.Spec.Taints[0]:
		t.Fatal("the new node shares its taints with the input")
	}
}

func TestPropertyIdempotent(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		opts := optionsGen(true).Draw(t, "opts")
		node := withPluginHistory(t, opts)
		patch := patchGen().Draw(t, "patch")
		first := nodeapply.Apply(node, nodeapply.Ping{Reply: patch}, opts)
		second := nodeapply.Apply(first.Node, nodeapply.Ping{Reply: patch}, opts)
		if len(second.Changes) != 0 {
			t.Fatalf("the second Apply changed %v\nafter the first changed %v", second.Changes, first.Changes)
		}
		if second.Node != first.Node {
			t.Fatal("the second Apply did not return its input node")
		}
	})
}

func TestPropertyOmittedFieldsNeverChange(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		opts := optionsGen(false).Draw(t, "opts")
		node := withPluginHistory(t, opts)
		patch := patchGen().Draw(t, "patch")
		res := nodeapply.Apply(node, nodeapply.Ping{Reply: patch}, opts)
		for _, list := range []struct {
			before, after corev1.ResourceList
		}{{node.Status.Capacity, res.Node.Status.Capacity}, {node.Status.Allocatable, res.Node.Status.Allocatable}} {
			for name, q := range list.before {
				if _, named := patch.Resources[name]; named {
					continue
				}
				if got, ok := list.after[name]; !ok || got.Cmp(q) != 0 {
					t.Fatalf("%s changed from %s to %s though the patch does not name it", name, q.String(), got.String())
				}
			}
		}
		// The backend-full taint is rule backend-full's, which news of cpu
		// or memory decides, taints list or not.
		if judged, _ := opts.Reply.Check(patch); !hasNewsOfRoom(judged) && !reflect.DeepEqual(backendFulls(node), backendFulls(res.Node)) {
			t.Fatalf("the backend-full taint changed without news of cpu or memory: %v -> %v", backendFulls(node), backendFulls(res.Node))
		}
		if !patch.ReplaceTaints {
			if !reflect.DeepEqual(withoutBackendFull(node.Spec.Taints), withoutBackendFull(res.Node.Spec.Taints)) {
				t.Fatalf("taints changed without a taints list: %v -> %v", node.Spec.Taints, res.Node.Spec.Taints)
			}
			if node.Annotations[nodeapply.DefaultOwnershipAnnotation] != res.Node.Annotations[nodeapply.DefaultOwnershipAnnotation] {
				t.Fatal("the ownership annotation changed without a taints list")
			}
		}
	})
}

func TestPropertyOutputAlwaysValid(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		opts := optionsGen(true).Draw(t, "opts")
		node := withPluginHistory(t, opts)
		if rapid.Bool().Draw(t, "break the node") {
			node = breakNode(t, node)
		}
		res := nodeapply.Apply(node, nodeapply.Ping{Reply: patchGen().Draw(t, "patch")}, opts)
		if p := kuberules.NodeProblems(res.Node); p != nil {
			t.Fatalf("invalid output: %v", p)
		}
	})
}

// breakNode returns a copy of node with things the API server refuses.
func breakNode(t *rapid.T, node *corev1.Node) *corev1.Node {
	node = node.DeepCopy()
	if node.Status.Capacity == nil {
		node.Status.Capacity = corev1.ResourceList{}
	}
	node.Status.Capacity[rapid.SampledFrom([]corev1.ResourceName{"cpu", "pods", "nvidia.com/gpu"}).Draw(t, "broken resource")] =
		resource.MustParse(rapid.SampledFrom([]string{"-1", "1.5", "-2500m"}).Draw(t, "broken value"))
	node.Spec.Taints = append(node.Spec.Taints, rapid.SampledFrom([]corev1.Taint{
		{Key: "bad key", Effect: corev1.TaintEffectNoSchedule},
		{Key: "a.io/x", Value: "bad value", Effect: corev1.TaintEffectNoSchedule},
		{Key: "a.io/x", Effect: ""},
	}).Draw(t, "broken taint"))
	if len(node.Spec.Taints) > 1 {
		node.Spec.Taints = append(node.Spec.Taints, node.Spec.Taints[0])
	}
	return node
}

func TestPropertyChangesEmptyIffEqual(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		opts := optionsGen(true).Draw(t, "opts")
		node := withPluginHistory(t, opts)
		res := nodeapply.Apply(node, nodeapply.Ping{Reply: patchGen().Draw(t, "patch")}, opts)
		equal := semanticallyEqual(node, res.Node)
		if equal != (len(res.Changes) == 0) {
			t.Fatalf("semantically equal: %v, but changes: %v", equal, res.Changes)
		}
		for i := 1; i < len(res.Changes); i++ {
			if res.Changes[i-1].Path >= res.Changes[i].Path {
				t.Fatalf("changes not sorted and unique by path: %v", res.Changes)
			}
		}
	})
}

// semanticallyEqual compares what Apply may write, by meaning: quantities
// by value, taints as a set, and the ownership annotation.
func semanticallyEqual(a, b *corev1.Node) bool {
	sameList := func(x, y corev1.ResourceList) bool {
		if len(x) != len(y) {
			return false
		}
		for name, q := range x {
			if v, ok := y[name]; !ok || v.Cmp(q) != 0 {
				return false
			}
		}
		return true
	}
	if !sameList(a.Status.Capacity, b.Status.Capacity) || !sameList(a.Status.Allocatable, b.Status.Allocatable) {
		return false
	}
	if len(a.Spec.Taints) != len(b.Spec.Taints) {
		return false
	}
	for _, taint := range a.Spec.Taints {
		if !hasTaint(b, taint) {
			return false
		}
	}
	if !maps.Equal(a.Labels, b.Labels) {
		return false
	}
	for _, key := range []string{nodeapply.DefaultOwnershipAnnotation, nodeapply.DefaultLabelOwnershipAnnotation} {
		va, oka := a.Annotations[key]
		vb, okb := b.Annotations[key]
		if va != vb || oka != okb {
			return false
		}
	}
	return true
}

// roundTrip is a provider restart: the node as the API server stores it.
func roundTrip(t interface{ Fatal(...any) }, node *corev1.Node) *corev1.Node {
	b, err := json.Marshal(node)
	if err != nil {
		t.Fatal(err)
	}
	var out corev1.Node
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return &out
}
