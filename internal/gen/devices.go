package gen

import (
	"fmt"
	"math"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	"pgregory.net/rapid"

	"github.com/pingnode/pingnode/internal/kuberules"
	"github.com/pingnode/pingnode/pingstatus"
)

// SharedDeviceGroups are device group names that generated replies draw
// from often, so that groups meet again from one reply to the next.
var SharedDeviceGroups = []string{"a100", "t4", "h100", "mi300x"}

// DeviceGroupName draws a valid device group name: often one of
// [SharedDeviceGroups], sometimes a fresh DNS label, up to the longest.
func DeviceGroupName() *rapid.Generator[string] {
	return rapid.OneOf(
		rapid.SampledFrom(SharedDeviceGroups),
		rapid.StringMatching(`[a-z0-9]([-a-z0-9]{0,10}[a-z0-9])?`),
		rapid.StringMatching(`[a-z0-9]([-a-z0-9]{54}[a-z0-9])`),
	)
}

// DeviceAttributeName draws a valid name of a device's attribute or
// capacity: a C identifier, sometimes with a domain, sometimes of the
// longest lengths.
func DeviceAttributeName() *rapid.Generator[string] {
	return rapid.OneOf(
		rapid.SampledFrom([]string{"productName", "type", "cudaComputeCapability", "memory", "index", "gpu.nvidia.com/productName"}),
		rapid.StringMatching(`([a-z]{1,8}(\.[a-z0-9]{1,6}){0,2}/)?[A-Za-z_][A-Za-z0-9_]{0,12}`),
		rapid.StringMatching(`[a-z]{63}/[A-Za-z_][A-Za-z0-9_]{31}`),
	)
}

// Semver draws a valid semantic version 2.0.0 of at most 64 bytes.
func Semver() *rapid.Generator[string] {
	const numeric, identifier = `(0|[1-9][0-9]{0,2})`, `(0|[1-9][0-9]{0,2}|[0-9]{0,2}[a-zA-Z-][0-9a-zA-Z-]{0,4})`
	return rapid.OneOf(
		rapid.SampledFrom([]string{"8.0.0", "7.5.0", "9.0.0", "12.4.1", "1.0.0-rc.1+build.7"}),
		rapid.StringMatching(numeric+`\.`+numeric+`\.`+numeric+`(-`+identifier+`(\.`+identifier+`){0,2})?(\+[0-9a-zA-Z-]{1,5}(\.[0-9a-zA-Z-]{1,5}){0,2})?`),
	)
}

// DeviceAttribute draws a valid value of a device's attribute: exactly
// one of its fields, each valid.
func DeviceAttribute() *rapid.Generator[pingstatus.DeviceAttribute] {
	return rapid.Custom(func(t *rapid.T) pingstatus.DeviceAttribute {
		var a pingstatus.DeviceAttribute
		switch rapid.IntRange(0, 3).Draw(t, "kind") {
		case 0:
			s := rapid.StringN(0, -1, kuberules.MaxDeviceAttributeValueBytes).Draw(t, "string")
			a.StringValue = &s
		case 1:
			n := rapid.Int64().Draw(t, "int")
			a.IntValue = &n
		case 2:
			b := rapid.Bool().Draw(t, "bool")
			a.BoolValue = &b
		default:
			v := Semver().Draw(t, "version")
			a.VersionValue = &v
		}
		return a
	})
}

// DeviceTaintKeys are the keys of NVIDIA's driver's taints, which
// generated device taints draw from often.
var DeviceTaintKeys = []string{"gpu.nvidia.com/xid", "gpu.nvidia.com/gpu-lost", "gpu.nvidia.com/unmonitored"}

// DeviceTaintEffects are the three effects of a device's taint.
var DeviceTaintEffects = []pingstatus.DeviceTaintEffect{pingstatus.DeviceTaintNone, pingstatus.DeviceTaintNoSchedule, pingstatus.DeviceTaintNoExecute}

