package pingstatus

import (
	"math"
	"strconv"

	"github.com/pingnode/pingnode/internal/kuberules"
	"github.com/pingnode/pingnode/pingstatus/internal/jsontree"
)

// The keys of a reply, judged on its tree before the rules read it: keys
// given more than once (the last value counts), and unknown keys that
// look like known fields (rule key-near-miss, nearmiss.go). They are judged along
// the fields Parse reads, in the order of the text, and only in the
// values that Parse reads: the last of a repeated key, a list or an
// object within its limit.

// where is the JSON path of a field that Parse reads, as indexes into
// levelFields, so that judging keys builds no string unless it finds
// something; only an entry of an object whose keys are its entries' own
// (the labels, the hugepages, a device's attributes and capacity) carries
// its key.
type where struct {
	top, sub, field int8  // field of the reply or part, of resources, of a list entry; -1 for none
	inner           int8  // field of a device's attribute, capacity or taint; -1 for none
	part            int32 // of an entry in the parts list, or -1: then top is the part's field
	index           int32 // of an entry in a list, or -1
	item            int32 // of an entry in a device's taints, or -1
	keyed           bool  // at the entry key of such an object, or under it
	key             string
	partEntry       int32 // the tree's node of the entry in the parts list, or -1
}

var nowhere = where{top: -1, sub: -1, field: -1, inner: -1, part: -1, index: -1, item: -1, partEntry: -1}

func (w where) String() string {
	if w.part < 0 {
		return w.within(replyLevel)
	}
	entry := indexPath(levelFields[replyLevel][nodesField], int(w.part))
	if w.top < 0 {
		return entry
	}
	return entry + "." + w.within(partLevel)
}

// within returns the path of w within the object at level lv, the reply
// or a part.
func (w where) within(lv level) string {
	switch {
	case w.keyed && int(w.top) == labelsField:
		return labelPath(fieldPath(replyLevel, labelsField), w.key)
	case w.keyed && int(w.sub) == hugepagesField:
		return hugepagesPath(w.key)
	case w.keyed: // a device's attribute or capacity
		s := deviceKeyPath(indexPath(fieldPath(replyLevel, devicesField), int(w.index)), int(w.field), w.key)
		if w.inner >= 0 {
			lv := attributeLevel
			if int(w.field) == capacityField {
				lv = capacityLevel
			}
			s += fieldPath(lv, int(w.inner))
		}
		return s
	}
	s := levelFields[lv][w.top]
	entry := taintLevel
	switch {
	case w.sub >= 0:
		s += "." + levelFields[resourcesLevel][w.sub]
		entry = acceleratorLevel
	case int(w.top) == devicesField:
		entry = deviceLevel
	}
	if w.index >= 0 {
		s = indexPath(s, int(w.index))
	}
	if w.field >= 0 {
		s += "." + levelFields[entry][w.field]
	}
	if w.item >= 0 { // a device's taint
		s = indexPath(s, int(w.item))
		if w.inner >= 0 {
			s += fieldPath(deviceTaintLevel, int(w.inner))
		}
	}
	return s
}

// subject returns what part of the node the field at w is about.
func (w where) subject() Subject {
	if w.part >= 0 && int(w.top) == partNameField {
		return SubjectPart
	}
	switch int(w.top) {
	case resourcesField:
		return SubjectResource
	case taintsField:
		return SubjectTaint
	case labelsField:
		return SubjectLabel
	case devicesField:
		return SubjectDevice
	case nodesField:
		return SubjectPart
	}
	return SubjectReply
}

// child returns the path of the k-th field of an object at level lv, at
// path at.
func (at where) child(lv level, k int) where {
	switch lv {
	case replyLevel, partLevel:
		at.top = int8(k)
	case resourcesLevel:
		at.sub = int8(k)
	case attributeLevel, capacityLevel, deviceTaintLevel:
		at.inner = int8(k)
	default:
		at.field = int8(k)
	}
	return at
}

// A keyJudge judges the keys of a tree: the warnings about repeated
// keys, then those about near misses, in the order of the text.
type keyJudge struct {
	t    *jsontree.Tree
	opts Options
	// shared says that the reply lists parts, so that its own taints and
	// labels are every part's, within MaxShared.
	shared     bool
	repeats    []Warning
	misses     []Warning // the first maxNearMisses
	moreMisses int       // how many more
}

// keys judges the keys of the reply t and adds the warnings.
func (p *parser) keys(t *jsontree.Tree) {
	j := keyJudge{t: t, opts: p.opts, shared: t.Present(memberFields(t, 0, replyLevel)[nodesField])}
	j.object(0, nowhere, replyLevel)
	p.warnings = append(p.warnings, j.repeats...)
	p.warnings = append(p.warnings, j.misses...)
	if j.moreMisses > 0 {
		p.warn(ruleKeyNearMiss, SubjectReply, Ignored, "", "%d more unknown fields look like misspelled or misplaced known fields; ignored", j.moreMisses)
	}
}

// object judges the keys of the object obj at level lv, at path at: a
// field given more than once is warned of where it is met the second
// time, with how many times, and only its last value is judged further.
func (j *keyJudge) object(obj int, at where, lv level) {
	t := j.t
	var count [maxLevelFields]int
	var last [maxLevelFields]int
	for m := t.First(obj); m != none; m = t.Next(m) {
		if k := memberField(t, m, lv); k >= 0 {
			count[k]++
			last[k] = m
		}
	}
	var seen [maxLevelFields]int
	for m := t.First(obj); m != none; m = t.Next(m) {
		k := memberField(t, m, lv)
		if k < 0 {
			j.unknownKey(m, at, lv)
			continue
		}
		child := at.child(lv, k)
		if seen[k]++; seen[k] == 2 {
			j.repeats = append(j.repeats, j.repeated(child, count[k]))
		}
		if m == last[k] {
			j.value(m, child, lv, k)
		}
	}
}

