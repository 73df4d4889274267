package pingstatus_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"pgregory.net/rapid"

	"github.com/pingnode/pingnode/internal/gen"
	"github.com/pingnode/pingnode/pingstatus"
)

// TestPropertyAPartIsReadAsAReply: a part's fields are read by the rules
// of a reply's (rule part-fields): whatever a node's fields, a part made of them
// has the patch that a reply made of them has, and the same warnings,
// their paths within the part's entry.
func TestPropertyAPartIsReadAsAReply(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		fields := gen.NodeFields().Draw(t, "fields")
		opts := pingstatus.Options{MaxTaints: rapid.IntRange(0, 8).Draw(t, "maxTaints"), MaxDevices: rapid.SampledFrom([]int{0, 4}).Draw(t, "maxDevices")}
		alone, aloneWarnings := pingstatus.Parse(fields, opts)

		entry := []byte(`{"name":"cn001"`)
		if len(fields) > 2 {
			entry = append(append(entry, ','), fields[1:]...)
		} else {
			entry = append(entry, '}')
		}
		body := []byte(`{"nodes":[` + string(entry) + `]}`)
		got, warnings := pingstatus.Parse(body, opts)
		if !got.ReplaceParts || len(got.Parts) != 1 || got.Parts[0].Name != "cn001" || got.PartsIncomplete {
			t.Fatalf("Parse(%s) gives the parts %+v", body, got)
		}
		if diff := cmp.Diff(alone, got.Parts[0].Patch, equateQuantities, ignoreJudgement); diff != "" {
			t.Fatalf("the part of %s (-alone +part):\n%s", body, diff)
		}
		var want []pingstatus.Warning
		for _, w := range aloneWarnings {
			w.Path = strings.TrimSuffix("nodes[0]."+w.Path, ".")
			w.Part = "cn001"
			want = append(want, w)
		}
		if diff := cmp.Diff(want, warnings); diff != "" {
			t.Fatalf("the warnings of %s (-alone, in the part +part):\n%s", body, diff)
		}
	})
}

