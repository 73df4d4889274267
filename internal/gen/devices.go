package gen

import (
	"fmt"
	"strings"

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

// DeviceGroups draws up to max valid device groups, unique by name, whose
// counts add up to at most [pingstatus.DefaultMaxDevices], each with at
// most 32 attributes and capacities together; an attribute or capacity
// map is nil rather than empty, so that the groups come back the same
// from JSON.
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
