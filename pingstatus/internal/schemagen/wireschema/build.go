// Package wireschema builds the JSON Schema of a plugin's reply,
// pingstatus/schema.json, from the one description of its shape: the wire
// types of pingstatus ([pingstatus.PingResponse] and the types its fields
// hold), read by reflection as encoding/json reads them. What the types
// do not say, the rules of their values, is in one table ([Table]), by
// wire type and Go field; the descriptions are the types' and fields' doc
// comments, read from pingstatus's source. ../main.go writes the file;
// pingstatus's tests compare it with what [Build] gives.
package wireschema

import (
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/pingnode/pingnode/pingstatus"
)

// importPath is pingstatus's import path, for the doc links of its doc
// comments.
const importPath = "github.com/pingnode/pingnode/pingstatus"

// Build returns the reply's JSON Schema as schema.json holds it, built
// from the wire types, [Table] and the doc comments of pingstatus, whose
// source is in dir. It fails if the table and the wire types disagree
// ([Check]), or if a wire type or field the schema describes has no doc
// comment that gives its description.
func Build(dir string) ([]byte, error) {
	src, err := parseDir(dir)
	if err != nil {
		return nil, err
	}
	sources := map[string]*source{".": src}
	var c Consts
	for _, u := range unexported {
		s, ok := sources[u.dir]
		if !ok {
			if s, err = parseDir(filepath.Join(dir, u.dir)); err != nil {
				return nil, err
			}
			sources[u.dir] = s
		}
		if *u.into(&c), err = s.intConst(u.name); err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(dir, u.dir), err)
		}
	}
	d, err := readDocs(src, importPath)
	if err != nil {
		return nil, err
	}
	root := reflect.TypeFor[pingstatus.PingResponse]()
	table := Table(c)
	if err := Check(root, table); err != nil {
		return nil, err
	}
	s, err := build(root, table, d)
	if err != nil {
		return nil, err
	}
	return Format(s)
}

// Check reports every way in which table and the wire types of the reply
// whose type is root disagree: a struct type of the reply, or a field of
// one, without an entry, or an entry for a type or a field that the
// reply does not have.
func Check(root reflect.Type, table []Entry) error {
	var problems []string
	fail := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	objects, embedded := structTypes(root)
	has := make(map[reflect.Type]bool)
	defs := make(map[string]bool)
	for _, e := range table {
		if e.Def != "" {
			if defs[e.Def] {
				fail("the table has two entries named %q", e.Def)
			}
			defs[e.Def] = true
		}
		if e.Type == nil {
			if e.Def == "" || len(e.Fields) > 0 {
				fail("entry %q: a rule of its own has a name in $defs and no fields", e.Def)
			}
			continue
		}
		has[e.Type] = true
		if e.Type.Kind() != reflect.Struct || !slices.Contains(objects, e.Type) && !slices.Contains(embedded, e.Type) {
			fail("the table has an entry for %s, which is not a type of the reply", e.Type)
			continue
		}
		for f := range e.Type.Fields() {
			if f.IsExported() && !isEmbedded(f) {
				if _, ok := e.Fields[f.Name]; !ok {
					fail("field %s.%s (JSON %q) has no entry in the table: give it one, empty if no rule constrains it beyond its Go type",
						e.Type.Name(), f.Name, jsonName(f))
				}
			}
		}
		for _, name := range slices.Sorted(maps.Keys(e.Fields)) {
			f, ok := e.Type.FieldByName(name)
			switch {
			case !ok || len(f.Index) > 1:
				fail("the table has an entry for %s.%s, a field that %s does not have", e.Type.Name(), name, e.Type.Name())
			case isEmbedded(f):
				fail("the table has an entry for %s.%s, an embedded struct: the rules of its fields are under its own type", e.Type.Name(), name)
			}
		}
		for _, alt := range e.AnyOf {
			for _, fs := range alt.Fields {
				if f, ok := e.Type.FieldByName(fs.Field); !ok || isEmbedded(f) {
					fail("an alternative of %s names %s, a field that %s does not have", e.Type.Name(), fs.Field, e.Type.Name())
				}
			}
		}
	}
	for _, t := range slices.Concat(objects, embedded) {
		if !has[t] {
			fail("the wire type %s has no entry in the table", t)
		}
	}
	if len(problems) > 0 {
		return errors.New("the rules table and the wire types disagree:\n\t" + strings.Join(problems, "\n\t"))
	}
	return nil
}

