package pingstatus

import (
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
)

func ptr[T any](v T) *T { return &v }

// TestDevices pins the rules of devices (the package comment's 13 to 16)
// and the serializer habits in a devices list: the patch's devices, the
// groups kept, and every warning word for word.
func TestDevices(t *testing.T) {
	const kept = "; entry dropped, the plugin's current a devices kept"
	a := func(count int) DeviceGroup { return DeviceGroup{Name: "a", Count: count} }
	withAttribute := func(g DeviceGroup, key string, v DeviceAttribute) DeviceGroup {
		g.Attributes = map[string]DeviceAttribute{key: v}
		return g
	}
	attributes33 := `{` + strings.Repeat(`"x":{"int":1},`, 32) + `"y":{"int":1}}`
	tests := []struct {
		name     string
		body     string
		opts     Options
		replace  bool
		devices  []DeviceGroup
		kept     []string
		warnings []string
	}{
		// The list.
		{name: "absent is no news", body: `{"status":"ok"}`},
		{name: "null is no news", body: `{"devices":null}`},
		{name: "[] says there are none", body: `{"devices":[]}`, replace: true, devices: []DeviceGroup{}},
		{name: "not a list", body: `{"devices":"none"}`,
			warnings: []string{`devices: must be an array, got a string "none"; devices left unchanged`}},
		{name: "more entries than the limit", body: `{"devices":[{"name":"a","count":1},{"name":"b","count":1},"junk"]}`, opts: Options{MaxDevices: 2},
			warnings: []string{"devices: 3 entries, more than the limit of 2; devices left unchanged"}},
		{name: "counts that add up to more than the limit", body: `{"devices":[{"name":"a","count":6},{"name":"b","count":5}]}`, opts: Options{MaxDevices: 10},
			warnings: []string{"devices: counts add up to 11 devices, more than the limit of 10; devices left unchanged"}},
		{name: "groups sorted by name", body: `{"devices":[{"name":"b","count":1},{"name":"a","count":2}]}`,
			replace: true, devices: []DeviceGroup{a(2), {Name: "b", Count: 1}}},

		// Names.
		{name: "an entry that is no object", body: `{"devices":[7,{"name":"a","count":1}]}`, replace: true, devices: []DeviceGroup{a(1)},
			warnings: []string{"devices[0]: must be an object, got a number 7; entry dropped"}},
		{name: "null for an entry has no name", body: `{"devices":[null]}`, replace: true, devices: []DeviceGroup{},
			warnings: []string{"devices[0].name: missing; entry dropped"}},
		{name: "a name that is no string", body: `{"devices":[{"name":5,"count":1}]}`, replace: true, devices: []DeviceGroup{},
			warnings: []string{"devices[0].name: must be a string, got a number 5; entry dropped"}},
		{name: "an empty name", body: `{"devices":[{"name":"","count":1}]}`, replace: true, devices: []DeviceGroup{},
			warnings: []string{`devices[0].name: "" is not a valid device group name: must not be empty; entry dropped`}},

		// Counts.
		{name: "count spellings", body: `{"devices":[{"name":"a","count":"1k"},{"name":"b","count":8.0},{"name":"c","count":1e1},{"name":"d","count":"0"}]}`,
			replace: true, devices: []DeviceGroup{a(1000), {Name: "b", Count: 8}, {Name: "c", Count: 10}, {Name: "d"}}},
		{name: "count above the limit", body: `{"devices":[{"name":"a","count":2000}]}`, replace: true, devices: []DeviceGroup{}, kept: []string{"a"},
			warnings: []string{"devices[0].count: 2000 is too large: the most is 1024" + kept}},
		{name: "count with a huge exponent", body: `{"devices":[{"name":"a","count":"1e200"}]}`, replace: true, devices: []DeviceGroup{}, kept: []string{"a"},
			warnings: []string{"devices[0].count: 1e200 is too large: the most is 1024" + kept}},
		{name: "a count of 1000m is 1", body: `{"devices":[{"name":"a","count":"1000m"}]}`, replace: true, devices: []DeviceGroup{a(1)}},
		{name: "a count just above a whole number", body: `{"devices":[{"name":"a","count":"1.0000000001"}]}`, replace: true, devices: []DeviceGroup{}, kept: []string{"a"},
			warnings: []string{"devices[0].count: 1.0000000001 must be a whole number" + kept}},
		{name: "NaN for a count", body: `{"devices":[{"name":"a","count":NaN}]}`, replace: true, devices: []DeviceGroup{}, kept: []string{"a"},
			warnings: []string{"devices[0].count: must be a string or a number, got NaN, a number JSON does not have" + kept}},

		// Attributes.
		{name: "ints from their text", body: `{"devices":[{"name":"a","count":1,"attributes":{"x":{"int":80.0},"y":{"int":8e1},"z":{"int":-9223372036854775808}}}]}`,
			replace: true, devices: []DeviceGroup{{Name: "a", Count: 1, Attributes: map[string]DeviceAttribute{
				"x": {IntValue: ptr[int64](80)}, "y": {IntValue: ptr[int64](80)}, "z": {IntValue: ptr[int64](math.MinInt64)},
			}}}},
		{name: "ints that are not", body: `{"devices":[{"name":"a","count":1,"attributes":{"x":{"int":1.5},"y":{"int":9223372036854775808},"z":{"int":1e-9999999999}}}]}`,
			replace: true, devices: []DeviceGroup{}, kept: []string{"a"},
			warnings: []string{
				"devices[0].attributes[x].int: 1.5 must be a whole number" + kept,
				"devices[0].attributes[y].int: 9223372036854775808 is too large for an int64" + kept,
				"devices[0].attributes[z].int: 1e-9999999999 must be a whole number" + kept,
			}},
		{name: "values of the wrong JSON type", body: `{"devices":[{"name":"a","count":1,"attributes":{"w":{"int":"5"},"x":{"bool":"true"},"y":{"string":5},"z":["v"]}}]}`,
			replace: true, devices: []DeviceGroup{}, kept: []string{"a"},
			warnings: []string{
				`devices[0].attributes[w].int: must be a number, got a string "5"` + kept,
				`devices[0].attributes[x].bool: must be a boolean, got a string "true"` + kept,
				"devices[0].attributes[y].string: must be a string, got a number 5" + kept,
				"devices[0].attributes[z]: must be an object, got an array" + kept,
			}},
		{name: "null is no value", body: `{"devices":[{"name":"a","count":1,"attributes":{"x":{"string":null,"bool":true},"y":null}}]}`,
			replace: true, devices: []DeviceGroup{}, kept: []string{"a"},
			warnings: []string{"devices[0].attributes[y]: must have exactly one of string, int, bool or version, got none" + kept}},
		{name: "unknown fields are ignored", body: `{"devices":[{"name":"a","count":1,"driver":"gpu.example.com","attributes":{"x":{"bool":true,"list":["y"]}},"capacity":{"m":{"value":"1","requestPolicy":{}}}}]}`,
			replace: true, devices: []DeviceGroup{{Name: "a", Count: 1, Attributes: map[string]DeviceAttribute{"x": {BoolValue: ptr(true)}}, Capacity: map[string]resource.Quantity{"m": resource.MustParse("1")}}}},
		{name: "field names in any case", body: `{"Devices":[{"NAME":"a","Count":1,"Attributes":{"x":{"String":"y"}},"CAPACITY":{"m":{"Value":2}}}]}`,
			replace: true, devices: []DeviceGroup{{Name: "a", Count: 1, Attributes: map[string]DeviceAttribute{"x": {StringValue: ptr("y")}}, Capacity: map[string]resource.Quantity{"m": resource.MustParse("2")}}}},
		{name: "a key in attributes given twice", body: `{"devices":[{"name":"a","count":1,"attributes":{"x":{"int":NaN},"x":{"string":"y","String":"z"}}}]}`,
			replace: true, devices: []DeviceGroup{withAttribute(a(1), "x", DeviceAttribute{StringValue: ptr("z")})},
			warnings: []string{
				"devices[0].attributes[x].string: given 2 times; the last one is used",
				"devices[0].attributes[x]: given 2 times; the last one is used",
			}},
		{name: "an invalid key is quoted in the path", body: `{"devices":[{"name":"a","count":1,"attributes":{"a]\u0000":{"int":1}}}]}`,
			replace: true, devices: []DeviceGroup{}, kept: []string{"a"},
			warnings: []string{`devices[0].attributes["a]\x00"]: "a]\x00" is not a valid attribute name: name must be a C identifier: letters, digits and '_', not starting with a digit` + kept}},
		{name: "NaN in an attribute", body: `{"devices":[{"name":"a","count":1,"attributes":{"x":{"int":Infinity}}}]}`,
			replace: true, devices: []DeviceGroup{}, kept: []string{"a"},
			warnings: []string{"devices[0].attributes[x].int: must be a number, got Infinity, a number JSON does not have" + kept}},
		{name: "attributes that are no object", body: `{"devices":[{"name":"a","count":1,"attributes":[]}]}`, replace: true, devices: []DeviceGroup{}, kept: []string{"a"},
			warnings: []string{"devices[0].attributes: must be an object, got an array" + kept}},
		{name: "33 attributes, counted as written", body: `{"devices":[{"name":"a","count":1,"attributes":` + attributes33 + `}]}`,
			replace: true, devices: []DeviceGroup{}, kept: []string{"a"},
			warnings: []string{"devices[0]: 33 attributes and capacities, the most is 32" + kept}},

		// Capacity.
		{name: "capacity without a value", body: `{"devices":[{"name":"a","count":1,"capacity":{"m":{},"n":"80Gi","o":{"value":true}}}]}`,
			replace: true, devices: []DeviceGroup{}, kept: []string{"a"},
			warnings: []string{
				`devices[0].capacity[n]: must be an object, got a string "80Gi"` + kept,
				"devices[0].capacity[o].value: must be a string or a number, got a boolean true" + kept,
				"devices[0].capacity[m].value: missing" + kept,
			}},
		{name: "NaN and a repeated key in a capacity", body: `{"devices":[{"name":"a","count":1,"capacity":{"m":{"value":NaN},"n":{"value":"1","Value":"2"}}}]}`,
			replace: true, devices: []DeviceGroup{}, kept: []string{"a"},
			warnings: []string{
				"devices[0].capacity[n].value: given 2 times; the last one is used",
				"devices[0].capacity[m].value: must be a string or a number, got NaN, a number JSON does not have" + kept,
			}},
		{name: "a repeated field of an entry", body: `{"devices":[{"name":"b","count":1,"NAME":"a","count":2}]}`,
			replace: true, devices: []DeviceGroup{a(2)},
			warnings: []string{"devices[0].name: given 2 times; the last one is used", "devices[0].count: given 2 times; the last one is used"}},
		{name: "capacity too large", body: `{"devices":[{"name":"a","count":1,"capacity":{"m":{"value":"8Ei"}}}]}`,
			replace: true, devices: []DeviceGroup{}, kept: []string{"a"},
			warnings: []string{"devices[0].capacity[m].value: 8Ei is too large: it must be less than 8Ei" + kept}},

		// Taints.
		{name: "taints in the reply's order, a key and effect repeated", body: `{"devices":[{"name":"a","count":1,"taints":[` +
			`{"key":"gpu.nvidia.com/xid","value":"79","effect":"NoSchedule"},{"key":"gpu.nvidia.com/unmonitored","effect":"None"},` +
			`{"key":"gpu.nvidia.com/xid","value":"48","effect":"NoSchedule"},{"key":"node.kubernetes.io/x","value":null,"effect":"NoExecute"}]}]}`,
			replace: true, devices: []DeviceGroup{{Name: "a", Count: 1, Taints: []DeviceTaint{
				{Key: "gpu.nvidia.com/xid", Value: "79", Effect: DeviceTaintNoSchedule}, {Key: "gpu.nvidia.com/unmonitored", Effect: DeviceTaintNone},
				{Key: "gpu.nvidia.com/xid", Value: "48", Effect: DeviceTaintNoSchedule}, {Key: "node.kubernetes.io/x", Effect: DeviceTaintNoExecute},
			}}}},
		{name: "[] and null are no taints", body: `{"devices":[{"name":"a","count":1,"taints":[]},{"name":"b","count":1,"taints":null}]}`,
			replace: true, devices: []DeviceGroup{a(1), {Name: "b", Count: 1}}},
		{name: "field names in any case in a taint", body: `{"devices":[{"name":"a","count":1,"TAINTS":[{"KEY":"a.io/x","Value":"1","EFFECT":"NoExecute"}]}]}`,
			replace: true, devices: []DeviceGroup{{Name: "a", Count: 1, Taints: []DeviceTaint{{Key: "a.io/x", Value: "1", Effect: DeviceTaintNoExecute}}}}},
		{name: "each kind of bad taint", body: `{"devices":[{"name":"a","count":1,"taints":[{"key":"not a key","effect":"None"},` +
			`{"key":"a.io/x","value":"two words","effect":"NoExecute"},{"key":"a.io/x"},{"key":"a.io/x","effect":"Evict"},` +
			`{"key":"a.io/x","effect":"PreferNoSchedule"},{"effect":"None"},{"key":"a.io/x","effect":null},{"key":"a.io/x","effect":""}]}]}`,
			replace: true, devices: []DeviceGroup{}, kept: []string{"a"},
			warnings: []string{
				`devices[0].taints[0].key: "not a key" is not a valid taint key: name must be letters, digits, '-', '_' and '.', starting and ending with a letter or digit` + kept,
				`devices[0].taints[1].value: "two words" is not a valid taint value: must be empty, or letters, digits, '-', '_' and '.' starting and ending with a letter or digit` + kept,
				"devices[0].taints[2].effect: missing" + kept,
				`devices[0].taints[3].effect: "Evict" is not None, NoSchedule or NoExecute` + kept,
				"devices[0].taints[4].effect: PreferNoSchedule is a node taint's effect, not a device's: None, NoSchedule or NoExecute" + kept,
				`devices[0].taints[5].key: "" is not a valid taint key: must not be empty` + kept,
				"devices[0].taints[6].effect: missing" + kept,
				"devices[0].taints[7].effect: missing" + kept,
			}},
		{name: "17 taints, counted as written", body: `{"devices":[{"name":"a","count":1,"taints":[` + strings.Repeat(`{"key":"a.io/x","effect":"None"},`, 16) + `7]}]}`,
			replace: true, devices: []DeviceGroup{}, kept: []string{"a"},
			warnings: []string{"devices[0].taints: 17 taints, the most is 16" + kept}},
		{name: "17 taints leave no findings of their own", body: `{"devices":[{"name":"a","count":1,"taints":[{"key":"a.io/x","KEY":"a.io/y","effect":NaN},` +
			strings.Repeat(`{"key":"a.io/x","effect":"None"},`, 15) + `{"key":"a.io/x","key":"a.io/z"}]}]}`,
			replace: true, devices: []DeviceGroup{}, kept: []string{"a"},
			warnings: []string{"devices[0].taints: 17 taints, the most is 16" + kept}},
		{name: "taints of the wrong JSON types", body: `{"devices":[{"name":"a","count":1,"taints":{}},{"name":"b","count":1,"taints":[5,{"key":7,"value":true,"effect":1},{"key":"a.io/x","effect":NaN}]}]}`,
			replace: true, devices: []DeviceGroup{}, kept: []string{"a", "b"},
			warnings: []string{
				"devices[0].taints: must be an array, got an object" + kept,
				"devices[1].taints[0]: must be an object, got a number 5; entry dropped, the plugin's current b devices kept",
				"devices[1].taints[1].key: must be a string, got a number 7; entry dropped, the plugin's current b devices kept",
				"devices[1].taints[1].value: must be a string, got a boolean true; entry dropped, the plugin's current b devices kept",
				"devices[1].taints[1].effect: must be a string, got a number 1; entry dropped, the plugin's current b devices kept",
				"devices[1].taints[2].effect: must be a string, got NaN, a number JSON does not have; entry dropped, the plugin's current b devices kept",
			}},
		{name: "a repeated field of a taint", body: `{"devices":[{"name":"a","count":1,"taints":[{"key":"a.io/x","effect":"None","Effect":"NoSchedule"}]}]}`,
			replace: true, devices: []DeviceGroup{{Name: "a", Count: 1, Taints: []DeviceTaint{{Key: "a.io/x", Effect: DeviceTaintNoSchedule}}}},
			warnings: []string{"devices[0].taints[0].effect: given 2 times; the last one is used"}},
		{name: "a taint's key and value refused by their length", body: `{"devices":[{"name":"a","count":1,"taints":[{"key":"a.io/` + strings.Repeat("x", 400) + `","value":"` + strings.Repeat("v", 64) + `","effect":"None"}]}]}`,
			replace: true, devices: []DeviceGroup{}, kept: []string{"a"},
			warnings: []string{
				`devices[0].taints[0].key: "a.io/` + strings.Repeat("x", 59) + `"… is not a valid taint key: must be no more than 317 bytes` + kept,
				`devices[0].taints[0].value: "` + strings.Repeat("v", 64) + `" is not a valid taint value: must be no more than 63 bytes` + kept,
			}},
		{name: "a bad taint beside other mistakes", body: `{"devices":[{"name":"a","count":-1,"attributes":{"x-y":{"int":1}},"taints":[{"key":"a.io/x","effect":"Drain"}]}]}`,
			replace: true, devices: []DeviceGroup{}, kept: []string{"a"},
			warnings: []string{
				"devices[0].count: -1 must not be negative" + kept,
				`devices[0].attributes["x-y"]: "x-y" is not a valid attribute name: name must be a C identifier: letters, digits and '_', not starting with a digit` + kept,
				`devices[0].taints[0].effect: "Drain" is not None, NoSchedule or NoExecute` + kept,
			}},

		// Repeated names.
		{name: "of a name given three times the last counts, the others unread", body: `{"devices":[{"name":"a","count":-1},{"name":"a","count":true},{"name":"a","count":3}]}`,
			replace: true, devices: []DeviceGroup{a(3)},
			warnings: []string{"devices[1]: a repeats devices[0]; the last one is used", "devices[2]: a repeats devices[1]; the last one is used"}},
		{name: "a valid group then a refused one keeps the group", body: `{"devices":[{"name":"a","count":1},{"name":"a","count":-1}]}`,
			replace: true, devices: []DeviceGroup{}, kept: []string{"a"},
			warnings: []string{"devices[1]: a repeats devices[0]; the last one is used", "devices[1].count: -1 must not be negative" + kept}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			patch, warnings := Parse([]byte(tt.body), tt.opts)
			if patch.ReplaceDevices != tt.replace {
				t.Errorf("ReplaceDevices = %v, want %v", patch.ReplaceDevices, tt.replace)
			}
			if diff := cmp.Diff(tt.devices, patch.Devices, equateQuantities); diff != "" {
				t.Errorf("Devices (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.kept, patch.KeptDeviceGroups); diff != "" {
				t.Errorf("KeptDeviceGroups (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.warnings, warningTexts(warnings)); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
			for _, w := range warnings {
				if w.Subject != SubjectDevice {
					t.Errorf("%q is about %v, not a device", w, w.Subject)
				}
			}
		})
	}
}

func TestAttributeInt(t *testing.T) {
	tests := []struct {
		text    string
		want    int64
		problem string
	}{
		{"0", 0, ""}, {"-0", 0, ""}, {"0.000", 0, ""}, {"0e999999999999999999999", 0, ""},
		{"80", 80, ""}, {"80.0", 80, ""}, {"8e1", 80, ""}, {"8E+1", 80, ""}, {"0.8e2", 80, ""}, {"800e-1", 80, ""}, {"12.5e1", 125, ""},
		{"-42", -42, ""}, {"9223372036854775807", math.MaxInt64, ""}, {"-9223372036854775808", math.MinInt64, ""},
		{"9.223372036854775807e18", math.MaxInt64, ""}, {"1" + strings.Repeat("0", 18), 1e18, ""},
		{"1.5", 0, "must be a whole number"}, {"0.1", 0, "must be a whole number"}, {"85e-1", 0, "must be a whole number"},
		{"1e-99999999999999999999", 0, "must be a whole number"},
		{"9223372036854775808", 0, "is too large for an int64"}, {"-9223372036854775809", 0, "is too large for an int64"},
		{"1e19", 0, "is too large for an int64"}, {"1e99999999999999999999", 0, "is too large for an int64"},
		{"18446744073709551616", 0, "is too large for an int64"}, {"99999999999999999999", 0, "is too large for an int64"},
	}
	for _, tt := range tests {
		got, problem := attributeInt(tt.text)
		if got != tt.want || problem != tt.problem {
			t.Errorf("attributeInt(%s) = %d, %q; want %d, %q", tt.text, got, problem, tt.want, tt.problem)
		}
	}
	if allocs := testing.AllocsPerRun(100, func() { _, _ = attributeInt("-8.0E+1") }); allocs != 0 {
		t.Errorf("attributeInt allocates %v times, want 0", allocs)
	}
}
