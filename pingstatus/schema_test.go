package pingstatus_test

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/doc/comment"
	"go/parser"
	"go/token"
	"maps"
	"math"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/pingnode/pingnode/internal/golden"
	"github.com/pingnode/pingnode/pingstatus"
)

// checker is a JSON Schema checker for the keywords schema.json uses, and
// no more: an unknown keyword fails the test, so the schema cannot say
// something this checker silently ignores.
type checker struct {
	root    map[string]any
	regexps map[string]*regexp.Regexp
}

var known = map[string]bool{
	"$schema": true, "$id": true, "title": true, "description": true, "$defs": true,
	"type": true, "properties": true, "patternProperties": true, "propertyNames": true, "additionalProperties": true, "items": true,
	"enum": true, "const": true, "pattern": true, "maxLength": true, "maxItems": true, "maxProperties": true, "minimum": true, "maximum": true,
	"$ref": true, "allOf": true, "anyOf": true, "oneOf": true, "not": true,
}

func newChecker(t *testing.T) *checker {
	t.Helper()
	var root map[string]any
	if err := json.Unmarshal([]byte(pingstatus.JSONSchema()), &root); err != nil {
		t.Fatalf("JSONSchema() is not JSON: %v", err)
	}
	knowsKeywords(t, root, "#")
	return &checker{root: root, regexps: make(map[string]*regexp.Regexp)}
}

// knowsKeywords fails the test for every keyword of the schema s, at the
// JSON pointer at, and of the schemas within it, that the checker does not
// know, whether or not a sample reaches it.
func knowsKeywords(t *testing.T, s map[string]any, at string) {
	t.Helper()
	for k, v := range s {
		if !known[k] {
			t.Errorf("%s: schema keyword %q is unknown to the test checker", at, k)
		}
		switch k {
		case "$defs", "properties", "patternProperties":
			for name, sub := range v.(map[string]any) {
				knowsKeywords(t, sub.(map[string]any), at+"/"+k+"/"+name)
			}
		case "items", "not", "propertyNames", "additionalProperties":
			knowsKeywords(t, v.(map[string]any), at+"/"+k)
		case "allOf", "anyOf", "oneOf":
			for i, sub := range v.([]any) {
				knowsKeywords(t, sub.(map[string]any), fmt.Sprintf("%s/%s/%d", at, k, i))
			}
		}
	}
}

// matches reports whether s matches the pattern, an ECMA-262 regular
// expression within what Go's regexp reads the same.
func (c *checker) matches(pattern, s string) bool {
	re, ok := c.regexps[pattern]
	if !ok {
		re = regexp.MustCompile(pattern)
		c.regexps[pattern] = re
	}
	return re.MatchString(s)
}

