package nodeapply

import (
	"slices"
	"strings"

	"github.com/pingnode/pingnode/internal/enum"

	"github.com/pingnode/pingnode/pingstatus"
)

// Op is what a [Change] did to its path.
type Op int

const (
	// Added means the path had no value before.
	Added Op = iota
	// Removed means the path has no value after.
	Removed
	// Modified means the value at the path is different.
	Modified
)

var opNames = [...]string{"added", "removed", "modified"}

// String returns "added", "removed" or "modified".
func (o Op) String() string { return enum.Name(opNames[:], int(o), "Op") }

// MarshalText returns the op as [Op.String] writes it, so that a [Change]
// marshals as JSON with "added" rather than 0.
func (o Op) MarshalText() ([]byte, error) { return enum.Marshal(o, o >= Added && o <= Modified) }

// UnmarshalText reads what MarshalText writes.
func (o *Op) UnmarshalText(b []byte) error { return enum.Unmarshal(o, b, Added, Modified) }

// Change is one field that Apply changed, for the caller's log. A caller
// that sorts or counts changes asks Op and Subject, never the path.
type Change struct {
	Op Op `json:"op"`
	// Subject is what kind of field changed: a resource (capacity or
	// allocatable), a taint, a condition or an annotation.
	Subject pingstatus.Subject `json:"subject"`
	// Path names the field: "status.capacity[cpu]",
	// "spec.taints[vendor.io/maintenance:NoSchedule]",
	// "metadata.annotations[pingnode.io/plugin-taints]".
	Path string `json:"path"`
	// Old is the value before, empty when Op is Added. Quantities are in
	// their canonical form, taints as kubectl writes them (key=value:Effect).
	Old string `json:"old,omitempty"`
	// New is the value after, empty when Op is Removed.
	New string `json:"new,omitempty"`
}

// String returns the change as one log line, such as
// "status.capacity[cpu]: 64 -> 128".
func (c Change) String() string {
	switch c.Op {
	case Added:
		return c.Path + ": added " + c.New
	case Removed:
		return c.Path + ": removed " + c.Old
	}
	return c.Path + ": " + c.Old + " -> " + c.New
}

// sortChanges orders changes by path, so the list is deterministic.
func sortChanges(changes []Change) {
	slices.SortFunc(changes, func(a, b Change) int { return strings.Compare(a.Path, b.Path) })
}
