package pingstatus

import (
	"slices"
	"strconv"
	"strings"

	"github.com/pingnode/pingnode/internal/kuberules"
	"github.com/pingnode/pingnode/internal/text"
)

// CheckDevices judges the devices of a patch built by hand, not by
// [Parse], by the rules Parse judges a reply's devices with (rules 13 to
// 17 of the package comment; the same code), and returns the patch as
// Parse would have given it for the same devices: of a repeated group
// name the last group, the groups sorted by name, a group that breaks a
// rule moved to KeptDeviceGroups (its published devices kept as they
// are), a group without a valid name dropped, and, over the limits of o
// (more groups than MaxDevices, or counts that add up to more), no
// devices at all (ReplaceDevices false, KeptDeviceGroups nil). The names
// p keeps already stay kept, merged with the refused ones, sorted and
// each once, but for a name no group can have, dropped, and the name of
// a group that p lists, which counts.
//
// Each problem is a warning whose path is "patch.devices[" and the
// group's name, then the field as Parse names it (".count",
// ".capacity[memory].value", ".taints[0].effect"); "patch.devices" for
// the whole list; "patch.keptDeviceGroups[" and an index for a kept name.
//
// A patch with ReplaceDevices false is returned as it is. When p's
// devices are valid and in order, as Parse gives them, it returns p
// itself and allocates nothing; otherwise a new patch, p unchanged.
func (o Options) CheckDevices(p *NodePatch) (*NodePatch, []Warning) {
	if p == nil || !p.ReplaceDevices {
		return p, nil
	}
	c := parser{opts: o}
	replace, groups, refused := c.devices(&groupList{groups: p.Devices})
	if !replace {
		out := *p
		out.ReplaceDevices, out.Devices, out.KeptDeviceGroups = false, nil, nil
		return &out, c.warnings
	}
	kept := c.keptGroups(p.KeptDeviceGroups, refused, groups)
	if len(c.warnings) == 0 && sameSlice(groups, p.Devices) && sameSlice(kept, p.KeptDeviceGroups) {
		return p, nil
	}
	out := *p
	out.Devices, out.KeptDeviceGroups = groups, slices.Clip(kept) // never appended to p's
	return &out, c.warnings
}

// keptGroups returns the names of the groups a checked patch keeps: those
// it kept (given), each a valid group name (another is dropped, with a
// warning), and those its list refused (refused), sorted, each once, and
// none of a group the list publishes (groups, sorted). It is given itself
// when nothing changes.
func (p *parser) keptGroups(given, refused []string, groups []DeviceGroup) []string {
	if len(refused) == 0 && keptInOrder(given, groups) {
		return given
	}
	var kept []string
	for i, name := range given {
		if problem := kuberules.DeviceGroupNameProblem(name); problem != "" {
			p.warn(SubjectDevice, Refused, "patch.keptDeviceGroups["+strconv.Itoa(i)+"]", "%s is not a valid device group name: %s; dropped", text.Quote(name, quoteBytes), problem)
			continue
		}
		kept = append(kept, name)
	}
	kept = slices.Compact(slices.Sorted(slices.Values(append(kept, refused...))))
	kept = slices.DeleteFunc(kept, func(name string) bool { return listed(groups, name) })
	if len(kept) == 0 {
		return nil
	}
	return kept
}

// keptInOrder reports whether kept is sorted, each name once and valid,
// and names none of groups (sorted), allocating nothing.
func keptInOrder(kept []string, groups []DeviceGroup) bool {
	for i, name := range kept {
		if i > 0 && kept[i-1] >= name || kuberules.DeviceGroupNameProblem(name) != "" || listed(groups, name) {
			return false
		}
	}
	return true
}

// listed reports whether groups, sorted by name, has a group named name.
func listed(groups []DeviceGroup, name string) bool {
	_, found := slices.BinarySearchFunc(groups, name, func(g DeviceGroup, name string) int { return strings.Compare(g.Name, name) })
	return found
}

// sameSlice reports whether a and b are the same slice of memory.
func sameSlice[T any](a, b []T) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}
