package pingstatus_test

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/api/resource"
	"pgregory.net/rapid"

	"github.com/pingnode/pingnode/internal/gen"
	"github.com/pingnode/pingnode/internal/kuberules"
	"github.com/pingnode/pingnode/internal/text"
	"github.com/pingnode/pingnode/pingstatus"
)

// a100 and t4 are valid groups, with attributes, capacity and taints.
var (
	productA100 = "NVIDIA A100-SXM4-80GB"
	productT4   = "Tesla T4"
	a100        = pingstatus.DeviceGroup{
		Name: "a100", Count: 8,
		Attributes: map[string]pingstatus.DeviceAttribute{"productName": {StringValue: &productA100}},
		Capacity:   map[string]resource.Quantity{"memory": resource.MustParse("80Gi")},
		Taints:     []pingstatus.DeviceTaint{{Key: "gpu.nvidia.com/xid", Value: "79", Effect: pingstatus.DeviceTaintNoSchedule}},
	}
	t4 = pingstatus.DeviceGroup{
		Name: "t4", Count: 2,
		Attributes: map[string]pingstatus.DeviceAttribute{"productName": {StringValue: &productT4}},
		Capacity:   map[string]resource.Quantity{"memory": resource.MustParse("16Gi")},
		Taints:     []pingstatus.DeviceTaint{{Key: "gpu.nvidia.com/unmonitored", Effect: pingstatus.DeviceTaintNone}},
	}
)

// with returns g changed by change, its maps and taints copied first.
func with(g pingstatus.DeviceGroup, change func(g *pingstatus.DeviceGroup)) pingstatus.DeviceGroup {
	g.Attributes = cloneMap(g.Attributes)
	g.Capacity = cloneMap(g.Capacity)
	g.Taints = append([]pingstatus.DeviceTaint(nil), g.Taints...)
	change(&g)
	return g
}

