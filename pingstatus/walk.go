package pingstatus

import (
	"math"

	"github.com/pingnode/pingnode/internal/kuberules"
)

// A walker reads a reply body along the fields that Parse reads, for what
// the decoder cannot tell: keys given more than once (encoding/json keeps
// the last value of a field, but merges repeated objects), and which of
// those fields held a non-finite number. The body is JSON but for those
// numbers; the walker never fails on other input, it only stops early.
type walker struct {
	b          []byte
	i          int
	opts       Options
	findings   []finding
	misses     []miss // unknown keys that look like known fields, in the order met: the first maxNearMisses
	moreMisses []int  // where the others are
	overLimit  bool   // a list was over its limit
}

// A finding is a key given count times, or a field that held token.
type finding struct {
	at    where
	count int
	token string
}

// path returns the path of what f is about, as a warning names it.
func (f finding) path() string { return f.at.String() }

// where is the JSON path of a field that Parse reads, as indexes into
// levelFields, so that a walk builds no string unless it finds something;
// only an entry of an object whose keys are its entries' own (the labels,
// the hugepages, a device's attributes and capacity) carries its key.
type where struct {
	top, sub, field int8  // field of the reply, of resources, of a list entry; -1 for none
	inner           int8  // field of a device's attribute, capacity or taint; -1 for none
	index           int32 // of an entry in a list, or -1
	item            int32 // of an entry in a device's taints, or -1
	keyed           bool  // at the entry key of such an object, or under it
	key             string
}

var nowhere = where{top: -1, sub: -1, field: -1, inner: -1, index: -1, item: -1}