// DeviceTaint draws a valid taint of a device: a key from
// [DeviceTaintKeys] or [TaintKey], or one that Kubernetes controllers own
// on a node (a device's taint may have it), a valid value and effect.
func DeviceTaint() *rapid.Generator[pingstatus.DeviceTaint] {
	return rapid.Custom(func(t *rapid.T) pingstatus.DeviceTaint {
		return pingstatus.DeviceTaint{
			Key:    rapid.OneOf(rapid.SampledFrom(DeviceTaintKeys), TaintKey(), rapid.Just("node.kubernetes.io/unreachable")).Draw(t, "key"),
			Value:  TaintValue().Draw(t, "value"),
			Effect: rapid.SampledFrom(DeviceTaintEffects).Draw(t, "effect"),
		}
	})
}

// DeviceTaints draws a device's valid taints, in the plugin's order: none
// often, a few, and now and then all 16, a key and effect sometimes
// repeated (the API server takes them).
func DeviceTaints() *rapid.Generator[[]pingstatus.DeviceTaint] {
	return rapid.Custom(func(t *rapid.T) []pingstatus.DeviceTaint {
		n := rapid.SampledFrom([]int{0, 0, 1, 2, 3, kuberules.MaxDeviceTaints}).Draw(t, "taints")
		if n == 0 {
			return nil
		}
		taints := rapid.SliceOfN(DeviceTaint(), n, n).Draw(t, "taint list")
		if n > 1 && rapid.IntRange(0, 4).Draw(t, "repeat") == 0 {
			taints[n-1].Key, taints[n-1].Effect = taints[0].Key, taints[0].Effect
		}
		return taints
	})
}

// DeviceGroups draws up to max valid device groups, unique by name, whose
// counts add up to at most [pingstatus.DefaultMaxDevices], each with at
// most 32 attributes and capacities together and up to 16 taints; an
// attribute or capacity map, or the taints, is nil rather than empty, so
// that the groups come back the same from JSON.
func DeviceGroups(max int) *rapid.Generator[[]pingstatus.DeviceResponse] {
	return rapid.Custom(func(t *rapid.T) []pingstatus.DeviceResponse {
		names := rapid.SliceOfNDistinct(DeviceGroupName(), 0, max, rapid.ID).Draw(t, "names")
		groups := make([]pingstatus.DeviceResponse, len(names))
		for i, name := range names {
			g := &groups[i]
			g.Name = name
			g.Count = rapid.IntRange(0, pingstatus.DefaultMaxDevices/len(names)).Draw(t, "count")
			most, capacities := 6, 3
			if rapid.IntRange(0, 9).Draw(t, "full") == 0 {
				most, capacities = kuberules.MaxDeviceAttributesAndCapacities, kuberules.MaxDeviceAttributesAndCapacities
			}
			if c := rapid.MapOfN(DeviceAttributeName(), rapid.Map(PositiveQuantity(), func(v string) pingstatus.DeviceCapacity {
				return pingstatus.DeviceCapacity{Value: v}
			}), 0, capacities).Draw(t, "capacity"); len(c) > 0 {
				g.Capacity = c
			}
			if a := rapid.MapOfN(DeviceAttributeName(), DeviceAttribute(), 0, most-len(g.Capacity)).Draw(t, "attributes"); len(a) > 0 {
				g.Attributes = a
			}
			for _, taint := range DeviceTaints().Draw(t, "taints") {
				g.Taints = append(g.Taints, pingstatus.TaintResponse{Key: taint.Key, Value: taint.Value, Effect: string(taint.Effect)})
			}
		}
		return groups
	})
}

