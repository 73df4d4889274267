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
)

// The fields of each level, as indexes into levelFields[level].
const (
	statusField = iota
	resourcesField
	taintsField
	labelsField
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

const (
	keyField = iota
	valueField
	effectField
)

// levelFields are the JSON names of the fields of each level.
var levelFields = [...][]string{
	replyLevel: {statusField: "status", resourcesField: "resources", taintsField: "taints", labelsField: "labels"},
	resourcesLevel: {
		cpuField: "cpu", memoryField: "memory", podsField: "pods", acceleratorsField: "accelerators", basisField: "basis",
		ephemeralStorageField: "ephemeralStorage", hugepagesField: "hugepages",
	},
	acceleratorLevel: {resourceTypeField: "resourceType", availableField: "available"},
	taintLevel:       {keyField: "key", valueField: "value", effectField: "effect"},
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
			case acceleratorLevel, taintLevel:
				path = "." + name // after the entry's index
			}
			paths[lv] = append(paths[lv], path)
		}
	}
	return paths
}()

// fieldPath returns the path of the field k of level lv as a warning
// names it: "taints", "resources.cpu", or for a field of a list entry
// what follows the entry's index, ".key".
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
