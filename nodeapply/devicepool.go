package nodeapply

import (
	"slices"

	"github.com/pingnode/pingnode/internal/kuberules"
	"github.com/pingnode/pingnode/pingstatus"
)

// deviceGroups walks the groups of the pool to publish in name order: the
// reply's groups and those it keeps for a refused entry, merged. Both are
// sorted, each name once in either, as Parse and
// [pingstatus.Options.CheckDevices] give them. It calls yield with the
// group's name and the reply's group, nil for a kept one.
func deviceGroups(patch *pingstatus.NodePatch, yield func(name string, g *pingstatus.DeviceGroup) bool) {
	groups, kept := patch.Devices, patch.KeptDeviceGroups
	for len(groups) > 0 || len(kept) > 0 {
		if len(kept) == 0 || len(groups) > 0 && groups[0].Name < kept[0] {
			if !yield(groups[0].Name, &groups[0]) {
				return
			}
			groups = groups[1:]
			continue
		}
		if !yield(kept[0], nil) {
			return
		}
		kept = kept[1:]
	}
}

// freeCount returns how many devices of group g that no claim holds are
// published, for have, the group's devices in the pool, each once: the
// reply's count less the held devices that the count still includes,
// never below zero. A count read as available still includes the
// devices held for pods the backend does not run yet (Running false); a
// total includes every held device. It is the one count of rule 20, for
// the check and the build alike.
func freeCount(g *pingstatus.DeviceGroup, have []Device, basis pingstatus.Basis) int {
	included := 0
	for i := range have {
		if have[i].Held && (basis == pingstatus.BasisTotal || !have[i].Running) {
			included++
		}
	}
	return max(g.Count-included, 0)
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
	pool := a.ping.Devices
	unchanged := true
	deviceGroups(a.patch, func(name string, g *pingstatus.DeviceGroup) bool {
		// The pool's devices of this group come next, in index order.
		end, last := 0, -1
		for ; end < len(pool); end++ {
			group, index, ok := kuberules.SplitDeviceName(pool[end].Name)
			if !ok || group != name {
				break
			}
			if index <= last {
				unchanged = false
				return false
			}
			last = index
		}
		segment := pool[:end]
		pool = pool[end:]
		if g == nil {
			return true // kept as it is
		}
		free := freeCount(g, segment, a.patch.Basis)
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

// publishDevices returns the pool the ping asks for, sorted by group and
// index, and the changes from the input's pool.
func (a *checker) publishDevices() ([]Device, []Change) {
	byGroup := make(map[string][]Device)
	for _, d := range a.ping.Devices {
		if group, _, ok := kuberules.SplitDeviceName(d.Name); ok {
			byGroup[group] = append(byGroup[group], d)
		}
	}
	var out []Device
	deviceGroups(a.patch, func(name string, g *pingstatus.DeviceGroup) bool {
		have := byGroup[name]
		slices.SortStableFunc(have, CompareDevices)
		have = slices.CompactFunc(have, func(x, y Device) bool { return x.Name == y.Name }) // a name the provider gave twice
		if g == nil {
			out = append(out, have...)
			return true
		}
		free := freeCount(g, have, a.patch.Basis)
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
				d.Attributes, d.Capacity, d.Taints = g.Attributes, g.Capacity, g.Taints
				out = append(out, d)
				continue
			}
			if free == 0 || index > kuberules.MaxDeviceIndex { // no name is left for more
				free = 0
				if k < len(have) {
					index = indexOf(have[k].Name) // on to the next one the pool has
				}
				continue
			}
			free--
			out = append(out, Device{Name: kuberules.DeviceName(name, index), Attributes: g.Attributes, Capacity: g.Capacity, Taints: g.Taints})
			index++
		}
		return true
	})
	return out, diffDevices(a.ping.Devices, out)
}

// indexOf returns the index of a device name that SplitDeviceName
// accepts.
func indexOf(name string) int {
	_, index, _ := kuberules.SplitDeviceName(name)
	return index
}

// diffDevices lists the devices added to, removed from and changed in the
// pool, by name. Whether a claim holds a device, or its pod runs, is not
// published, and is no change.
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
		case !sameDevice(old, &pingstatus.DeviceGroup{Attributes: o.Attributes, Capacity: o.Capacity, Taints: o.Taints}):
			changes = append(changes, Change{Op: Modified, Subject: pingstatus.SubjectDevice, Path: path, Old: old.Description(), New: o.Description()})
		}
		delete(had, o.Name)
	}
	for name, d := range had {
		changes = append(changes, Change{Op: Removed, Subject: pingstatus.SubjectDevice, Path: "devices[" + name + "]", Old: d.Description()})
	}
	return changes
}