// repeated returns the warning that the key of the field at was given n
// times.
func (j *keyJudge) repeated(at where, n int) Warning {
	return Warning{Path: at.String(), Message: "given " + strconv.Itoa(n) + " times; the last one is used", Subject: at.subject(), Action: Repaired, Rule: ruleKeyRepeated, Part: treePartName(j.t, at.partEntry)}
}

// value judges the keys in v, the value of the k-th field of an object at
// level lv, as the field's shape says it nests (levelShapes), within the
// field's limit.
func (j *keyJudge) value(v int, at where, lv level, k int) {
	sh, c := levelShapes[lv][k], j.t.Kind(v)
	switch {
	case sh.form == objectForm && c == jsontree.Object:
		j.object(v, at, sh.level)
	case sh.form == listForm && c == jsontree.Array:
		j.list(v, at, sh.level, j.limit(lv, k))
	case sh.form == keyedForm && c == jsontree.Object:
		j.keyed(v, at, j.limit(lv, k), sh.level)
	}
}

// limit returns the most entries the k-th field of an object at level lv
// may have, a list's or a map's, for its keys to be judged: its rule's
// limit, past which Parse counts the field and does not read it. For the
// reply's taints and labels beside its parts, MaxShared too.
func (j *keyJudge) limit(lv level, k int) int {
	node := lv == replyLevel || lv == partLevel // the fields of a node, the reply's or a part's
	limit := math.MaxInt
	switch {
	case node && k == taintsField:
		limit = j.opts.maxTaints()
	case node && k == labelsField:
		limit = j.opts.maxLabels()
	case node && k == devicesField:
		limit = j.opts.maxDevices()
	case lv == replyLevel && k == nodesField:
		limit = j.opts.maxParts()
	case lv == resourcesLevel && k == hugepagesField:
		limit = maxHugepageSizes
	case lv == resourcesLevel && k == acceleratorsField:
		limit = j.opts.maxAccelerators()
	case lv == deviceLevel && (k == attributesField || k == capacityField):
		limit = kuberules.MaxDeviceAttributesAndCapacities
	case lv == deviceLevel && k == deviceTaintsField:
		limit = kuberules.MaxDeviceTaints
	}
	if lv == replyLevel && j.shared && (k == taintsField || k == labelsField) {
		return min(limit, MaxShared)
	}
	return limit
}

// list judges the keys of the entries of the list v, objects at level lv,
// unless it has more than limit.
func (j *keyJudge) list(v int, at where, lv level, limit int) {
	t := j.t
	if t.Len(v) > limit {
		return
	}
	i := 0
	for e := t.First(v); e != none; e, i = t.Next(e), i+1 {
		if t.Kind(e) != jsontree.Object {
			continue
		}
		entry := at
		switch index := int32(min(i, math.MaxInt32)); {
		case lv == partLevel:
			entry.part, entry.top, entry.partEntry = index, -1, int32(e)
		case at.index < 0:
			entry.index = index
		default:
			entry.item = index
		}
		j.object(e, entry, lv)
	}
}

// keyed judges the keys of the object v, whose keys are its entries' own
// (the labels, the hugepages by size, a device's attributes and
// capacity), unless it has more than limit entries: a key given more than
// once is warned of after the entries, in the order of the keys first
// met, with how many times. Each entry's last value is an object at level
// lv, whose keys are judged, or, for lv < 0, a value they are not.
func (j *keyJudge) keyed(v int, at where, limit int, lv level) {
	t := j.t
	if n := t.Len(v); n > limit || n < 2 && lv < 0 {
		return
	}
	var last map[string]int
	var order []string // the keys met, in order
	count := make(map[string]int)
	for e := t.First(v); e != none; e = t.Next(e) {
		key := jsontree.Unquote(t.Key(e))
		if count[key]++; count[key] == 1 {
			order = append(order, key)
		} else if last == nil {
			last = make(map[string]int)
		}
		if last != nil {
			last[key] = e
		}
	}
	if lv >= 0 {
		for e := t.First(v); e != none; e = t.Next(e) {
			if t.Kind(e) != jsontree.Object {
				continue
			}
			key := jsontree.Unquote(t.Key(e))
			if l, repeated := last[key]; repeated && l != e {
				continue
			}
			entry := at
			entry.keyed, entry.key = true, key
			j.object(e, entry, lv)
		}
	}
	for _, key := range order {
		if c := count[key]; c > 1 {
			entry := at
			entry.keyed, entry.key = true, key
			j.repeats = append(j.repeats, j.repeated(entry, c))
		}
	}
}

// treePartName returns the name of the part e, an entry of the parts list,
// or "" when it has no valid one, or e is -1. A warning asks it: a part
// that warns of nothing costs no name.
func treePartName(t *jsontree.Tree, e int32) string {
	if e < 0 {
		return ""
	}
	n := memberFields(t, int(e), partLevel)[partNameField]
	if t.Kind(n) != jsontree.String {
		return ""
	}
	if name := t.Str(n); kuberules.PartNameProblem(name) == "" {
		return name
	}
	return ""
}