func devicesValue(t *rapid.T) any {
	switch rapid.IntRange(0, 9).Draw(t, "devices shape") {
	case 0:
		return nil
	case 1:
		return []any{}
	case 2:
		return "gpus"
	}
	entries := make([]any, rapid.IntRange(0, 6).Draw(t, "devices"))
	for i := range entries {
		if rapid.IntRange(0, 9).Draw(t, "device no object") == 0 {
			entries[i] = rapid.SampledFrom([]any{nil, "a100", 3, []any{}}).Draw(t, "device")
			continue
		}
		entry := map[string]any{}
		if rapid.IntRange(0, 9).Draw(t, "has name") > 0 {
			entry["name"] = rapid.OneOf(
				rapid.Map(DeviceGroupName(), func(n string) any { return n }),
				rapid.SampledFrom([]any{"A100", "", "a.100", "a100-", strings.Repeat("g", 57), 5, nil}),
			).Draw(t, "name")
		}
		if rapid.IntRange(0, 9).Draw(t, "has count") > 0 {
			entry["count"] = rapid.OneOf(
				rapid.Map(rapid.IntRange(0, 16), func(n int) any { return n }),
				rapid.SampledFrom([]any{"8", "1k", 8.0, 1e3, "0", -1, "-1", "1.5", 1.5, "x", true, nil, 2000, "1e200", "1000m"}),
			).Draw(t, "count")
		}
		if rapid.Bool().Draw(t, "has attributes") {
			entry["attributes"] = attributesValue(t)
		}
		if rapid.Bool().Draw(t, "has capacity") {
			entry["capacity"] = capacityValue(t)
		}
		if rapid.IntRange(0, 2).Draw(t, "has taints") == 0 {
			entry["taints"] = deviceTaintsValue(t)
		}
		if rapid.IntRange(0, 9).Draw(t, "has unknown") == 0 {
			entry["driver"] = "gpu.example.com"
		}
		entries[i] = entry
	}
	return entries
}

func attributesValue(t *rapid.T) any {
	switch rapid.IntRange(0, 9).Draw(t, "attributes shape") {
	case 0:
		return []any{"gpu"}
	case 1: // too many
		many := map[string]any{}
		for i := range kuberules.MaxDeviceAttributesAndCapacities + 1 {
			many[fmt.Sprintf("a%02d", i)] = map[string]any{"int": i}
		}
		return many
	}
	attributes := map[string]any{}
	for range rapid.IntRange(0, 5).Draw(t, "attributes") {
		name := rapid.OneOf(
			DeviceAttributeName(),
			rapid.SampledFrom([]string{"product-name", "9lives", "GPU.io/x", "a.io/b/c", "", strings.Repeat("x", 33), "/x", "a.io/"}),
		).Draw(t, "attribute name")
		attributes[name] = rapid.OneOf(
			rapid.Map(DeviceAttribute(), func(a pingstatus.DeviceAttribute) any { return a }),
			rapid.SampledFrom([]any{
				map[string]any{"string": strings.Repeat("s", 65)}, map[string]any{"version": "8.0"}, map[string]any{"int": 1.5},
				map[string]any{"int": "5"}, map[string]any{"int": 80.0}, map[string]any{"int": 1e19}, map[string]any{"bool": "true"},
				map[string]any{}, map[string]any{"string": "a", "int": 1}, map[string]any{"strings": []any{"a"}},
				map[string]any{"string": nil, "bool": true}, nil, "gpu",
			}),
		).Draw(t, "attribute")
	}
	return attributes
}

func capacityValue(t *rapid.T) any {
	if rapid.IntRange(0, 9).Draw(t, "capacity shape") == 0 {
		return "80Gi"
	}
	capacity := map[string]any{}
	for range rapid.IntRange(0, 3).Draw(t, "capacities") {
		name := rapid.OneOf(DeviceAttributeName(), rapid.SampledFrom([]string{"Memory-Size", ""})).Draw(t, "capacity name")
		if rapid.IntRange(0, 4).Draw(t, "capacity no value") == 0 {
			capacity[name] = rapid.SampledFrom([]any{"80Gi", map[string]any{}, nil, map[string]any{"value": "8Ei"}}).Draw(t, "capacity")
			continue
		}
		capacity[name] = map[string]any{"value": quantityValue(t, "capacity value")}
	}
	return capacity
}

