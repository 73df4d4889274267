package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/pingnode/pingnode/internal/kuberules"
	"github.com/pingnode/pingnode/nodeapply/devicepool"
	"github.com/pingnode/pingnode/pingstatus"
)

// driverPlaceholder stands for the driver in the names CEL reads when no
// -dra-driver is given: a short attribute name is read in the driver's
// domain, and no driver name has angle brackets.
const driverPlaceholder = "<driver>"

// maxDriverName is the longest driver name (resource.k8s.io/v1's
// DriverNameMaxLength; the library's floor, k8s.io/api v0.29, has no
// resource.k8s.io/v1).
const maxDriverName = 63

// driverProblem returns why name is not a driver name, as the provider's
// -dra-driver checks it, or "".
func driverProblem(name string) string {
	problems := validation.IsDNS1123Subdomain(name)
	if len(name) > maxDriverName {
		problems = append(problems, fmt.Sprintf("must be no more than %d characters", maxDriverName))
	}
	return strings.Join(problems, "; ")
}

// celName is how a CEL expression reads the attribute or capacity name of
// a device published by driver (field is "attributes" or "capacity"): a
// name with a domain in its own domain, a short one in the driver's:
// device.attributes['gpu.nvidia.com'].productName.
func celName(field, driver, name string) string {
	domain, id, ok := strings.Cut(name, "/")
	if !ok {
		domain, id = driver, name
	}
	return "device." + field + "['" + domain + "']." + id
}

// celValue is an attribute's value as a CEL expression compares it: a
// string quoted, a version as semver("8.0.0").
func celValue(v pingstatus.DeviceAttribute) string {
	switch {
	case v.IntValue != nil:
		return strconv.FormatInt(*v.IntValue, 10)
	case v.BoolValue != nil:
		return strconv.FormatBool(*v.BoolValue)
	case v.StringValue != nil:
		return strconv.Quote(*v.StringValue)
	case v.VersionValue != nil:
		return "semver(" + strconv.Quote(*v.VersionValue) + ")"
	}
	return "?"
}

// taintEffects say what a device taint does.
var taintEffects = map[pingstatus.DeviceTaintEffect]string{
	pingstatus.DeviceTaintNone:       "for people and dashboards: changes nothing",
	pingstatus.DeviceTaintNoSchedule: "not given to a claim that does not tolerate it",
	pingstatus.DeviceTaintNoExecute:  "not given to a claim that does not tolerate it, and the pods using them are evicted unless their claims tolerate it",
}

// describe returns the lines that say what d is, as a claim's CEL reads
// it: its attributes, then its capacity, each sorted, then its taints in
// the group's order, each with what it does.
func describe(d *devicepool.Device, driver string) []string {
	var attributes, capacity, taints []string
	for name, v := range d.Attributes {
		attributes = append(attributes, celName("attributes", driver, name)+" = "+celValue(v))
	}
	for name, q := range d.Capacity {
		capacity = append(capacity, celName("capacity", driver, name)+" = "+q.String())
	}
	for _, t := range d.Taints {
		taint := t.Key
		if t.Value != "" {
			taint += "=" + t.Value
		}
		taints = append(taints, "taint "+taint+":"+string(t.Effect)+" ("+taintEffects[t.Effect]+")")
	}
	slices.Sort(attributes)
	slices.Sort(capacity)
	return slices.Concat(attributes, capacity, taints)
}

// deviceGroup is one group of the devices section: the devices published
// for it, in runs that are described alike, what the ping changed of
// them, and what the reply said of the group.
type deviceGroup struct {
	name                    string
	runs                    [][]devicepool.Device
	added, changed, removed []string
	listed                  bool // the reply lists the group, and it was taken
	refused                 bool // the reply lists the group, and it was refused
}

// groupsOf sorts the pool before and after a ping, and the groups the
// patch lists, into the groups of the devices section: those with
// devices published, then those without, each in name order.
func groupsOf(patch *pingstatus.NodePatch, before, after []devicepool.Device, driver string) []*deviceGroup {
	byName := map[string]*deviceGroup{}
	group := func(name string) *deviceGroup {
		if g, ok := byName[name]; ok {
			return g
		}
		g := &deviceGroup{name: name}
		byName[name] = g
		return g
	}
	for _, g := range patch.Devices {
		group(g.Name).listed = true
	}
	for _, name := range patch.KeptDeviceGroups {
		group(name).refused = true
	}
	had := make(map[string]int, len(before))
	for i := range before {
		had[before[i].Name] = i
	}
	var last []string // the lines of the run being built
	for i := range after {
		d := &after[i]
		name, _, _ := kuberules.SplitDeviceName(d.Name)
		g := group(name)
		lines := describe(d, driver)
		if n := len(g.runs); n > 0 && slices.Equal(lines, last) {
			g.runs[n-1] = append(g.runs[n-1], *d)
		} else {
			g.runs = append(g.runs, []devicepool.Device{*d})
		}
		last = lines
		switch j, ok := had[d.Name]; {
		case !ok:
			g.added = append(g.added, d.Name)
		case !devicepool.Equal(before[j:j+1], after[i:i+1]):
			g.changed = append(g.changed, d.Name)
		}
		delete(had, d.Name)
	}
	for i := range before {
		if _, gone := had[before[i].Name]; gone {
			name, _, _ := kuberules.SplitDeviceName(before[i].Name)
			g := group(name)
			g.removed = append(g.removed, before[i].Name)
		}
	}
	groups := slices.Collect(maps.Values(byName))
	slices.SortFunc(groups, func(a, b *deviceGroup) int {
		if (len(a.runs) == 0) != (len(b.runs) == 0) {
			return len(b.runs) - len(a.runs) // those with devices first
		}
		return strings.Compare(a.name, b.name)
	})
	return groups
}

