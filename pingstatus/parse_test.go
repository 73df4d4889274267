package pingstatus

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

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

// TestRealPluginRepliesChangeNothing pins down that the bodies that
// plugins send today without resources (plain text, null, a JSON array,
// the HTCondor plugin's object) are accepted without a warning and ask for
// no change.
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

// TestRules pins each rule of the package comment's "The rules" with a
// hand-written expectation: the patch, and the paths the warnings name.
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
			checkParts(t, &patch, tt.resources, tt.replace, tt.taints)
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

// TestCostGuards pins the cheap checks that keep a crafted reply from
// costing more than reading it: over-long quantities, names and values are
// refused by their length, and exponents far out of range by their size,
// before the quantity parser or the name rules see them. The quantity
// parser's work, and its allocations, grow with the text (over ten thousand
// objects for a megabyte of digits); behind the guard, Parse allocates as
// much for a megabyte as for 65 bytes. Nothing here depends on time.
func TestCostGuards(t *testing.T) {
	long := strings.Repeat("1", 1<<20-100)
	t.Run("an over-long quantity is refused by its length", func(t *testing.T) {
		body := []byte(`{"resources":{"cpu":"` + long + `"}}`)
		_, warnings := Parse(body, Options{})
		want := []Warning{{Path: "resources.cpu", Message: `"` + long[:64] + `"… is too long for a quantity: 1048476 bytes, the most is 64; cpu left unchanged`, Subject: SubjectResource, Action: Refused, Rule: "quantity-valid"}}
		if diff := cmp.Diff(want, warnings); diff != "" {
			t.Errorf("warnings (-want +got, the first 2000 bytes):\n%s", diff[:min(len(diff), 2000)])
		}
		short := []byte(`{"resources":{"cpu":"` + long[:65] + `"}}`)
		allocsLong := testing.AllocsPerRun(5, func() { Parse(body, Options{}) })
		allocsShort := testing.AllocsPerRun(5, func() { Parse(short, Options{}) })
		// Under the race detector sync.Pool drops items at random, so the
		// counts move by a few; the parser behind a missing guard adds
		// over ten thousand.
		if allocsLong > allocsShort+100 {
			t.Errorf("Parse allocates %v objects for a 1 MiB quantity and %v for 65 bytes: the quantity parser saw the long one", allocsLong, allocsShort)
		}
	})
	t.Run("a quantity of 64 bytes is still read", func(t *testing.T) {
		q := "1." + strings.Repeat("0", 62)
		patch, warnings := Parse([]byte(`{"resources":{"cpu":"`+q+`"}}`), Options{})
		if diff := cmp.Diff(quantities("cpu", "1"), patch.Resources, equateQuantities); diff != "" || len(warnings) != 0 {
			t.Errorf("Resources (-want +got):\n%s\nwarnings: %v", diff, warnings)
		}
	})
	tests := []struct {
		name      string
		body      string
		resources corev1.ResourceList
		warnings  []string
	}{{
		// The quantity parser reads the exponent into an int32: 2^32 would
		// wrap to 0, and the value to 1. (Exponents near 10^9 cost it
		// minutes and gigabytes: the benchmark has those.)
		name:     "a huge exponent is too large, whatever an int32 makes of it",
		body:     `{"resources":{"cpu":"1e4294967296","memory":1E4294967297}}`,
		warnings: []string{"resources.cpu: 1e4294967296 is too large: the most is 9223372036854775; cpu left unchanged", "resources.memory: 1E4294967297 is too large: it must be less than 8Ei; memory left unchanged"},
	}, {
		name:     "a negative value with a huge exponent is negative",
		body:     `{"resources":{"cpu":"-1e4294967296"}}`,
		warnings: []string{"resources.cpu: -1e4294967296 must not be negative; cpu left unchanged"},
	}, {
		// As the quantity parser rounds any positive amount below 1n up.
		name:      "a tiny positive value is 1n",
		body:      `{"resources":{"cpu":"1e-4294967295","memory":"5e-4294967294"}}`,
		resources: quantities("cpu", "1n", "memory", "1n"),
	}, {
		name:     "zero with a huge exponent is zero",
		body:     `{"resources":{"cpu":"0e4294967296","pods":"0.0e-4294967296"}}`,
		warnings: []string{"resources.cpu: the backend has no free cpu now: cpu left as it was, the node takes no new pod (taint pingnode.io/backend-full) until a reply gives more", "resources.pods: zero pods refused (it would drain the node; a plugin that wants no pods sets a taint); pods left unchanged"},
	}, {
		name:      "exponents within the bound go to the quantity parser",
		body:      `{"resources":{"cpu":"1e-100","memory":"0.001e100"}}`,
		resources: quantities("cpu", "1n"),
		warnings:  []string{"resources.memory: 0.001e100 is too large: it must be less than 8Ei; memory left unchanged"},
	}, {
		name:     "an over-long taint key is refused by its length",
		body:     `{"taints":[{"key":"a.io/` + long + `","effect":"NoSchedule"}]}`,
		warnings: []string{`taints[0].key: "a.io/` + long[:59] + `"… is not a valid taint key: must be no more than 317 bytes; entry dropped`},
	}, {
		name:     "an over-long resource type is refused by its length",
		body:     `{"resources":{"accelerators":[{"resourceType":"` + long + `","available":"1"}]}}`,
		warnings: []string{`resources.accelerators[0].resourceType: "` + long[:64] + `"… is not an extended resource name: must be no more than 317 bytes; entry dropped`},
	}, {
		name:     "an over-long taint value is refused by its length",
		body:     `{"taints":[{"key":"a.io/x","value":"` + long + `","effect":"NoSchedule"}]}`,
		warnings: []string{`taints[0].value: "` + long[:64] + `"… is not a valid taint value: must be no more than 63 bytes; entry dropped, the plugin's current a.io/x taints kept`},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			patch, warnings := Parse([]byte(tt.body), Options{})
			if diff := cmp.Diff(tt.resources, patch.Resources, equateQuantities); diff != "" {
				t.Errorf("Resources (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.warnings, warningTexts(warnings)); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
		})
	}
}

// TestKeysMatchAsEncodingJSON holds Parse's key matching (fieldIndex),
// which finds repeated keys and the fields the rules read, to
// encoding/json's: both must take the same key for the same field.
func TestKeysMatchAsEncodingJSON(t *testing.T) {
	names := levelFields[taintLevel]
	tests := []struct {
		name string
		key  string // as it stands in the JSON text, quotes included
	}{
		{"exact", `"key"`},
		{"upper case", `"KEY"`},
		{"mixed case", `"vAlUe"`},
		{"Kelvin sign folds to k", `"` + "\u212Aey" + `"`},
		{"escaped", `"\u006bey"`},
		{"escaped upper case", `"\u0045ffect"`},
		{"escaped quote", `"ke\"y"`},
		{"other", `"keys"`},
		{"empty", `""`},
		{"long s does not fold to a letter of these", `"` + "\u017Fey" + `"`},
		{"invalid UTF-8", "\"k\xffy\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var decoded struct {
				Key    *string `json:"key"`
				Value  *string `json:"value"`
				Effect *string `json:"effect"`
			}
			if err := json.Unmarshal([]byte(`{`+tt.key+`:"x"}`), &decoded); err != nil {
				t.Fatal(err)
			}
			want := -1
			for i, f := range []*string{decoded.Key, decoded.Value, decoded.Effect} {
				if f != nil {
					want = i
				}
			}
			if got := fieldIndex([]byte(tt.key), names); got != want {
				t.Errorf("fieldIndex(%s) = %d, encoding/json decodes it into field %d", tt.key, got, want)
			}
		})
	}
	t.Run("long s folds to s", func(t *testing.T) {
		key := `"` + "\u017Ftatus" + `"`
		var decoded struct {
			Status *string `json:"status"`
		}
		if err := json.Unmarshal([]byte(`{`+key+`:"x"}`), &decoded); err != nil || decoded.Status == nil {
			t.Fatalf("encoding/json does not decode %s into status: %v", key, err)
		}
		if got := fieldIndex([]byte(key), levelFields[replyLevel]); got != 0 {
			t.Errorf("fieldIndex(%s) = %d, want 0 (status)", key, got)
		}
	})
}

