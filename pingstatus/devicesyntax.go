package pingstatus

import (
	"math"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/pingnode/pingnode/internal/kuberules"
	"github.com/pingnode/pingnode/internal/text"
	"github.com/pingnode/pingnode/pingstatus/internal/jsontree"
)

// The reading of a reply's device entry from the tree into a typed group
// for the rules (devicerules.go): each field of the wrong JSON type
// refused with a warning, its count and capacities parsed as quantities,
// its attributes' ints read from their text. It is what a group built by
// hand does not need.

// maxCountMagnitude bounds a count as a typed group holds it: a count
// beyond it either way reads as the bound, which the rules refuse as too
// large or negative, quoting the plugin's text.
const maxCountMagnitude = math.MaxInt32

// An entry is an entry of a reply's devices list: its fields, and its
// name, nil when it has none; dropped, with a warning, when it is no
// object or its name no string.
type entry struct {
	fields  [maxLevelFields]int
	name    *string
	dropped bool
}

// An entryRead is what reading a device entry found, for the rules of its
// group: what they must not judge again, already warned about, and how
// the plugin wrote what they quote.
type entryRead struct {
	count            string          // as written
	attributesWarned map[string]bool // of the wrong JSON type, or an int that does not read
	capacityWarned   map[string]bool // of the wrong JSON type, or a value missing or no quantity
	capacity         map[string]string
	taintsWarned     []bool // of the wrong JSON type
	overLimit        int    // this many attributes and capacities, counted, not read
	taintsOver       int    // this many taints, more than a device may have, counted, not read
}

// deviceEntries reads the devices list l, each entry on its own, as far
// as its name: an entry that is not an object, or whose name is not a
// string, is dropped. It returns false, with a warning, when l is over
// the limit or no list.
func (p *parser) deviceEntries(t *jsontree.Tree, l int) (*groupList, bool) {
	list := fieldPath(replyLevel, devicesField)
	if !p.withinLimit(ruleDeviceLimit, SubjectDevice, list, "devices", treeCount(t, l), p.opts.maxDevices()) ||
		!p.expect(t, l, SubjectDevice, Refused, list, arrayKinds, "devices left unchanged") {
		return nil, false
	}
	entries := make([]entry, 0, t.Len(l))
	i := -1
	for item := t.First(l); item != none; item = t.Next(item) {
		i++
		path := indexPath(list, i)
		e := entry{fields: objectFields(t, item, deviceLevel)}
		name := e.fields[nameField]
		switch {
		case t.Present(item) && !p.expect(t, item, SubjectDevice, Refused, path, objectKinds, "entry dropped"):
			e.dropped = true
		case t.Present(name) && !p.expect(t, name, SubjectDevice, Refused, path+fieldPath(deviceLevel, nameField), stringKinds, "entry dropped"):
			e.dropped = true
		case t.Present(name):
			s := t.Str(name)
			e.name = &s
		}
		entries = append(entries, e)
	}
	return &groupList{fromReply: true, tree: t, entries: entries}, true
}

// An attributeRead is an attribute of a device entry as read: its value,
// its int's text, and whether a field was of the wrong JSON type.
type attributeRead struct {
	key    string
	value  DeviceAttribute
	int    string
	hasInt bool
	warned bool
}

