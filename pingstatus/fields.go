package pingstatus

import (
	"bytes"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/pingnode/pingnode/internal/kuberules"
	"github.com/pingnode/pingnode/internal/text"
	"github.com/pingnode/pingnode/pingstatus/internal/jsontree"
)

// The reply's shape is described once, by the wire types (wire.go) and
// their json tags: levelFields, the table of the field names of each
// level that the rules read and warnings name their paths from, is
// derived from them, field by field in their order; levelShapes, what
// each field holds (a value, an object of another level, a list or a map
// of them), from their Go types; and the rules name the fields they read
// by their JSON names, looked up in the table (fieldOf). fieldIndex is
// the one place where a key is matched to a field, as encoding/json
// matches it. The JSON Schema is generated from the same types.

// level is an object of the reply that Parse reads.
type level int

const (
	replyLevel level = iota
	resourcesLevel
	acceleratorLevel
	taintLevel
	deviceLevel      // an entry of the devices list
	attributeLevel   // the value of a device's attribute
	capacityLevel    // the value of a device's capacity
	deviceTaintLevel // an entry of a device's taints
	partLevel        // an entry of the parts list, "nodes"
)

// levelTypes are the wire types of the levels.
var levelTypes = [...]reflect.Type{
	replyLevel:       reflect.TypeFor[PingResponse](),
	resourcesLevel:   reflect.TypeFor[ResourcesResponse](),
	acceleratorLevel: reflect.TypeFor[AcceleratorResponse](),
	taintLevel:       reflect.TypeFor[TaintResponse](),
	deviceLevel:      reflect.TypeFor[DeviceResponse](),
	attributeLevel:   reflect.TypeFor[DeviceAttribute](),
	capacityLevel:    reflect.TypeFor[DeviceCapacity](),
	deviceTaintLevel: reflect.TypeFor[TaintResponse](), // a device's taint has a node taint's shape, and rules of its own
	partLevel:        reflect.TypeFor[PartResponse](),
}

// levelFields are the JSON names of the fields of each level, taken from
// the json tags of its wire type.
var levelFields = func() (fields [len(levelTypes)][]string) {
	for lv, t := range levelTypes {
		fields[lv] = tagNames(t)
	}
	return fields
}()

// fieldOf returns the index of the field name of level lv in
// levelFields: how the rules name a field they read. A name the wire
// type does not have stops the program at its start.
func fieldOf(lv level, name string) int {
	k := slices.Index(levelFields[lv], name)
	if k < 0 {
		panic("pingstatus: level " + strconv.Itoa(int(lv)) + " has no field " + name)
	}
	return k
}

// The fields that the rules read, by level. A part's fields are the
// reply's fields of a node, in the same places, with its name in the
// place of the status (a test holds it so), so that one set of rules,
// indexed alike, reads both.
var (
	statusField    = fieldOf(replyLevel, "status")
	resourcesField = fieldOf(replyLevel, "resources")
	taintsField    = fieldOf(replyLevel, "taints")
	labelsField    = fieldOf(replyLevel, "labels")
	devicesField   = fieldOf(replyLevel, "devices")
	nodesField     = fieldOf(replyLevel, "nodes")
	partNameField  = fieldOf(partLevel, "name")

	cpuField              = fieldOf(resourcesLevel, "cpu")
	memoryField           = fieldOf(resourcesLevel, "memory")
	podsField             = fieldOf(resourcesLevel, "pods")
	acceleratorsField     = fieldOf(resourcesLevel, "accelerators")
	basisField            = fieldOf(resourcesLevel, "basis")
	ephemeralStorageField = fieldOf(resourcesLevel, "ephemeralStorage")
	hugepagesField        = fieldOf(resourcesLevel, "hugepages")

	resourceTypeField = fieldOf(acceleratorLevel, "resourceType")
	availableField    = fieldOf(acceleratorLevel, "available")

	// The fields of a taint, of the node's or of a device's.
	keyField    = fieldOf(taintLevel, "key")
	valueField  = fieldOf(taintLevel, "value")
	effectField = fieldOf(taintLevel, "effect")

	nameField         = fieldOf(deviceLevel, "name")
	countField        = fieldOf(deviceLevel, "count")
	attributesField   = fieldOf(deviceLevel, "attributes")
	capacityField     = fieldOf(deviceLevel, "capacity")
	deviceTaintsField = fieldOf(deviceLevel, "taints")

	intField     = fieldOf(attributeLevel, "int")
	boolField    = fieldOf(attributeLevel, "bool")
	stringField  = fieldOf(attributeLevel, "string")
	versionField = fieldOf(attributeLevel, "version")

	capacityValueField = fieldOf(capacityLevel, "value")
)