// structTypes returns the struct types of the reply whose type is root,
// in the order its fields reach them: the objects, and apart the structs
// that objects embed.
func structTypes(root reflect.Type) (objects, embedded []reflect.Type) {
	var walk func(t reflect.Type, embeds bool)
	walk = func(t reflect.Type, embeds bool) {
		t = valueType(t)
		if t.Kind() != reflect.Struct || slices.Contains(objects, t) || slices.Contains(embedded, t) {
			return
		}
		if embeds {
			embedded = append(embedded, t)
		} else {
			objects = append(objects, t)
		}
		for f := range t.Fields() {
			if f.IsExported() || f.Anonymous {
				walk(f.Type, isEmbedded(f))
			}
		}
	}
	walk(root, false)
	return objects, embedded
}

// valueType returns the struct, or other type, that t holds through
// pointers, slices and maps.
func valueType(t reflect.Type) reflect.Type {
	for {
		switch t.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
			t = t.Elem()
		default:
			return t
		}
	}
}

// isEmbedded reports whether f is an embedded struct whose fields stand
// in its place, as encoding/json reads them.
func isEmbedded(f reflect.StructField) bool {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	t := f.Type
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return f.Anonymous && name == "" && t.Kind() == reflect.Struct
}

// jsonName returns the name of f in JSON, as encoding/json gives it.
func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if name == "" {
		name = f.Name
	}
	return name
}

// isRequired reports whether f is a field a reply must give: one that
// encoding/json writes even when it is empty.
func isRequired(f reflect.StructField) bool {
	_, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
	for opt := range strings.SplitSeq(opts, ",") {
		if opt == "omitempty" || opt == "omitzero" {
			return false
		}
	}
	return true
}

// A builder builds the schema.
type builder struct {
	table    []Entry
	docs     *docs
	placed   map[placeKey]string // where an embedded struct's field is described: the first object that embeds it
	narrow   []*Schema           // required fields described by $refs, whose type is theirs without null
	problems []string
}

type placeKey struct {
	t     reflect.Type
	field string
}

func (b *builder) fail(format string, args ...any) {
	if p := fmt.Sprintf(format, args...); !slices.Contains(b.problems, p) {
		b.problems = append(b.problems, p)
	}
}

// build returns the schema of the reply whose type is root.
func build(root reflect.Type, table []Entry, d *docs) (*Schema, error) {
	b := &builder{table: table, docs: d, placed: make(map[placeKey]string)}
	e := b.entry(root, "")
	if e == nil {
		return nil, fmt.Errorf("the table has no entry for the reply, %s", root)
	}
	s := b.object(e, "#", false, "")
	for i := range table {
		e := &table[i]
		if e.Def == "" {
			continue
		}
		var def *Schema
		if e.Type != nil {
			def = b.object(e, "#/$defs/"+e.Def, false, "")
		} else {
			c := e.Schema
			def = &c
		}
		s.Defs = append(s.Defs, Member{e.Def, def})
	}
	b.resolveRefs(s)
	for _, f := range b.narrow {
		types := slices.DeleteFunc(slices.Clone(b.typesOf(s, f, 0)), func(t string) bool { return t == "null" })
		if len(types) == 0 {
			b.fail("%q: its $ref gives it no type", f.Description)
		}
		f.Type = types
	}
	each(s, func(sub *Schema) {
		if sub.Ref != "" && resolve(s, sub.Ref) == nil {
			b.fail("$ref %q points to no schema", sub.Ref)
		}
	})
	if len(b.problems) > 0 {
		return nil, errors.New(strings.Join(b.problems, "\n"))
	}
	return s, nil
}

// entry returns the table's entry of the wire type t named def, or nil.
func (b *builder) entry(t reflect.Type, def string) *Entry {
	for i := range b.table {
		if e := &b.table[i]; e.Type == t && e.Def == def {
			return e
		}
	}
	return nil
}

// defOf returns the name in $defs of the wire type t, the value of a
// list or a map: def, which must be one of its, or its only one.
func (b *builder) defOf(t reflect.Type, def string) string {
	var names []string
	for _, e := range b.table {
		if e.Type == t && e.Def != "" {
			names = append(names, e.Def)
		}
	}
	switch {
	case def != "" && slices.Contains(names, def):
		return def
	case def != "":
		b.fail("%q is not an entry of %s in $defs", def, t)
	case len(names) == 1:
		return names[0]
	default:
		b.fail("%s, in a list or a map, has %d entries in $defs (%v): the field's rule says which (Items)", t, len(names), names)
	}
	return ""
}

