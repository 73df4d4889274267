package pingstatus

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/pingnode/pingnode/internal/golden"
)

// parseResult is what a golden file holds for one reply body.
type parseResult struct {
	Patch    NodePatch
	Warnings []string
}

func (k Kind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// TestGolden parses every shared reply body in ../testdata/replies with the
// default options and compares the patch and warnings with its golden.
func TestGolden(t *testing.T) {
	for _, in := range golden.Inputs(t, "../testdata/replies/*") {
		t.Run(in.Name, func(t *testing.T) {
			patch, warnings := Parse(in.Data, Options{})
			res := parseResult{Patch: patch}
			for _, w := range warnings {
				res.Warnings = append(res.Warnings, w.String())
			}
			got, err := json.MarshalIndent(res, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, golden.Name("testdata", in.Name), append(got, '\n'))
		})
	}
}

// TestRealPluginRepliesChangeNothing pins down SPEC section 1: the bodies
// that plugins send today are accepted without a warning and ask for no
// change.
func TestRealPluginRepliesChangeNothing(t *testing.T) {
	tests := []struct {
		name string
		body string
		kind Kind
	}{
		{"older plugins: ok", "ok", Legacy},
		{"older plugins: 0", "0", Legacy},
		{"older plugins: empty", "", Legacy},
		{"older plugins: sinfo", "PARTITION AVAIL\ndebug* up\n", Legacy},
		{"docker: null", "null", Legacy},
		{"kubernetes: []", "[]", Legacy},
		{"kubernetes: pod statuses", `[{"name":"p","containers":[]}]`, Legacy},
		{"a JSON string", `"ok"`, Legacy},
		{"a JSON number", `42`, Legacy},
		{"whitespace", " \n\t", Legacy},
		{"htcondor", `{"message":"HTCondor sidecar is alive","status":"healthy"}`, Structured},
		{"empty object", `{}`, Structured},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			patch, warnings := Parse([]byte(tt.body), Options{})
			if patch.Kind != tt.kind {
				t.Errorf("Kind = %v, want %v", patch.Kind, tt.kind)
			}
			if !patch.IsEmpty() {
				t.Errorf("patch asks for a change: %+v", patch)
			}
			if len(warnings) != 0 {
				t.Errorf("warnings = %v, want none", warnings)
			}
		})
	}
}

func quantities(kv ...string) corev1.ResourceList {
	list := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		list[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return list
}

// equateQuantities compares quantities by value, as the API server does.
var equateQuantities = cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })

