package gen

import (
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"pgregory.net/rapid"

	"github.com/pingnode/pingnode/pingstatus"
)

// HandBuiltPatch draws a patch as a provider may build it by hand, not
// judged, valid or not: resources under every kind of name (standard,
// huge pages, extended, and none of those), negative, zero, fractional
// and huge; resources the backend is full of, cpu and memory or not, in
// any order, repeated; taints with bad keys, values and effects, reserved and
// protected keys, pairs repeated, some with a time added; labels with bad
// keys and values and in namespaces no plugin may set; kept keys and
// groups, valid or not; devices ([HandBuiltDeviceGroups]); a basis, valid
// or not; lists without their Replace field; and now and then parts, in
// any order, named twice or badly, each a patch of the same kind.
func HandBuiltPatch() *rapid.Generator[*pingstatus.NodePatch] {
	return rapid.Custom(func(t *rapid.T) *pingstatus.NodePatch {
		p := handBuiltNode(t)
		if rapid.IntRange(0, 4).Draw(t, "parts") == 0 {
			p.ReplaceParts = rapid.IntRange(0, 5).Draw(t, "replace parts") > 0
			p.PartsIncomplete = rapid.IntRange(0, 5).Draw(t, "incomplete") == 0
			for range rapid.IntRange(0, 4).Draw(t, "part count") {
				name := rapid.SampledFrom([]string{"cn001", "cn002", "gpu-a", "Bad_Name", ""}).Draw(t, "part name")
				part := handBuiltNode(t)
				if rapid.IntRange(0, 9).Draw(t, "nested") == 0 {
					part.ReplaceParts = true
				}
				p.Parts = append(p.Parts, pingstatus.Part{Name: name, Patch: *part})
			}
		}
		return p
	})
}

// handBuiltNode draws the fields of a node of a hand-built patch.
func handBuiltNode(t *rapid.T) *pingstatus.NodePatch {
	p := &pingstatus.NodePatch{Kind: pingstatus.Structured}
	bad := func(label string) bool { return rapid.IntRange(0, 4).Draw(t, label+" bad") == 0 }
	for range rapid.IntRange(0, 4).Draw(t, "resources") {
		name := rapid.SampledFrom([]corev1.ResourceName{
			corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourcePods, corev1.ResourceEphemeralStorage,
			"hugepages-2Mi", "hugepages-3Mi", "nvidia.com/gpu", "example.com/fpga", "gpu", "kubernetes.io/x", "requests.a.io/b",
		}).Draw(t, "resource")
		value := rapid.SampledFrom([]string{"1", "64", "250000Mi", "8"}).Draw(t, "quantity")
		if bad("quantity") {
			value = rapid.SampledFrom([]string{"0", "-1", "500m", "9223372036854775807k"}).Draw(t, "bad quantity")
		}
		if p.Resources == nil {
			p.Resources = corev1.ResourceList{}
		}
		p.Resources[name] = resource.MustParse(value)
	}
	if rapid.IntRange(0, 3).Draw(t, "full given") == 0 {
		p.Full = rapid.SliceOfN(rapid.SampledFrom([]corev1.ResourceName{
			corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourcePods, "nvidia.com/gpu",
		}), 0, 3).Draw(t, "full")
	}
	if rapid.IntRange(0, 5).Draw(t, "basis given") == 0 {
		p.Basis = rapid.SampledFrom([]pingstatus.Basis{pingstatus.BasisAvailable, pingstatus.BasisTotal, "sum"}).Draw(t, "basis")
	}
	if rapid.Bool().Draw(t, "taints") {
		p.ReplaceTaints = rapid.IntRange(0, 5).Draw(t, "replace taints") > 0
		for range rapid.IntRange(0, 4).Draw(t, "taint count") {
			taint := Taint().Draw(t, "taint")
			if bad("taint") {
				switch rapid.IntRange(0, 4).Draw(t, "bad taint part") {
				case 0:
					taint.Key = rapid.SampledFrom([]string{"not a key", "", "node.kubernetes.io/unschedulable", "pingnode.io/part-gone", "pingnode.io/backend-full", "virtual-node.interlink/no-schedule"}).Draw(t, "bad key")
				case 1:
					taint.Value = rapid.SampledFrom([]string{"has spaces", strings.Repeat("v", 64)}).Draw(t, "bad value")
				case 2:
					taint.Effect = rapid.SampledFrom([]corev1.TaintEffect{"", "Evict", "noschedule"}).Draw(t, "bad effect")
				default:
					added := metav1.NewTime(time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC))
					taint.TimeAdded = &added
				}
			}
			p.Taints = append(p.Taints, taint)
			if rapid.IntRange(0, 5).Draw(t, "repeat taint") == 0 {
				p.Taints = append(p.Taints, taint)
			}
		}
		if rapid.IntRange(0, 3).Draw(t, "kept taints") == 0 {
			p.KeptTaintKeys = rapid.SliceOfN(rapid.SampledFrom(append([]string{"bad key", "node.kubernetes.io/x"}, SharedKeys...)), 1, 2).Draw(t, "kept taint keys")
		}
	}
	if rapid.Bool().Draw(t, "labels") {
		p.ReplaceLabels = rapid.IntRange(0, 5).Draw(t, "replace labels") > 0
		p.Labels = Labels(3).Draw(t, "label map")
		if bad("labels") {
			p.Labels[rapid.SampledFrom([]string{"kubernetes.io/hostname", "unprefixed", "example.org/other", "bad key!"}).Draw(t, "bad label key")] = "x"
		}
		if keys := slices.Sorted(maps.Keys(p.Labels)); bad("label value") && len(keys) > 0 {
			p.Labels[keys[0]] = "has spaces"
		}
		if rapid.IntRange(0, 3).Draw(t, "kept labels") == 0 {
			p.KeptLabelKeys = rapid.SliceOfN(rapid.SampledFrom(append([]string{"bad key!", "kubernetes.io/os"}, SharedLabelKeys...)), 1, 2).Draw(t, "kept label keys")
		}
	}
	if rapid.IntRange(0, 2).Draw(t, "devices") == 0 {
		p.ReplaceDevices = rapid.IntRange(0, 5).Draw(t, "replace devices") > 0
		p.Devices = HandBuiltDeviceGroups(3).Draw(t, "device groups")
		if rapid.IntRange(0, 3).Draw(t, "kept groups") == 0 {
			p.KeptDeviceGroups = rapid.SliceOfN(rapid.SampledFrom([]string{"a100", "h100", "Bad Name"}), 1, 2).Draw(t, "kept group names")
		}
	}
	return p
}