func cloneMap[V any](m map[string]V) map[string]V {
	out := make(map[string]V, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// TestCheckDevices pins what Check makes of the devices of a patch built
// by hand: refused where Parse refuses the same devices, with Parse's
// words under the group's name.
func TestCheckDevices(t *testing.T) {
	const kept = "; entry dropped, the plugin's current a100 devices kept"
	patch := func(groups ...pingstatus.DeviceGroup) *pingstatus.NodePatch {
		return &pingstatus.NodePatch{Kind: pingstatus.Structured, ReplaceDevices: true, Devices: groups}
	}
	tests := []struct {
		name     string
		in       *pingstatus.NodePatch
		opts     pingstatus.Options
		replace  bool
		devices  []pingstatus.DeviceGroup
		kept     []string
		warnings []string
	}{
		{name: "valid", in: patch(a100, t4), replace: true, devices: []pingstatus.DeviceGroup{a100, t4}},
		{name: "sorted by name", in: patch(t4, a100), replace: true, devices: []pingstatus.DeviceGroup{a100, t4}},
		{name: "the last group refused", in: &pingstatus.NodePatch{ReplaceDevices: true, KeptDeviceGroups: make([]string, 0, 4),
			Devices: []pingstatus.DeviceGroup{a100, with(t4, func(g *pingstatus.DeviceGroup) { g.Count = -1 })}},
			replace: true, devices: []pingstatus.DeviceGroup{a100}, kept: []string{"t4"},
			warnings: []string{"patch.devices[t4].count: -1 must not be negative; entry dropped, the plugin's current t4 devices kept"}},
		{name: "a count of 5000", in: patch(with(a100, func(g *pingstatus.DeviceGroup) { g.Count = 5000 }), t4),
			replace: true, devices: []pingstatus.DeviceGroup{t4}, kept: []string{"a100"},
			warnings: []string{"patch.devices[a100].count: 5000 is too large: the most is 1024" + kept}},
		{name: "a negative count", in: patch(with(a100, func(g *pingstatus.DeviceGroup) { g.Count = -1 })),
			replace: true, devices: []pingstatus.DeviceGroup{}, kept: []string{"a100"},
			warnings: []string{"patch.devices[a100].count: -1 must not be negative" + kept}},
		// The quantity parser caps 9Ei at 2^63-1, which is what the warning quotes.
		{name: "a capacity of 9Ei", in: patch(with(a100, func(g *pingstatus.DeviceGroup) { g.Capacity["memory"] = resource.MustParse("9Ei") }), t4),
			replace: true, devices: []pingstatus.DeviceGroup{t4}, kept: []string{"a100"},
			warnings: []string{"patch.devices[a100].capacity[memory].value: 9223372036854775807 is too large: it must be less than 8Ei" + kept}},
		{name: "a capacity of 10E", in: patch(with(a100, func(g *pingstatus.DeviceGroup) { g.Capacity["memory"] = resource.MustParse("10E") })),
			replace: true, devices: []pingstatus.DeviceGroup{}, kept: []string{"a100"},
			warnings: []string{"patch.devices[a100].capacity[memory].value: 10E is too large: it must be less than 8Ei" + kept}},
		{name: "a bad taint", in: patch(with(a100, func(g *pingstatus.DeviceGroup) {
			g.Taints = append(g.Taints, pingstatus.DeviceTaint{Key: "gpu.nvidia.com/gpu-lost", Effect: "PreferNoSchedule"}, pingstatus.DeviceTaint{Key: "a b"})
		})), replace: true, devices: []pingstatus.DeviceGroup{}, kept: []string{"a100"},
			warnings: []string{
				"patch.devices[a100].taints[1].effect: PreferNoSchedule is a node taint's effect, not a device's: None, NoSchedule or NoExecute" + kept,
				`patch.devices[a100].taints[2].key: "a b" is not a valid taint key: name must be letters, digits, '-', '_' and '.', starting and ending with a letter or digit` + kept,
				"patch.devices[a100].taints[2].effect: missing" + kept,
			}},
		{name: "17 taints", in: patch(with(a100, func(g *pingstatus.DeviceGroup) {
			for range 16 {
				g.Taints = append(g.Taints, g.Taints[0])
			}
		})), replace: true, devices: []pingstatus.DeviceGroup{}, kept: []string{"a100"},
			warnings: []string{"patch.devices[a100].taints: 17 taints, the most is 16" + kept}},
		{name: "attributes and capacity", in: patch(with(a100, func(g *pingstatus.DeviceGroup) {
			g.Attributes["x-y"] = pingstatus.DeviceAttribute{}
			g.Capacity["memory"] = resource.MustParse("-1Gi")
		})), replace: true, devices: []pingstatus.DeviceGroup{}, kept: []string{"a100"},
			warnings: []string{
				`patch.devices[a100].attributes["x-y"]: "x-y" is not a valid attribute name: name must be a C identifier: letters, digits and '_', not starting with a digit` + kept,
				`patch.devices[a100].attributes["x-y"]: must have exactly one of string, int, bool or version, got none` + kept,
				"patch.devices[a100].capacity[memory].value: -1Gi must not be negative" + kept,
			}},
		{name: "a repeated name: the last counts", in: patch(with(a100, func(g *pingstatus.DeviceGroup) { g.Count = -1 }), t4, a100),
			replace: true, devices: []pingstatus.DeviceGroup{a100, t4},
			warnings: []string{"patch.devices[a100]: repeats an earlier group of its name; the last one is used"}},
		{name: "an invalid name drops the group", in: patch(with(a100, func(g *pingstatus.DeviceGroup) { g.Name = "A100" }), t4),
			replace: true, devices: []pingstatus.DeviceGroup{t4},
			warnings: []string{`patch.devices["A100"].name: "A100" is not a valid device group name: must be a lowercase DNS label: letters a-z, digits and '-', starting and ending with a letter or digit; entry dropped`}},
		{name: "counts that add up to more than the limit", in: patch(a100, t4), opts: pingstatus.Options{MaxDevices: 9},
			warnings: []string{"patch.devices: counts add up to 10 devices, more than the limit of 9; devices left unchanged"}},
		{name: "more groups than the limit", in: &pingstatus.NodePatch{ReplaceDevices: true, Devices: []pingstatus.DeviceGroup{a100, t4}, KeptDeviceGroups: []string{"h100"}},
			opts:     pingstatus.Options{MaxDevices: 1},
			warnings: []string{"patch.devices: 2 entries, more than the limit of 1; devices left unchanged"}},
		{name: "kept names merged", in: &pingstatus.NodePatch{ReplaceDevices: true, Devices: []pingstatus.DeviceGroup{with(a100, func(g *pingstatus.DeviceGroup) { g.Count = -1 }), t4},
			KeptDeviceGroups: []string{"mi300x", "h100", "h100", "t4", "No Name"}},
			replace: true, devices: []pingstatus.DeviceGroup{t4}, kept: []string{"a100", "h100", "mi300x"},
			warnings: []string{
				"patch.devices[a100].count: -1 must not be negative" + kept,
				`patch.keptDeviceGroups[4]: "No Name" is not a valid device group name: must be a lowercase DNS label: letters a-z, digits and '-', starting and ending with a letter or digit; dropped`,
			}},
		{name: "devices without ReplaceDevices are no news", in: &pingstatus.NodePatch{Devices: []pingstatus.DeviceGroup{{Name: "A", Count: -1}}},
			warnings: []string{"patch.devices: given without ReplaceDevices: no news; ignored"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var before []pingstatus.DeviceGroup
			for _, g := range tt.in.Devices {
				before = append(before, with(g, func(*pingstatus.DeviceGroup) {}))
			}
			beforeKept := append([]string(nil), tt.in.KeptDeviceGroups...)
			got, warnings := tt.opts.Check(tt.in)
			if got.ReplaceDevices != tt.replace {
				t.Errorf("ReplaceDevices = %v, want %v", got.ReplaceDevices, tt.replace)
			}
			if diff := cmp.Diff(tt.devices, got.Devices, equateQuantities); diff != "" {
				t.Errorf("Devices (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.kept, got.KeptDeviceGroups); diff != "" {
				t.Errorf("KeptDeviceGroups (-want +got):\n%s", diff)
			}
			var texts []string
			for _, w := range warnings {
				texts = append(texts, w.String())
				if w.Subject != pingstatus.SubjectDevice {
					t.Errorf("%q is about %v, not a device", w, w.Subject)
				}
			}
			if diff := cmp.Diff(tt.warnings, texts); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
			if got == tt.in {
				t.Error("returned the patch itself, which was never judged")
			}
			// What is built on the result leaves the patch alone.
			_ = append(got.Devices, pingstatus.DeviceGroup{Name: "appended"})
			_ = append(got.KeptDeviceGroups, "appended")
			if again, warnings := tt.opts.Check(got); again != got || warnings != nil {
				t.Errorf("Check of its own result: %p (want %p), %v", again, got, warnings)
			}
			if diff := cmp.Diff(before, tt.in.Devices, equateQuantities, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("the patch's devices were changed (-before +after):\n%s", diff)
			}
			if diff := cmp.Diff(beforeKept, tt.in.KeptDeviceGroups, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("the patch's kept groups were changed (-before +after):\n%s", diff)
			}
		})
	}
}

// TestCheckOfAJudgedPatchCostsNothing pins down that the steady ping of
// a provider, whose patch Parse judged, allocates nothing to check it,
// nor does a patch that Check judged; one judged with other options is
// judged again.
func TestCheckOfAJudgedPatchCostsNothing(t *testing.T) {
	opts := pingstatus.Options{LabelNamespaces: []string{"nvidia.com"}}
	parsed, _ := pingstatus.Parse([]byte(`{"resources":{"cpu":"8"},"taints":[],"labels":{"nvidia.com/gpu.product":"A100"},"devices":[{"name":"a100","count":8}]}`), opts)
	checked, _ := opts.Check(&pingstatus.NodePatch{Kind: pingstatus.Structured, ReplaceDevices: true, Devices: []pingstatus.DeviceGroup{a100, t4}, KeptDeviceGroups: []string{"h100"}})
	for _, p := range []*pingstatus.NodePatch{&parsed, checked} {
		allocs := testing.AllocsPerRun(100, func() {
			if got, warnings := opts.Check(p); got != p || warnings != nil {
				t.Fatalf("Check of a judged patch: %p (want %p), %v", got, p, warnings)
			}
		})
		if allocs != 0 {
			t.Errorf("Check of a judged patch allocates %v times, want 0", allocs)
		}
	}
	same := pingstatus.Options{LabelNamespaces: []string{"nvidia.com"}, MaxBodyBytes: 2 << 20}
	if got, _ := same.Check(&parsed); got != &parsed {
		t.Error("a patch judged with options that judge alike (but for the body's limit) is judged again")
	}
	other := pingstatus.Options{}
	got, warnings := other.Check(&parsed)
	if got == &parsed || len(warnings) != 1 || warnings[0].Rule != "label-namespace" || got.Labels["nvidia.com/gpu.product"] != "" {
		t.Errorf("a patch judged with other options: %p (the patch %p), %v, labels %v; want it judged again, the label refused", got, &parsed, warnings, got.Labels)
	}
}

// replyOf returns a reply whose devices are groups, as a plugin would
// send them: each capacity as its String().
func replyOf(t *rapid.T, groups []pingstatus.DeviceGroup) []byte {
	list := make([]pingstatus.DeviceResponse, len(groups))
	for i, g := range groups {
		r := pingstatus.DeviceResponse{Name: g.Name, Count: g.Count, Attributes: g.Attributes}
		for name, q := range g.Capacity {
			if r.Capacity == nil {
				r.Capacity = map[string]pingstatus.DeviceCapacity{}
			}
			r.Capacity[name] = pingstatus.DeviceCapacity{Value: q.String()}
		}
		for _, taint := range g.Taints {
			r.Taints = append(r.Taints, pingstatus.TaintResponse{Key: taint.Key, Value: taint.Value, Effect: string(taint.Effect)})
		}
		list[i] = r
	}
	body, err := json.Marshal(pingstatus.PingResponse{NodeResponse: pingstatus.NodeResponse{Devices: append([]pingstatus.DeviceResponse{}, list...)}})
	if err != nil {
		t.Fatal(err)
	}
	return body
}

var entryPath = regexp.MustCompile(`^devices\[([0-9]+)\](.*)$`)

// TestPropertyCheckDevicesAgreesWithParse: for device groups built by hand,
// valid or not, Check publishes, keeps and drops exactly the groups
// that Parse does when a reply lists the same groups, and warns about
// each in the same words, at the same path under the group's name rather
// than its index; but for what it says of a repeated name.
func TestPropertyCheckDevicesAgreesWithParse(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		groups := gen.HandBuiltDeviceGroups(6).Draw(t, "groups")
		opts := pingstatus.Options{MaxDevices: rapid.SampledFrom([]int{0, 4, 20}).Draw(t, "maxDevices")}
		body := replyOf(t, groups)
		want, parseWarnings := pingstatus.Parse(body, opts)
		got, warnings := opts.Check(&pingstatus.NodePatch{ReplaceDevices: true, Devices: groups})
		if got.ReplaceDevices != want.ReplaceDevices {
			t.Fatalf("%s: Check ReplaceDevices %v, Parse %v", body, got.ReplaceDevices, want.ReplaceDevices)
		}
		if diff := cmp.Diff(want.Devices, got.Devices, equateQuantities, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("%s: devices (-Parse +Check):\n%s", body, diff)
		}
		if diff := cmp.Diff(want.KeptDeviceGroups, got.KeptDeviceGroups, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("%s: kept groups (-Parse +Check):\n%s", body, diff)
		}
		// Parse's warnings, each path under the group's name as
		// Check names it.
		texts := func(warnings []pingstatus.Warning, parsed bool) []string {
			var out []string
			for _, w := range warnings {
				if w.Action == pingstatus.Repaired { // a repeated name
					continue
				}
				path := w.Path
				if m := entryPath.FindStringSubmatch(path); parsed && m != nil {
					i, _ := strconv.Atoi(m[1])
					name := groups[i].Name
					if kuberules.DeviceGroupNameProblem(name) != "" {
						name = text.Quote(name, 64)
					}
					path = "patch.devices[" + name + "]" + m[2]
				} else if parsed {
					path = "patch." + path
				}
				out = append(out, path+": "+w.Message)
			}
			return out
		}
		if diff := cmp.Diff(texts(parseWarnings, true), texts(warnings, false)); diff != "" {
			t.Fatalf("%s: warnings (-Parse +Check):\n%s", body, diff)
		}
	})
}

// TestPropertyCheckJudgesOnce: for any patch built by hand, valid or
// not, Check leaves the patch as it was and gives a judged patch that
// is valid by the package's rules (the same checks as Parse's output),
// that Check gives back as it is, with no warning, and that, decoded
// from JSON with no judgement, Check takes as it is with no warning:
// judging twice finds nothing more. Every warning carries a rule of the
// package comment, and the part it is about.
func TestPropertyCheckJudgesOnce(t *testing.T) {
	rules := declaredRules(t)
	rapid.Check(t, func(t *rapid.T) {
		opts := pingstatus.Options{LabelNamespaces: gen.LabelNamespaces, ProtectedKeys: []string{"vendor.io/maintenance"}, MaxTaints: rapid.SampledFrom([]int{0, 2}).Draw(t, "maxTaints"),
			AllowZero: rapid.IntRange(0, 3).Draw(t, "allowZero") == 0}
		hand := gen.HandBuiltPatch().Draw(t, "patch")
		before, _ := json.Marshal(hand)
		judged, warnings := opts.Check(hand)
		if after, _ := json.Marshal(hand); string(after) != string(before) {
			t.Fatalf("Check modified the patch: %s, was %s", after, before)
		}
		for _, w := range warnings {
			if !rules[w.Rule] || !strings.HasPrefix(w.Path, "patch") {
				t.Fatalf("%q: rule %q, path %q", w, w.Rule, w.Path)
			}
			if strings.HasPrefix(w.Path, "patch.parts[") && w.Subject != pingstatus.SubjectPart && w.Part == "" {
				t.Fatalf("%q is about a part's field, and names no part", w)
			}
		}
		if err := checkPatch(*judged, opts); err != nil {
			t.Fatalf("Check gives an invalid patch: %v", err)
		}
		if again, w := opts.Check(judged); again != judged || w != nil {
			t.Fatalf("Check of its own result: %v", w)
		}
		unjudged := roundTrip(t, *judged)
		again, w := opts.Check(&unjudged)
		if len(w) != 0 {
			t.Fatalf("Check of its result decoded from JSON warns: %v", w)
		}
		if diff := cmp.Diff(*judged, *again, equateQuantities, ignoreJudgement, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("Check of its result decoded from JSON (-first +second):\n%s", diff)
		}
	})
}
