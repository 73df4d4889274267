package pingstatus

import (
	"slices"
	"strings"

	"github.com/pingnode/pingnode/internal/kuberules"
	"github.com/pingnode/pingnode/internal/text"
	"github.com/pingnode/pingnode/pingstatus/internal/jsontree"
)

// The rules of a devices list, written once for both lists they judge:
// a reply's, whose entries Parse reads from the tree into typed groups
// first (devicesyntax.go), and a patch's built by hand
// ([Options.Check]).
// The rules of each group are in devicerules.go.

// keptDevices is what is done with a device entry whose group is named but
// refused.
func keptDevices(group string) string {
	return "entry dropped, the plugin's current " + group + " devices kept"
}

// groupAt is where a device group stands, as a warning names it: by its
// index in a reply's devices list ("devices[3]"), or, in a patch built by
// hand, by its name ("devices[a100]", under the patch's path; quoted and
// cut when it is no valid name). It builds no string until a warning asks
// for one.
type groupAt struct {
	index int // in a reply's list; -1 for a group of a patch
	name  string
}

func (at groupAt) String() string {
	list := fieldPath(replyLevel, devicesField)
	if at.index >= 0 {
		return indexPath(list, at.index)
	}
	name := at.name
	if kuberules.DeviceGroupNameProblem(name) != "" {
		name = text.Quote(name, quoteBytes)
	}
	return list + "[" + name + "]"
}

// repeats says that the group at at repeats the earlier one of its name,
// at earlier.
func (at groupAt) repeats(name string, earlier groupAt) string {
	if at.index < 0 {
		return "repeats an earlier group of its name"
	}
	return name + " repeats " + earlier.String()
}

// groupList is a list of device groups for the list rules to judge: the
// entries of a reply's devices list, read as far as their names, or the
// groups of a patch built by hand.
type groupList struct {
	fromReply bool
	tree      *jsontree.Tree // a reply's
	entries   []entry        // a reply's
	groups    []DeviceGroup  // a patch's
}

func (l *groupList) len() int {
	if l.fromReply {
		return len(l.entries)
	}
	return len(l.groups)
}

func (l *groupList) path() string { return fieldPath(replyLevel, devicesField) }

// name returns the name of entry i, nil when it has none, and false when
// its reading dropped the entry, with a warning.
func (l *groupList) name(i int) (*string, bool) {
	if l.fromReply {
		return l.entries[i].name, !l.entries[i].dropped
	}
	return &l.groups[i].Name, true
}

func (l *groupList) at(i int) groupAt {
	if l.fromReply {
		return groupAt{index: i}
	}
	return groupAt{index: -1, name: l.groups[i].Name}
}

// group returns entry i, whose name is valid, as a typed group; what its
// reading found, nil for a group of a patch; and whether it read whole
// (what did not is warned about).
func (p *parser) group(l *groupList, i int) (DeviceGroup, *entryRead, bool) {
	if !l.fromReply {
		return l.groups[i], nil, true
	}
	return p.readGroup(l.tree, &l.entries[i], groupAt{index: i})
}

// lastOfEach returns the index of the last entry of each name of l, or
// nil when no name repeats because the names ascend (a patch's, as Parse
// gives them), so that such a list costs no map.
func lastOfEach(l *groupList) map[string]int {
	var previous *string
	for i := range l.len() {
		name, ok := l.name(i)
		if !ok || name == nil {
			continue
		}
		if previous != nil && *name <= *previous {
			last := make(map[string]int, l.len())
			for i := range l.len() {
				if name, ok := l.name(i); ok && name != nil {
					last[*name] = i
				}
			}
			return last
		}
		previous = name
	}
	return nil
}

// devices judges a list of device groups. Over the limit of entries, or
// of devices in all, the whole list is no news. Otherwise the result is
// the whole list (possibly empty), sorted by name, and the names of the
// groups refused, sorted. An entry without a valid name is dropped. Of
// the entries with one name the last counts: the earlier ones are passed
// over, with a warning on each later one. A patch's list that is valid
// and sorted, each name once, is its own result, and costs no allocation.
func (p *parser) devices(l *groupList) (replace bool, out []DeviceGroup, kept []string) {
	list := l.path()
	limit := p.opts.maxDevices()
	if l.len() > limit { // a reply's list is within it: see deviceEntries
		p.warn(ruleDeviceLimit, SubjectDevice, Ignored, list, "%d entries, more than the limit of %d; devices left unchanged", l.len(), limit)
		return false, nil, nil
	}
	last := lastOfEach(l)
	var previous map[string]int
	if last != nil {
		previous = make(map[string]int, len(last))
	}
	// While every entry so far is accepted as it is, the result is the
	// patch's own groups up to same; out is made at the first that is not.
	own := l.groups
	same := 0
	total := int64(0)
	for i := range l.len() {
		name, ok := l.name(i)
		if !ok {
			continue
		}
		at := l.at(i)
		namePath := func() string { return at.String() + fieldPath(deviceLevel, nameField) }
		if name == nil {
			p.warn(ruleDeviceName, SubjectDevice, Refused, namePath(), "missing; entry dropped")
			continue
		}
		if problem := kuberules.DeviceGroupNameProblem(*name); problem != "" {
			p.warn(ruleDeviceName, SubjectDevice, Refused, namePath(), "%s is not a valid device group name: %s; entry dropped", text.Quote(*name, quoteBytes), problem)
			continue
		}
		if last != nil {
			if j, repeated := previous[*name]; repeated {
				p.warn(ruleDeviceName, SubjectDevice, Repaired, at.String(), "%s; the last one is used", at.repeats(*name, l.at(j)))
			}
			previous[*name] = i
			if last[*name] != i {
				continue
			}
		}
		g, d, read := p.group(l, i)
		if !read || !p.groupRules(&g, at, d, true) {
			p.groupRules(&g, at, d, false)
			kept = append(kept, *name)
			continue
		}
		total += int64(g.Count)
		switch {
		case out == nil && own != nil && i == same:
			same++
			continue
		case out == nil:
			out = make([]DeviceGroup, 0, l.len())
			out = append(out, own[:same]...)
		}
		out = append(out, g)
	}
	if total > int64(limit) {
		p.warn(ruleDeviceLimit, SubjectDevice, Ignored, list, "counts add up to %d devices, more than the limit of %d; devices left unchanged", total, limit)
		return false, nil, nil
	}
	byName := func(a, b DeviceGroup) int { return strings.Compare(a.Name, b.Name) }
	switch {
	case out == nil && l.fromReply:
		out = []DeviceGroup{}
	case out == nil && slices.IsSortedFunc(own[:same], byName):
		out = own[:same:same] // never sorted in place, nor appended to: a patch is not changed
	case out == nil:
		out = slices.Clone(own[:same])
		fallthrough
	default:
		slices.SortFunc(out, byName)
	}
	slices.Sort(kept)
	return true, out, kept
}
