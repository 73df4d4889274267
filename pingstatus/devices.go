package pingstatus

import (
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/pingnode/pingnode/internal/kuberules"
	"github.com/pingnode/pingnode/internal/text"
)

// capacityName is the resource name a device's capacity is judged as: no
// resource that counts whole, so a capacity is judged as a byte count, not
// negative and below 8Ei.
const capacityName corev1.ResourceName = ""

// keptDevices is what is done with a device entry whose group is named but
// refused.
func keptDevices(group string) string {
	return "entry dropped, the plugin's current " + group + " devices kept"
}

// devices judges the plugin's device groups. Over the limit of entries,
// or of devices in all, the whole list is no news. Otherwise the result
// is the plugin's whole list (possibly empty), sorted by name, and the
// names of the groups refused, sorted. Of the entries with one name the
// last counts: the earlier ones are passed over, with a warning on each
// later one.
func (p *parser) devices(in []device) (replace bool, out []DeviceGroup, kept []string) {
	list := fieldPath(replyLevel, devicesField)
	limit := p.opts.maxDevices()
	if !p.withinLimit(SubjectDevice, list, "devices", len(in), limit) {
		return false, nil, nil
	}
	last := make(map[string]int, len(in)) // the last entry of each group
	for i := range in {
		if d := &in[i]; !d.dropped && d.Name != nil {
			last[*d.Name] = i
		}
	}
	previous := make(map[string]int, len(last))
	out = make([]DeviceGroup, 0, len(last))
	total := int64(0)
	for i := range in {
		d := &in[i]
		if d.dropped {
			continue
		}
		path := indexPath(list, i)
		namePath := path + fieldPath(deviceLevel, nameField)
		if d.Name == nil {
			p.warn(SubjectDevice, Refused, namePath, "missing; entry dropped")
			continue
		}
		name := *d.Name
		if problem := kuberules.DeviceGroupNameProblem(name); problem != "" {
			p.warn(SubjectDevice, Refused, namePath, "%s is not a valid device group name: %s; entry dropped", text.Quote(name, quoteBytes), problem)
			continue
		}
		if j, repeated := previous[name]; repeated {
			p.warn(SubjectDevice, Repaired, path, "%s repeats %s; the last one is used", name, indexPath(list, j))
		}
		previous[name] = i
		if last[name] != i {
			continue
		}
		g, ok := p.deviceGroup(d, path)
		if !ok {
			kept = append(kept, name)
			continue
		}
		out = append(out, g)
		total += int64(g.Count)
	}
	if total > int64(limit) {
		p.warn(SubjectDevice, Ignored, list, "counts add up to %d devices, more than the limit of %d; devices left unchanged", total, limit)
		return false, nil, nil
	}
	slices.SortFunc(out, func(a, b DeviceGroup) int { return strings.Compare(a.Name, b.Name) })
	slices.Sort(kept)
	return true, out, kept
}

// deviceGroup judges the entry d, at path, whose name is valid: its count,
// and each attribute and capacity, warning about every problem. It
// reports whether the group is accepted.
func (p *parser) deviceGroup(d *device, path string) (DeviceGroup, bool) {
	g := DeviceGroup{Name: *d.Name}
	done := keptDevices(g.Name)
	countPath := path + fieldPath(deviceLevel, countField)
	ok := !d.countWarned && !d.refused
	switch {
	case d.countWarned:
	case !d.Count.set:
		p.warn(SubjectDevice, Refused, countPath, "missing; %s", done)
		ok = false
	default:
		g.Count, ok = p.deviceCount(countPath, d.Count, done)
		ok = ok && !d.refused
	}
	n := d.overLimit
	if n == 0 {
		n = len(d.Attributes) + len(d.Capacity)
	}
	if n > kuberules.MaxDeviceAttributesAndCapacities {
		p.warn(SubjectDevice, Refused, path, "%d attributes and capacities, the most is %d; %s", n, kuberules.MaxDeviceAttributesAndCapacities, done)
		return g, false
	}
	if len(d.Attributes) > 0 {
		g.Attributes = make(map[string]DeviceAttribute, len(d.Attributes))
	}
	for _, key := range slices.Sorted(maps.Keys(d.Attributes)) {
		at := deviceKeyPath(path, attributesField, key)
		good := p.deviceKey(at, "attribute", key, done)
		a := d.Attributes[key]
		if a.warned {
			ok = false
			continue
		}
		v, valid := p.attribute(at, a, done)
		ok = ok && good && valid
		g.Attributes[key] = v
	}
	if len(d.Capacity) > 0 {
		g.Capacity = make(map[string]resource.Quantity, len(d.Capacity))
	}
	for _, key := range slices.Sorted(maps.Keys(d.Capacity)) {
		at := deviceKeyPath(path, capacityField, key)
		good := p.deviceKey(at, "capacity", key, done)
		c := d.Capacity[key]
		switch {
		case c.warned:
			ok = false
		case !c.Value.set:
			p.warn(SubjectDevice, Refused, at+fieldPath(capacityLevel, capacityValueField), "missing; %s", done)
			ok = false
		default:
			v, valid := p.judgedQuantity(SubjectDevice, at+fieldPath(capacityLevel, capacityValueField), capacityName, c.Value, done)
			ok = ok && good && valid
			g.Capacity[key] = v
		}
	}
	return g, ok
}