// check returns the problems of v against schema s, at path.
func (c *checker) check(s map[string]any, v any, path string) []string {
	var errs []string
	fail := func(format string, args ...any) { errs = append(errs, path+": "+fmt.Sprintf(format, args...)) }
	for k := range s {
		if !known[k] {
			fail("schema keyword %q is unknown to the test checker", k)
		}
	}
	if ref, ok := s["$ref"].(string); ok {
		errs = append(errs, c.check(c.resolve(ref), v, path)...)
	}
	if types, ok := s["type"]; ok && !hasType(types, v) {
		fail("%v is not of type %v", v, types)
		return errs
	}
	if enum, ok := s["enum"].([]any); ok && !slices.Contains(enum, v) {
		fail("%v is not one of %v", v, enum)
	}
	if c, ok := s["const"]; ok && c != v {
		fail("%v is not %v", v, c)
	}
	switch v := v.(type) {
	case string:
		if p, ok := s["pattern"].(string); ok && !c.matches(p, v) {
			fail("%q does not match %s", v, p)
		}
		if n, ok := s["maxLength"].(float64); ok && float64(len([]rune(v))) > n {
			fail("longer than %v", n)
		}
	case float64:
		if n, ok := s["minimum"].(float64); ok && v < n {
			fail("%v is less than %v", v, n)
		}
		if n, ok := s["maximum"].(float64); ok && v > n {
			fail("%v is more than %v", v, n)
		}
	case []any:
		if n, ok := s["maxItems"].(float64); ok && float64(len(v)) > n {
			fail("more than %v items", n)
		}
		if items, ok := s["items"].(map[string]any); ok {
			for i, item := range v {
				errs = append(errs, c.check(items, item, fmt.Sprintf("%s[%d]", path, i))...)
			}
		}
	case map[string]any:
		props, _ := s["properties"].(map[string]any)
		patterns, _ := s["patternProperties"].(map[string]any)
		names, _ := s["propertyNames"].(map[string]any)
		additional, _ := s["additionalProperties"].(map[string]any)
		if n, ok := s["maxProperties"].(float64); ok && float64(len(v)) > n {
			fail("more than %v properties", n)
		}
		for _, name := range slices.Sorted(maps.Keys(v)) {
			at := strings.TrimPrefix(path+"."+name, ".")
			matched := false
			if sub, ok := props[name]; ok {
				matched = true
				errs = append(errs, c.check(sub.(map[string]any), v[name], at)...)
			}
			for _, pattern := range slices.Sorted(maps.Keys(patterns)) {
				if c.matches(pattern, name) {
					matched = true
					errs = append(errs, c.check(patterns[pattern].(map[string]any), v[name], at)...)
				}
			}
			if additional != nil && !matched {
				errs = append(errs, c.check(additional, v[name], at)...)
			}
			if names != nil {
				errs = append(errs, c.check(names, name, at+" (the name)")...)
			}
		}
	}
	if all, ok := s["allOf"].([]any); ok {
		for _, sub := range all {
			errs = append(errs, c.check(sub.(map[string]any), v, path)...)
		}
	}
	if anyOf, ok := s["anyOf"].([]any); ok {
		matched := false
		for _, sub := range anyOf {
			matched = matched || len(c.check(sub.(map[string]any), v, path)) == 0
		}
		if !matched {
			fail("matches none of anyOf")
		}
	}
	if oneOf, ok := s["oneOf"].([]any); ok {
		matched := 0
		for _, sub := range oneOf {
			if len(c.check(sub.(map[string]any), v, path)) == 0 {
				matched++
			}
		}
		if matched != 1 {
			fail("matches %d of oneOf, not one", matched)
		}
	}
	if not, ok := s["not"].(map[string]any); ok && len(c.check(not, v, path)) == 0 {
		fail("%v matches what is forbidden", v)
	}
	return errs
}

// resolve returns the schema that ref, a JSON pointer into the root
// ("#/$defs/taint", "#/properties/resources"), points to.
func (c *checker) resolve(ref string) map[string]any {
	var at any = c.root
	if ref != "#" {
		for _, token := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
			token = strings.NewReplacer("~1", "/", "~0", "~").Replace(token)
			at = at.(map[string]any)[token]
		}
	}
	return at.(map[string]any)
}

func hasType(types, v any) bool {
	list, ok := types.([]any)
	if !ok {
		list = []any{types}
	}
	for _, t := range list {
		switch t {
		case "object":
			if _, ok := v.(map[string]any); ok {
				return true
			}
		case "array":
			if _, ok := v.([]any); ok {
				return true
			}
		case "string":
			if _, ok := v.(string); ok {
				return true
			}
		case "number":
			if _, ok := v.(float64); ok {
				return true
			}
		case "boolean":
			if _, ok := v.(bool); ok {
				return true
			}
		case "integer": // a number with no fraction, as JSON Schema has it, however large
			if f, ok := v.(float64); ok && f == math.Trunc(f) {
				return true
			}
		case "null":
			if v == nil {
				return true
			}
		}
	}
	return false
}

// validate checks a reply body against the schema.
func (c *checker) validate(body []byte) []string {
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return []string{"not JSON: " + err.Error()}
	}
	return c.check(c.root, v, "")
}

// beyondSchema names, for each way in which the schema and Parse may
// disagree, the sample replies that show it. The ways are the items of
// the two lists in JSONSchema's doc comment, each up to its explanation in
// parentheses: that comment is where they are stated, and this map the one
// place that names samples for them. TestSchemaAgreesOnSamples writes
// what it finds to testdata/schema-verdicts.golden, which
// examples/schemacheck reads to hold a real JSON Schema validator to the
// same verdicts.
var beyondSchema = map[string]string{
	"repeated-keys-any-case.json":        "keys given more than once, in one letter case or in several",
	"accelerator-repeated.json":          "accelerator types listed more than once",
	"taint-duplicates.json":              "taint keys listed more than once with the same effect",
	"huge.json":                          "quantities too large for a scheduler's int64",
	"long-numbers.json":                  "quantities written as JSON numbers of more than 64 characters",
	"whole-numbers-other-spellings.json": "whole numbers in spellings other than the plain ones",
	"labels-gpu.json":                    "label keys in namespaces a provider may allow but the default options do not",
	"devices-repeated.json":              "device groups named more than once",
	"devices-over-limit.json":            "device counts that add up to more than 1024",
	"devices-attributes-over-limit.json": "devices with more than 32 attributes and capacities together",
	"devices-string-bytes.json":          "attribute strings of at most 64 characters but more than 64 bytes",
	"devices-and-accelerators.json":      "accelerators other than 0 in a reply that lists devices",
}