// object returns the schema of the object of e's wire type, at the JSON
// pointer at, nullable if it may be null, after the description of the
// field that holds it, if any.
func (b *builder) object(e *Entry, at string, nullable bool, fieldDescription string) *Schema {
	desc, err := b.docs.typeDescription(e.Type.Name())
	if err != nil {
		b.fail("%v", err)
	}
	s := &Schema{Schema: e.Schema.Schema, ID: e.Schema.ID, Title: e.Schema.Title}
	s.Description = strings.Join(slices.DeleteFunc([]string{fieldDescription, desc, e.Note}, func(s string) bool { return s == "" }), " ")
	s.Type = Types{"object"}
	if nullable {
		s.Type = append(s.Type, "null")
	}
	var fields []reflect.StructField // as they stand in the object, the embedded structs' in their place
	b.properties(s, e, at, false, &fields)
	for _, f := range fields {
		name := jsonName(f)
		s.PatternProperties = append(s.PatternProperties, Member{foldPattern(name), &Schema{Ref: at + "/properties/" + name}})
	}
	for _, f := range fields {
		if name := jsonName(f); isRequired(f) {
			s.AllOf = append(s.AllOf, &Schema{
				Description: name + " is required, its name in any letter case.",
				Not:         &Schema{PropertyNames: &Schema{Not: &Schema{Pattern: foldPattern(name)}}},
			})
		}
	}
	byGoName := func(name string) string {
		for _, f := range fields {
			if f.Name == name {
				return jsonName(f)
			}
		}
		b.fail("%s has no field %s", e.Type, name)
		return ""
	}
	for _, alt := range e.AnyOf {
		a := &Schema{Description: alt.Description}
		for _, fs := range alt.Fields {
			a.PatternProperties = append(a.PatternProperties, Member{foldPattern(byGoName(fs.Field)), fs.Schema})
		}
		s.AnyOf = append(s.AnyOf, a)
	}
	if e.ExactlyOne {
		for _, f := range fields {
			name := jsonName(f)
			article := "A"
			if strings.ContainsRune("aeiou", rune(name[0])) {
				article = "An"
			}
			s.OneOf = append(s.OneOf, &Schema{
				Description: fmt.Sprintf("%s %s value: %s given and not null, its name in any letter case.", article, name, name),
				Not:         &Schema{PatternProperties: Members{{foldPattern(name), &Schema{Type: Types{"null"}}}}},
			})
		}
	}
	return s
}

// properties adds to s, the object at at, the properties of the fields
// of e's wire type, in their order, an embedded struct's in its place,
// and appends each field to fields. The fields of a struct that more
// than one object embeds (embedded) are described in the first, and
// the others point there.
func (b *builder) properties(s *Schema, e *Entry, at string, embedded bool, fields *[]reflect.StructField) {
	for f := range e.Type.Fields() {
		if isEmbedded(f) {
			t := f.Type
			if t.Kind() == reflect.Pointer {
				t = t.Elem()
			}
			inner := b.entry(t, "")
			if inner == nil {
				b.fail("the embedded %s has no entry in the table", t)
				continue
			}
			b.properties(s, inner, at, true, fields)
			continue
		}
		if !f.IsExported() || jsonName(f) == "-" {
			continue
		}
		*fields = append(*fields, f)
		name := jsonName(f)
		key := placeKey{e.Type, f.Name}
		if where, ok := b.placed[key]; ok && embedded {
			s.Properties = append(s.Properties, Member{name, &Schema{Ref: where}})
			continue
		}
		here := at + "/properties/" + name
		if embedded {
			b.placed[key] = here
		}
		s.Properties = append(s.Properties, Member{name, b.field(e, f, here)})
	}
}

// field returns the schema of the field f of e's wire type, at the JSON
// pointer at.
func (b *builder) field(e *Entry, f reflect.StructField, at string) *Schema {
	rule := e.Fields[f.Name]
	required := isRequired(f)
	desc, err := b.docs.fieldDescription(e.Type.Name(), f.Name)
	if err != nil {
		b.fail("%v", err)
	}
	t := f.Type
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() == reflect.Struct {
		if !reflect.DeepEqual(rule, Field{}) {
			b.fail("%s.%s holds an object: its rules are its type's fields'", e.Type.Name(), f.Name)
		}
		if inline := b.entry(t, ""); inline != nil {
			return b.object(inline, at, !required, desc)
		}
		return &Schema{Description: desc, Ref: "#/$defs/" + b.defOf(t, "")}
	}
	s := new(Schema)
	*s = rule.Schema
	s.Description = desc
	switch {
	case len(rule.Refs) > 0:
		if len(rule.Refs) == 1 {
			s.Ref = rule.Refs[0]
		} else {
			var refs []*Schema
			for _, r := range rule.Refs {
				refs = append(refs, &Schema{Ref: r})
			}
			s.AllOf = append(refs, s.AllOf...)
		}
		if required {
			b.narrow = append(b.narrow, s)
		}
	case len(s.Enum) > 0:
		if !required {
			s.Enum = append(slices.Clone(s.Enum), nil)
		}
	default:
		types := Types(slices.Clone(rule.Types))
		if len(types) == 0 {
			types = Types{b.jsonType(t)}
		}
		if !required {
			types = append(types, "null")
		}
		s.Type = types
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		s.Items = b.valueSchema(t.Elem(), rule.Items)
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			b.fail("%s.%s: a map's keys are strings in JSON", e.Type.Name(), f.Name)
		}
		if s.AdditionalProperties == nil {
			s.AdditionalProperties = b.valueSchema(t.Elem(), "")
		}
	}
	if rule.Items != "" && t.Kind() != reflect.Slice {
		b.fail("%s.%s: Items, for a field that is no list", e.Type.Name(), f.Name)
	}
	return s
}

