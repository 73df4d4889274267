package devicepool

import (
	"slices"
	"strings"

	"github.com/pingnode/pingnode/internal/kuberules"
	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/pingstatus"
)

// Result is the pool after a ping.
type Result struct {
	// Devices is the pool after the ping: what the provider publishes.
	// When Changes is empty it is the input pool itself, as it was given;
	// otherwise a new list, sorted by group, then index ([Compare]).
	// Treat it as read-only.
	Devices []Device
	// Changes lists the devices added, removed and described anew
	// ([pingstatus.SubjectDevice], path devices[name]), sorted by path.
	// Empty, there is nothing to publish.
	Changes []nodeapply.Change
	// Warnings are what the devices of a reply that pingstatus had not
	// judged had that was refused, as [pingstatus.Options.Check] says,
	// sorted by path; none for a reply that [pingstatus.Parse] gave,
	// whose warnings Parse gives.
	Warnings []pingstatus.Warning
}

// Apply turns the devices of ping's reply into the pool after it, from
// pool, the pool as published now with the devices that claims hold
// marked. It never modifies pool or anything in ping. opts are the
// options the reply was parsed with, which judge a reply that pingstatus
// had not judged. The rules are the package's (see its documentation).
func Apply(pool []Device, ping nodeapply.Ping, opts pingstatus.Options) Result {
	r := Result{Devices: pool}
	ping, warnings := nodeapply.Judge(ping, opts)
	for _, w := range warnings {
		if w.Subject == pingstatus.SubjectDevice {
			r.Warnings = append(r.Warnings, w)
		}
	}
	slices.SortStableFunc(r.Warnings, func(x, y pingstatus.Warning) int { return strings.Compare(x.Path, y.Path) })
	patch := ping.Reply
	if !ping.Reached() || patch == nil || !patch.ReplaceDevices { // no news of the devices, or over the limits: passed over whole (rule pool-judged)
		return r
	}
	view := inOrder(pool)
	out, same := publish(view, patch)
	if same && len(view) == len(pool) && (len(view) == 0 || &view[0] == &pool[0]) {
		return r
	}
	if changes := diff(pool, out); len(changes) > 0 {
		r.Devices, r.Changes = out, changes
	}
	return r
}

// inOrder returns the pool's devices with a valid name, sorted by group
// and index, each name once: pool itself when it is so already, which a
// steady ping finds at no cost, or else a sorted copy (of a name given
// twice, the first).
func inOrder(pool []Device) []Device {
	sorted := true
	for i := range pool {
		if _, _, ok := kuberules.SplitDeviceName(pool[i].Name); !ok || i > 0 && Compare(pool[i-1], pool[i]) >= 0 {
			sorted = false
			break
		}
	}
	if sorted {
		return pool
	}
	view := slices.DeleteFunc(slices.Clone(pool), func(d Device) bool {
		_, _, ok := kuberules.SplitDeviceName(d.Name)
		return !ok
	})
	slices.SortStableFunc(view, Compare)
	return slices.CompactFunc(view, func(x, y Device) bool { return x.Name == y.Name })
}

// publish builds the pool the patch asks for from view, a pool that
// inOrder returned, and reports whether it is view itself: the one
// engine of the rules, for a steady ping and a change alike. It writes
// the pool device by device through an emitter, which copies nothing
// while the devices are the view's, in its order.
func publish(view []Device, patch *pingstatus.NodePatch) ([]Device, bool) {
	e := emitter{in: view}
	rest := view
	deviceGroups(patch, func(name string, g *pingstatus.DeviceGroup) bool {
		var have []Device
		have, rest = groupOf(rest, name)
		if g == nil { // kept as it is
			for i := range have {
				e.emit(have[i])
			}
			return true
		}
		free := freeCount(g, have, patch.Basis)
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
				e.emit(d)
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
			e.emit(Device{Name: kuberules.DeviceName(name, index), Attributes: g.Attributes, Capacity: g.Capacity, Taints: g.Taints})
			index++
		}
		return true
	})
	return e.result()
}

