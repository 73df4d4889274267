package pingstatus

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/google/go-cmp/cmp"
)

// The field-by-field decode of devices splits a device entry, an
// attribute, a capacity and a taint itself, matching their field names with
// fieldIndex (devicedecode.go), where the other levels have raw mirrors
// that encoding/json decodes into. These mirrors stand for it in the
// tests, which hold both ways of matching a name to encoding/json's.
type (
	rawDevice struct {
		Name       json.RawMessage `json:"name"`
		Count      json.RawMessage `json:"count"`
		Attributes json.RawMessage `json:"attributes"`
		Capacity   json.RawMessage `json:"capacity"`
		Taints     json.RawMessage `json:"taints"`
	}
	rawDeviceAttribute struct {
		Int     json.RawMessage `json:"int"`
		Bool    json.RawMessage `json:"bool"`
		String  json.RawMessage `json:"string"`
		Version json.RawMessage `json:"version"`
	}
	rawDeviceCapacity struct {
		Value json.RawMessage `json:"value"`
	}
	rawDeviceTaint struct {
		Key    json.RawMessage `json:"key"`
		Value  json.RawMessage `json:"value"`
		Effect json.RawMessage `json:"effect"`
	}
)

// jsonNames returns the JSON names of the fields of v's type that
// encoding/json reads, sorted.
func jsonNames(v any) []string {
	var names []string
	for f := range reflect.TypeOf(v).Fields() {
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" {
			name = f.Name
		}
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// schemaNames returns the sorted property names of a schema object.
func schemaNames(t *testing.T, schema map[string]any) []string {
	t.Helper()
	props, ok := schema["properties"].(map[string]any)
	if !ok {
		t.Fatalf("schema object %v has no properties", schema)
	}
	var names []string
	for name := range props {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// spellings returns, for each letter of the ASCII name, the runes that
// Parse matches with it in a field name (bytes.EqualFold, as encoding/json
// does): its Unicode simple folding orbit, upper case first, then lower
// case, then the others (long s, Kelvin sign).
func spellings(name string) [][]rune {
	classes := make([][]rune, len(name))
	for i, c := range name {
		class := []rune{unicode.ToUpper(c)}
		for r := unicode.ToLower(c); r != class[0]; r = unicode.SimpleFold(r) {
			class = append(class, r)
		}
		classes[i] = class
	}
	return classes
}

// foldPattern returns the ECMA-262 regular expression that matches every
// spelling of name that Parse reads as name: "^[Cc][Pp][Uu]$".
func foldPattern(name string) string {
	var b strings.Builder
	b.WriteString("^")
	for _, class := range spellings(name) {
		b.WriteString("[" + string(class) + "]")
	}
	b.WriteString("$")
	return b.String()
}

// patternRefs returns the patternProperties of a schema object, each
// pattern with its $ref.
func patternRefs(t *testing.T, schema map[string]any) map[string]string {
	t.Helper()
	props, ok := schema["patternProperties"].(map[string]any)
	if !ok {
		t.Fatalf("schema object %v has no patternProperties", schema)
	}
	refs := make(map[string]string)
	for pattern, sub := range props {
		refs[pattern], _ = sub.(map[string]any)["$ref"].(string)
	}
	return refs
}

// requiredPatterns returns the patterns of the fields that a schema object
// requires in any spelling: each an allOf entry
// {"not": {"propertyNames": {"not": {"pattern": …}}}}, some property name
// matches the pattern.
func requiredPatterns(schema map[string]any) []string {
	var patterns []string
	all, _ := schema["allOf"].([]any)
	for _, sub := range all {
		not, _ := sub.(map[string]any)["not"].(map[string]any)
		names, _ := not["propertyNames"].(map[string]any)
		notPattern, _ := names["not"].(map[string]any)
		if p, ok := notPattern["pattern"].(string); ok {
			patterns = append(patterns, p)
		}
	}
	slices.Sort(patterns)
	return patterns
}

// TestFieldTableAgrees holds the table of the reply's field names, which
// the walker and the warnings use, to the JSON names of the wire types, of
// the two decode mirrors and of the JSON Schema, level by level: the
// schema's properties, the patternProperties that give every spelling of
// a name that Parse reads the same schema, and the fields an entry
// requires, in any spelling.
func TestFieldTableAgrees(t *testing.T) {
	var schema map[string]any
	if err := json.Unmarshal([]byte(JSONSchema()), &schema); err != nil {
		t.Fatal(err)
	}
	defs := schema["$defs"].(map[string]any)
	levels := []struct {
		level        level
		wire, mirror any
		raw          any
		schema       map[string]any
		pointer      string // to schema, for a $ref
		required     []int  // the fields that Parse warns about when they are missing
	}{
		{replyLevel, PingResponse{}, reply{}, rawReply{}, schema, "#", nil},
		{resourcesLevel, ResourcesResponse{}, resources{}, rawResources{}, schema["properties"].(map[string]any)["resources"].(map[string]any), "#/properties/resources", nil},
		{acceleratorLevel, AcceleratorResponse{}, accelerator{}, rawAccelerator{}, defs["accelerator"].(map[string]any), "#/$defs/accelerator", []int{resourceTypeField, availableField}},
		{taintLevel, TaintResponse{}, taint{}, rawTaint{}, defs["taint"].(map[string]any), "#/$defs/taint", []int{keyField, effectField}},
		{deviceLevel, DeviceResponse{}, device{}, rawDevice{}, defs["deviceGroup"].(map[string]any), "#/$defs/deviceGroup", []int{nameField, countField}},
		{attributeLevel, DeviceAttribute{}, deviceAttribute{}, rawDeviceAttribute{}, defs["deviceAttribute"].(map[string]any), "#/$defs/deviceAttribute", nil},
		{capacityLevel, DeviceCapacity{}, deviceCapacity{}, rawDeviceCapacity{}, defs["deviceCapacity"].(map[string]any), "#/$defs/deviceCapacity", []int{capacityValueField}},
		{deviceTaintLevel, TaintResponse{}, deviceTaint{}, rawDeviceTaint{}, defs["deviceTaint"].(map[string]any), "#/$defs/deviceTaint", []int{keyField, effectField}},
	}
	if len(levels) != len(levelFields) {
		t.Fatalf("the test knows %d levels, the table has %d", len(levels), len(levelFields))
	}
	longest := 0
	for _, lv := range levels {
		want := slices.Sorted(slices.Values(levelFields[lv.level]))
		for _, got := range []struct {
			what  string
			names []string
		}{
			{reflect.TypeOf(lv.wire).Name(), jsonNames(lv.wire)},
			{reflect.TypeOf(lv.mirror).Name(), jsonNames(lv.mirror)},
			{reflect.TypeOf(lv.raw).Name(), jsonNames(lv.raw)},
			{"the schema", schemaNames(t, lv.schema)},
		} {
			if diff := cmp.Diff(want, got.names); diff != "" {
				t.Errorf("level %d: the names of %s (-table +got):\n%s", lv.level, got.what, diff)
			}
		}
		wantRefs := make(map[string]string)
		for _, name := range levelFields[lv.level] {
			wantRefs[foldPattern(name)] = lv.pointer + "/properties/" + name
		}
		if diff := cmp.Diff(wantRefs, patternRefs(t, lv.schema)); diff != "" {
			t.Errorf("level %d: patternProperties and their $ref (-want +schema):\n%s", lv.level, diff)
		}
		var wantRequired []string
		for _, k := range lv.required {
			wantRequired = append(wantRequired, foldPattern(levelFields[lv.level][k]))
		}
		slices.Sort(wantRequired)
		if diff := cmp.Diff(wantRequired, requiredPatterns(lv.schema)); diff != "" {
			t.Errorf("level %d: fields required in any spelling (-want +schema):\n%s", lv.level, diff)
		}
		if n := len(levelFields[lv.level]); n > maxLevelFields {
			t.Errorf("level %d has %d fields, more than maxLevelFields %d", lv.level, n, maxLevelFields)
		}
		for _, name := range levelFields[lv.level] {
			longest = max(longest, len(name))
		}
	}
	if want := 2 + 6*longest; maxKeyBytes != want {
		t.Errorf("maxKeyBytes is %d; the longest name escaped and quoted takes %d", maxKeyBytes, want)
	}
}

// TestFieldPaths pins the paths that warnings name.
func TestFieldPaths(t *testing.T) {
	got := []string{
		fieldPath(replyLevel, statusField), fieldPath(replyLevel, resourcesField), fieldPath(replyLevel, taintsField),
		fieldPath(resourcesLevel, cpuField), fieldPath(resourcesLevel, acceleratorsField), fieldPath(resourcesLevel, basisField),
		fieldPath(acceleratorLevel, resourceTypeField), fieldPath(taintLevel, effectField),
		fieldPath(replyLevel, devicesField), fieldPath(deviceLevel, countField), fieldPath(attributeLevel, versionField), fieldPath(capacityLevel, capacityValueField),
		deviceKeyPath("devices[1]", attributesField, "gpu.nvidia.com/productName"), deviceKeyPath("devices[0]", capacityField, "a]b"),
		fieldPath(deviceLevel, deviceTaintsField), fieldPath(deviceTaintLevel, effectField),
		groupAt{index: 3}.String(), groupAt{index: -1, name: "a100"}.String(), groupAt{index: -1, name: "A]100"}.String(),
	}
	want := []string{
		"status", "resources", "taints", "resources.cpu", "resources.accelerators", "resources.basis", ".resourceType", ".effect",
		"devices", ".count", ".version", ".value", "devices[1].attributes[gpu.nvidia.com/productName]", `devices[0].capacity["a]b"]`,
		".taints", ".effect", "devices[3]", "patch.devices[a100]", `patch.devices["A]100"]`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("paths (-want +got):\n%s", diff)
	}
}

// TestFoldPatternsMatchAsParse holds foldPattern, which the schema's
// patternProperties follow, to what Parse reads: every spelling of every
// field name, written plainly or \u-escaped, is the field for the walker
// (fieldIndex) and for encoding/json, and matches the pattern; a name with
// one rune changed to one that only looks or folds alike in other
// languages (dotless i, dotted I, sharp s, ring a) or with a rune more or
// less is none of them.
func TestFoldPatternsMatchAsParse(t *testing.T) {
	mirrors := [...]any{
		replyLevel: rawReply{}, resourcesLevel: rawResources{}, acceleratorLevel: rawAccelerator{}, taintLevel: rawTaint{},
		deviceLevel: rawDevice{}, attributeLevel: rawDeviceAttribute{}, capacityLevel: rawDeviceCapacity{}, deviceTaintLevel: rawDeviceTaint{},
	}
	near := []rune{'\u0131', '\u0130', '\u00DF', '\u1E9E', '\u00E5', '\u212B', '_', '-'}
	for lv, names := range levelFields {
		for k, name := range names {
			re := regexp.MustCompile(foldPattern(name))
			// decodes reports whether encoding/json reads the key as the field.
			decodes := func(key string) bool {
				quoted, _ := json.Marshal(key)
				m := reflect.New(reflect.TypeOf(mirrors[lv]))
				if err := json.Unmarshal([]byte(`{`+string(quoted)+`:"x"}`), m.Interface()); err != nil {
					t.Fatal(err)
				}
				for f := range m.Elem().Type().Fields() {
					if f.Tag.Get("json") == name {
						return len(m.Elem().FieldByIndex(f.Index).Bytes()) > 0
					}
				}
				t.Fatalf("%T has no field %s", mirrors[lv], name)
				return false
			}
			for _, key := range allSpellings(name) {
				escaped := ""
				for _, r := range key {
					escaped += fmt.Sprintf(`\u%04x`, r)
				}
				for _, quoted := range []string{strconv.Quote(key), `"` + escaped + `"`} {
					if got := fieldIndex([]byte(quoted), names); got != k {
						t.Errorf("%s: fieldIndex(%s) = %d, want %d", name, quoted, got, k)
					}
				}
				if !re.MatchString(key) || !decodes(key) {
					t.Errorf("%s: %q: the pattern matches it %v, encoding/json reads it %v; want both", name, key, re.MatchString(key), decodes(key))
				}
			}
			var others []string
			for i := range name {
				for _, r := range near {
					others = append(others, name[:i]+string(r)+name[i+1:])
				}
			}
			others = append(others, name+"s", name[1:], " "+name, name+"\n")
			for _, key := range others {
				if re.MatchString(key) || decodes(key) || fieldIndex([]byte(strconv.Quote(key)), names) >= 0 {
					t.Errorf("%s: %q is read as a field: the pattern matches it %v, encoding/json reads it %v, fieldIndex %d", name, key,
						re.MatchString(key), decodes(key), fieldIndex([]byte(strconv.Quote(key)), names))
				}
			}
		}
	}
}

// allSpellings returns every spelling of name that Parse reads as name:
// each rune taken from its class in every way (9216 for "accelerators").
func allSpellings(name string) []string {
	out := []string{""}
	for _, class := range spellings(name) {
		next := make([]string, 0, len(out)*len(class))
		for _, prefix := range out {
			for _, r := range class {
				next = append(next, prefix+string(r))
			}
		}
		out = next
	}
	return out
}