func deviceTaintsValue(t *rapid.T) any {
	switch rapid.IntRange(0, 9).Draw(t, "device taints shape") {
	case 0:
		return nil
	case 1:
		return map[string]any{"key": "gpu.nvidia.com/xid"}
	case 2: // too many
		many := make([]any, kuberules.MaxDeviceTaints+1)
		for i := range many {
			many[i] = map[string]any{"key": "gpu.nvidia.com/xid", "value": fmt.Sprint(i), "effect": "None"}
		}
		return many
	}
	taints := make([]any, rapid.IntRange(0, 4).Draw(t, "device taints"))
	for i := range taints {
		if rapid.IntRange(0, 9).Draw(t, "device taint no object") == 0 {
			taints[i] = rapid.SampledFrom([]any{nil, "gpu.nvidia.com/xid", 79, []any{}}).Draw(t, "device taint")
			continue
		}
		entry := map[string]any{}
		if rapid.IntRange(0, 9).Draw(t, "has key") > 0 {
			entry["key"] = rapid.OneOf(
				rapid.Map(DeviceTaint(), func(d pingstatus.DeviceTaint) any { return d.Key }),
				rapid.SampledFrom([]any{"not a key", "", "Upper.IO/x", "a.io/" + strings.Repeat("k", 64), 5, nil}),
			).Draw(t, "device taint key")
		}
		if rapid.Bool().Draw(t, "has value") {
			entry["value"] = rapid.OneOf(
				rapid.Map(TaintValue(), func(v string) any { return v }),
				rapid.SampledFrom([]any{"has spaces", strings.Repeat("v", 64), 79, nil}),
			).Draw(t, "device taint value")
		}
		if rapid.IntRange(0, 9).Draw(t, "has effect") > 0 {
			entry["effect"] = rapid.OneOf(
				rapid.Map(rapid.SampledFrom(DeviceTaintEffects), func(e pingstatus.DeviceTaintEffect) any { return string(e) }),
				rapid.SampledFrom([]any{"", "PreferNoSchedule", "noschedule", "Evict", true, nil}),
			).Draw(t, "device taint effect")
		}
		taints[i] = entry
	}
	return taints
}

