package pingstatus

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/google/go-cmp/cmp"
)

// rawMirror returns a struct type with a json.RawMessage for each field
// of level lv, tagged with its name from the table: what encoding/json
// decodes a key of that level into, for the tests to ask it which field a
// key names.
func rawMirror(lv level) reflect.Type {
	var fields []reflect.StructField
	for k, name := range levelFields[lv] {
		fields = append(fields, reflect.StructField{
			Name: fmt.Sprintf("F%d", k), Type: reflect.TypeFor[json.RawMessage](), Tag: reflect.StructTag(`json:"` + name + `"`),
		})
	}
	return reflect.StructOf(fields)
}

// jsonNames returns the JSON names of the fields of v's type that
// encoding/json reads, sorted.
func jsonNames(v any) []string {
	var names []string
	for _, f := range reflect.VisibleFields(reflect.TypeOf(v)) {
		if !f.IsExported() || f.Anonymous {
			continue // an embedded struct's fields are read in its place
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

// TestFieldTableAgrees is the one check of the reply's shape, which the
// wire types describe: the table of field names that the rules and the
// warnings use is theirs (the json tags, in order, level by level, with
// the constants that index it naming the fields they mean), and the JSON
// Schema has the same fields, level by level: its properties, the
// patternProperties that give every spelling of a name that Parse reads
// the same schema, and the fields an entry requires, in any spelling.
// TestFoldPatternsMatchAsParse and TestPropertyFieldIndexMatchesEncodingJSON
// hold the matching of keys to fields, fieldIndex, to encoding/json's.
func TestFieldTableAgrees(t *testing.T) {
	var schema map[string]any
	if err := json.Unmarshal([]byte(JSONSchema()), &schema); err != nil {
		t.Fatal(err)
	}
	defs := schema["$defs"].(map[string]any)
	levels := []struct {
		level    level
		wire     any
		schema   map[string]any
		pointer  string // to schema, for a $ref
		required []int  // the fields that Parse warns about when they are missing
	}{
		{replyLevel, PingResponse{}, schema, "#", nil},
		{resourcesLevel, ResourcesResponse{}, schema["properties"].(map[string]any)["resources"].(map[string]any), "#/properties/resources", nil},
		{acceleratorLevel, AcceleratorResponse{}, defs["accelerator"].(map[string]any), "#/$defs/accelerator", []int{resourceTypeField, availableField}},
		{taintLevel, TaintResponse{}, defs["taint"].(map[string]any), "#/$defs/taint", []int{keyField, effectField}},
		{deviceLevel, DeviceResponse{}, defs["deviceGroup"].(map[string]any), "#/$defs/deviceGroup", []int{nameField, countField}},
		{attributeLevel, DeviceAttribute{}, defs["deviceAttribute"].(map[string]any), "#/$defs/deviceAttribute", nil},
		{capacityLevel, DeviceCapacity{}, defs["deviceCapacity"].(map[string]any), "#/$defs/deviceCapacity", []int{capacityValueField}},
		{deviceTaintLevel, TaintResponse{}, defs["deviceTaint"].(map[string]any), "#/$defs/deviceTaint", []int{keyField, effectField}},
		{partLevel, PartResponse{}, defs["part"].(map[string]any), "#/$defs/part", []int{partNameField}},
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
	if want := len("ephemeralStorage"); longest != want || maxMissRunes != longest+2 {
		t.Errorf("the longest field has %d characters, maxMissRunes is %d; want %d and it with 2 more", longest, maxMissRunes, want)
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
		".taints", ".effect", "devices[3]", "devices[a100]", `devices["A]100"]`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("paths (-want +got):\n%s", diff)
	}
}

// TestFoldPatternsMatchAsParse holds foldPattern, which the schema's
// patternProperties follow, to what Parse reads: every spelling of every
// field name, written plainly or \u-escaped, is the field for Parse
// (fieldIndex) and for encoding/json, and matches the pattern; a name with
// one rune changed to one that only looks or folds alike in other
// languages (dotless i, dotted I, sharp s, ring a) or with a rune more or
// less is none of them.
func TestFoldPatternsMatchAsParse(t *testing.T) {
	near := []rune{'\u0131', '\u0130', '\u00DF', '\u1E9E', '\u00E5', '\u212B', '_', '-'}
	for lv, names := range levelFields {
		for k, name := range names {
			re := regexp.MustCompile(foldPattern(name))
			// decodes reports whether encoding/json reads the key as the field.
			decodes := func(key string) bool {
				quoted, _ := json.Marshal(key)
				m := reflect.New(rawMirror(level(lv)))
				if err := json.Unmarshal([]byte(`{`+string(quoted)+`:"x"}`), m.Interface()); err != nil {
					t.Fatal(err)
				}
				for f := range m.Elem().Type().Fields() {
					if f.Tag.Get("json") == name {
						return len(m.Elem().FieldByIndex(f.Index).Bytes()) > 0
					}
				}
				t.Fatalf("level %d has no field %s", lv, name)
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

// TestPartFieldsAreTheReplys: a part's fields are its name, then the
// reply's fields of a node, one embedded type ([NodeResponse]) written
// once, so that one set of rules, indexed by the same constants, reads
// both.
func TestPartFieldsAreTheReplys(t *testing.T) {
	node := tagNames(reflect.TypeFor[NodeResponse]())
	if diff := cmp.Diff(append([]string{"status"}, append(node, "nodes")...), levelFields[replyLevel]); diff != "" {
		t.Errorf("the reply's fields (-status, NodeResponse's, nodes +table):\n%s", diff)
	}
	if diff := cmp.Diff(append([]string{"name"}, node...), levelFields[partLevel]); diff != "" {
		t.Errorf("a part's fields (-name, NodeResponse's +table):\n%s", diff)
	}
	if levelFields[replyLevel][resourcesField] != node[0] || levelFields[replyLevel][nodesField] != "nodes" || levelFields[partLevel][partNameField] != "name" {
		t.Errorf("the constants index the table wrongly: %v", levelFields[replyLevel])
	}
}

// TestLevelShapes pins down how the reply nests, as levelShapes derives
// it from the wire types: which field holds an object, a list or a map of
// another level, and a device's taints at their own level.
func TestLevelShapes(t *testing.T) {
	for _, c := range []struct {
		lv    level
		field int
		want  shape
	}{
		{replyLevel, statusField, shape{valueForm, -1}},
		{replyLevel, resourcesField, shape{objectForm, resourcesLevel}},
		{replyLevel, taintsField, shape{listForm, taintLevel}},
		{replyLevel, labelsField, shape{keyedForm, -1}},
		{replyLevel, devicesField, shape{listForm, deviceLevel}},
		{replyLevel, nodesField, shape{listForm, partLevel}},
		{partLevel, taintsField, shape{listForm, taintLevel}},
		{resourcesLevel, acceleratorsField, shape{listForm, acceleratorLevel}},
		{resourcesLevel, hugepagesField, shape{keyedForm, -1}},
		{resourcesLevel, cpuField, shape{valueForm, -1}},
		{deviceLevel, attributesField, shape{keyedForm, attributeLevel}},
		{deviceLevel, capacityField, shape{keyedForm, capacityLevel}},
		{deviceLevel, deviceTaintsField, shape{listForm, deviceTaintLevel}},
		{attributeLevel, intField, shape{valueForm, -1}},
	} {
		if got := levelShapes[c.lv][c.field]; got != c.want {
			t.Errorf("level %d, field %s: %+v, want %+v", c.lv, levelFields[c.lv][c.field], got, c.want)
		}
	}
	for lv := range levelShapes {
		if len(levelShapes[lv]) != len(levelFields[lv]) {
			t.Errorf("level %d: %d shapes for %d fields", lv, len(levelShapes[lv]), len(levelFields[lv]))
		}
	}
}

// TestDocExamplesShowEveryField: the reply bodies that the package
// comment shows, read along the wire types' shape, have every field of
// every level, so that the doc shows the whole format and names no field
// the wire types do not have.
func TestDocExamplesShowEveryField(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	// The examples are the doc's code blocks (lines indented by a tab)
	// that are JSON objects.
	var blocks []string
	var block strings.Builder
	for line := range strings.SplitSeq(string(doc), "\n") {
		if code, ok := strings.CutPrefix(line, "//\t"); ok {
			block.WriteString(code + "\n")
			continue
		}
		if block.Len() > 0 {
			blocks = append(blocks, block.String())
			block.Reset()
		}
	}
	seen := make([]map[string]bool, len(levelFields))
	for i := range seen {
		seen[i] = map[string]bool{}
	}
	var walk func(v any, lv level)
	walk = func(v any, lv level) {
		obj, ok := v.(map[string]any)
		if !ok {
			return
		}
		for key, value := range obj {
			k := slices.Index(levelFields[lv], key)
			if k < 0 {
				t.Errorf("the doc's example has %q at level %d, a field the wire types do not have", key, lv)
				continue
			}
			seen[lv][key] = true
			switch sh := levelShapes[lv][k]; sh.form {
			case objectForm:
				walk(value, sh.level)
			case listForm:
				list, _ := value.([]any)
				for _, e := range list {
					walk(e, sh.level)
				}
			case keyedForm:
				if sh.level >= 0 {
					entries, _ := value.(map[string]any)
					for _, e := range entries {
						walk(e, sh.level)
					}
				}
			}
		}
	}
	n := 0
	for _, b := range blocks {
		var v any
		if json.Unmarshal([]byte(b), &v) == nil {
			walk(v, replyLevel)
			n++
		}
	}
	if n == 0 {
		t.Fatal("the package comment shows no reply")
	}
	for lv, names := range levelFields {
		for _, name := range names {
			if !seen[lv][name] {
				t.Errorf("no example of the package comment shows %q (level %d)", name, lv)
			}
		}
	}
}