// TestRules pins each rule of SPEC section 2 with a hand-written
// expectation: the patch, and the paths the warnings name.
func TestRules(t *testing.T) {
	noSchedule := corev1.TaintEffectNoSchedule
	tests := []struct {
		name      string
		body      string
		opts      Options
		resources corev1.ResourceList
		replace   bool
		taints    []corev1.Taint
		kept      []string
		paths     []string // of the warnings, in order
	}{{
		name:      "a bad memory does not discard cpu or taints",
		body:      `{"resources":{"cpu":"8","memory":"-1Gi"},"taints":[{"key":"a.io/b","effect":"NoSchedule"}]}`,
		resources: quantities("cpu", "8"),
		replace:   true,
		taints:    []corev1.Taint{{Key: "a.io/b", Effect: noSchedule}},
		paths:     []string{"resources.memory"},
	}, {
		name:      "a wrong JSON type does not discard the rest",
		body:      `{"resources":{"cpu":true,"memory":"1Gi"},"taints":[{"key":"a.io/b","effect":"NoSchedule"}]}`,
		resources: quantities("memory", "1Gi"),
		replace:   true,
		taints:    []corev1.Taint{{Key: "a.io/b", Effect: noSchedule}},
		paths:     []string{"resources.cpu"},
	}, {
		name:      "numbers are quantities",
		body:      `{"resources":{"cpu":128,"memory":1e9,"pods":110}}`,
		resources: quantities("cpu", "128", "memory", "1G", "pods", "110"),
	}, {
		name:  "zero cpu, memory and pods refused by default",
		body:  `{"resources":{"cpu":"0","memory":"0Gi","pods":0}}`,
		paths: []string{"resources.cpu", "resources.memory", "resources.pods"},
	}, {
		name:      "zero allowed by option",
		body:      `{"resources":{"cpu":"0","memory":"0Gi","pods":0}}`,
		opts:      Options{AllowZero: true},
		resources: quantities("cpu", "0", "memory", "0", "pods", "0"),
	}, {
		name:      "zero accelerators mean the devices are gone",
		body:      `{"resources":{"accelerators":[{"resourceType":"nvidia.com/gpu","available":"0"}]}}`,
		resources: quantities("nvidia.com/gpu", "0"),
	}, {
		name:      "fractional cpu is fine, fractional pods are not",
		body:      `{"resources":{"cpu":"1.5","pods":"2.5"}}`,
		resources: quantities("cpu", "1500m"),
		paths:     []string{"resources.pods"},
	}, {
		name:      "repeated accelerators are summed",
		body:      `{"resources":{"accelerators":[{"resourceType":"amd.com/gpu","available":"1"},{"resourceType":"amd.com/gpu","available":"2"}]}}`,
		resources: quantities("amd.com/gpu", "3"),
		paths:     []string{"resources.accelerators[1]"},
	}, {
		name:  "accelerators over the limit are ignored whole",
		body:  `{"resources":{"cpu":"1","accelerators":[{"resourceType":"a.io/x","available":"1"},{"resourceType":"b.io/x","available":"1"}]}}`,
		opts:  Options{MaxAccelerators: 1},
		paths: []string{"resources.accelerators"},
		// cpu is still taken
		resources: quantities("cpu", "1"),
	}, {
		name:    "taints: [] removes the plugin's taints",
		body:    `{"taints":[]}`,
		replace: true,
		taints:  []corev1.Taint{},
	}, {
		name: "taints: null is no news",
		body: `{"taints":null}`,
	}, {
		name:  "taints over the limit are ignored whole",
		body:  `{"taints":[{"key":"a.io/x","effect":"NoSchedule"},{"key":"b.io/x","effect":"NoSchedule"}]}`,
		opts:  Options{MaxTaints: 1},
		paths: []string{"taints"},
	}, {
		name:    "an unknown effect becomes NoSchedule",
		body:    `{"taints":[{"key":"a.io/x","effect":"Evict"}]}`,
		replace: true,
		taints:  []corev1.Taint{{Key: "a.io/x", Effect: noSchedule}},
		paths:   []string{"taints[0].effect"},
	}, {
		name:    "a bad value drops the entry and keeps the key's current taints",
		body:    `{"taints":[{"key":"a.io/x","value":"not ok","effect":"NoSchedule"}]}`,
		replace: true,
		taints:  []corev1.Taint{},
		kept:    []string{"a.io/x"},
		paths:   []string{"taints[0].value"},
	}, {
		name:    "repeated key and effect keep the last entry",
		body:    `{"taints":[{"key":"a.io/x","value":"1","effect":"NoSchedule"},{"key":"a.io/x","value":"2","effect":"NoSchedule"}]}`,
		replace: true,
		taints:  []corev1.Taint{{Key: "a.io/x", Value: "2", Effect: noSchedule}},
		paths:   []string{"taints[1]"},
	}, {
		name:    "an effect defaulted to NoSchedule can repeat a pair",
		body:    `{"taints":[{"key":"a.io/x","value":"1","effect":"NoSchedule"},{"key":"a.io/x","value":"2"}]}`,
		replace: true,
		taints:  []corev1.Taint{{Key: "a.io/x", Value: "2", Effect: noSchedule}},
		paths:   []string{"taints[1].effect", "taints[1]"},
	}, {
		name:    "the same key with another effect is another taint",
		body:    `{"taints":[{"key":"a.io/x","effect":"NoSchedule"},{"key":"a.io/x","effect":"NoExecute"}]}`,
		replace: true,
		taints:  []corev1.Taint{{Key: "a.io/x", Effect: noSchedule}, {Key: "a.io/x", Effect: corev1.TaintEffectNoExecute}},
	}, {
		name:    "protected keys from the options",
		body:    `{"taints":[{"key":"mine.io/static","effect":"NoSchedule"}]}`,
		opts:    Options{ProtectedKeys: []string{"mine.io/static"}},
		replace: true,
		taints:  []corev1.Taint{},
		paths:   []string{"taints[0].key"},
	}, {
		name:  "over the body limit the whole reply is ignored",
		body:  `{"resources":{"cpu":"8"}}`,
		opts:  Options{MaxBodyBytes: 10},
		paths: []string{""},
	}, {
		name:  "a broken object is ignored with a warning",
		body:  `{"resources":{"cpu":"8"}`,
		paths: []string{""},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			patch, warnings := Parse([]byte(tt.body), tt.opts)
			if diff := cmp.Diff(tt.resources, patch.Resources, equateQuantities); diff != "" {
				t.Errorf("Resources (-want +got):\n%s", diff)
			}
			if patch.ReplaceTaints != tt.replace {
				t.Errorf("ReplaceTaints = %v, want %v", patch.ReplaceTaints, tt.replace)
			}
			if diff := cmp.Diff(tt.taints, patch.Taints); diff != "" {
				t.Errorf("Taints (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.kept, patch.KeptTaintKeys); diff != "" {
				t.Errorf("KeptTaintKeys (-want +got):\n%s", diff)
			}
			var paths []string
			for _, w := range warnings {
				paths = append(paths, w.Path)
			}
			if diff := cmp.Diff(tt.paths, paths); diff != "" {
				t.Errorf("warning paths (-want +got):\n%s\nwarnings: %v", diff, warnings)
			}
		})
	}
}
