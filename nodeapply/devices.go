package nodeapply

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/pingnode/pingnode/internal/kuberules"
	"github.com/pingnode/pingnode/pingstatus"
)

// Device is one device of the node's pool, the devices a provider
// publishes for its node (as Dynamic Resource Allocation devices in
// ResourceSlices, by the nested module nodeapply/dra). Its name is its
// group's and an index, group-index (see [pingstatus.DeviceGroup]).
type Device struct {
	// Name is the device's name in its pool: "a100-3".
	Name string `json:"name"`
	// Held reports whether a claim's allocation names the device: a pod
	// was given it, or will be.
	Held bool `json:"held,omitempty"`
	// Running reports, for a held device, whether the backend already
	// runs a pod that the claim is reserved for, by [RunsOnBackend]: the
	// backend's free count then no longer includes the device. A held
	// device of a pod the backend has not started yet is still in the
	// free count of a reply read as available (rule 20). Running without
	// Held means nothing.
	Running bool `json:"running,omitempty"`
	// Attributes and Capacity are what the device is, as its group says.
	// Read-only: the devices of a group share the group's maps.
	Attributes map[string]pingstatus.DeviceAttribute `json:"attributes,omitempty"`
	Capacity   map[string]resource.Quantity          `json:"capacity,omitempty"`
	// Taints are the device's taints, as its group says. Read-only, as
	// Attributes.
	Taints []pingstatus.DeviceTaint `json:"taints,omitempty"`
}

// CompareDevices orders devices as [Result.Devices] keeps them: by group,
// then index; it returns a negative number, zero or a positive number as a
// comes before b, with b, or after it. A provider that reads its pool back
// from the API server sorts it so (slices.SortFunc(pool, CompareDevices)),
// for a steady ping to find it as it left it and allocate nothing.
func CompareDevices(a, b Device) int {
	ga, ia, _ := kuberules.SplitDeviceName(a.Name)
	gb, ib, _ := kuberules.SplitDeviceName(b.Name)
	if c := strings.Compare(ga, gb); c != 0 {
		return c
	}
	if ia != ib {
		return ia - ib
	}
	return strings.Compare(a.Name, b.Name)
}

// deviceGroups walks the groups of the pool to publish in name order: the
// reply's groups and those it keeps for a refused entry, merged. It calls
// yield with the group's name and the reply's group, nil for a kept one.
func deviceGroups(patch *pingstatus.NodePatch, yield func(name string, g *pingstatus.DeviceGroup) bool) {
	groups, kept := patch.Devices, patch.KeptDeviceGroups
	for len(groups) > 0 || len(kept) > 0 {
		switch {
		case len(kept) == 0 || len(groups) > 0 && groups[0].Name < kept[0]:
			if !yield(groups[0].Name, &groups[0]) {
				return
			}
			groups = groups[1:]
		case len(groups) > 0 && groups[0].Name == kept[0]: // a hand-built patch: the group counts
			kept = kept[1:]
		default:
			if !yield(kept[0], nil) {
				return
			}
			kept = kept[1:]
		}
	}
}

// groupsInOrder reports whether the patch's groups and kept groups are
// sorted by name, each once, as Parse gives them.
func groupsInOrder(patch *pingstatus.NodePatch) bool {
	for i := 1; i < len(patch.Devices); i++ {
		if patch.Devices[i-1].Name >= patch.Devices[i].Name {
			return false
		}
	}
	for i := 1; i < len(patch.KeptDeviceGroups); i++ {
		if patch.KeptDeviceGroups[i-1] >= patch.KeptDeviceGroups[i] {
			return false
		}
	}
	return true
}

// inOrder returns the patch with its groups sorted by name, each once:
// of a name given twice, the last group counts, as Parse reads a reply.
// It is patch itself when they are already.
func inOrder(patch *pingstatus.NodePatch) *pingstatus.NodePatch {
	if groupsInOrder(patch) {
		return patch
	}
	sorted := *patch
	sorted.Devices = slices.Clone(patch.Devices)
	slices.Reverse(sorted.Devices) // so that the stable sort and compact keep the last
	slices.SortStableFunc(sorted.Devices, func(x, y pingstatus.DeviceGroup) int { return strings.Compare(x.Name, y.Name) })
	sorted.Devices = slices.CompactFunc(sorted.Devices, func(x, y pingstatus.DeviceGroup) bool { return x.Name == y.Name })
	sorted.KeptDeviceGroups = slices.Compact(slices.Sorted(slices.Values(patch.KeptDeviceGroups)))
	return &sorted
}

// freeCount returns how many devices of g no claim holds are published:
// the count the reply says, or, for a total, the count less those held.
func freeCount(g *pingstatus.DeviceGroup, held int, basis pingstatus.Basis) int {
	n := g.Count
	if basis == pingstatus.BasisTotal {
		n -= held
	}
	return max(n, 0)
}