// readGroup reads the device entry e, at at, whose name is valid, into a
// typed group, and reports whether all of it read. A field of the wrong
// JSON type is warned about first; then what does not read (a count
// missing or no whole number, an int that is no whole number in an int64,
// a capacity missing or no quantity) is warned about, and stands in the
// group as 0. More attributes and capacities, or taints, than a device
// may have are counted, not read.
func (p *parser) readGroup(t *jsontree.Tree, e *entry, at groupAt) (DeviceGroup, *entryRead, bool) {
	g := DeviceGroup{Name: *e.name}
	d := &entryRead{}
	path, done := at.String(), keptDevices(g.Name)
	f := &e.fields
	count := f[countField]
	countWarned := t.Present(count) && !p.expect(t, count, SubjectDevice, Refused, path+fieldPath(deviceLevel, countField), quantityKinds, done)
	refused := false
	var attributes, capacity []keyedEntry
	if n := objectCount(t, f[attributesField]) + objectCount(t, f[capacityField]); n > kuberules.MaxDeviceAttributesAndCapacities {
		d.overLimit = n
	} else {
		var ok bool
		attributes, ok = p.objectEntries(t, f[attributesField], path+fieldPath(deviceLevel, attributesField), done)
		refused = !ok
		capacity, ok = p.objectEntries(t, f[capacityField], path+fieldPath(deviceLevel, capacityField), done)
		refused = refused || !ok
	}
	attrs := make([]attributeRead, len(attributes))
	for i, a := range attributes {
		attrs[i] = p.readAttribute(t, a, deviceKeyPath(path, attributesField, a.key), done)
	}
	caps := make([]attributeRead, len(capacity)) // int is the value's text, hasInt whether it has one
	for i, c := range capacity {
		caps[i] = p.readCapacity(t, c, deviceKeyPath(path, capacityField, c.key), done)
	}
	refused = p.readTaints(t, &g, d, f[deviceTaintsField], path+fieldPath(deviceLevel, deviceTaintsField), done) || refused

	ok := !countWarned && !refused
	refuse := func(sub, problem string) {
		p.warn(ruleDeviceFields, SubjectDevice, Refused, path+sub, "%s; %s", problem, done)
		ok = false
	}
	switch {
	case countWarned:
	case !t.Present(count):
		refuse(fieldPath(deviceLevel, countField), "missing")
	default:
		var problem string
		d.count = t.QuantityText(count)
		if g.Count, problem = p.deviceCount(d.count); problem != "" {
			refuse(fieldPath(deviceLevel, countField), problem)
		}
	}
	if len(attrs) > 0 {
		g.Attributes = make(map[string]DeviceAttribute, len(attrs))
	}
	for _, a := range attrs {
		if a.hasInt {
			n, problem := attributeInt(a.int)
			if problem != "" {
				refuse(deviceKeyPath("", attributesField, a.key)+fieldPath(attributeLevel, intField), text.Clean(a.int, quoteBytes)+" "+problem)
			}
			a.value.IntValue = &n
		}
		if a.warned {
			d.attributesWarned = mark(d.attributesWarned, a.key)
		}
		g.Attributes[a.key] = a.value
	}
	if len(caps) > 0 {
		g.Capacity = make(map[string]resource.Quantity, len(caps))
	}
	for _, c := range caps {
		if !c.warned && c.hasInt {
			q, problem := readQuantity(c.int, capacityLimit)
			if problem == "" {
				g.Capacity[c.key] = q
				if d.capacity == nil {
					d.capacity = make(map[string]string, len(caps))
				}
				d.capacity[c.key] = c.int
				continue
			}
			refuse(deviceKeyPath("", capacityField, c.key)+fieldPath(capacityLevel, capacityValueField), problem)
		} else if !c.warned {
			refuse(deviceKeyPath("", capacityField, c.key)+fieldPath(capacityLevel, capacityValueField), "missing")
		}
		g.Capacity[c.key] = resource.Quantity{}
		d.capacityWarned = mark(d.capacityWarned, c.key)
		ok = false
	}
	for _, warned := range d.taintsWarned {
		ok = ok && !warned
	}
	return g, d, ok
}

// mark returns set with key in it.
func mark(set map[string]bool, key string) map[string]bool {
	if set == nil {
		set = make(map[string]bool)
	}
	set[key] = true
	return set
}

// objectEntries returns the entries of the value n, an object whose keys
// are its entries' own, sorted, each with its last value; none for n
// absent or null. For n of another JSON type it warns, at path, saying
// what was done (done), and returns false.
func (p *parser) objectEntries(t *jsontree.Tree, n int, path, done string) ([]keyedEntry, bool) {
	switch {
	case !t.Present(n):
		return nil, true
	case !p.expect(t, n, SubjectDevice, Refused, path, objectKinds, done):
		return nil, false
	}
	return entries(t, n), true
}

// readAttribute reads the attribute a, at path: an object whose int is a
// number, bool a boolean, and string and version strings, each null or
// absent for none.
func (p *parser) readAttribute(t *jsontree.Tree, a keyedEntry, path, done string) attributeRead {
	r := attributeRead{key: a.key}
	if t.Present(a.value) && !p.expect(t, a.value, SubjectDevice, Refused, path, objectKinds, done) {
		r.warned = true
		return r
	}
	f := objectFields(t, a.value, attributeLevel)
	if v := f[intField]; t.Present(v) {
		if p.expect(t, v, SubjectDevice, Refused, path+fieldPath(attributeLevel, intField), numberKinds, done) {
			r.int, r.hasInt = string(t.Token(v)), true
		} else {
			r.warned = true
		}
	}
	if v := f[boolField]; t.Present(v) {
		if p.expect(t, v, SubjectDevice, Refused, path+fieldPath(attributeLevel, boolField), boolKinds, done) {
			b := t.Kind(v) == jsontree.True
			r.value.BoolValue = &b
		} else {
			r.warned = true
		}
	}
	for _, k := range [...]int{stringField, versionField} {
		v := f[k]
		if !t.Present(v) {
			continue
		}
		if !p.expect(t, v, SubjectDevice, Refused, path+fieldPath(attributeLevel, k), stringKinds, done) {
			r.warned = true
			continue
		}
		s := t.Str(v)
		if k == stringField {
			r.value.StringValue = &s
		} else {
			r.value.VersionValue = &s
		}
	}
	return r
}

// readCapacity reads the capacity c, at path: an object whose value is a
// quantity. The read's int is the value's text, and hasInt says there is
// one.
func (p *parser) readCapacity(t *jsontree.Tree, c keyedEntry, path, done string) attributeRead {
	r := attributeRead{key: c.key}
	if t.Present(c.value) && !p.expect(t, c.value, SubjectDevice, Refused, path, objectKinds, done) {
		r.warned = true
		return r
	}
	if v := objectFields(t, c.value, capacityLevel)[capacityValueField]; t.Present(v) {
		if p.expect(t, v, SubjectDevice, Refused, path+fieldPath(capacityLevel, capacityValueField), quantityKinds, done) {
			r.int, r.hasInt = t.QuantityText(v), true
		} else {
			r.warned = true
		}
	}
	return r
}

