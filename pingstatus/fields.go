package pingstatus

import (
	"strings"

	"github.com/pingnode/pingnode/internal/kuberules"
	"github.com/pingnode/pingnode/internal/text"
)

// The reply's field names, as JSON spells them, live in one table,
// levelFields: the walker matches keys against it, warnings name their
// paths from it, and a test holds it to the json tags of the wire types
// and of the decode mirrors (a struct tag cannot name a constant) and to
// the properties of the JSON Schema.

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
)

// The fields of each level, as indexes into levelFields[level].
const (
	statusField = iota
	resourcesField
	taintsField
	labelsField
	devicesField
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

// levelFields are the JSON names of the fields of each level.
var levelFields = [...][]string{
	replyLevel: {statusField: "status", resourcesField: "resources", taintsField: "taints", labelsField: "labels", devicesField: "devices"},
	resourcesLevel: {
		cpuField: "cpu", memoryField: "memory", podsField: "pods", acceleratorsField: "accelerators", basisField: "basis",
		ephemeralStorageField: "ephemeralStorage", hugepagesField: "hugepages",
	},
	acceleratorLevel: {resourceTypeField: "resourceType", availableField: "available"},
	taintLevel:       {keyField: "key", valueField: "value", effectField: "effect"},
	deviceLevel: {
		nameField: "name", countField: "count", attributesField: "attributes", capacityField: "capacity", deviceTaintsField: "taints",
	},
	attributeLevel:   {intField: "int", boolField: "bool", stringField: "string", versionField: "version"},
	capacityLevel:    {capacityValueField: "value"},
	deviceTaintLevel: {keyField: "key", valueField: "value", effectField: "effect"},
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

// labelPath returns the path of the label key as a warning names it:
// labels[nvidia.com/gpu.product], or, for a key that is no qualified name
// and so may hold any text, the key quoted and cut as warnings quote a
// plugin's text.
func labelPath(key string) string {
	if kuberules.LengthProblem(key, kuberules.MaxNameBytes) != "" || kuberules.QualifiedNameProblem(key) != "" {
		key = text.Quote(key, quoteBytes)
	}
	return levelFields[replyLevel][labelsField] + "[" + key + "]"
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