// deviceKey judges the name key of an attribute or capacity (what), at
// path, and reports whether it is valid.
func (p *parser) deviceKey(path, what, key, done string) bool {
	if problem := kuberules.DeviceAttributeNameProblem(key); problem != "" {
		p.warn(SubjectDevice, Refused, path, "%s is not a valid %s name: %s; %s", text.Quote(key, quoteBytes), what, problem, done)
		return false
	}
	return true
}

// deviceCount judges a device group's count: a whole number, not
// negative, and at most the limit of devices.
func (p *parser) deviceCount(path string, q quantity, done string) (int, bool) {
	limit := p.opts.maxDevices()
	v, ok := p.parsedQuantity(SubjectDevice, path, q, "the most is "+strconv.Itoa(limit), done)
	if !ok {
		return 0, false
	}
	switch {
	case v.Sign() < 0:
		p.warn(SubjectDevice, Refused, path, "%s must not be negative; %s", q.text, done)
	case v.Cmp(*resource.NewQuantity(int64(limit), resource.DecimalSI)) > 0:
		p.warn(SubjectDevice, Refused, path, "%s is too large: the most is %d; %s", q.text, limit, done)
	case v.MilliValue()%1000 != 0: // at most the limit: no overflow
		p.warn(SubjectDevice, Refused, path, "%s must be a whole number; %s", q.text, done)
	default:
		return int(v.Value()), true
	}
	return 0, false
}

// attributeKinds are the names of an attribute's values, for warnings.
var attributeKinds = [...]string{"string", "int", "bool", "version"}

// attribute judges the value of a device's attribute, at path: exactly
// one of its fields, and that one valid.
func (p *parser) attribute(path string, a deviceAttribute, done string) (DeviceAttribute, bool) {
	given := [...]bool{a.String != nil, a.Int.set, a.Bool != nil, a.Version != nil}
	var kinds []string
	for k, set := range given {
		if set {
			kinds = append(kinds, attributeKinds[k])
		}
	}
	if len(kinds) != 1 {
		got := "none"
		if len(kinds) > 1 {
			got = strings.Join(kinds, " and ")
		}
		p.warn(SubjectDevice, Refused, path, "must have exactly one of string, int, bool or version, got %s; %s", got, done)
		return DeviceAttribute{}, false
	}
	var v DeviceAttribute
	switch {
	case a.Int.set:
		n, problem := wholeInt64(a.Int.text)
		if problem != "" {
			p.warn(SubjectDevice, Refused, path+fieldPath(attributeLevel, intField), "%s %s; %s", text.Clean(a.Int.text, quoteBytes), problem, done)
			return v, false
		}
		v.IntValue = &n
	case a.Bool != nil:
		v.BoolValue = a.Bool
	case a.String != nil:
		if problem := kuberules.DeviceStringProblem(*a.String); problem != "" {
			p.warn(SubjectDevice, Refused, path+fieldPath(attributeLevel, stringField), "%s is not a valid attribute string: %s; %s", text.Quote(*a.String, quoteBytes), problem, done)
			return v, false
		}
		v.StringValue = a.String
	default:
		if problem := kuberules.DeviceVersionProblem(*a.Version); problem != "" {
			p.warn(SubjectDevice, Refused, path+fieldPath(attributeLevel, versionField), "%s is not a valid version: %s; %s", text.Quote(*a.Version, quoteBytes), problem, done)
			return v, false
		}
		v.VersionValue = a.Version
	}
	return v, true
}

// wholeInt64 reads s, the text of a JSON number, exactly, never through
// a float64 (so 80, 80.0 and 8e1 are all 80): its value if it is a whole
// number that fits an int64, or why it is not. It does not allocate on
// the valid path, and its work is linear in the text.
func wholeInt64(s string) (int64, string) {
	const notWhole, tooLarge = "must be a whole number", "is too large for an int64"
	neg := strings.HasPrefix(s, "-")
	mantissa := strings.TrimPrefix(s, "-")
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
	// The value is the digits of the mantissa from its first to its last
	// one that is not zero, times 10^exp, exp counting the zeros after
	// them and the digits after the point.
	first, last := -1, -1
	for i := range len(mantissa) {
		if c := mantissa[i]; c != '0' && c != '.' {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	if first < 0 {
		return 0, "" // zero, whatever the exponent
	}
	dot := strings.IndexByte(mantissa, '.')
	if dot < 0 {
		dot = len(mantissa)
	}
	if dot > last {
		exp += dot - last - 1
	} else {
		exp -= last - dot
	}
	digits := last - first + 1
	if first < dot && dot < last {
		digits--
	}
	switch {
	case exp < 0:
		return 0, notWhole
	case digits+exp > 19:
		return 0, tooLarge
	}
	var u uint64 // at most 19 digits: below 2^64
	for i := first; i <= last; i++ {
		if c := mantissa[i]; c != '.' {
			u = u*10 + uint64(c-'0')
		}
	}
	for range exp {
		u *= 10
	}
	switch {
	case !neg && u > math.MaxInt64, neg && u > 1<<63:
		return 0, tooLarge
	case neg:
		return int64(-u), ""
	}
	return int64(u), ""
}