// An emitter collects the devices publish writes. While they are the
// input's, in its order and described the same, it only counts them; at
// the first that is not, it copies the input's so far and appends from
// there on.
type emitter struct {
	in     []Device
	n      int // how many of in were written, when not copying
	out    []Device
	copied bool
	// alike are the descriptions of an input's device and a written one
	// last found the same: the devices of a group share their group's,
	// so the next of them is compared by its name alone.
	alike [2]description
	known bool
}

func (e *emitter) emit(d Device) {
	if !e.copied && e.n < len(e.in) && e.same(&e.in[e.n], &d) {
		e.n++
		return
	}
	if !e.copied {
		e.out, e.copied = slices.Clone(e.in[:e.n]), true
	}
	e.out = append(e.out, d)
}

// same reports whether in is published as d is, as [same] does, and
// remembers their descriptions when it is.
func (e *emitter) same(in, d *Device) bool {
	if in.Name != d.Name {
		return false
	}
	pair := [2]description{describe(in), describe(d)}
	if e.known && pair == e.alike {
		return true
	}
	if !sameDescription(in, d) {
		return false
	}
	e.alike, e.known = pair, true
	return true
}

// result returns what was written, and whether it is the input itself.
func (e *emitter) result() ([]Device, bool) {
	if !e.copied {
		return slices.Clip(e.in[:e.n]), e.n == len(e.in) // a shorter pool shares nothing it may append to
	}
	return e.out, false
}

// deviceGroups walks the groups of the pool to publish in name order: the
// reply's groups and those it keeps for a refused entry, merged. Both are
// sorted, each name once in either, as Parse and
// [pingstatus.Options.Check] give them. It calls yield with the
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

// groupOf splits a sorted pool at the devices of group name: those of the
// groups before it (which no longer are listed) are passed over; have are
// name's, and rest the ones after.
func groupOf(pool []Device, name string) (have, rest []Device) {
	start := 0
	for start < len(pool) && groupName(pool[start].Name) < name {
		start++
	}
	end := start
	for end < len(pool) && groupName(pool[end].Name) == name {
		end++
	}
	return pool[start:end], pool[end:]
}

func groupName(device string) string {
	group, _, _ := kuberules.SplitDeviceName(device)
	return group
}

// freeCount returns how many devices of group g that no claim holds are
// published, for have, the group's devices in the pool, each once: the
// reply's count less the held devices that the count still includes,
// never below zero. A count read as available still includes the
// devices held for pods the backend does not run yet (Running false); a
// total includes every held device (rule pool-held).
func freeCount(g *pingstatus.DeviceGroup, have []Device, basis pingstatus.Basis) int {
	included := 0
	for i := range have {
		if have[i].Held && (basis == pingstatus.BasisTotal || !have[i].Running) {
			included++
		}
	}
	return max(g.Count-included, 0)
}

// indexOf returns the index of a device name that SplitDeviceName
// accepts.
func indexOf(name string) int {
	_, index, _ := kuberules.SplitDeviceName(name)
	return index
}

// diff lists the devices added to, removed from and changed in the pool,
// by name, sorted by path. Whether a claim holds a device, or its pod
// runs, is not published, and is no change.
func diff(in, out []Device) []nodeapply.Change {
	had := make(map[string]*Device, len(in))
	for i := range in {
		if _, twice := had[in[i].Name]; !twice { // of a name given twice, the first (rule pool-order)
			had[in[i].Name] = &in[i]
		}
	}
	var changes []nodeapply.Change
	for i := range out {
		o := &out[i]
		path := "devices[" + o.Name + "]"
		old, ok := had[o.Name]
		switch {
		case !ok:
			changes = append(changes, nodeapply.Change{Op: nodeapply.Added, Subject: pingstatus.SubjectDevice, Path: path, New: o.Description()})
		case !same(old, o):
			changes = append(changes, nodeapply.Change{Op: nodeapply.Modified, Subject: pingstatus.SubjectDevice, Path: path, Old: old.Description(), New: o.Description()})
		}
		delete(had, o.Name)
	}
	for name, d := range had {
		changes = append(changes, nodeapply.Change{Op: nodeapply.Removed, Subject: pingstatus.SubjectDevice, Path: "devices[" + name + "]", Old: d.Description()})
	}
	slices.SortFunc(changes, func(x, y nodeapply.Change) int { return strings.Compare(x.Path, y.Path) })
	return changes
}
