package pingstatus_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"pgregory.net/rapid"

	"github.com/pingnode/pingnode/internal/golden"
	"github.com/pingnode/pingnode/pingstatus"
)

// TestGoldenFull parses each reply of testdata/full, a backend full now
// (interLink's Slurm plugin's "0") or a zero of another kind, with the
// default options and with AllowZero, and compares the patches and the
// warnings, with their rules, with its golden (rules resource-full and
// resource-nonzero).
func TestGoldenFull(t *testing.T) {
	for _, in := range golden.Inputs(t, "testdata/full/*.json") {
		t.Run(in.Name, func(t *testing.T) {
			var b strings.Builder
			fmt.Fprintf(&b, "reply: %s", in.Data)
			for _, run := range []struct {
				name string
				opts pingstatus.Options
			}{{"default options", pingstatus.Options{}}, {"AllowZero", pingstatus.Options{AllowZero: true}}} {
				patch, warnings := pingstatus.Parse(in.Data, run.opts)
				out, err := json.MarshalIndent(patch, "", "  ")
				if err != nil {
					t.Fatal(err)
				}
				fmt.Fprintf(&b, "\n%s:\n%s\nwarnings:", run.name, out)
				if len(warnings) == 0 {
					b.WriteString(" none")
				}
				b.WriteString("\n")
				for _, w := range warnings {
					fmt.Fprintf(&b, "  [%s] %s\n", w.Rule, w)
				}
				if run.opts.AllowZero && len(patch.Full) > 0 {
					t.Errorf("with AllowZero, Full is %v; want none", patch.Full)
				}
			}
			golden.Check(t, golden.Name("testdata/full", in.Name), []byte(b.String()))
		})
	}
}

