package pingstatus_test

import (
	"fmt"
	"go/ast"
	"go/doc/comment"
	"go/parser"
	"go/token"
	"maps"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/pingnode/pingnode/internal/golden"
	"github.com/pingnode/pingnode/pingstatus"
)

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
	"parts-repeated.json":                "parts named more than once",
	"devices-over-limit.json":            "device counts that add up to more than 1024",
	"devices-attributes-over-limit.json": "devices with more than 32 attributes and capacities together",
	"devices-string-bytes.json":          "attribute strings of at most 64 characters but more than 64 bytes",
	"devices-and-accelerators.json":      "accelerators other than 0 in a reply that lists devices",
	"near-miss-device.json":              "unknown keys that look like known fields misspelled or at the wrong level",
	"near-miss-attribute.json":           "unknown keys that look like known fields misspelled or at the wrong level",
	"near-miss-capacities.json":          "unknown keys that look like known fields misspelled or at the wrong level",
	"devices-under-resources.json":       "unknown keys that look like known fields misspelled or at the wrong level",
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

// The schema's property names and patternProperties are held to the wire
// types, the one description of the reply's shape, by TestFieldTableAgrees
// (fields_test.go), level by level.

// TestPropertySchemaAgreesOnDevices: for device lists with good and bad
// names, counts, attributes, capacities and taints, field names in any
// letter case, the schema accepts the reply exactly when Parse takes it
// without a warning. The lists stay clear of what JSONSchema's doc comment says
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
			members["list"] = `["a"]` // no near miss of a kind: "strings" would be (rule key-near-miss)
		}
		return object(t, members)
	}
	deviceTaints := func(t *rapid.T) string {
		if rapid.IntRange(0, 9).Draw(t, "taints no list") == 0 {
			return rapid.SampledFrom([]string{`null`, `{}`, `"gpu.nvidia.com/xid"`, "[" + strings.Repeat(`{"key":"a.io/x","effect":"None"},`, 16) + `{"key":"a.io/x","effect":"None"}]`}).Draw(t, "taints")
		}
		var taints []string
		for range rapid.IntRange(0, 3).Draw(t, "taints") {
			if rapid.IntRange(0, 9).Draw(t, "taint no object") == 0 {
				taints = append(taints, rapid.SampledFrom([]string{`null`, `"a.io/x"`, `[]`, `7`}).Draw(t, "taint"))
				continue
			}
			members := map[string]string{}
			if rapid.IntRange(0, 9).Draw(t, "has key") > 0 {
				members[spell(t, "key")] = pick(t, "key", []string{`"gpu.nvidia.com/xid"`, `"node.kubernetes.io/x"`, `"x"`, `"` + strings.Repeat("d", 253) + `/x"`},
					[]string{`"not a key"`, `""`, `"Upper.IO/x"`, `"a.io/` + strings.Repeat("k", 64) + `"`, `"` + strings.Repeat("d", 254) + `/x"`, `5`, `null`})
			}
			if rapid.Bool().Draw(t, "has value") {
				members[spell(t, "value")] = pick(t, "value", []string{`"79"`, `""`, `null`, `"` + strings.Repeat("v", 63) + `"`}, []string{`"has spaces"`, `"` + strings.Repeat("v", 64) + `"`, `"-x"`, `79`})
			}
			if rapid.IntRange(0, 9).Draw(t, "has effect") > 0 {
				members[spell(t, "effect")] = pick(t, "effect", []string{`"None"`, `"NoSchedule"`, `"NoExecute"`}, []string{`"PreferNoSchedule"`, `"noschedule"`, `""`, `null`, `true`})
			}
			if rapid.IntRange(0, 4).Draw(t, "unknown taint field") == 0 {
				members["timeAdded"] = `"-1"`
			}
			taints = append(taints, object(t, members))
		}
		return "[" + strings.Join(taints, ",") + "]"
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
			if rapid.IntRange(0, 2).Draw(t, "has taints") == 0 {
				members[spell(t, "taints")] = deviceTaints(t)
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

// TestPropertySchemaAgreesOnParts: for parts lists with good and bad
// entries and names, each part with good and bad fields, the reply's
// taints and labels beside them and its sum beside them or not, field
// names in any letter case, the schema accepts the reply exactly when
// Parse takes it without a warning. Names are unique, as JSONSchema's
// doc comment says the two judge apart.
func TestPropertySchemaAgreesOnParts(t *testing.T) {
	c := newChecker(t)
	spell := func(t *rapid.T, name string) string {
		return rapid.SampledFrom([]string{name, strings.ToUpper(name), strings.ToUpper(name[:1]) + name[1:]}).Draw(t, name+" spelling")
	}
	good := func(t *rapid.T, label string, good, bad []string) string {
		if rapid.IntRange(0, 4).Draw(t, label+" bad") == 0 {
			return rapid.SampledFrom(bad).Draw(t, label)
		}
		return rapid.SampledFrom(good).Draw(t, label)
	}
	// Seventeen entries: one more than the reply may give beside its
	// parts, and well within a part's own limit.
	var taints, labels []string
	for i := range pingstatus.MaxShared + 1 {
		taints = append(taints, fmt.Sprintf(`{"key":"site.io/t%d","effect":"NoSchedule"}`, i))
		labels = append(labels, fmt.Sprintf(`"feature.node.kubernetes.io/l%d":"v"`, i))
	}
	seventeenTaints, seventeenLabels := "["+strings.Join(taints, ",")+"]", "{"+strings.Join(labels, ",")+"}"
	fields := func(t *rapid.T, members []string) []string {
		if rapid.Bool().Draw(t, "has resources") {
			members = append(members, `"`+spell(t, "resources")+`":`+good(t, "resources", []string{`{"cpu":"1","memory":"4000Mi"}`, `{}`, `null`, `{"pods":"110"}`}, []string{`{"cpu":"-1"}`, `{"cpu":"0"}`, `"24"`}))
		}
		if rapid.Bool().Draw(t, "has taints") {
			members = append(members, `"`+spell(t, "taints")+`":`+good(t, "taints", []string{`[]`, `null`, `[{"key":"slurm.io/drain","effect":"NoSchedule"}]`, seventeenTaints}, []string{`{}`, `[{"key":"pingnode.io/part-gone","effect":"NoSchedule"}]`, `[{"key":"a b","effect":"NoSchedule"}]`}))
		}
		if rapid.Bool().Draw(t, "has labels") {
			members = append(members, `"`+spell(t, "labels")+`":`+good(t, "labels", []string{`{}`, `null`, `{"feature.node.kubernetes.io/slurm-partition":"cpu"}`, seventeenLabels}, []string{`[]`, `{"dedicated":"x"}`, `{"feature.node.kubernetes.io/x":"a b"}`}))
		}
		if rapid.IntRange(0, 4).Draw(t, "has devices") == 0 {
			members = append(members, `"`+spell(t, "devices")+`":`+good(t, "devices", []string{`[]`, `null`, `[{"name":"a100","count":4}]`}, []string{`[{"name":"A100","count":4}]`, `{}`}))
		}
		return members
	}
	rapid.Check(t, func(t *rapid.T) {
		names := rapid.Permutation([]string{`"cn001"`, `"cn002"`, `"gpu-a100"`, `"` + strings.Repeat("n", 63) + `"`, `"CN_003"`, `""`, `"cn-"`, `"` + strings.Repeat("n", 64) + `"`, `7`, `null`}).Draw(t, "names")
		var entries []string
		for i := range rapid.IntRange(0, 3).Draw(t, "entries") {
			if rapid.IntRange(0, 9).Draw(t, "no object") == 0 {
				entries = append(entries, rapid.SampledFrom([]string{`null`, `"cn001"`, `[]`}).Draw(t, "entry"))
				continue
			}
			var members []string
			if rapid.IntRange(0, 9).Draw(t, "has name") > 0 {
				members = append(members, `"`+spell(t, "name")+`":`+names[i])
			}
			if rapid.IntRange(0, 4).Draw(t, "unknown field") == 0 {
				members = append(members, `"state":"idle"`)
			}
			members = fields(t, members)
			entries = append(entries, "{"+strings.Join(rapid.Permutation(members).Draw(t, "order"), ",")+"}")
		}
		nodes := `[` + strings.Join(entries, ",") + `]`
		if rapid.IntRange(0, 9).Draw(t, "nodes no list") == 0 {
			nodes = rapid.SampledFrom([]string{`null`, `{}`, `"cn001"`}).Draw(t, "nodes")
		}
		members := fields(t, []string{`"status":"ok"`, `"` + spell(t, "nodes") + `":` + nodes})
		body := []byte("{" + strings.Join(rapid.Permutation(members).Draw(t, "order"), ",") + "}")
		_, warnings := pingstatus.Parse(body, pingstatus.Options{})
		problems := c.validate(body)
		if (len(problems) == 0) != (len(warnings) == 0) {
			t.Fatalf("%s\nschema: %v\nParse: %v", body, problems, warnings)
		}
	})
}