// devicesUnchanged reports, without allocating, whether the pool is as
// the ping asks already: the pool in order (by group, then index), and
// for each listed group its held devices and the free ones with the
// lowest indices, each as the group describes it. False means "maybe":
// publishDevices decides.
func (a *checker) devicesUnchanged() bool {
	if !a.patch.ReplaceDevices {
		return true
	}
	if !groupsInOrder(a.patch) {
		return false // a hand-built patch: publishDevices sorts it
	}
	pool := a.ping.Devices
	unchanged := true
	deviceGroups(a.patch, func(name string, g *pingstatus.DeviceGroup) bool {
		// The pool's devices of this group come next, in index order.
		end := 0
		held := 0
		last := -1
		for end < len(pool) {
			group, index, ok := kuberules.SplitDeviceName(pool[end].Name)
			if !ok || group != name {
				break
			}
			if index <= last {
				unchanged = false
				return false
			}
			last = index
			if pool[end].Held {
				held++
			}
			end++
		}
		segment := pool[:end]
		pool = pool[end:]
		if g == nil {
			return true // kept as it is
		}
		if deviceGroupProblem(g) != "" {
			unchanged = false // publishDevices refuses it, with a warning
			return false
		}
		free := freeCount(g, held, a.patch.Basis)
		next := 0 // the lowest index not yet accounted for
		for i := range segment {
			d := &segment[i]
			_, index, _ := kuberules.SplitDeviceName(d.Name)
			if index > next && free > 0 { // a lower free index is not published
				unchanged = false
				return false
			}
			if !d.Held {
				if free == 0 {
					unchanged = false
					return false
				}
				free--
			}
			if !sameDevice(d, g) {
				unchanged = false
				return false
			}
			next = index + 1
		}
		unchanged = free == 0
		return unchanged
	})
	return unchanged && len(pool) == 0
}

// EqualDevices reports whether two pools list the same devices in the
// same order, each described the same (quantities by value); whether a
// claim holds one is not published, and does not count.
func EqualDevices(a, b []Device) bool {
	return slices.EqualFunc(a, b, func(x, y Device) bool {
		return x.Name == y.Name && sameDevice(&x, &pingstatus.DeviceGroup{Attributes: y.Attributes, Capacity: y.Capacity})
	})
}

// sameDevice reports whether d is as g describes it.
func sameDevice(d *Device, g *pingstatus.DeviceGroup) bool {
	return maps.EqualFunc(d.Attributes, g.Attributes, sameAttribute) &&
		maps.EqualFunc(d.Capacity, g.Capacity, func(x, y resource.Quantity) bool { return x.Cmp(y) == 0 })
}

func sameAttribute(x, y pingstatus.DeviceAttribute) bool {
	return samePointer(x.IntValue, y.IntValue) && samePointer(x.BoolValue, y.BoolValue) &&
		samePointer(x.StringValue, y.StringValue) && samePointer(x.VersionValue, y.VersionValue)
}

func samePointer[T comparable](x, y *T) bool {
	return x == nil && y == nil || x != nil && y != nil && *x == *y
}

// publishDevices returns the pool the ping asks for, sorted by group and
// index, and the changes from the input's pool.
func (a *checker) publishDevices() ([]Device, []Change, []pingstatus.Warning) {
	var warnings []pingstatus.Warning
	byGroup := make(map[string][]Device)
	for _, d := range a.ping.Devices {
		if group, _, ok := kuberules.SplitDeviceName(d.Name); ok {
			byGroup[group] = append(byGroup[group], d)
		}
	}
	var out []Device
	deviceGroups(inOrder(a.patch), func(name string, g *pingstatus.DeviceGroup) bool {
		have := byGroup[name]
		slices.SortStableFunc(have, CompareDevices)
		have = slices.CompactFunc(have, func(x, y Device) bool { return x.Name == y.Name }) // a name the provider gave twice
		if g == nil {
			out = append(out, have...)
			return true
		}
		if p := deviceGroupProblem(g); p != "" {
			warnings = append(warnings, pingstatus.Warning{
				Path: "patch.devices[" + name + "]", Message: p + "; its devices left as they are",
				Subject: pingstatus.SubjectDevice, Action: pingstatus.Refused,
			})
			out = append(out, have...)
			return true
		}
		held := 0
		for _, d := range have {
			if d.Held {
				held++
			}
		}
		free := freeCount(g, held, a.patch.Basis)
		// Ascending indices: a held device is published, and so is a free
		// index while the count lasts, a device already there keeping its
		// entry.
		for index, k := 0, 0; free > 0 || k < len(have); {
			if k < len(have) && indexOf(have[k].Name) == index {
				d := have[k]
				k++
				index++
				if !d.Held && free == 0 {
					continue
				}
				if !d.Held {
					free--
				}
				d.Attributes, d.Capacity = g.Attributes, g.Capacity
				out = append(out, d)
				continue
			}
			if free == 0 || index > kuberules.MaxDeviceIndex {
				free = 0
				if k < len(have) {
					index = indexOf(have[k].Name) // on to the next one the pool has
				}
				continue
			}
			free--
			out = append(out, Device{Name: kuberules.DeviceName(name, index), Attributes: g.Attributes, Capacity: g.Capacity})
			index++
		}
		return true
	})
	changes := diffDevices(a.ping.Devices, out)
	return out, changes, warnings
}

