package wireschema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Schema is a JSON Schema (draft 2020-12), with the keywords that the
// reply's schema uses. Its fields are in the order the file gives the
// keywords.
type Schema struct {
	Schema               string    `json:"$schema,omitempty"`
	ID                   string    `json:"$id,omitempty"`
	Title                string    `json:"title,omitempty"`
	Description          string    `json:"description,omitempty"`
	Ref                  string    `json:"$ref,omitempty"`
	Type                 Types     `json:"type,omitempty"`
	Enum                 []any     `json:"enum,omitempty"`
	Const                any       `json:"const,omitempty"`
	Minimum              *int64    `json:"minimum,omitempty"`
	Maximum              *int64    `json:"maximum,omitempty"`
	MaxLength            *int      `json:"maxLength,omitempty"`
	MaxItems             *int      `json:"maxItems,omitempty"`
	MaxProperties        *int      `json:"maxProperties,omitempty"`
	Pattern              string    `json:"pattern,omitempty"`
	Items                *Schema   `json:"items,omitempty"`
	PropertyNames        *Schema   `json:"propertyNames,omitempty"`
	AdditionalProperties *Schema   `json:"additionalProperties,omitempty"`
	Properties           Members   `json:"properties,omitempty"`
	AnyOf                []*Schema `json:"anyOf,omitempty"`
	PatternProperties    Members   `json:"patternProperties,omitempty"`
	AllOf                []*Schema `json:"allOf,omitempty"`
	OneOf                []*Schema `json:"oneOf,omitempty"`
	Not                  *Schema   `json:"not,omitempty"`
	Defs                 Members   `json:"$defs,omitempty"`
}

// Types are the JSON types a value may take: one is written as a string,
// more as a list.
type Types []string

// MarshalJSON writes one type as a string, more as a list.
func (t Types) MarshalJSON() ([]byte, error) {
	if len(t) == 1 {
		return json.Marshal(t[0])
	}
	return json.Marshal([]string(t))
}

// has reports whether t holds the type name.
func (t Types) has(name string) bool {
	for _, n := range t {
		if n == name {
			return true
		}
	}
	return false
}

// Member is one named schema of properties, patternProperties or $defs.
type Member struct {
	Name   string
	Schema *Schema
}

// Members are named schemas, in the order they are written.
type Members []Member

// MarshalJSON writes the members as an object, in their order.
func (m Members) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, member := range m {
		if i > 0 {
			b.WriteByte(',')
		}
		name, err := json.Marshal(member.Name)
		if err != nil {
			return nil, err
		}
		value, err := marshal(member.Schema)
		if err != nil {
			return nil, err
		}
		b.Write(name)
		b.WriteByte(':')
		b.Write(value)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// get returns the schema of the member name, or nil.
func (m Members) get(name string) *Schema {
	for _, member := range m {
		if member.Name == name {
			return member.Schema
		}
	}
	return nil
}

// marshal returns v as compact JSON, with <, > and & as they are.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// ptr returns a pointer to v, for the bounds of a Schema.
func ptr[T any](v T) *T { return &v }

// The layout of the file: a value is written on one line when it is a
// scalar, a list of scalars, or an object of one member whose value is
// written on one line; a list of objects written on one line is written
// on one line too when it fits in lineWidth columns; everything else
// takes a line for each member or item. properties and $defs, and the
// patternProperties beside properties, always take a line for each.
const lineWidth = 100

// node is a JSON value read back in order: a scalar's text, or an
// array's items, or an object's members.
type node struct {
	scalar  string // the JSON text of a string, number, boolean or null
	isArray bool
	items   []*node
	keys    []string // an object's member names, with items their values
}

func (n *node) isScalar() bool { return !n.isArray && n.keys == nil && n.items == nil }

// Format returns the JSON text of s, laid out as the file has it, with a
// newline at the end. Characters outside ASCII are written as \u
// escapes, so that the file shows U+017F and U+212A as they are named.
func Format(s *Schema) ([]byte, error) {
	compact, err := marshal(s)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(compact))
	dec.UseNumber()
	root, err := read(dec)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	write(&b, root, "", false)
	b.WriteByte('\n')
	return []byte(b.String()), nil
}