func (w where) String() string {
	switch {
	case w.keyed && w.top == labelsField:
		return labelPath(w.key)
	case w.keyed && w.sub == hugepagesField:
		return hugepagesPath(w.key)
	case w.keyed: // a device's attribute or capacity
		s := deviceKeyPath(indexPath(fieldPath(replyLevel, devicesField), int(w.index)), int(w.field), w.key)
		if w.inner >= 0 {
			lv := attributeLevel
			if w.field == capacityField {
				lv = capacityLevel
			}
			s += fieldPath(lv, int(w.inner))
		}
		return s
	}
	s := levelFields[replyLevel][w.top]
	entry := taintLevel
	switch {
	case w.sub >= 0:
		s += "." + levelFields[resourcesLevel][w.sub]
		entry = acceleratorLevel
	case w.top == devicesField:
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
	switch w.top {
	case resourcesField:
		return SubjectResource
	case taintsField:
		return SubjectTaint
	case labelsField:
		return SubjectLabel
	case devicesField:
		return SubjectDevice
	}
	return SubjectReply
}

// within reports whether w is at or under at: w is at every field,
// entry and key that at names.
func (w where) within(at where) bool {
	return w.top == at.top &&
		(at.sub < 0 || w.sub == at.sub) &&
		(at.index < 0 || w.index == at.index) &&
		(at.field < 0 || w.field == at.field) &&
		(at.item < 0 || w.item == at.item) &&
		(!at.keyed || w.keyed && w.key == at.key) &&
		(at.inner < 0 || w.inner == at.inner)
}

// walk walks body, a JSON object, and returns the walker with its
// findings in the order met; of a repeated key only the last value's
// findings are kept, and none from a list over its limit, which Parse
// ignores whole.
func walk(body []byte, opts Options) walker {
	w := walker{b: body, opts: opts}
	w.space()
	if w.i < len(w.b) && w.b[w.i] == '{' {
		w.object(nowhere, replyLevel)
	}
	return w
}

func (w *walker) space() {
	for w.i < len(w.b) && isSpace(w.b[w.i]) {
		w.i++
	}
}

// object walks the object at w.b[w.i], a '{', whose fields Parse reads at
// the given level, at path at.
func (w *walker) object(at where, lv level) {
	names := levelFields[lv]
	var count [maxLevelFields]int
	var span [maxLevelFields][2]int // of each field's last value
	for w.i++; ; w.i++ {
		w.space()
		if w.i >= len(w.b) || w.b[w.i] != '"' {
			break
		}
		start := w.i
		w.i = stringEnd(w.b, w.i)
		k := fieldIndex(w.b[start:w.i], names)
		if k < 0 {
			w.unknownKey(at, lv, start, w.b[start:w.i])
		}
		w.space()
		if w.i >= len(w.b) || w.b[w.i] != ':' {
			break
		}
		w.i++
		w.space()
		if k < 0 {
			w.skip()
		} else {
			child := at.child(lv, k)
			if count[k]++; count[k] > 1 {
				w.drop(child)
				w.dropMisses(span[k][0], span[k][1])
				w.repeated(child, count[k])
			}
			span[k][0] = w.i
			w.field(child, lv, k)
			span[k][1] = w.i
		}
		w.space()
		if w.i >= len(w.b) || w.b[w.i] != ',' {
			break
		}
	}
	if w.i < len(w.b) && w.b[w.i] == '}' {
		w.i++
	}
}

// repeated notes that the key of the field at was met for the n-th time,
// where it was first repeated.
func (w *walker) repeated(at where, n int) {
	for i := len(w.findings) - 1; i >= 0 && n > 2; i-- {
		if f := &w.findings[i]; f.count > 0 && f.at == at {
			f.count = n
			return
		}
	}
	w.findings = append(w.findings, finding{at: at, count: n})
}

// child returns the path of the k-th field of an object at level lv, at
// path at.
func (at where) child(lv level, k int) where {
	switch lv {
	case replyLevel:
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

// field walks the value of the k-th field of an object at level lv.
func (w *walker) field(at where, lv level, k int) {
	if w.i >= len(w.b) {
		return
	}
	c := w.b[w.i]
	switch {
	case lv == replyLevel && k == resourcesField && c == '{':
		w.object(at, resourcesLevel)
	case lv == replyLevel && k == taintsField && c == '[':
		w.list(at, taintLevel, w.opts.maxTaints())
	case lv == replyLevel && k == labelsField && c == '{':
		w.keyed(at, w.opts.maxLabels(), -1)
	case lv == replyLevel && k == devicesField && c == '[':
		w.list(at, deviceLevel, w.opts.maxDevices())
	case lv == resourcesLevel && k == hugepagesField && c == '{':
		w.keyed(at, maxHugepageSizes, -1)
	case lv == resourcesLevel && k == acceleratorsField && c == '[':
		w.list(at, acceleratorLevel, w.opts.maxAccelerators())
	case lv == deviceLevel && k == attributesField && c == '{':
		w.keyed(at, kuberules.MaxDeviceAttributesAndCapacities, attributeLevel)
	case lv == deviceLevel && k == capacityField && c == '{':
		w.keyed(at, kuberules.MaxDeviceAttributesAndCapacities, capacityLevel)
	case lv == deviceLevel && k == deviceTaintsField && c == '[':
		w.list(at, deviceTaintLevel, kuberules.MaxDeviceTaints)
	default:
		w.value(at)
	}
}

// list walks the list at w.b[w.i], a '[', of objects at level lv: of the
// reply, or, in a device entry, its taints. Entries past limit are
// skipped, and a list over it leaves no findings.
func (w *walker) list(at where, lv level, limit int) {
	n, start := 0, w.i
	for w.i++; ; w.i++ {
		w.space()
		if w.i >= len(w.b) || w.b[w.i] == ']' {
			break
		}
		entry := at
		if index := int32(min(n, math.MaxInt32)); at.index < 0 {
			entry.index = index
		} else {
			entry.item = index
		}
		switch {
		case n >= limit:
			w.skip()
		case w.b[w.i] == '{':
			w.object(entry, lv)
		default:
			w.value(entry)
		}
		n++
		w.space()
		if w.i >= len(w.b) || w.b[w.i] != ',' {
			break
		}
	}
	if w.i < len(w.b) && w.b[w.i] == ']' {
		w.i++
	}
	if n > limit {
		w.drop(at)
		w.dropMisses(start, w.i)
		w.overLimit = true
	}
}

// keyed walks the object at w.b[w.i], a '{', whose keys are its entries'
// own (the labels, the hugepages by size, a device's attributes and
// capacity): a key given more than once is noted once, where it was first
// met, with its count. Each entry's value is an object at level lv, or,
// for lv < 0, a value the walker does not enter. Entries past limit are
// skipped, and an object over it leaves no findings.
func (w *walker) keyed(at where, limit int, lv level) {
	var count map[string]int
	var spans map[string][2]int // of each key's last value that held misses
	var order []string          // of the keys met, in order
	n, begin := 0, w.i
	for w.i++; ; w.i++ {
		w.space()
		if w.i >= len(w.b) || w.b[w.i] != '"' {
			break
		}
		start := w.i
		w.i = stringEnd(w.b, w.i)
		key := unquote(w.b[start:w.i])
		w.space()
		if w.i >= len(w.b) || w.b[w.i] != ':' {
			break
		}
		w.i++
		w.space()
		if n >= limit {
			w.skip()
		} else {
			if count == nil {
				count = make(map[string]int)
			}
			entry := at
			entry.keyed, entry.key = true, key
			if count[key]++; count[key] > 1 {
				w.drop(entry) // what an earlier value held
				if span, ok := spans[key]; ok {
					w.dropMisses(span[0], span[1])
				}
			} else {
				order = append(order, key)
			}
			if lv >= 0 && w.i < len(w.b) && w.b[w.i] == '{' {
				from, misses := w.i, len(w.misses)
				w.object(entry, lv)
				if len(w.misses) > misses { // only then is there anything to forget
					if spans == nil {
						spans = make(map[string][2]int)
					}
					spans[key] = [2]int{from, w.i}
				}
			} else {
				w.value(entry)
			}
		}
		n++
		w.space()
		if w.i >= len(w.b) || w.b[w.i] != ',' {
			break
		}
	}
	if w.i < len(w.b) && w.b[w.i] == '}' {
		w.i++
	}
	if n > limit {
		w.drop(at)
		w.dropMisses(begin, w.i)
		w.overLimit = true
		return
	}
	for _, key := range order {
		if c := count[key]; c > 1 {
			entry := at
			entry.keyed, entry.key = true, key
			w.findings = append(w.findings, finding{at: entry, count: c})
		}
	}
}

// value walks a value that Parse reads but the walker does not enter,
// noting a non-finite number.
func (w *walker) value(at where) {
	if n := nonFiniteAt(w.b[w.i:]); n > 0 {
		w.findings = append(w.findings, finding{at: at, token: string(w.b[w.i : w.i+n])})
		w.i += n
		return
	}
	w.skip()
}

// skip moves past the value at w.b[w.i], without recursion.
func (w *walker) skip() {
	if w.i >= len(w.b) {
		return
	}
	switch w.b[w.i] {
	case '"':
		w.i = stringEnd(w.b, w.i)
	case '{', '[':
		depth := 0
		for w.i < len(w.b) {
			switch w.b[w.i] {
			case '"':
				w.i = stringEnd(w.b, w.i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
			}
			w.i++
			if depth == 0 {
				return
			}
		}
	default:
		for w.i < len(w.b) && !isDelimiter(w.b[w.i]) {
			w.i++
		}
	}
}

// drop forgets the findings at or under the field at, but that its key
// is repeated.
func (w *walker) drop(at where) {
	kept := w.findings[:0]
	for _, f := range w.findings {
		if !f.at.within(at) || f.count > 0 && f.at == at {
			kept = append(kept, f)
		}
	}
	w.findings = kept
}
