package pingstatus_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"pgregory.net/rapid"

	"github.com/pingnode/pingnode/pingstatus"
)

// partsReply draws a reply that lists parts, as a plugin sends it: a few
// names, each with a cpu and maybe taints, some of them invalid.
func partsReply() *rapid.Generator[[]byte] {
	return rapid.Custom(func(t *rapid.T) []byte {
		var list []pingstatus.PartResponse
		for range rapid.IntRange(0, 5).Draw(t, "parts") {
			p := pingstatus.PartResponse{Name: rapid.SampledFrom([]string{"cn001", "cn002", "cn003", "gpu"}).Draw(t, "name")}
			p.Resources = &pingstatus.ResourcesResponse{CPU: rapid.SampledFrom([]string{"1", "48", "500m", "0", "-1"}).Draw(t, "cpu")}
			if rapid.Bool().Draw(t, "taints") {
				p.Taints = []pingstatus.TaintResponse{{Key: "vendor.io/drain", Effect: "NoSchedule"}}
			}
			list = append(list, p)
		}
		body, err := json.Marshal(pingstatus.PingResponse{Nodes: append([]pingstatus.PartResponse{}, list...)})
		if err != nil {
			t.Fatal(err)
		}
		return body
	})
}

// edit changes p as a provider might, in place or on a copy: its parts
// in another order, a part repeated, a taint appended (valid, or one of
// Kubernetes' own), a figure changed.
func edit(t *rapid.T, p *pingstatus.NodePatch) {
	taints := []corev1.Taint{
		{Key: "vendor.io/maintenance", Effect: corev1.TaintEffectNoSchedule},
		{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoExecute},
	}
	for range rapid.IntRange(1, 3).Draw(t, "edits") {
		n := len(p.Parts)
		switch rapid.IntRange(0, 3).Draw(t, "edit") {
		case 0:
			perm := rapid.Permutation(p.Parts).Draw(t, "order")
			copy(p.Parts, perm) // in place, as sort.Slice would
		case 1:
			if n > 0 {
				p.Parts = append(p.Parts, p.Parts[rapid.IntRange(0, n-1).Draw(t, "repeated")])
			}
		case 2:
			taint := rapid.SampledFrom(taints).Draw(t, "taint")
			if n == 0 {
				p.ReplaceTaints, p.Taints = true, append(p.Taints, taint)
				continue
			}
			part := &p.Parts[rapid.IntRange(0, n-1).Draw(t, "tainted")].Patch
			part.ReplaceTaints, part.Taints = true, append(part.Taints, taint)
		default:
			if n == 0 {
				continue
			}
			part := &p.Parts[rapid.IntRange(0, n-1).Draw(t, "changed")].Patch
			part.Resources = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(rapid.SampledFrom([]string{"2", "0", "-3"}).Draw(t, "figure"))}
		}
	}
}

// TestPropertyChangedJudgedPatchJudgedAfresh: a patch Parse judged, then
// changed (its parts reordered in place, a part repeated, a taint
// appended, a figure edited), is what Check gives for the same patch
// built by hand: the same patch and the same warnings, its own and each
// part's. A judgement never covers what was changed after it.
func TestPropertyChangedJudgedPatchJudgedAfresh(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		opts := pingstatus.Options{}
		parsed, _ := pingstatus.Parse(partsReply().Draw(t, "reply"), opts)
		edit(t, &parsed)
		got, gotWarnings := opts.Check(&parsed)
		fresh := roundTrip(t, parsed)
		want, wantWarnings := opts.Check(&fresh)
		same := cmp.Options{ignoreJudgement, equateQuantities, cmpopts.EquateEmpty()}
		if diff := cmp.Diff(want, got, same); diff != "" {
			t.Fatalf("Check of the changed patch (-afresh +judged):\n%s", diff)
		}
		if diff := cmp.Diff(wantWarnings, gotWarnings, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("warnings (-afresh +judged):\n%s", diff)
		}
		for i := range parsed.Parts {
			part := &parsed.Parts[i].Patch
			got, _ := opts.Check(part)
			want, _ := opts.Check(new(roundTrip(t, *part)))
			if diff := cmp.Diff(want, got, same); diff != "" {
				t.Fatalf("Check of part %d (-afresh +judged):\n%s", i, diff)
			}
		}
	})
}

// TestReorderedPartsJudgedAfresh: the parts of a judged reply sorted in
// place in reverse are put back in name order by Check, as a reply built
// so by hand; the reply as Parse gave it is returned as it is.
func TestReorderedPartsJudgedAfresh(t *testing.T) {
	opts := pingstatus.Options{}
	parsed, _ := pingstatus.Parse([]byte(`{"nodes":[{"name":"cn001","resources":{"cpu":"8"}},{"name":"cn002","resources":{"cpu":"4"}}]}`), opts)
	if got, _ := opts.Check(&parsed); got != &parsed {
		t.Fatal("Check judged again a reply Parse gave, unchanged")
	}
	parsed.Parts[0], parsed.Parts[1] = parsed.Parts[1], parsed.Parts[0]
	got, _ := opts.Check(&parsed)
	if got == &parsed || got.Parts[0].Name != "cn001" || got.Parts[1].Name != "cn002" {
		t.Errorf("Check of the reordered reply: %p (the reply %p), parts %s, %s; want a new patch, cn001 then cn002", got, &parsed, got.Parts[0].Name, got.Parts[1].Name)
	}
}