// schemaDocLists returns the items of the two lists in JSONSchema's doc
// comment, each up to its explanation in parentheses: what the schema
// accepts and Parse warns about, and what the schema refuses and Parse
// takes without a warning.
func schemaDocLists(t *testing.T) (accepts, refuses []string) {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "schema.go", nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	var doc string
	for _, decl := range f.Decls {
		if fn, ok := decl.(*ast.FuncDecl); ok && fn.Name.Name == "JSONSchema" {
			doc = fn.Doc.Text()
		}
	}
	var lists [][]string
	for _, block := range new(comment.Parser).Parse(doc).Content {
		list, ok := block.(*comment.List)
		if !ok {
			continue
		}
		var items []string
		for _, item := range list.Items {
			var text strings.Builder
			for _, b := range item.Content {
				for _, span := range b.(*comment.Paragraph).Text {
					if plain, ok := span.(comment.Plain); ok {
						text.WriteString(string(plain))
					}
				}
			}
			before, _, _ := strings.Cut(strings.Join(strings.Fields(text.String()), " "), " (")
			items = append(items, before)
		}
		lists = append(lists, items)
	}
	if len(lists) != 2 {
		t.Fatalf("JSONSchema's doc comment has %d lists, want 2: what the schema cannot see, and where it is stricter than Parse", len(lists))
	}
	return lists[0], lists[1]
}

// TestSchemaAgreesOnSamples runs the schema and Parse over every shared
// reply body that is a JSON object: the schema accepts it exactly when
// Parse has no warning, but for the ways listed in JSONSchema's doc
// comment, each shown by a sample (beyondSchema) and by no other.
func TestSchemaAgreesOnSamples(t *testing.T) {
	c := newChecker(t)
	accepts, refuses := schemaDocLists(t)
	shown := make(map[string]bool)
	for name, why := range beyondSchema {
		if !slices.Contains(accepts, why) && !slices.Contains(refuses, why) {
			t.Errorf("%s: %q is in neither list of JSONSchema's doc comment", name, why)
		}
		shown[why] = true
	}
	for _, why := range slices.Concat(accepts, refuses) {
		if !shown[why] {
			t.Errorf("no sample shows %q, of JSONSchema's doc comment", why)
		}
	}
	verdicts := []string{
		"# Every sample reply that is a JSON object: whether the JSON Schema accepts it",
		"# and whether Parse warns, and where they disagree, the item of JSONSchema's",
		"# doc comment that says why. Written by TestSchemaAgreesOnSamples; read by",
		"# examples/schemacheck, which holds a real validator to it.",
	}
	for _, in := range golden.Inputs(t, "../testdata/replies/*.json") {
		body, name := in.Data, in.Name
		patch, warnings := pingstatus.Parse(body, pingstatus.Options{})
		if patch.Kind != pingstatus.Structured {
			if _, ok := beyondSchema[name]; ok {
				t.Errorf("%s shows a way the schema and Parse disagree, but it is a %v reply", name, patch.Kind)
			}
			continue
		}
		problems := c.validate(body)
		schemaOK, parseOK := len(problems) == 0, len(warnings) == 0
		line := name + ": the schema " + map[bool]string{true: "accepts", false: "rejects"}[schemaOK] +
			", Parse " + map[bool]string{true: "is clean", false: "warns"}[parseOK]
		why, ok := beyondSchema[name]
		if ok {
			line += ": " + why
		}
		verdicts = append(verdicts, line)
		t.Run(name, func(t *testing.T) {
			switch {
			case ok && slices.Contains(accepts, why) && (!schemaOK || parseOK):
				t.Errorf("expected the schema to accept and Parse to warn (%s); schema: %v; Parse: %v", why, problems, warnings)
			case ok && slices.Contains(refuses, why) && (schemaOK || !parseOK):
				t.Errorf("expected the schema to refuse and Parse to be clean (%s); schema: %v; Parse: %v", why, problems, warnings)
			case !ok && schemaOK != parseOK:
				t.Errorf("schema accepts: %v, Parse clean: %v\nschema: %v\nParse: %v", schemaOK, parseOK, problems, warnings)
			}
		})
	}
	golden.Check(t, "testdata/schema-verdicts.golden", []byte(strings.Join(verdicts, "\n")+"\n"))
}