// A form is what a field of a level holds, as its Go type says.
type form uint8

const (
	valueForm  form = iota // a string, a number, a boolean
	objectForm             // an object of another level (*ResourcesResponse)
	listForm               // a list of objects of another level ([]TaintResponse)
	keyedForm              // an object whose keys are its entries' own, each a value or an object of another level (map[string]DeviceAttribute)
)

// A shape is what a field holds: its form and, for an object, a list or
// a map of objects, their level (-1 for a map of values).
type shape struct {
	form  form
	level level
}

// levelShapes are the shapes of the fields of each level, in the order
// of levelFields, from the Go types of the wire types' fields: the one
// description of how the reply nests, which the judging of its keys
// walks.
var levelShapes = func() (shapes [len(levelTypes)][]shape) {
	for lv, t := range levelTypes {
		for _, f := range reflect.VisibleFields(t) {
			if f.Anonymous {
				continue
			}
			shapes[lv] = append(shapes[lv], shapeOf(level(lv), f.Type))
		}
	}
	return shapes
}()

// shapeOf returns the shape of a field of type t at level lv.
func shapeOf(lv level, t reflect.Type) shape {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		return shape{objectForm, levelOf(lv, t)}
	case reflect.Slice:
		return shape{listForm, levelOf(lv, t.Elem())}
	case reflect.Map:
		if t.Elem().Kind() == reflect.Struct {
			return shape{keyedForm, levelOf(lv, t.Elem())}
		}
		return shape{keyedForm, -1}
	}
	return shape{valueForm, -1}
}

// levelOf returns the level of the wire type t, an object within one at
// level parent: the level of that type, and for a device's taints the
// device taint's, whose type is a node taint's.
func levelOf(parent level, t reflect.Type) level {
	if parent == deviceLevel && t == levelTypes[deviceTaintLevel] {
		return deviceTaintLevel
	}
	for lv, lt := range levelTypes {
		if lt == t {
			return level(lv)
		}
	}
	panic("pingstatus: no level has the wire type " + t.String())
}