// deviceLines are the lines of the devices section after its heading: for
// each group, a line for each run of devices described alike (their
// names, how many, what the ping did to them) followed by what they are,
// or a line that says why the group has no devices.
func deviceLines(patch *pingstatus.NodePatch, before, after []devicepool.Device, driver string) []string {
	var out []string
	for _, g := range groupsOf(patch, before, after, driver) {
		published := 0
		for _, run := range g.runs {
			published += len(run)
		}
		if published == 0 {
			why := "no devices"
			switch {
			case g.refused:
				why = "refused (see warnings); nothing published for it before, so no " + g.name + " devices"
			case g.listed && patch.Basis == pingstatus.BasisTotal:
				why = "no devices (count 0: the backend gives the node none)"
			case g.listed:
				why = "no devices (count 0: none is free on the backend now)"
			case len(g.removed) > 0:
				why = "no longer in the reply"
			}
			out = append(out, "  "+g.name+": "+why+removedText(g, true))
			continue
		}
		for k, run := range g.runs {
			names := make([]string, len(run))
			for i := range run {
				names[i] = run[i].Name
			}
			line := "  " + nameList(names) + ": " + countText(len(run))
			if g.refused {
				line += ", kept as published before: the reply's " + g.name + " was refused (see warnings)"
			}
			line += changeText("added", g.added, names) + changeText("changed", g.changed, names)
			if k == len(g.runs)-1 {
				line += removedText(g, false)
			}
			out = append(out, line)
			for _, l := range describe(&run[0], driver) {
				out = append(out, "    "+l)
			}
		}
	}
	return out
}

// countText is "1 device" or "n devices".
func countText(n int) string {
	if n == 1 {
		return "1 device"
	}
	return strconv.Itoa(n) + " devices"
}

// changeText says which of the run's devices (names) the ping did what
// to, of those in changed: "" for none, ", all added" for all of them
// (", added" for the one).
func changeText(what string, changed, names []string) string {
	var these []string
	for _, n := range names {
		if slices.Contains(changed, n) {
			these = append(these, n)
		}
	}
	switch {
	case len(these) == 0:
		return ""
	case len(names) == 1:
		return ", " + what
	case len(these) == len(names):
		return ", all " + what
	}
	return ", " + what + " " + nameList(these)
}

// removedText says which of the group's devices the ping removed, "" for
// none; alone, for a group with no devices left, it names them all.
func removedText(g *deviceGroup, alone bool) string {
	switch {
	case len(g.removed) == 0:
		return ""
	case alone:
		return "; " + nameList(g.removed) + " removed"
	}
	return ", removed " + nameList(g.removed)
}

// nameList writes device names of one group, sorted by index, with a run
// of consecutive indices as its first and last: a100-0 ... a100-5, a100-9.
func nameList(names []string) string {
	sorted := slices.Clone(names)
	slices.SortFunc(sorted, func(a, b string) int {
		return devicepool.Compare(devicepool.Device{Name: a}, devicepool.Device{Name: b})
	})
	var parts []string
	for i := 0; i < len(sorted); {
		j := i + 1
		for j < len(sorted) && indexOf(sorted[j]) == indexOf(sorted[j-1])+1 {
			j++
		}
		switch j - i {
		case 1:
			parts = append(parts, sorted[i])
		case 2:
			parts = append(parts, sorted[i], sorted[i+1])
		default:
			parts = append(parts, sorted[i]+" ... "+sorted[j-1])
		}
		i = j
	}
	return strings.Join(parts, ", ")
}

// indexOf is the index of a device name, -1 for a name no group gives.
func indexOf(name string) int {
	if _, index, ok := kuberules.SplitDeviceName(name); ok {
		return index
	}
	return -1
}

// devicesHeading is the devices section's first line: how many devices
// are published, how many the ping changed, and for which driver.
func devicesHeading(pool, changed int, driver string) string {
	as := "as driver " + driver
	if driver == driverPlaceholder {
		as += " (give -dra-driver to name it)"
	}
	return fmt.Sprintf("devices (%d, %d changed: what the provider publishes, %s)", pool, changed, as)
}

// reportDevices writes the devices section: what the provider publishes
// for the node after the ping, which was before (before: the pool the
// provider had).
func reportDevices(w io.Writer, patch *pingstatus.NodePatch, before []devicepool.Device, pool devicepool.Result, driver string) {
	fmt.Fprintln(w, devicesHeading(len(pool.Devices), len(pool.Changes), driver))
	lines := deviceLines(patch, before, pool.Devices, driver)
	if len(lines) == 0 {
		lines = []string{"  none"}
	}
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
}