// valueSchema returns the schema of a list's entries or a map's values
// of type t: the entry in $defs named def, or the only one of t, for a
// wire type; its JSON type for another.
func (b *builder) valueSchema(t reflect.Type, def string) *Schema {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() == reflect.Struct {
		return &Schema{Ref: "#/$defs/" + b.defOf(t, def)}
	}
	return &Schema{Type: Types{b.jsonType(t)}}
}

// jsonType returns the JSON type of a value of Go type t.
func (b *builder) jsonType(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Slice, reflect.Array:
		return "array"
	case reflect.Map, reflect.Struct:
		return "object"
	}
	b.fail("%s has no JSON type", t)
	return ""
}

// resolveRefs writes each $ref of the table as a JSON pointer: a rule by
// its name ("quantity") as #/$defs/quantity, a field of an entry in
// $defs ("taint.Value") as #/$defs/taint/properties/value.
func (b *builder) resolveRefs(root *Schema) {
	each(root, func(s *Schema) {
		if s.Ref == "" || strings.HasPrefix(s.Ref, "#") {
			return
		}
		def, field, isField := strings.Cut(s.Ref, ".")
		i := slices.IndexFunc(b.table, func(e Entry) bool { return e.Def == def })
		switch {
		case i < 0:
			b.fail("$ref %q: no entry in $defs is named %q", s.Ref, def)
		case !isField:
			s.Ref = "#/$defs/" + def
		case b.table[i].Type == nil:
			b.fail("$ref %q: %s is a rule, with no fields", s.Ref, def)
		default:
			f, ok := b.table[i].Type.FieldByName(field)
			if !ok {
				b.fail("$ref %q: %s has no field %s", s.Ref, b.table[i].Type, field)
				return
			}
			s.Ref = "#/$defs/" + def + "/properties/" + jsonName(f)
		}
	})
}

// typesOf returns the JSON types that s, within root, allows, as its
// type or those of its $ref and allOf say, or nil for any.
func (b *builder) typesOf(root, s *Schema, depth int) Types {
	if s.Type != nil || depth > 10 {
		return s.Type
	}
	var sets []Types
	if s.Ref != "" {
		if target := resolve(root, s.Ref); target != nil {
			if t := b.typesOf(root, target, depth+1); t != nil {
				sets = append(sets, t)
			}
		}
	}
	for _, sub := range s.AllOf {
		if t := b.typesOf(root, sub, depth+1); t != nil {
			sets = append(sets, t)
		}
	}
	if len(sets) == 0 {
		return nil
	}
	types := slices.Clone(sets[0])
	for _, set := range sets[1:] {
		types = slices.DeleteFunc(types, func(t string) bool { return !set.has(t) })
	}
	return types
}

// resolve returns the schema that ptr, a JSON pointer into root through
// $defs and properties, points to, or nil.
func resolve(root *Schema, ptr string) *Schema {
	if ptr == "#" {
		return root
	}
	tokens := strings.Split(strings.TrimPrefix(ptr, "#/"), "/")
	s := root
	for len(tokens) >= 2 && s != nil {
		switch tokens[0] {
		case "$defs":
			s = s.Defs.get(tokens[1])
		case "properties":
			s = s.Properties.get(tokens[1])
		default:
			return nil
		}
		tokens = tokens[2:]
	}
	if len(tokens) > 0 {
		return nil
	}
	return s
}

// each calls fn for s and each schema within it.
func each(s *Schema, fn func(*Schema)) {
	if s == nil {
		return
	}
	fn(s)
	for _, sub := range []*Schema{s.Items, s.PropertyNames, s.AdditionalProperties, s.Not} {
		each(sub, fn)
	}
	for _, list := range [][]*Schema{s.AnyOf, s.AllOf, s.OneOf} {
		for _, sub := range list {
			each(sub, fn)
		}
	}
	for _, members := range []Members{s.Properties, s.PatternProperties, s.Defs} {
		for _, m := range members {
			each(m.Schema, fn)
		}
	}
}