// tagNames returns the JSON names of the fields of the struct type t, in
// their order, as their json tags give them; the fields of an embedded
// struct (a reply's and a part's [NodeResponse]) stand in its place, as
// encoding/json reads them.
func tagNames(t reflect.Type) []string {
	var names []string
	for f := range t.Fields() {
		if f.Anonymous {
			names = append(names, tagNames(f.Type)...)
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		names = append(names, name)
	}
	return names
}

// fieldIndex returns the index in names of the field that the quoted key,
// a string token of the tree, names, matched as encoding/json matches it
// (exactly, or else without regard to case by Unicode's simple folding,
// after unescaping), or -1.
func fieldIndex(quoted []byte, names []string) int {
	if len(quoted) < 2 || len(quoted) > maxKeyBytes {
		return -1
	}
	key := quoted[1 : len(quoted)-1]
	for k, name := range names {
		if string(key) == name {
			return k
		}
	}
	if bytes.IndexByte(key, '\\') >= 0 {
		key = []byte(jsontree.Unquote(quoted))
	}
	for k, name := range names {
		if bytes.EqualFold(key, []byte(name)) {
			return k
		}
	}
	return -1
}

// maxKeyBytes is the longest quoted key that may name a field, every
// character escaped (\u017F, long s, folds to s).
const maxKeyBytes = 2 + 6*len("ephemeralStorage")

// maxLevelFields is the most fields a level has.
const maxLevelFields = 7

// fieldPaths are the paths that warnings name, built from levelFields.
var fieldPaths = func() (paths [len(levelFields)][]string) {
	for lv, names := range levelFields {
		for _, name := range names {
			path := name
			switch level(lv) {
			case resourcesLevel:
				path = levelFields[replyLevel][resourcesField] + "." + name
			case acceleratorLevel, taintLevel, deviceLevel, attributeLevel, capacityLevel, deviceTaintLevel:
				path = "." + name // after a list entry's index, or a device's attribute's or capacity's name
			}
			paths[lv] = append(paths[lv], path)
		}
	}
	return paths
}()

// fieldPath returns the path of the field k of level lv as a warning
// names it: "taints", "resources.cpu", or for a field of a list entry
// what follows the entry's index, ".key" (of a device's taint too), and
// for a field of a device's attribute or capacity what follows its name,
// ".version".
func fieldPath(lv level, k int) string { return fieldPaths[lv][k] }

// hugepagesPath returns the path of the page size size in
// resources.hugepages, as a warning names it: resources.hugepages[2Mi],
// the size quoted and cut when it is not a plain one.
func hugepagesPath(size string) string {
	if len(size) > maxQuantityBytes || strings.ContainsAny(size, "[]\"\\") || !isPrintable(size) {
		size = text.Quote(size, quoteBytes)
	}
	return fieldPath(resourcesLevel, hugepagesField) + "[" + size + "]"
}

// isPrintable reports whether s is printable ASCII.
func isPrintable(s string) bool {
	for i := range len(s) {
		if s[i] < ' ' || s[i] > '~' {
			return false
		}
	}
	return true
}

// labelPath returns the path of the label key of the labels at list as
// a warning names it: labels[nvidia.com/gpu.product], or, for a key that
// is no qualified name and so may hold any text, the key quoted and cut
// as warnings quote a plugin's text.
func labelPath(list, key string) string {
	if kuberules.LengthProblem(key, kuberules.MaxNameBytes) != "" || kuberules.QualifiedNameProblem(key) != "" {
		key = text.Quote(key, quoteBytes)
	}
	return list + "[" + key + "]"
}

// deviceKeyPath returns the path of the attribute or capacity key of the
// device entry at entry ("devices[0]", or "" for the path within the
// entry), k being attributesField or capacityField, as a warning names
// it: devices[0].attributes[productName],
// or, for a key that is no valid name and so may hold any text, the key
// quoted and cut as warnings quote a plugin's text.
func deviceKeyPath(entry string, k int, key string) string {
	if kuberules.DeviceAttributeNameProblem(key) != "" {
		key = text.Quote(key, quoteBytes)
	}
	return entry + fieldPath(deviceLevel, k) + "[" + key + "]"
}

// memberField returns the index in levelFields[lv] of the field that the key
// of the member m of an object at level lv names, or -1: read once, and
// kept as the member's mark in the tree.
func memberField(t *jsontree.Tree, m int, lv level) int {
	mark := t.Mark(m)
	if mark == 0 {
		mark = int8(fieldIndex(t.Key(m), levelFields[lv]) + 1)
		if mark == 0 {
			mark = -1
		}
		t.SetMark(m, mark)
	}
	if mark < 0 {
		return -1
	}
	return int(mark) - 1
}

// memberFields returns the last value of each field of the object obj at
// level lv, or none.
func memberFields(t *jsontree.Tree, obj int, lv level) [maxLevelFields]int {
	f := [maxLevelFields]int{none, none, none, none, none, none, none}
	for m := t.First(obj); m != none; m = t.Next(m) {
		if k := memberField(t, m, lv); k >= 0 {
			f[k] = m
		}
	}
	return f
}

// none stands for no value of the tree.
const none = jsontree.None