// TestCheckFull pins what Check makes of a hand-built patch's Full and
// of its zero figures (rule resource-full): Parse's patch for a full
// backend passes as it is, and anything else is what a reply that says
// the same would give, or is dropped with a warning.
func TestCheckFull(t *testing.T) {
	cpu, memory := corev1.ResourceCPU, corev1.ResourceMemory
	tests := []struct {
		name      string
		in        pingstatus.NodePatch
		opts      pingstatus.Options
		resources corev1.ResourceList
		full      []corev1.ResourceName
		warnings  []string
	}{{
		name: "Parse's patch for a full backend passes as it is",
		in:   pingstatus.NodePatch{Kind: pingstatus.Structured, Full: []corev1.ResourceName{cpu, memory}},
		full: []corev1.ResourceName{cpu, memory},
	}, {
		name: "sorted, each once",
		in:   pingstatus.NodePatch{Kind: pingstatus.Structured, Full: []corev1.ResourceName{memory, cpu, memory}},
		full: []corev1.ResourceName{cpu, memory},
	}, {
		name:      "a zero cpu among free figures is full, as in a reply",
		in:        pingstatus.NodePatch{Kind: pingstatus.Structured, Resources: quantityList("cpu", "0", "memory", "1200Mi")},
		resources: quantityList("memory", "1200Mi"),
		full:      []corev1.ResourceName{cpu},
		warnings:  []string{"[resource-full] patch.resources[cpu]: the backend has no free cpu now: cpu left as it was, the node takes no new pod (taint pingnode.io/backend-full) until a reply gives more"},
	}, {
		name:      "said by both a zero and Full, once",
		in:        pingstatus.NodePatch{Kind: pingstatus.Structured, Resources: quantityList("memory", "0"), Basis: pingstatus.BasisAvailable, Full: []corev1.ResourceName{memory}},
		resources: nil,
		full:      []corev1.ResourceName{memory},
		warnings:  []string{"[resource-full] patch.resources[memory]: the backend has no free memory now: memory left as it was, the node takes no new pod (taint pingnode.io/backend-full) until a reply gives more"},
	}, {
		name: "neither cpu nor memory",
		in:   pingstatus.NodePatch{Kind: pingstatus.Structured, Full: []corev1.ResourceName{corev1.ResourcePods, "nvidia.com/gpu", cpu}},
		full: []corev1.ResourceName{cpu},
		warnings: []string{
			`[resource-full] patch.full[0]: "pods" is not cpu or memory, the resources a backend is full of; dropped`,
			`[resource-full] patch.full[1]: "nvidia.com/gpu" is not cpu or memory, the resources a backend is full of; dropped`,
		},
	}, {
		name:      "a figure counts",
		in:        pingstatus.NodePatch{Kind: pingstatus.Structured, Resources: quantityList("cpu", "4"), Full: []corev1.ResourceName{cpu}},
		resources: quantityList("cpu", "4"),
		warnings:  []string{"[resource-full] patch.full[0]: cpu has a figure in resources, which counts; dropped"},
	}, {
		name:     "a total's zero says no backend is full",
		in:       pingstatus.NodePatch{Kind: pingstatus.Structured, Basis: pingstatus.BasisTotal, Full: []corev1.ResourceName{cpu}},
		warnings: []string{`[resource-full] patch.full[0]: cpu: the basis is "total", whose zero says no backend is full (rule resource-nonzero); dropped`},
	}, {
		name:     "a total's zero figure is refused",
		in:       pingstatus.NodePatch{Kind: pingstatus.Structured, Basis: pingstatus.BasisTotal, Resources: quantityList("cpu", "0")},
		warnings: []string{"[resource-nonzero] patch.resources[cpu]: zero cpu refused (a total of zero would drain the node; a plugin that wants no pods sets a taint); cpu left unchanged"},
	}, {
		name:      "with AllowZero, a figure of zero",
		in:        pingstatus.NodePatch{Kind: pingstatus.Structured, Resources: quantityList("cpu", "0"), Full: []corev1.ResourceName{memory}},
		opts:      pingstatus.Options{AllowZero: true},
		resources: quantityList("cpu", "0", "memory", "0"),
		warnings:  []string{"[resource-full] patch.full[0]: memory: with AllowZero a zero is a figure; 0 written"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, warnings := tt.opts.Check(&tt.in)
			if diff := cmp.Diff(tt.resources, got.Resources, equateQuantities, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Resources (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.full, got.Full); diff != "" {
				t.Errorf("Full (-want +got):\n%s", diff)
			}
			var texts []string
			for _, w := range warnings {
				texts = append(texts, "["+w.Rule+"] "+w.String())
			}
			if diff := cmp.Diff(tt.warnings, texts); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCheckFullOfAPart pins down that a part's Full is judged as a
// node's (rule part-fields), and that Full beside the parts is ignored
// as resources are (rule part-no-sum).
func TestCheckFullOfAPart(t *testing.T) {
	in := pingstatus.NodePatch{Kind: pingstatus.Structured, ReplaceParts: true, Full: []corev1.ResourceName{corev1.ResourceCPU}, Parts: []pingstatus.Part{
		{Name: "cn002", Patch: pingstatus.NodePatch{Kind: pingstatus.Structured, Full: []corev1.ResourceName{corev1.ResourceMemory, "pods"}}},
		{Name: "cn001", Patch: pingstatus.NodePatch{Kind: pingstatus.Structured, Resources: quantityList("cpu", "0")}},
	}}
	got, warnings := pingstatus.Options{}.Check(&in)
	if got.Full != nil {
		t.Errorf("Full beside the parts = %v, want none", got.Full)
	}
	var full [][]corev1.ResourceName
	for _, p := range got.Parts {
		full = append(full, p.Patch.Full)
	}
	if diff := cmp.Diff([][]corev1.ResourceName{{corev1.ResourceCPU}, {corev1.ResourceMemory}}, full); diff != "" {
		t.Errorf("the parts' Full (-want +got):\n%s", diff)
	}
	var texts []string
	for _, w := range warnings {
		texts = append(texts, "["+w.Rule+"] "+w.Part+" "+w.String())
	}
	want := []string{
		`[part-no-sum]  patch.resources: beside "nodes", whose parts replace a sum; ignored`,
		`[resource-full] cn002 patch.parts[0].full[1]: "pods" is not cpu or memory, the resources a backend is full of; dropped`,
		"[resource-full] cn001 patch.parts[1].resources[cpu]: the backend has no free cpu now: cpu left as it was, the node takes no new pod (taint pingnode.io/backend-full) until a reply gives more",
	}
	if diff := cmp.Diff(want, texts); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
}

// quantityList builds a ResourceList from name, value pairs.
func quantityList(kv ...string) corev1.ResourceList {
	list := corev1.ResourceList{}
	for i := 0; i+1 < len(kv); i += 2 {
		list[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return list
}

// TestPropertyFullIsAZeroFreeFigure: whatever a reply's cpu and memory
// and its basis, in any order, a resource is in Full exactly when its
// figure is a zero, the basis reads as "available" (given so, or not
// given), and AllowZero is off (rule resource-full); its figure is then
// not written, and a zero figure is written only with AllowZero (rule
// resource-nonzero). Each warning about cpu or memory names its rule.
func TestPropertyFullIsAZeroFreeFigure(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		opts := pingstatus.Options{AllowZero: rapid.IntRange(0, 3).Draw(t, "allowZero") == 0}
		basis := rapid.SampledFrom([]string{"", `"available"`, `"total"`, `"free"`, `1`, `null`}).Draw(t, "basis")
		type figure struct {
			name  corev1.ResourceName
			value string
		}
		var figures []figure
		for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			if v := rapid.SampledFrom([]string{"", `"0"`, `0`, `"0Mi"`, `"0.0"`, `"24"`, `"1200Mi"`, `"-1"`}).Draw(t, string(name)); v != "" {
				figures = append(figures, figure{name, v})
			}
		}
		var fields []string
		for _, f := range figures {
			fields = append(fields, fmt.Sprintf("%q:%s", f.name, f.value))
		}
		if basis != "" {
			at := rapid.IntRange(0, len(fields)).Draw(t, "basis at")
			fields = append(fields[:at], append([]string{`"basis":` + basis}, fields[at:]...)...)
		}
		body := `{"status":"ok","resources":{` + strings.Join(fields, ",") + `}}`
		patch, warnings := pingstatus.Parse([]byte(body), opts)
		free := basis == "" || basis == `"available"` || basis == `null`
		var wantFull []corev1.ResourceName
		for _, f := range figures {
			zero := strings.Trim(f.value, `"`) == "0" || f.value == `"0Mi"` || f.value == `"0.0"`
			q, written := patch.Resources[f.name]
			switch {
			case zero && free && !opts.AllowZero:
				wantFull = append(wantFull, f.name)
				if written {
					t.Fatalf("%s: %s is full, and written as %s", body, f.name, q.String())
				}
			case zero && written != opts.AllowZero:
				t.Fatalf("%s: a zero %s written: %v, with AllowZero %v", body, f.name, written, opts.AllowZero)
			}
		}
		if diff := cmp.Diff(wantFull, patch.Full); diff != "" {
			t.Fatalf("%s: Full (-want +got):\n%s", body, diff)
		}
		for _, w := range warnings {
			if w.Path == "resources.cpu" || w.Path == "resources.memory" {
				if w.Rule == "" || w.Subject != pingstatus.SubjectResource {
					t.Fatalf("%s: %q has rule %q, subject %v", body, w, w.Rule, w.Subject)
				}
			}
		}
	})
}
