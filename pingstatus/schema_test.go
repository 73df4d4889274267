package pingstatus_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pingnode/pingnode/internal/golden"
	"github.com/pingnode/pingnode/pingstatus"
)

// checker is a JSON Schema checker for the keywords schema.json uses, and
// no more: an unknown keyword fails the test, so the schema cannot say
// something this checker silently ignores.
type checker struct {
	root map[string]any
}

var known = map[string]bool{
	"$schema": true, "$id": true, "title": true, "description": true, "$defs": true,
	"type": true, "properties": true, "items": true, "required": true, "enum": true, "const": true,
	"pattern": true, "maxLength": true, "maxItems": true, "minimum": true, "maximum": true,
	"$ref": true, "allOf": true, "anyOf": true, "not": true,
}

func newChecker(t *testing.T) *checker {
	t.Helper()
	var root map[string]any
	if err := json.Unmarshal([]byte(pingstatus.JSONSchema()), &root); err != nil {
		t.Fatalf("JSONSchema() is not JSON: %v", err)
	}
	return &checker{root: root}
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
		def := c.root["$defs"].(map[string]any)[strings.TrimPrefix(ref, "#/$defs/")]
		errs = append(errs, c.check(def.(map[string]any), v, path)...)
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
		if p, ok := s["pattern"].(string); ok && !regexp.MustCompile(p).MatchString(v) {
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
		if req, ok := s["required"].([]any); ok {
			for _, r := range req {
				if _, ok := v[r.(string)]; !ok {
					fail("%s is required", r)
				}
			}
		}
		if props, ok := s["properties"].(map[string]any); ok {
			for name, sub := range props {
				if pv, ok := v[name]; ok {
					errs = append(errs, c.check(sub.(map[string]any), pv, strings.TrimPrefix(path+"."+name, "."))...)
				}
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
	if not, ok := s["not"].(map[string]any); ok && len(c.check(not, v, path)) == 0 {
		fail("%v matches what is forbidden", v)
	}
	return errs
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
		case "integer":
			if f, ok := v.(float64); ok && f == float64(int64(f)) {
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

// TestSchemaAgreesOnSamples runs the schema and Parse over every shared
// reply body that is a JSON object: the schema accepts it exactly when
// Parse has no warning, but for the rules a schema cannot state.
func TestSchemaAgreesOnSamples(t *testing.T) {
	c := newChecker(t)
	beyondSchema := map[string]string{
		"accelerator-repeated.json": "repeated accelerator types",
		"taint-duplicates.json":     "repeated taint key and effect",
		"huge.json":                 "quantities too large for a scheduler's int64",
	}
	for _, in := range golden.Inputs(t, "../testdata/replies/*.json") {
		body, name := in.Data, in.Name
		patch, warnings := pingstatus.Parse(body, pingstatus.Options{})
		if patch.Kind != pingstatus.Structured {
			continue
		}
		t.Run(name, func(t *testing.T) {
			problems := c.validate(body)
			schemaOK, parseOK := len(problems) == 0, len(warnings) == 0
			if why, ok := beyondSchema[name]; ok {
				if !schemaOK || parseOK {
					t.Errorf("expected the schema to accept and Parse to warn (%s); schema: %v; Parse: %v", why, problems, warnings)
				}
				return
			}
			if schemaOK != parseOK {
				t.Errorf("schema accepts: %v, Parse clean: %v\nschema: %v\nParse: %v", schemaOK, parseOK, problems, warnings)
			}
		})
	}
}

// TestSchemaNamesTheWireFields holds the schema's property names to the
// JSON names of the wire types, both ways.
func TestSchemaNamesTheWireFields(t *testing.T) {
	c := newChecker(t)
	defs := c.root["$defs"].(map[string]any)
	props := func(s any) []string {
		var names []string
		for name := range s.(map[string]any)["properties"].(map[string]any) {
			names = append(names, name)
		}
		sort.Strings(names)
		return names
	}
	tests := []struct {
		typ    any
		schema any
	}{
		{pingstatus.PingResponse{}, c.root},
		{pingstatus.ResourcesResponse{}, c.root["properties"].(map[string]any)["resources"]},
		{pingstatus.AcceleratorResponse{}, defs["accelerator"]},
		{pingstatus.TaintResponse{}, defs["taint"]},
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
			if diff := cmp.Diff(names, props(tt.schema)); diff != "" {
				t.Errorf("JSON names (-Go +schema):\n%s", diff)
			}
		})
	}
}