// readTaints reads the taints of a device entry, the value n at path,
// into g, each on its own: an entry that is no object, or a key, value
// or effect that is no string, is warned about and marked in d. More
// taints than a device may have are counted, not read. It reports
// whether n is of the wrong JSON type.
func (p *parser) readTaints(t *jsontree.Tree, g *DeviceGroup, d *entryRead, n int, path, done string) bool {
	switch {
	case !t.Present(n):
		return false
	case !p.expect(t, n, SubjectDevice, Refused, path, arrayKinds, done):
		return true
	case t.Len(n) > kuberules.MaxDeviceTaints:
		d.taintsOver = t.Len(n)
		return false
	case t.Len(n) == 0:
		return false
	}
	g.Taints = make([]DeviceTaint, 0, t.Len(n))
	i := -1
	for item := t.First(n); item != none; item = t.Next(item) {
		i++
		at := indexPath(path, i)
		var taint DeviceTaint
		warned := t.Present(item) && !p.expect(t, item, SubjectDevice, Refused, at, objectKinds, done)
		if !warned {
			f := objectFields(t, item, deviceTaintLevel)
			var s [3]string
			for k := range s {
				if v := f[k]; t.Present(v) {
					if p.expect(t, v, SubjectDevice, Refused, at+fieldPath(deviceTaintLevel, k), stringKinds, done) {
						s[k] = t.Str(v)
					} else {
						warned = true
					}
				}
			}
			taint = DeviceTaint{Key: s[keyField], Value: s[valueField], Effect: DeviceTaintEffect(s[effectField])}
		}
		g.Taints = append(g.Taints, taint)
		d.taintsWarned = append(d.taintsWarned, warned)
	}
	return false
}

// capacityLimit says what a capacity may be at most.
func capacityLimit() string { return kuberules.LimitText(capacityName) }

// deviceCount reads the text of a count, a quantity: its value, if it is
// a whole number, or, beyond maxCountMagnitude, the bound; or why it does
// not read.
func (p *parser) deviceCount(s string) (int, string) {
	v, problem := readQuantity(s, func() string { return "the most is " + strconv.Itoa(p.opts.maxDevices()) })
	switch {
	case problem != "":
		return 0, problem
	case v.Cmp(*resource.NewQuantity(maxCountMagnitude, resource.DecimalSI)) > 0:
		return maxCountMagnitude, ""
	case v.Cmp(*resource.NewQuantity(-maxCountMagnitude, resource.DecimalSI)) < 0:
		return -maxCountMagnitude, ""
	case v.MilliValue()%1000 != 0: // within the bound: no overflow
		return 0, s + " must be a whole number"
	}
	return int(v.Value()), ""
}

// attributeInt reads s, the text of a JSON number, exactly, never
// through a float64 (so 80, 80.0 and 8e1 are all 80): its value if it is
// a whole number that fits an int64, or why it is not. An integer is
// strconv's to read; a fraction or an exponent is first written as
// digits times a power of ten, with the zeros at their ends trimmed, so
// that the work is linear in the text and never big arithmetic. It
// allocates only for the digits of a fraction.
func attributeInt(s string) (int64, string) {
	const notWhole, tooLarge = "must be a whole number", "is too large for an int64"
	if !strings.ContainsAny(s, ".eE") { // a JSON integer
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil { // out of range: it is the text of an integer
			return 0, tooLarge
		}
		return n, ""
	}
	mantissa, neg := strings.CutPrefix(s, "-")
	exp := 0
	if e := strings.IndexAny(mantissa, "eE"); e >= 0 {
		n, err := strconv.Atoi(mantissa[e+1:])
		switch {
		case err != nil && strings.HasPrefix(mantissa[e+1:], "-"), n < -1<<40:
			n = -1 << 40 // tiny: no text makes it whole again
		case err != nil || n > 1<<40:
			n = 1 << 40
		}
		exp, mantissa = n, mantissa[:e]
	}
	whole, fraction, _ := strings.Cut(mantissa, ".")
	fraction = strings.TrimRight(fraction, "0")
	digits := strings.TrimLeft(whole+fraction, "0") // the value is digits times 10^exp
	exp -= len(fraction)
	trimmed := strings.TrimRight(digits, "0")
	exp += len(digits) - len(trimmed)
	switch {
	case trimmed == "":
		return 0, "" // zero, whatever the exponent
	case exp < 0:
		return 0, notWhole
	case len(trimmed)+exp > 19:
		return 0, tooLarge
	}
	u, _ := strconv.ParseUint(trimmed, 10, 64) // at most 19 digits: below 2^64
	for range exp {
		u *= 10 // at most 19 digits in all: no overflow
	}
	switch {
	case !neg && u > math.MaxInt64, neg && u > 1<<63:
		return 0, tooLarge
	case neg:
		return int64(-u), ""
	}
	return int64(u), ""
}
