package devicepool_test

// The tests of this file hold Apply to the rules Parse judges a reply's
// devices with, for a patch built by hand: Apply reads such a patch's
// devices through pingstatus.Options.Check, the one implementation of
// those rules (rule pool-judged).

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/api/resource"
	"pgregory.net/rapid"

	"github.com/pingnode/pingnode/internal/gen"
	"github.com/pingnode/pingnode/internal/kuberules"
	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/nodeapply/devicepool"
	"github.com/pingnode/pingnode/pingstatus"
)

// refusedGroups returns the names of the groups that device warnings say
// were refused (path patch.devices[name]..., a name that is no group's
// quoted), sorted, each once.
func refusedGroups(warnings []pingstatus.Warning) []string {
	var names []string
	for _, w := range warnings {
		rest, ok := strings.CutPrefix(w.Path, "patch.devices[")
		if !ok || w.Subject != pingstatus.SubjectDevice || w.Action != pingstatus.Refused {
			continue
		}
		if quoted, err := strconv.QuotedPrefix(rest); err == nil {
			name, _ := strconv.Unquote(quoted)
			names = append(names, name)
		} else if name, _, ok := strings.Cut(rest, "]"); ok {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// TestHandBuiltDevicePatch pins down that a patch built by hand, not by
// Parse, is read as Parse would give it: groups in any order, of a name
// given twice the last, and a group Parse would refuse refused with a
// warning, its devices left as they are.
func TestHandBuiltDevicePatch(t *testing.T) {
	s := func(v string) *string { return &v }
	pool := apply(nil, &pingstatus.NodePatch{ReplaceDevices: true, Devices: []pingstatus.DeviceGroup{
		{Name: "bad", Count: 1}, {Name: "t4", Count: 1},
	}}).Devices
	patch := &pingstatus.NodePatch{ReplaceDevices: true, Devices: []pingstatus.DeviceGroup{
		{Name: "t4", Count: 5},
		{Name: "bad", Count: 3, Attributes: map[string]pingstatus.DeviceAttribute{"cudaComputeCapability": {VersionValue: s("8.0")}}},
		{Name: "a100", Count: 1},
		{Name: "t4", Count: 2},
		{Name: "Upper", Count: 1},
	}}
	res := apply(pool, patch)
	if got, want := poolText(res.Devices), "a100-0 bad-0 t4-0 t4-1"; got != want {
		t.Errorf("pool %s, want %s", got, want)
	}
	if diff := cmp.Diff([]string{"Upper", "bad"}, refusedGroups(res.Warnings)); diff != "" {
		t.Errorf("refused groups (-want +got):\n%s\nwarnings %v", diff, res.Warnings)
	}
	if again := apply(res.Devices, patch); len(again.Changes) > 0 {
		t.Errorf("the same patch again changed the pool: %v", again.Changes)
	}
}

// TestHandBuiltDeviceGroupOverLimits pins down that a hand-built group
// that Parse would refuse for a limit, a count above the most devices a
// reply may give or a capacity of 8Ei or more, is refused with a warning
// and its published devices kept.
func TestHandBuiltDeviceGroupOverLimits(t *testing.T) {
	published := apply(nil, gpuGroup(2, "")).Devices
	for _, tc := range []struct {
		name   string
		change func(*pingstatus.DeviceGroup)
	}{
		{"count 5000", func(g *pingstatus.DeviceGroup) { g.Count = 5000 }},
		{"capacity 9Ei", func(g *pingstatus.DeviceGroup) {
			g.Capacity = map[string]resource.Quantity{"memory": resource.MustParse("9Ei")}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			patch := gpuGroup(3, "")
			tc.change(&patch.Devices[0])
			res := apply(published, patch)
			if diff := cmp.Diff([]string{"gpu"}, refusedGroups(res.Warnings)); diff != "" {
				t.Errorf("refused groups (-want +got):\n%s\nwarnings %v", diff, res.Warnings)
			}
			if len(res.Changes) > 0 || !devicepool.Equal(published, res.Devices) {
				t.Errorf("the published devices changed: %v", res.Changes)
			}
		})
	}
}

// TestDevicesOverLimitKeepPool pins down rule pool-judged for a list over the
// limits, the devices of its counts adding up to more than
// pingstatus.Options.MaxDevices: a hand-built patch so, and the same list
// as a reply's body, are passed over whole with a warning, and the pool
// is left as it is, no device removed.
func TestDevicesOverLimitKeepPool(t *testing.T) {
	published := apply(nil, gpuGroup(2, "")).Devices
	over := gpuGroup(1, "")
	over.Devices = append(over.Devices, pingstatus.DeviceGroup{Name: "t4", Count: pingstatus.DefaultMaxDevices})
	parsed, _ := pingstatus.Parse([]byte(`{"devices":[{"name":"gpu","count":1},{"name":"t4","count":1024}]}`), pingstatus.Options{})
	for _, tc := range []struct {
		name  string
		patch *pingstatus.NodePatch
	}{{"hand-built", over}, {"parsed", &parsed}} {
		res := apply(published, tc.patch)
		if len(res.Changes) != 0 || !devicepool.Equal(published, res.Devices) {
			t.Errorf("%s: a list over the limits changes the pool: %v", tc.name, res.Changes)
		}
		if tc.patch == over && len(res.Warnings) == 0 {
			t.Errorf("%s: a list over the limits passed over without a warning", tc.name)
		}
	}
}

// handBuiltNames are the group names a hand-built patch draws from: valid
// ones, of which one is another's with an index after it, and names no
// group may have.
var handBuiltNames = []string{"a", "a-1", "b", "gpu", "Upper", "a_b", "-x"}

// handBuiltGroupGen draws a group as a program might build it: mostly
// valid, sometimes with a mistake Parse refuses in a reply (a count out
// of range, an attribute with no value or two, a bad version, string or
// name, too many attributes, a capacity negative or too large, a bad
// taint).
func handBuiltGroupGen() *rapid.Generator[pingstatus.DeviceGroup] {
	return rapid.Custom(func(t *rapid.T) pingstatus.DeviceGroup {
		s := func(v string) *string { return &v }
		g := pingstatus.DeviceGroup{
			Name:  rapid.SampledFrom(handBuiltNames).Draw(t, "name"),
			Count: rapid.OneOf(rapid.IntRange(0, 4), rapid.SampledFrom([]int{-1, pingstatus.DefaultMaxDevices, pingstatus.DefaultMaxDevices + 1, 5000})).Draw(t, "count"),
		}
		if rapid.Bool().Draw(t, "attributes") {
			g.Attributes = map[string]pingstatus.DeviceAttribute{"productName": {StringValue: s("NVIDIA A100")}}
			switch rapid.IntRange(0, 12).Draw(t, "attribute mistake") {
			case 0:
				g.Attributes["cudaComputeCapability"] = pingstatus.DeviceAttribute{VersionValue: s("8.0")}
			case 1:
				g.Attributes["type"] = pingstatus.DeviceAttribute{}
			case 2:
				g.Attributes["type"] = pingstatus.DeviceAttribute{StringValue: s("gpu"), BoolValue: new(bool)}
			case 3:
				g.Attributes["product-name"] = pingstatus.DeviceAttribute{StringValue: s("x")}
			case 4:
				g.Attributes["GPU.io/x"] = pingstatus.DeviceAttribute{StringValue: s("x")}
			case 5:
				g.Attributes["long"] = pingstatus.DeviceAttribute{StringValue: s(strings.Repeat("s", kuberules.MaxDeviceAttributeValueBytes+1))}
			case 6:
				for i := range kuberules.MaxDeviceAttributesAndCapacities {
					n := int64(i)
					g.Attributes["a"+strconv.Itoa(i)] = pingstatus.DeviceAttribute{IntValue: &n}
				}
			}
		}
		if rapid.Bool().Draw(t, "capacity") {
			memory := rapid.OneOf(rapid.Just("80Gi"), rapid.SampledFrom([]string{"-1Gi", "7Ei", "8Ei", "9Ei"})).Draw(t, "memory")
			g.Capacity = map[string]resource.Quantity{"memory": resource.MustParse(memory)}
		}
		if rapid.Bool().Draw(t, "taints") {
			g.Taints = []pingstatus.DeviceTaint{{Key: "gpu.nvidia.com/xid", Value: "79", Effect: pingstatus.DeviceTaintNoSchedule}}
			switch rapid.IntRange(0, 8).Draw(t, "taint mistake") {
			case 0:
				g.Taints = append(g.Taints, pingstatus.DeviceTaint{Key: "gpu.nvidia.com/xid", Effect: "PreferNoSchedule"})
			case 1:
				g.Taints = append(g.Taints, pingstatus.DeviceTaint{Key: "not a key", Effect: pingstatus.DeviceTaintNone})
			case 2:
				g.Taints = append(g.Taints, pingstatus.DeviceTaint{Key: "gpu.nvidia.com/lost", Value: "not a value!", Effect: pingstatus.DeviceTaintNoSchedule})
			}
		}
		return g
	})
}

// replyJSON is the body of a reply that lists groups as they are, in
// their order, for Parse.
func replyJSON(t *rapid.T, groups []pingstatus.DeviceGroup) []byte {
	wire := make([]pingstatus.DeviceResponse, len(groups))
	for i, g := range groups {
		wire[i] = pingstatus.DeviceResponse{Name: g.Name, Count: g.Count, Attributes: g.Attributes}
		if g.Capacity != nil {
			wire[i].Capacity = map[string]pingstatus.DeviceCapacity{}
			for name, q := range g.Capacity {
				wire[i].Capacity[name] = pingstatus.DeviceCapacity{Value: q.String()}
			}
		}
		for _, taint := range g.Taints {
			wire[i].Taints = append(wire[i].Taints, pingstatus.TaintResponse{Key: taint.Key, Value: taint.Value, Effect: string(taint.Effect)})
		}
	}
	body, err := json.Marshal(pingstatus.PingResponse{NodeResponse: pingstatus.NodeResponse{Devices: append([]pingstatus.DeviceResponse{}, wire...)}})
	if err != nil {
		t.Fatal(err)
	}
	return body
}

// TestPropertyHandBuiltDevicesRefusedAsParse: for any patch built by hand
// (groups in any order, names repeated, mistakes, counts over the limit
// together), the groups Apply refuses (a device warning that refuses it,
// or its published devices kept as they are) are the groups Parse
// refuses for the same groups written as a reply; when Parse passes the
// whole list over, Apply leaves the pool as it is; and Apply publishes
// the same pool for the typed patch as for the parsed reply.
func TestPropertyHandBuiltDevicesRefusedAsParse(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		groups := rapid.SliceOfN(handBuiltGroupGen(), 0, 6).Draw(t, "groups")
		// Each valid group has two devices published, described as no
		// group of the patch describes them, gpu-0 sometimes held.
		old := map[string]pingstatus.DeviceAttribute{"sentinel": {StringValue: new(string)}}
		var pool []devicepool.Device
		for _, name := range []string{"a", "a-1", "b", "gpu"} {
			pool = append(pool,
				devicepool.Device{Name: name + "-0", Held: rapid.Bool().Draw(t, "held "+name), Attributes: old},
				devicepool.Device{Name: name + "-1", Attributes: old})
		}
		slices.SortFunc(pool, devicepool.Compare)

		typed := apply(pool, &pingstatus.NodePatch{Kind: pingstatus.Structured, ReplaceDevices: true, Devices: groups})
		parsed, warnings := pingstatus.Parse(replyJSON(t, groups), pingstatus.Options{})
		applyRefused := refusedGroups(typed.Warnings)
		if !parsed.ReplaceDevices { // over the limits: the list is passed over, and so is the pool
			if len(typed.Changes) > 0 {
				t.Fatalf("Parse passes the list over, Apply changes the pool: %v", typed.Changes)
			}
		} else {
			for _, d := range typed.Devices {
				if _, ok := d.Attributes["sentinel"]; ok {
					group, _, _ := kuberules.SplitDeviceName(d.Name)
					applyRefused = append(applyRefused, group)
				}
			}
		}
		slices.Sort(applyRefused)
		applyRefused = slices.Compact(applyRefused)

		parseRefused := slices.Clone(parsed.KeptDeviceGroups)
		for _, w := range warnings {
			if w.Subject != pingstatus.SubjectDevice || w.Action != pingstatus.Refused {
				continue
			}
			for i, g := range groups {
				if at := "devices[" + strconv.Itoa(i) + "]"; w.Path == at || strings.HasPrefix(w.Path, at+".") {
					parseRefused = append(parseRefused, g.Name)
				}
			}
		}
		slices.Sort(parseRefused)
		parseRefused = slices.Compact(parseRefused)
		if diff := cmp.Diff(parseRefused, applyRefused, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("groups refused (-Parse +Apply):\n%s\nApply's warnings %v\nParse's warnings %v", diff, typed.Warnings, warnings)
		}

		fromReply := apply(pool, &parsed)
		if !devicepool.Equal(fromReply.Devices, typed.Devices) {
			t.Fatalf("the typed patch publishes %s, the reply %s", poolText(typed.Devices), poolText(fromReply.Devices))
		}
	})
}

// TestPropertyAHandBuiltPatchIsJudgedOnce: for any patch built by hand,
// valid or not, and any pool, Apply gives the pool and changes it gives
// for the same patch judged once by pingstatus.Check (rule pool-judged),
// and Check's warnings about devices; a judged patch, no warning.
func TestPropertyAHandBuiltPatchIsJudgedOnce(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var pool []devicepool.Device
		if rapid.Bool().Draw(t, "published") {
			first := apply(nil, devicePatchGen().Draw(t, "earlier patch"))
			pool = holdSome(t, first.Devices)
		}
		hand := gen.HandBuiltPatch().Draw(t, "patch")
		opts := pingstatus.Options{MaxDevices: rapid.SampledFrom([]int{0, 20}).Draw(t, "maxDevices")}
		judged, checkWarnings := opts.Check(hand)
		got := devicepool.Apply(pool, nodeapply.Ping{Reply: hand}, opts)
		want := devicepool.Apply(pool, nodeapply.Ping{Reply: judged}, opts)
		if diff := cmp.Diff(want.Devices, got.Devices, cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 }), cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("the pool (-judged +by hand):\n%s", diff)
		}
		if diff := cmp.Diff(want.Changes, got.Changes, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("the changes (-judged +by hand):\n%s", diff)
		}
		if len(want.Warnings) != 0 {
			t.Fatalf("a judged patch warns: %v", want.Warnings)
		}
		var devices []pingstatus.Warning
		for _, w := range checkWarnings {
			if w.Subject == pingstatus.SubjectDevice { // the pool's, devices replaced or not: Apply reports none of them
				devices = append(devices, w)
			}
		}
		slices.SortStableFunc(devices, func(x, y pingstatus.Warning) int { return strings.Compare(x.Path, y.Path) })
		if diff := cmp.Diff(devices, got.Warnings, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("the warnings (-Check's about devices +by hand):\n%s", diff)
		}
	})
}
