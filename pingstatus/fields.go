package pingstatus

import (
	"bytes"
	"reflect"
	"strings"

	"github.com/pingnode/pingnode/internal/kuberules"
	"github.com/pingnode/pingnode/internal/text"
)

// The reply's shape is described once, by the wire types (wire.go) and
// their json tags: levelFields, the table of the field names of each
// level that the rules read and warnings name their paths from, is
// derived from them, field by field in their order, and the constants
// below index it. fieldIndex is the one place where a key is matched to
// a field, as encoding/json matches it. One test holds the table, the
// constants and fieldIndex to the wire types and to the JSON Schema.

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

// The fields of each level, as indexes into levelFields[level]: the
// order of the fields of its wire type.
const (
	statusField = iota
	resourcesField
	taintsField
	labelsField
	devicesField
	nodesField
)

// The fields of a part are the reply's, but for its name in the place of
// the status: a part's resources, taints, labels and devices are read by
// the reply's own rules, by the reply's constants.
const (
	partNameField = statusField
)

const (
	cpuField = iota
	memoryField
	podsField
	acceleratorsField
	basisField
	ephemeralStorageField
	hugepagesField
)

const (
	resourceTypeField = iota
	availableField
)

// The fields of a taint, of the node's or of a device's.
const (
	keyField = iota
	valueField
	effectField
)

const (
	nameField = iota
	countField
	attributesField
	capacityField
	deviceTaintsField
)

const (
	intField = iota
	boolField
	stringField
	versionField
)

const (
	capacityValueField = iota
)

// levelFields are the JSON names of the fields of each level, taken from
// the json tags of its wire type.
var levelFields = [...][]string{
	replyLevel:       tagNames(reflect.TypeFor[PingResponse]()),
	resourcesLevel:   tagNames(reflect.TypeFor[ResourcesResponse]()),
	acceleratorLevel: tagNames(reflect.TypeFor[AcceleratorResponse]()),
	taintLevel:       tagNames(reflect.TypeFor[TaintResponse]()),
	deviceLevel:      tagNames(reflect.TypeFor[DeviceResponse]()),
	attributeLevel:   tagNames(reflect.TypeFor[DeviceAttribute]()),
	capacityLevel:    tagNames(reflect.TypeFor[DeviceCapacity]()),
	deviceTaintLevel: tagNames(reflect.TypeFor[TaintResponse]()),
	partLevel:        tagNames(reflect.TypeFor[PartResponse]()),
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
		key = []byte(unquote(quoted))
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
