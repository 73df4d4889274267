package pingstatus_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strings"
	"testing"

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