// TestSchemaNamesTheWireFields holds the schema's property names to the
// JSON names of the wire types, both ways, and its patternProperties to
// its properties: each pattern matches one property name and has that
// property's schema, and each name has one pattern.
func TestSchemaNamesTheWireFields(t *testing.T) {
	c := newChecker(t)
	props := func(s map[string]any) []string {
		return slices.Sorted(maps.Keys(s["properties"].(map[string]any)))
	}
	tests := []struct {
		typ    any
		schema string // a pointer to it
	}{
		{pingstatus.PingResponse{}, "#"},
		{pingstatus.ResourcesResponse{}, "#/properties/resources"},
		{pingstatus.AcceleratorResponse{}, "#/$defs/accelerator"},
		{pingstatus.TaintResponse{}, "#/$defs/taint"},
		{pingstatus.DeviceResponse{}, "#/$defs/deviceGroup"},
		{pingstatus.DeviceAttribute{}, "#/$defs/deviceAttribute"},
		{pingstatus.DeviceCapacity{}, "#/$defs/deviceCapacity"},
	}
	for _, tt := range tests {
		typ := reflect.TypeOf(tt.typ)
		t.Run(typ.Name(), func(t *testing.T) {
			var names []string
			for f := range typ.Fields() {
				name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
				names = append(names, name)
			}
			sort.Strings(names)
			schema := c.resolve(tt.schema)
			if diff := cmp.Diff(names, props(schema)); diff != "" {
				t.Errorf("JSON names (-Go +schema):\n%s", diff)
			}
			patterns, _ := schema["patternProperties"].(map[string]any)
			matched := make(map[string]int)
			for pattern, sub := range patterns {
				var matches []string
				for _, name := range names {
					if regexp.MustCompile(pattern).MatchString(name) {
						matches = append(matches, name)
					}
				}
				if len(matches) != 1 {
					t.Errorf("pattern %s matches %q, want one name", pattern, matches)
					continue
				}
				matched[matches[0]]++
				ref, _ := sub.(map[string]any)["$ref"].(string)
				if want := tt.schema + "/properties/" + matches[0]; ref != want {
					t.Errorf("pattern %s has $ref %q, want %q", pattern, ref, want)
				}
			}
			for _, name := range names {
				if matched[name] != 1 {
					t.Errorf("%s has %d patterns, want 1", name, matched[name])
				}
			}
		})
	}
}

