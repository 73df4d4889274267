package pingstatus

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/pingnode/pingnode/internal/kuberules"
	"github.com/pingnode/pingnode/internal/text"
)

// The reading of a reply's device entry, as the decode left it, into a
// typed group for the rules (devicerules.go): its count and capacities
// parsed as quantities, its attributes' ints read from their text. It is
// what a group built by hand does not need.

// maxCountMagnitude bounds a count as a typed group holds it: a count
// beyond it either way reads as the bound, which the rules refuse as too
// large or negative, quoting the plugin's text.
const maxCountMagnitude = math.MaxInt32

// typedGroup reads the device entry d, at at, whose name is valid, into a
// typed group, and reports whether all of it read. What does not read (a
// count missing or no whole number, an int that is no whole number in an
// int64, a capacity missing or no quantity) is warned about, and stands
// in the group as 0; d marks a capacity so, for the rules to pass it over.
func (p *parser) typedGroup(d *device, at groupAt) (DeviceGroup, bool) {
	g := DeviceGroup{Name: *d.Name}
	ok := !d.countWarned && !d.refused
	var path, done string // the group's, and what is done with it, once a warning asks
	refuse := func(sub, problem string) {
		if path == "" {
			path, done = at.String(), keptDevices(g.Name)
		}
		p.warn(SubjectDevice, Refused, path+sub, "%s; %s", problem, done)
		ok = false
	}
	switch {
	case d.countWarned:
	case !d.Count.set:
		refuse(fieldPath(deviceLevel, countField), "missing")
	default:
		var problem string
		if g.Count, problem = p.deviceCount(d.Count.text); problem != "" {
			refuse(fieldPath(deviceLevel, countField), problem)
		}
	}
	// Each map is read in any order, and what does not read is warned
	// about in the order of the names.
	var failed []string
	if len(d.Attributes) > 0 {
		g.Attributes = make(map[string]DeviceAttribute, len(d.Attributes))
	}
	for key, a := range d.Attributes {
		v := DeviceAttribute{BoolValue: a.Bool, StringValue: a.String, VersionValue: a.Version}
		if a.Int.set {
			n, problem := wholeInt64(a.Int.text)
			if problem != "" {
				failed = append(failed, key)
			}
			v.IntValue = &n
		}
		g.Attributes[key] = v
	}
	slices.Sort(failed)
	for _, key := range failed {
		number := d.Attributes[key].Int.text
		_, problem := wholeInt64(number)
		refuse(deviceKeyPath("", attributesField, key)+fieldPath(attributeLevel, intField), text.Clean(number, quoteBytes)+" "+problem)
	}
	failed = failed[:0]
	if len(d.Capacity) > 0 {
		g.Capacity = make(map[string]resource.Quantity, len(d.Capacity))
	}
	for key, c := range d.Capacity {
		if !c.warned && c.Value.set {
			var problem string
			if g.Capacity[key], problem = readQuantity(c.Value.text, capacityLimit); problem == "" {
				continue
			}
		}
		g.Capacity[key] = resource.Quantity{}
		if !c.warned {
			failed = append(failed, key)
		}
		ok = false
	}
	slices.Sort(failed)
	for _, key := range failed {
		c := d.Capacity[key]
		problem := "missing"
		if c.Value.set {
			_, problem = readQuantity(c.Value.text, capacityLimit)
		}
		refuse(deviceKeyPath("", capacityField, key)+fieldPath(capacityLevel, capacityValueField), problem)
		c.warned = true
		d.Capacity[key] = c
	}
	if len(d.Taints) > 0 {
		g.Taints = make([]DeviceTaint, len(d.Taints))
		for i, t := range d.Taints {
			g.Taints[i] = DeviceTaint{Key: t.Key, Value: t.Value, Effect: DeviceTaintEffect(t.Effect)}
			ok = ok && !t.warned
		}
	}
	return g, ok
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