// TestParts holds rules part-entries, part-fields and part-no-sum to replies written for each.
func TestParts(t *testing.T) {
	cpu := func(n string) corev1.ResourceList {
		return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(n)}
	}
	taint := func(key, value string) corev1.Taint {
		return corev1.Taint{Key: key, Value: value, Effect: corev1.TaintEffectNoSchedule}
	}
	maintenance, drain := taint("site.io/maintenance", ""), taint("slurm.io/drain", "x")
	const site, rack = "feature.node.kubernetes.io/site", "feature.node.kubernetes.io/rack"
	part := func(name string, p pingstatus.NodePatch) pingstatus.Part {
		p.Kind = pingstatus.Structured
		return pingstatus.Part{Name: name, Patch: p}
	}
	structured := func(p pingstatus.NodePatch) pingstatus.NodePatch {
		p.Kind = pingstatus.Structured
		return p
	}
	for _, tc := range []struct {
		name     string
		body     string
		opts     pingstatus.Options
		want     pingstatus.NodePatch
		warnings []string
	}{{
		name: "absent is no news",
		body: `{"status":"ok","resources":{"cpu":"2"}}`,
		want: structured(pingstatus.NodePatch{Status: "ok", Resources: cpu("2")}),
	}, {
		name: "null is no news, and the sum is the node's",
		body: `{"nodes":null,"resources":{"cpu":"2"}}`,
		want: structured(pingstatus.NodePatch{Resources: cpu("2")}),
	}, {
		name: "[] is a backend with no parts",
		body: `{"nodes":[]}`,
		want: structured(pingstatus.NodePatch{ReplaceParts: true, Parts: []pingstatus.Part{}}),
	}, {
		name: "parts sorted by name, each its own patch",
		body: `{"nodes":[{"name":"cn002","resources":{"cpu":"12"}},{"name":"cn001","resources":{"cpu":"1"}}]}`,
		want: structured(pingstatus.NodePatch{ReplaceParts: true, Parts: []pingstatus.Part{
			part("cn001", pingstatus.NodePatch{Resources: cpu("1")}),
			part("cn002", pingstatus.NodePatch{Resources: cpu("12")}),
		}}),
	}, {
		name: "the sum beside the parts is ignored",
		body: `{"resources":{"cpu":"13"},"devices":[],"nodes":[{"name":"cn001","resources":{"cpu":"1"}}]}`,
		want: structured(pingstatus.NodePatch{ReplaceParts: true, Parts: []pingstatus.Part{part("cn001", pingstatus.NodePatch{Resources: cpu("1")})}}),
		warnings: []string{
			`resources: beside "nodes", whose parts replace a sum; ignored`,
			`devices: beside "nodes", whose parts replace a sum; ignored`,
		},
	}, {
		name: "the reply's taints and labels are every part's, before its own",
		body: `{"taints":[{"key":"site.io/maintenance","effect":"NoSchedule"}],"labels":{"` + site + `":"a","` + rack + `":"r1"},"nodes":[` +
			`{"name":"cn001"},` +
			`{"name":"cn002","taints":[{"key":"slurm.io/drain","value":"x","effect":"NoSchedule"},{"key":"site.io/maintenance","value":"now","effect":"NoSchedule"}],"labels":{"` + rack + `":"r2"}},` +
			`{"name":"cn003","taints":[],"labels":{}}]}`,
		want: structured(pingstatus.NodePatch{ReplaceParts: true, Parts: []pingstatus.Part{
			part("cn001", pingstatus.NodePatch{ReplaceTaints: true, Taints: []corev1.Taint{maintenance}, ReplaceLabels: true, Labels: map[string]string{site: "a", rack: "r1"}}),
			part("cn002", pingstatus.NodePatch{ReplaceTaints: true, Taints: []corev1.Taint{taint("site.io/maintenance", "now"), drain}, ReplaceLabels: true, Labels: map[string]string{site: "a", rack: "r2"}}),
			part("cn003", pingstatus.NodePatch{ReplaceTaints: true, Taints: []corev1.Taint{maintenance}, ReplaceLabels: true, Labels: map[string]string{site: "a", rack: "r1"}}),
		}}),
	}, {
		name: "the reply's kept keys are every part's",
		body: `{"taints":[{"key":"site.io/maintenance","value":"not a value","effect":"NoSchedule"}],"labels":{"` + site + `":7},"nodes":[{"name":"cn001"},{"name":"cn002","taints":[],"labels":{"` + rack + `":"r2"}}]}`,
		want: structured(pingstatus.NodePatch{ReplaceParts: true, Parts: []pingstatus.Part{
			part("cn001", pingstatus.NodePatch{ReplaceTaints: true, Taints: []corev1.Taint{}, KeptTaintKeys: []string{"site.io/maintenance"}, ReplaceLabels: true, Labels: map[string]string{}, KeptLabelKeys: []string{site}}),
			part("cn002", pingstatus.NodePatch{ReplaceTaints: true, Taints: []corev1.Taint{}, KeptTaintKeys: []string{"site.io/maintenance"}, ReplaceLabels: true, Labels: map[string]string{rack: "r2"}, KeptLabelKeys: []string{site}}),
		}}),
		warnings: []string{
			`labels[feature.node.kubernetes.io/site]: must be a string, got a number 7; entry dropped, the plugin's current feature.node.kubernetes.io/site label kept`,
			`taints[0].value: "not a value" is not a valid taint value: must be empty, or letters, digits, '-', '_' and '.' starting and ending with a letter or digit; entry dropped, the plugin's current site.io/maintenance taints kept`,
		},
	}, {
		name: "the reply's list refused whole leaves every part's unchanged",
		body: `{"taints":"none","labels":["gpu"],"nodes":[{"name":"cn001","taints":[],"labels":{}}]}`,
		want: structured(pingstatus.NodePatch{ReplaceParts: true, Parts: []pingstatus.Part{part("cn001", pingstatus.NodePatch{})}}),
		warnings: []string{
			`taints: must be an array, got a string "none"; taints left unchanged`,
			`labels: must be an object, got an array; labels left unchanged`,
		},
	}, {
		name: "beside the parts, the reply's lists have at most MaxShared entries",
		body: `{"taints":[` + strings.Repeat(`{"key":"site.io/m","effect":"NoSchedule"},`, pingstatus.MaxShared) + `{"key":"site.io/m","effect":"NoSchedule"}],"nodes":[{"name":"cn001","taints":[]}]}`,
		want: structured(pingstatus.NodePatch{ReplaceParts: true, Parts: []pingstatus.Part{part("cn001", pingstatus.NodePatch{})}}),
		warnings: []string{
			`taints: 17 entries, more than the limit of 16; every part's taints left unchanged`,
		},
	}, {
		name: "a part's own list refused whole leaves its list unchanged",
		body: `{"taints":[],"nodes":[{"name":"cn001","taints":{}},{"name":"cn002"}]}`,
		want: structured(pingstatus.NodePatch{ReplaceParts: true, Parts: []pingstatus.Part{
			part("cn001", pingstatus.NodePatch{}),
			part("cn002", pingstatus.NodePatch{ReplaceTaints: true, Taints: []corev1.Taint{}}),
		}}),
		warnings: []string{`nodes[0].taints: must be an array, got an object; taints left unchanged`},
	}, {
		name: "an entry without a valid name makes the list incomplete",
		body: `{"nodes":["cn009",{"resources":{"cpu":"1"}},{"name":null},{"name":7},{"name":"CN_001"},{"name":"cn001","resources":{"cpu":"1"}}]}`,
		want: structured(pingstatus.NodePatch{ReplaceParts: true, PartsIncomplete: true, Parts: []pingstatus.Part{part("cn001", pingstatus.NodePatch{Resources: cpu("1")})}}),
		warnings: []string{
			`nodes[0]: must be an object, got a string "cn009"; entry dropped, and no part leaves`,
			`nodes[3].name: must be a string, got a number 7; entry dropped, and no part leaves`,
			`nodes[1].name: missing; entry dropped, and no part leaves`,
			`nodes[2].name: missing; entry dropped, and no part leaves`,
			`nodes[4].name: "CN_001" is not a valid part name: must be a lowercase DNS label: letters a-z, digits and '-', starting and ending with a letter or digit; entry dropped, and no part leaves`,
		},
	}, {
		name: "of a name given twice the last counts, the earlier unread",
		body: `{"nodes":[{"name":"cn001","resources":{"cpu":"-1"}},{"name":"cn002"},{"name":"cn001","resources":{"cpu":"2"}},{"name":"cn001","resources":{"cpu":"3"}}]}`,
		want: structured(pingstatus.NodePatch{ReplaceParts: true, Parts: []pingstatus.Part{
			part("cn001", pingstatus.NodePatch{Resources: cpu("3")}),
			part("cn002", pingstatus.NodePatch{}),
		}}),
		warnings: []string{
			`nodes[2]: cn001 repeats nodes[0]; the last one is used`,
			`nodes[3]: cn001 repeats nodes[2]; the last one is used`,
		},
	}, {
		name: "over the limit, no news of the parts",
		body: `{"nodes":[{"name":"a"},{"name":"b"},{"name":"c"}]}`,
		opts: pingstatus.Options{MaxParts: 2},
		want: structured(pingstatus.NodePatch{}),
		warnings: []string{
			`nodes: 3 entries, more than the limit of 2; parts left unchanged`,
		},
	}, {
		name:     "not a list, no news of the parts",
		body:     `{"nodes":{"cn001":{}}}`,
		want:     structured(pingstatus.NodePatch{}),
		warnings: []string{`nodes: must be an array, got an object; parts left unchanged`},
	}, {
		name: "a part's accelerators beside its devices (rule device-not-counted), by part",
		body: `{"nodes":[{"name":"a","resources":{"accelerators":[{"resourceType":"nvidia.com/gpu","available":"1"}]},"devices":[{"name":"g","count":1}]},{"name":"b","resources":{"accelerators":[{"resourceType":"nvidia.com/gpu","available":"1"}]}}]}`,
		want: structured(pingstatus.NodePatch{ReplaceParts: true, Parts: []pingstatus.Part{
			part("a", pingstatus.NodePatch{ReplaceDevices: true, Devices: []pingstatus.DeviceGroup{{Name: "g", Count: 1}}}),
			part("b", pingstatus.NodePatch{Resources: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}}),
		}}),
		warnings: []string{
			"nodes[0].resources.accelerators[0].available: 1 devices refused: a reply that lists devices counts none as accelerators (a DeviceClass's extendedResourceName serves nvidia.com/gpu from the devices, and a count beside them lets the scheduler give the same devices twice); only 0 is read, to clear an earlier count; entry dropped",
		},
	}, {
		name: "keys in a part: at the wrong level, misspelled, given twice",
		body: `{"nodes":[{"name":"a","cpu":"4","names":"b","nodes":[],"status":"idle","state":"up","Name":"a","resources":{"taints":[]}}]}`,
		want: structured(pingstatus.NodePatch{ReplaceParts: true, Parts: []pingstatus.Part{part("a", pingstatus.NodePatch{})}}),
		warnings: []string{
			`nodes[0].name: given 2 times; the last one is used`,
			`nodes[0].cpu: "cpu" belongs in "resources"; ignored`,
			`nodes[0].names: unknown field; did you mean "name"? ignored`,
			`nodes[0].nodes: "nodes" belongs at the top level of the reply; ignored`,
			`nodes[0].resources.taints: "taints" belongs in the part's entry, beside "resources"; ignored`,
		},
	}, {
		name: "pingnode's own taint is no part's",
		body: `{"nodes":[{"name":"a","taints":[{"key":"pingnode.io/part-gone","effect":"NoSchedule"}]}]}`,
		want: structured(pingstatus.NodePatch{ReplaceParts: true, Parts: []pingstatus.Part{part("a", pingstatus.NodePatch{ReplaceTaints: true, Taints: []corev1.Taint{}})}}),
		warnings: []string{
			`nodes[0].taints[0].key: pingnode.io/part-gone is pingnode's own, for a part the reply no longer lists; entry dropped`,
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got, warnings := pingstatus.Parse([]byte(tc.body), tc.opts)
			if diff := cmp.Diff(tc.want, got, equateQuantities, ignoreJudgement); diff != "" {
				t.Errorf("patch (-want +got):\n%s", diff)
			}
			var texts []string
			for _, w := range warnings {
				texts = append(texts, w.String())
			}
			if diff := cmp.Diff(tc.warnings, texts); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPartsNearMissesOfNodes: "node" is a near miss of "nodes", and
// words one edit from it are not (rule key-near-miss).
func TestPartsNearMissesOfNodes(t *testing.T) {
	_, warnings := pingstatus.Parse([]byte(`{"node":[],"notes":"x","codes":1,"modes":[]}`), pingstatus.Options{})
	var texts []string
	for _, w := range warnings {
		texts = append(texts, w.String())
	}
	if diff := cmp.Diff([]string{`node: unknown field; did you mean "nodes"? ignored`}, texts); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
}

// TestValidateParts: a reply built with the wire types' parts is clean,
// and Validate reports a bad one as Parse does.
func TestValidateParts(t *testing.T) {
	reply := pingstatus.PingResponse{Status: "ok", Nodes: []pingstatus.PartResponse{
		{Name: "cn001", NodeResponse: pingstatus.NodeResponse{Resources: &pingstatus.ResourcesResponse{CPU: "1", Memory: "4000Mi"}}},
		{Name: "cn002", NodeResponse: pingstatus.NodeResponse{Taints: []pingstatus.TaintResponse{}, Labels: map[string]string{}}},
	}}
	if w := reply.Validate(pingstatus.Options{}); w != nil {
		t.Errorf("Validate of a clean reply of parts: %v", w)
	}
	reply.Resources = &pingstatus.ResourcesResponse{CPU: "1"}
	reply.Nodes[1].Name = "CN002"
	var texts []string
	for _, w := range reply.Validate(pingstatus.Options{}) {
		texts = append(texts, w.String())
	}
	want := []string{
		`resources: beside "nodes", whose parts replace a sum; ignored`,
		`nodes[1].name: "CN002" is not a valid part name: must be a lowercase DNS label: letters a-z, digits and '-', starting and ending with a letter or digit; entry dropped, and no part leaves`,
	}
	if diff := cmp.Diff(want, texts); diff != "" {
		t.Errorf("Validate (-want +got):\n%s", diff)
	}
	if b := mustMarshal(pingstatus.PingResponse{Nodes: []pingstatus.PartResponse{}}); !bytes.Equal(b, []byte(`{"nodes":[]}`)) {
		t.Errorf("an empty list of parts marshals as %s, want {\"nodes\":[]}", b)
	}
}

// TestSharedListsOverTheLimitCostNoMerge: a reply's taints beside its
// parts over MaxShared are counted, not given to each part: a body that
// has them costs what one without them costs, where 5,000 parts each with
// a copy of 256 taints would cost a million entries.
func TestSharedListsOverTheLimitCostNoMerge(t *testing.T) {
	body := func(shared int) []byte {
		var b strings.Builder
		b.WriteString(`{"taints":[`)
		for i := range shared {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"key":"site.io/t%d","effect":"NoSchedule"}`, i)
		}
		b.WriteString(`],"nodes":[`)
		for i := range pingstatus.DefaultMaxParts {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"name":"cn%d","taints":[{"key":"a.io/x","effect":"NoSchedule"}]}`, i)
		}
		b.WriteString("]}")
		return []byte(b.String())
	}
	none, over := body(0), body(pingstatus.DefaultMaxTaints)
	parse := func(b []byte) func() { return func() { pingstatus.Parse(b, pingstatus.Options{}) } }
	if _, w := pingstatus.Parse(over, pingstatus.Options{}); len(w) != 1 {
		t.Fatalf("warnings of 256 shared taints: %v, want the limit's alone", w)
	}
	allocsNone, allocsOver := testing.AllocsPerRun(3, parse(none)), testing.AllocsPerRun(3, parse(over))
	if allocsOver > allocsNone+1000 {
		t.Errorf("Parse allocates %v objects for 256 taints beside 5,000 parts and %v for none: the parts were given copies", allocsOver, allocsNone)
	}
}