// TestPropertySchemaAgreesOnDevices: for device lists with good and bad
// names, counts, attributes and capacities, field names in any letter
// case, the schema accepts the reply exactly when Parse takes it without
// a warning. The lists stay clear of what JSONSchema's doc comment says
// the two judge apart: names are unique, counts add up to at most 1024,
// a device has at most 32 attributes and capacities, and no string is
// longer in bytes than in characters.
func TestPropertySchemaAgreesOnDevices(t *testing.T) {
	c := newChecker(t)
	pick := func(t *rapid.T, label string, good, bad []string) string {
		if rapid.IntRange(0, 4).Draw(t, label+" bad") == 0 {
			return rapid.SampledFrom(bad).Draw(t, label)
		}
		return rapid.SampledFrom(good).Draw(t, label)
	}
	// spell writes the field name name in a letter case encoding/json reads.
	spell := func(t *rapid.T, name string) string {
		return rapid.SampledFrom([]string{name, strings.ToUpper(name), strings.ToUpper(name[:1]) + name[1:]}).Draw(t, name+" spelling")
	}
	object := func(t *rapid.T, members map[string]string) string {
		var parts []string
		for _, name := range slices.Sorted(maps.Keys(members)) {
			parts = append(parts, fmt.Sprintf("%q:%s", name, members[name]))
		}
		return "{" + strings.Join(rapid.Permutation(parts).Draw(t, "order"), ",") + "}"
	}
	attributeNames := []string{"productName", "type", "_x", "gpu.nvidia.com/memory", strings.Repeat("a", 32), strings.Repeat("d", 63) + "/x"}
	badAttributeNames := []string{"product-name", "9x", "GPU.io/x", "a.io/b/c", "", strings.Repeat("a", 33), strings.Repeat("d", 64) + "/x", "/x", "a.io/"}
	attribute := func(t *rapid.T) string {
		members := map[string]string{}
		kinds := map[string][2][]string{
			"string":  {{`"NVIDIA A100"`, `""`, `"` + strings.Repeat("s", 64) + `"`, `"\u0000"`}, {`"` + strings.Repeat("s", 65) + `"`, `5`, `true`}},
			"int":     {{`80`, `-1`, `80.0`, `8e1`, `9223372036854775807`, `-9223372036854775808`}, {`1.5`, `"5"`, `1e19`, `true`}},
			"bool":    {{`true`, `false`}, {`"true"`, `1`}},
			"version": {{`"8.0.0"`, `"1.0.0-rc.1+b.2"`, `"0.0.0"`}, {`"8.0"`, `"v8.0.0"`, `"01.0.0"`, `8`}},
		}
		chosen := rapid.SliceOfNDistinct(rapid.SampledFrom([]string{"string", "int", "bool", "version"}), 0, 2, rapid.ID).Draw(t, "kinds")
		for _, kind := range chosen {
			members[spell(t, kind)] = pick(t, kind, kinds[kind][0], kinds[kind][1])
		}
		if !slices.Contains(chosen, "bool") && rapid.IntRange(0, 4).Draw(t, "null kind") == 0 {
			members["bool"] = "null"
		}
		if rapid.IntRange(0, 4).Draw(t, "unknown kind") == 0 {
			members["strings"] = `["a"]`
		}
		return object(t, members)
	}
	rapid.Check(t, func(t *rapid.T) {
		names := rapid.Permutation([]string{`"a100"`, `"t4"`, `"x-1"`, `"` + strings.Repeat("g", 56) + `"`, `"A100"`, `""`, `"a100-"`, `"` + strings.Repeat("g", 57) + `"`, `5`}).Draw(t, "names")
		var entries []string
		n := rapid.IntRange(0, 3).Draw(t, "entries")
		counts := []string{`8`, `"8"`, `0`, `8.0`, `"+2"`, `"0e9"`, `"1e2"`, `1e2`}
		if n == 1 { // alone, it may take all 1024
			counts = append(counts, `"1k"`, `"1Ki"`, `1024`, `"1024"`, `1e3`, `"1e3"`, `"10e2"`)
		}
		for i := range n {
			if rapid.IntRange(0, 9).Draw(t, "no object") == 0 {
				entries = append(entries, rapid.SampledFrom([]string{`null`, `"a100"`, `[]`}).Draw(t, "entry"))
				continue
			}
			members := map[string]string{}
			if rapid.IntRange(0, 9).Draw(t, "has name") > 0 {
				members[spell(t, "name")] = names[i]
			}
			if rapid.IntRange(0, 9).Draw(t, "has count") > 0 {
				members[spell(t, "count")] = pick(t, "count", counts, []string{`-1`, `"-1"`, `1.5`, `"1.5"`, `1025`, `"1025"`, `"2k"`, `"1e4"`, `"x"`, `true`, `null`})
			}
			if rapid.Bool().Draw(t, "has attributes") {
				attributes := map[string]string{}
				for range rapid.IntRange(0, 3).Draw(t, "attributes") {
					attributes[pick(t, "attribute name", attributeNames, badAttributeNames)] = attribute(t)
				}
				members[spell(t, "attributes")] = object(t, attributes)
			}
			if rapid.Bool().Draw(t, "has capacity") {
				capacity := map[string]string{}
				for range rapid.IntRange(0, 2).Draw(t, "capacities") {
					value := pick(t, "capacity", []string{`"80Gi"`, `0`, `"500m"`, `16`}, []string{`"-1Gi"`, `"lots"`, `true`, `null`})
					capacity[pick(t, "capacity name", attributeNames, badAttributeNames)] = rapid.SampledFrom([]string{
						`{"` + spell(t, "value") + `":` + value + `}`, `{"` + spell(t, "value") + `":` + value + `,"requestPolicy":{}}`,
					}).Draw(t, "capacity object")
				}
				members[spell(t, "capacity")] = object(t, capacity)
			}
			if rapid.IntRange(0, 4).Draw(t, "unknown field") == 0 {
				members["driver"] = `"-1"`
			}
			entries = append(entries, object(t, members))
		}
		body := []byte(`{"` + spell(t, "devices") + `":[` + strings.Join(entries, ",") + `]}`)
		_, warnings := pingstatus.Parse(body, pingstatus.Options{})
		problems := c.validate(body)
		if (len(problems) == 0) != (len(warnings) == 0) {
			t.Fatalf("%s\nschema: %v\nParse: %v", body, problems, warnings)
		}
	})
}