// TestWarningsAreBounded: whatever a plugin puts in a field, a warning
// about it is short, valid UTF-8 and free of control characters: the
// plugin's text is quoted escaped and cut.
func TestWarningsAreBounded(t *testing.T) {
	const maxWarning = 1024 // the longest message of apimachinery, a cut quote, a path
	long := strings.Repeat("\x00\xff\u202e\"x", 1<<18/8)
	quoted, _ := json.Marshal(long)
	q := string(quoted)
	bodies := map[string]string{
		"quantities":   `{"resources":{"cpu":` + q + `,"memory":` + q + `,"pods":` + q + `}}`,
		"accelerators": `{"resources":{"accelerators":[{"resourceType":` + q + `,"available":"1"},{"resourceType":"a.io/x","available":` + q + `},` + q + `]}}`,
		"taints":       `{"taints":[{"key":` + q + `},{"key":"a.io/x","value":` + q + `},{"key":"a.io/y","effect":` + q + `},` + q + `]}`,
		"wrong types":  `{"status":[` + q + `],"resources":` + q + `,"taints":` + q + `}`,
		"devices":      `{"devices":[{"name":` + q + `},{"name":"a","count":` + q + `,"attributes":{` + q + `:{"string":` + q + `},"x":{"version":` + q + `},"y":{"int":1.` + strings.Repeat("5", 1<<16) + `}},"capacity":{` + q + `:{"value":` + q + `}}},` + q + `]}`,
		"short":        `{"resources":{"cpu":"\u0000\u001b\u202e","accelerators":["\u0000\u001b"]},"taints":[{"key":"\u0000","effect":"\u001b[31m"}]}`,
	}
	for name, body := range bodies {
		t.Run(name, func(t *testing.T) {
			_, warnings := Parse([]byte(body), Options{})
			if len(warnings) == 0 {
				t.Fatal("no warnings")
			}
			for _, w := range warnings {
				s := w.String()
				if len(s) > maxWarning {
					t.Errorf("a warning of %d bytes: %.200q…", len(s), s)
				}
				if !utf8.ValidString(s) || strings.ContainsFunc(s, func(r rune) bool { return unicode.IsControl(r) || r == '\u202e' }) {
					t.Errorf("a warning with invalid UTF-8 or a control character: %q", s)
				}
			}
		})
	}
}

// warningTexts is warnings as their String forms, nil for none.
func warningTexts(warnings []Warning) []string {
	var texts []string
	for _, w := range warnings {
		texts = append(texts, w.String())
	}
	return texts
}

// checkParts compares a patch's resources, ReplaceTaints and taints with
// what a table wants.
func checkParts(t *testing.T, patch *NodePatch, resources corev1.ResourceList, replace bool, taints []corev1.Taint) {
	t.Helper()
	if diff := cmp.Diff(resources, patch.Resources, equateQuantities); diff != "" {
		t.Errorf("Resources (-want +got):\n%s", diff)
	}
	if patch.ReplaceTaints != replace {
		t.Errorf("ReplaceTaints = %v, want %v", patch.ReplaceTaints, replace)
	}
	if diff := cmp.Diff(taints, patch.Taints); diff != "" {
		t.Errorf("Taints (-want +got):\n%s", diff)
	}
}