// HandBuiltDeviceGroups draws up to max device groups as a provider may
// build them by hand, typed, valid or not: names repeated or invalid,
// counts negative or over the limit, attributes and capacities with every
// kind of mistake (33 of them, capacities negative or from 8Ei), taints
// with bad keys, values and effects, or 17 of them. Each group is one
// that a reply's JSON can say too: its count as a number, each capacity
// as its String().
func HandBuiltDeviceGroups(max int) *rapid.Generator[[]pingstatus.DeviceGroup] {
	bad := func(t *rapid.T, label string) bool { return rapid.IntRange(0, 5).Draw(t, label+" bad") == 0 }
	return rapid.Custom(func(t *rapid.T) []pingstatus.DeviceGroup {
		groups := make([]pingstatus.DeviceGroup, rapid.IntRange(0, max).Draw(t, "groups"))
		for i := range groups {
			g := &groups[i]
			g.Name = rapid.SampledFrom(SharedDeviceGroups).Draw(t, "name")
			switch {
			case bad(t, "name"):
				g.Name = rapid.SampledFrom([]string{"A100", "", "a.100", "a100-", strings.Repeat("g", 57)}).Draw(t, "bad name")
			case rapid.Bool().Draw(t, "fresh name"):
				g.Name = DeviceGroupName().Draw(t, "fresh")
			}
			g.Count = rapid.IntRange(0, 16).Draw(t, "count")
			if bad(t, "count") {
				g.Count = rapid.SampledFrom([]int{-1, 1024, 1025, 5000, math.MaxInt32 + 1, math.MinInt64}).Draw(t, "bad count")
			}
			if rapid.IntRange(0, 19).Draw(t, "over the limit") == 0 {
				g.Attributes = map[string]pingstatus.DeviceAttribute{}
				for k := range kuberules.MaxDeviceAttributesAndCapacities + 1 {
					n := int64(k)
					g.Attributes[fmt.Sprintf("a%02d", k)] = pingstatus.DeviceAttribute{IntValue: &n}
				}
			}
			for range rapid.IntRange(0, 3).Draw(t, "attributes") {
				name := DeviceAttributeName().Draw(t, "attribute name")
				if bad(t, "attribute name") {
					name = rapid.SampledFrom([]string{"product-name", "9lives", "GPU.io/x", "a.io/b/c", "", strings.Repeat("x", 33)}).Draw(t, "bad attribute name")
				}
				a := DeviceAttribute().Draw(t, "attribute")
				if bad(t, "attribute") {
					s, version, n := strings.Repeat("s", 65), "8.0", int64(1)
					a = rapid.SampledFrom([]pingstatus.DeviceAttribute{{}, {StringValue: &s}, {VersionValue: &version}, {StringValue: &version, IntValue: &n}}).Draw(t, "bad attribute")
				}
				if g.Attributes == nil {
					g.Attributes = map[string]pingstatus.DeviceAttribute{}
				}
				g.Attributes[name] = a
			}
			for range rapid.IntRange(0, 2).Draw(t, "capacities") {
				name := DeviceAttributeName().Draw(t, "capacity name")
				if bad(t, "capacity name") {
					name = rapid.SampledFrom([]string{"Memory-Size", ""}).Draw(t, "bad capacity name")
				}
				value := rapid.SampledFrom([]string{"80Gi", "16Gi", "0", "500m", "1k"}).Draw(t, "capacity")
				if bad(t, "capacity") {
					value = rapid.SampledFrom([]string{"-1", "-1Gi", "-500m", "8Ei", "9Ei", "10E", "9223372036854775807"}).Draw(t, "bad capacity")
				}
				if g.Capacity == nil {
					g.Capacity = map[string]resource.Quantity{}
				}
				g.Capacity[name] = resource.MustParse(value)
			}
			g.Taints = DeviceTaints().Draw(t, "taints")
			switch {
			case bad(t, "taints") && len(g.Taints) > 0:
				taint := &g.Taints[rapid.IntRange(0, len(g.Taints)-1).Draw(t, "bad taint")]
				switch rapid.IntRange(0, 2).Draw(t, "bad part") {
				case 0:
					taint.Key = rapid.SampledFrom([]string{"not a key", "", "Upper.IO/x", "a.io/" + strings.Repeat("k", 64)}).Draw(t, "bad key")
				case 1:
					taint.Value = rapid.SampledFrom([]string{"has spaces", strings.Repeat("v", 64), "-x"}).Draw(t, "bad value")
				default:
					taint.Effect = rapid.SampledFrom([]pingstatus.DeviceTaintEffect{"", "PreferNoSchedule", "noschedule", "Evict"}).Draw(t, "bad effect")
				}
			case rapid.IntRange(0, 19).Draw(t, "17 taints") == 0:
				g.Taints = rapid.SliceOfN(DeviceTaint(), kuberules.MaxDeviceTaints+1, kuberules.MaxDeviceTaints+1).Draw(t, "17")
			}
		}
		return groups
	})
}

// PatchDevices draws a patch's devices as Parse and Check give them:
// groups sorted by name and unique, and kept groups sorted, none of them
// listed; names of which one is another's with an index after it, and
// descriptions that are equal by value but spelled otherwise: few
// names, so that pools and replies meet again.
func PatchDevices(t *rapid.T) ([]pingstatus.DeviceGroup, []string) {
	var groups []pingstatus.DeviceGroup
	var kept []string
	for _, name := range []string{"a", "a-1", "b"} {
		switch rapid.IntRange(0, 4).Draw(t, "group "+name) {
		case 0:
		case 1:
			kept = append(kept, name)
		default:
			product := rapid.SampledFrom([]string{"x", "y"}).Draw(t, "product")
			g := pingstatus.DeviceGroup{
				Name: name, Count: rapid.IntRange(0, 5).Draw(t, "count"),
				Attributes: map[string]pingstatus.DeviceAttribute{"product": {StringValue: &product}},
				Capacity:   map[string]resource.Quantity{"memory": resource.MustParse(rapid.SampledFrom([]string{"1Gi", "1024Mi", "2Gi"}).Draw(t, "memory"))},
			}
			if rapid.Bool().Draw(t, "tainted") {
				g.Taints = []pingstatus.DeviceTaint{{Key: "gpu.nvidia.com/xid", Value: rapid.SampledFrom([]string{"", "79"}).Draw(t, "xid"), Effect: pingstatus.DeviceTaintNoSchedule}}
			}
			groups = append(groups, g)
		}
	}
	return groups, kept
}