// indexOf returns the index of a device name that SplitDeviceName
// accepts.
func indexOf(name string) int {
	_, index, _ := kuberules.SplitDeviceName(name)
	return index
}

// deviceGroupProblem returns why a hand-built patch's group cannot be
// published, as Parse would refuse it, or "". It does not allocate for a
// valid group.
func deviceGroupProblem(g *pingstatus.DeviceGroup) string {
	if p := kuberules.DeviceGroupNameProblem(g.Name); p != "" {
		return "name " + p
	}
	switch {
	case g.Count < 0:
		return "count " + strconv.Itoa(g.Count) + " is negative"
	case g.Count > kuberules.MaxDeviceIndex+1:
		return "count " + strconv.Itoa(g.Count) + " is more than a device name can index"
	case len(g.Attributes)+len(g.Capacity) > kuberules.MaxDeviceAttributesAndCapacities:
		return "more than " + strconv.Itoa(kuberules.MaxDeviceAttributesAndCapacities) + " attributes and capacities"
	}
	for name, a := range g.Attributes {
		if p := kuberules.DeviceAttributeNameProblem(name); p != "" {
			return "attribute " + strconv.Quote(name) + ": " + p
		}
		if p := attributeProblem(a); p != "" {
			return "attribute " + name + ": " + p
		}
	}
	for name, q := range g.Capacity {
		if p := kuberules.DeviceAttributeNameProblem(name); p != "" {
			return "capacity " + strconv.Quote(name) + ": " + p
		}
		if q.Sign() < 0 {
			return "capacity " + name + " is negative"
		}
	}
	return ""
}

// attributeProblem returns why a is not an attribute's value, or "".
func attributeProblem(a pingstatus.DeviceAttribute) string {
	set := 0
	for _, isSet := range [...]bool{a.IntValue != nil, a.BoolValue != nil, a.StringValue != nil, a.VersionValue != nil} {
		if isSet {
			set++
		}
	}
	switch {
	case set != 1:
		return "must have exactly one of string, int, bool or version"
	case a.StringValue != nil:
		return kuberules.DeviceStringProblem(*a.StringValue)
	case a.VersionValue != nil:
		return kuberules.DeviceVersionProblem(*a.VersionValue)
	}
	return ""
}

// diffDevices lists the devices added to, removed from and changed in the
// pool, by name. Whether a claim holds a device is not published, and is
// no change.
func diffDevices(in, out []Device) []Change {
	had := make(map[string]*Device, len(in))
	for i := range in {
		had[in[i].Name] = &in[i]
	}
	var changes []Change
	for i := range out {
		o := &out[i]
		path := "devices[" + o.Name + "]"
		old, ok := had[o.Name]
		switch {
		case !ok:
			changes = append(changes, Change{Op: Added, Subject: pingstatus.SubjectDevice, Path: path, New: o.Description()})
		case !sameDevice(old, &pingstatus.DeviceGroup{Attributes: o.Attributes, Capacity: o.Capacity}):
			changes = append(changes, Change{Op: Modified, Subject: pingstatus.SubjectDevice, Path: path, Old: old.Description(), New: o.Description()})
		}
		delete(had, o.Name)
	}
	for name, d := range had {
		changes = append(changes, Change{Op: Removed, Subject: pingstatus.SubjectDevice, Path: "devices[" + name + "]", Old: d.Description()})
	}
	return changes
}

// Description says what the device is, as its change does: its
// attributes and capacity, each sorted by name, as name=value, a string
// quoted and a version after a v:
// cudaComputeCapability=v8.0.0, productName="NVIDIA A100-SXM4-80GB", memory=80Gi.
func (d *Device) Description() string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(d.Attributes)) {
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		b.WriteString(k + "=" + attributeText(d.Attributes[k]))
	}
	for _, k := range slices.Sorted(maps.Keys(d.Capacity)) {
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		q := d.Capacity[k]
		b.WriteString(k + "=" + q.String())
	}
	if b.Len() == 0 {
		return "a device"
	}
	return b.String()
}

// attributeText is an attribute's value as text: a string quoted, a
// version with a v.
func attributeText(v pingstatus.DeviceAttribute) string {
	switch {
	case v.IntValue != nil:
		return strconv.FormatInt(*v.IntValue, 10)
	case v.BoolValue != nil:
		return strconv.FormatBool(*v.BoolValue)
	case v.StringValue != nil:
		return strconv.Quote(*v.StringValue)
	case v.VersionValue != nil:
		return "v" + *v.VersionValue
	}
	return "?"
}