// read reads one JSON value from dec, in order.
func read(dec *json.Decoder) (*node, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch tok := tok.(type) {
	case json.Delim:
		n := &node{isArray: tok == '['}
		if !n.isArray {
			n.keys = []string{}
		}
		for dec.More() {
			if !n.isArray {
				key, err := dec.Token()
				if err != nil {
					return nil, err
				}
				n.keys = append(n.keys, key.(string))
			}
			item, err := read(dec)
			if err != nil {
				return nil, err
			}
			n.items = append(n.items, item)
		}
		if _, err := dec.Token(); err != nil { // the closing delimiter
			return nil, err
		}
		return n, nil
	case string:
		return &node{scalar: quote(tok)}, nil
	case json.Number:
		return &node{scalar: tok.String()}, nil
	case bool:
		return &node{scalar: fmt.Sprint(tok)}, nil
	case nil:
		return &node{scalar: "null"}, nil
	}
	return nil, fmt.Errorf("unexpected JSON token %v", tok)
}

// quote returns s as a JSON string, every character outside printable
// ASCII escaped as \uXXXX.
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r >= ' ' && r <= '~':
			b.WriteRune(r)
		case r > 0xFFFF:
			r1, r2 := utf16Pair(r)
			fmt.Fprintf(&b, `\u%04X\u%04X`, r1, r2)
		default:
			fmt.Fprintf(&b, `\u%04X`, r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// utf16Pair returns the surrogate pair of r, beyond U+FFFF.
func utf16Pair(r rune) (rune, rune) {
	r -= 0x10000
	return 0xD800 + (r>>10)&0x3FF, 0xDC00 + r&0x3FF
}

// oneLine returns n written on one line, and whether it is written so
// wherever it stands (a scalar, a list of scalars, an object of one
// member written so).
func oneLine(n *node) (string, bool) {
	switch {
	case n.isScalar():
		return n.scalar, true
	case len(n.items) == 0:
		if n.isArray {
			return "[]", true
		}
		return "{}", true
	case n.isArray:
		parts := make([]string, len(n.items))
		all := true
		for i, item := range n.items {
			parts[i], _ = oneLine(item)
			all = all && item.isScalar()
		}
		return "[ " + strings.Join(parts, ", ") + " ]", all
	default:
		value, ok := oneLine(n.items[0])
		return "{ " + quote(n.keys[0]) + ": " + value + " }", ok && len(n.items) == 1 && (!n.items[0].isArray || allScalars(n.items[0]))
	}
}

func allScalars(n *node) bool {
	for _, item := range n.items {
		if !item.isScalar() {
			return false
		}
	}
	return true
}

// fitsOnLine reports whether n, a list, is written on one line at a line
// that starts with prefix: its items are objects written on one line
// wherever they stand, and the line fits.
func fitsOnLine(n *node, prefix string) bool {
	if !n.isArray {
		return false
	}
	for _, item := range n.items {
		if _, ok := oneLine(item); !ok || item.isArray {
			return false
		}
	}
	line, _ := oneLine(n)
	return utf8.RuneCountInString(prefix+line) <= lineWidth
}

// write writes n at indent, after prefix on its first line (a member's
// name); expand forces a line for each member.
func write(b *strings.Builder, n *node, indent string, expand bool) {
	if line, ok := oneLine(n); !expand && (ok || fitsOnLine(n, indent)) {
		b.WriteString(line)
		return
	}
	inner := indent + "  "
	open, closing := "{", "}"
	if n.isArray {
		open, closing = "[", "]"
	}
	b.WriteString(open + "\n")
	for i, item := range n.items {
		b.WriteString(inner)
		prefix := inner
		expandItem := false
		if !n.isArray {
			key := n.keys[i]
			b.WriteString(quote(key) + ": ")
			prefix += quote(key) + ": "
			expandItem = key == "properties" || key == "$defs" ||
				key == "patternProperties" && hasKey(n, "properties")
		}
		if line, ok := oneLine(item); !expandItem && (ok || fitsOnLine(item, prefix)) {
			b.WriteString(line)
		} else {
			write(b, item, inner, true)
		}
		if i < len(n.items)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString(indent + closing)
}

func hasKey(n *node, key string) bool {
	for _, k := range n.keys {
		if k == key {
			return true
		}
	}
	return false
}
