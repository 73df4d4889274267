package pingstatus

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/pingnode/pingnode/internal/kuberules"
	"github.com/pingnode/pingnode/internal/text"
)

// The rules of one device group, as the API server judges a
// ResourceSlice's device (Kubernetes 1.37, pkg/apis/resource/validation),
// on the typed group: the one implementation that Parse and
// [Options.Check] both run.

// capacityName is the resource name a device's capacity is judged as: no
// resource that counts whole, so a capacity is judged as a byte count, not
// negative and below 8Ei.
const capacityName corev1.ResourceName = ""

// groupJudge judges one device group, g at at. d is what reading the
// group found, nil for a group of a patch built by hand: what its reading
// refused, already warned about, is not judged again, and a warning
// quotes a count or a capacity as the plugin wrote it. Quiet, it warns
// about nothing and stops at the first problem, allocating nothing;
// otherwise it warns about every problem, the attributes and capacities
// in the order of their names and the taints in the group's.
type groupJudge struct {
	p     *parser
	g     *DeviceGroup
	at    groupAt
	d     *entryRead
	quiet bool
	w     *groupWords // once a warning asks: see words
}

// groupWords are what the warnings about a group say of it: its path, and
// what is done with it.
type groupWords struct{ path, done string }

// groupRules reports whether g, at at, is valid by the rules of a device
// group (see groupJudge for d and quiet): its count not negative and at
// most the limit of devices; at most 32 attributes and capacities, each
// with a valid name, an attribute with exactly one value and that one
// valid, a capacity not negative and below 8Ei; at most 16 taints, each
// with a valid key, value and effect. Its name is the list rules'.
func (p *parser) groupRules(g *DeviceGroup, at groupAt, d *entryRead, quiet bool) bool {
	j := groupJudge{p: p, g: g, at: at, d: d, quiet: quiet}
	ok := j.count()
	if !ok && quiet {
		return false
	}
	n := len(g.Attributes) + len(g.Capacity)
	if d != nil && d.overLimit > 0 {
		n = d.overLimit
	}
	switch {
	case n > kuberules.MaxDeviceAttributesAndCapacities && quiet:
		return false
	case n > kuberules.MaxDeviceAttributesAndCapacities:
		j.refuse(ruleDeviceFields, j.words().path, "%d attributes and capacities, the most is %d; %s", n, kuberules.MaxDeviceAttributesAndCapacities, j.words().done)
		ok = false
	case quiet:
		for key, a := range g.Attributes {
			if !j.attribute(key, a) {
				return false
			}
		}
		for key, q := range g.Capacity {
			if !j.capacity(key, q) {
				return false
			}
		}
	default:
		for _, key := range slices.Sorted(maps.Keys(g.Attributes)) {
			ok = j.attribute(key, g.Attributes[key]) && ok
		}
		for _, key := range slices.Sorted(maps.Keys(g.Capacity)) {
			ok = j.capacity(key, g.Capacity[key]) && ok
		}
	}
	return j.taints() && ok
}

// refuse warns that the group is refused for a problem at path, by the
// rule named rule. A quiet
// judge never calls it, nor builds its arguments.
func (j *groupJudge) refuse(rule, path, format string, args ...any) {
	j.p.warn(rule, SubjectDevice, Refused, path, format, args...)
}

// words returns what the warnings about the group say of it, made at the
// first.
func (j *groupJudge) words() *groupWords {
	if j.w == nil {
		j.w = &groupWords{path: j.at.String(), done: keptDevices(j.g.Name)}
	}
	return j.w
}

// count judges the group's count: not negative, and at most the limit.
func (j *groupJudge) count() bool {
	limit := j.p.opts.maxDevices()
	if n := j.g.Count; n >= 0 && n <= limit {
		return true
	}
	if j.quiet {
		return false
	}
	var spelled string
	if j.d != nil {
		spelled = j.d.count
	} else {
		spelled = strconv.Itoa(j.g.Count)
	}
	if j.g.Count < 0 {
		j.refuse(ruleDeviceFields, j.words().path+fieldPath(deviceLevel, countField), "%s must not be negative; %s", spelled, j.words().done)
	} else {
		j.refuse(ruleDeviceFields, j.words().path+fieldPath(deviceLevel, countField), "%s is too large: the most is %d; %s", spelled, limit, j.words().done)
	}
	return false
}

// key judges the name key of an attribute or capacity (what, the field k
// of a device).
func (j *groupJudge) key(k int, what, key string) bool {
	problem := kuberules.DeviceAttributeNameProblem(key)
	if problem == "" {
		return true
	}
	if !j.quiet {
		j.refuse(ruleDeviceFields, deviceKeyPath(j.words().path, k, key), "%s is not a valid %s name: %s; %s", text.Quote(key, quoteBytes), what, problem, j.words().done)
	}
	return false
}

// attributeKinds are the names of an attribute's values, for warnings.
var attributeKinds = [...]string{"string", "int", "bool", "version"}

// attribute judges the attribute key: its name, and that it has exactly
// one value, and that one valid.
func (j *groupJudge) attribute(key string, a DeviceAttribute) bool {
	ok := j.key(attributesField, "attribute", key)
	switch {
	case !ok && j.quiet:
		return false
	case j.d != nil && j.d.attributesWarned[key]:
		return false
	}
	given := [...]bool{a.StringValue != nil, a.IntValue != nil, a.BoolValue != nil, a.VersionValue != nil}
	values := 0
	for _, set := range given {
		if set {
			values++
		}
	}
	if values != 1 {
		if !j.quiet {
			got := "none"
			if values > 1 {
				var kinds []string
				for k, set := range given {
					if set {
						kinds = append(kinds, attributeKinds[k])
					}
				}
				got = strings.Join(kinds, " and ")
			}
			j.refuse(ruleDeviceFields, deviceKeyPath(j.words().path, attributesField, key), "must have exactly one of string, int, bool or version, got %s; %s", got, j.words().done)
		}
		return false
	}
	var problem, what, value string
	k := stringField
	switch {
	case a.StringValue != nil:
		problem, what, value = kuberules.DeviceStringProblem(*a.StringValue), "attribute string", *a.StringValue
	case a.VersionValue != nil:
		problem, what, value, k = kuberules.DeviceVersionProblem(*a.VersionValue), "version", *a.VersionValue, versionField
	}
	if problem == "" {
		return ok
	}
	if !j.quiet {
		j.refuse(ruleDeviceFields, deviceKeyPath(j.words().path, attributesField, key)+fieldPath(attributeLevel, k), "%s is not a valid %s: %s; %s", text.Quote(value, quoteBytes), what, problem, j.words().done)
	}
	return false
}

// capacity judges the capacity key: its name, and its value q, not
// negative and below 8Ei.
func (j *groupJudge) capacity(key string, q resource.Quantity) bool {
	ok := j.key(capacityField, "capacity", key)
	switch {
	case !ok && j.quiet:
		return false
	case j.d != nil && j.d.capacityWarned[key]:
		return false
	}
	problem := kuberules.QuantityProblem(capacityName, q)
	if problem == "" && kuberules.TooLarge(capacityName, q) {
		problem = "is too large: " + kuberules.LimitText(capacityName)
	}
	if problem == "" {
		return ok
	}
	if !j.quiet {
		var spelled string
		if j.d != nil {
			spelled = j.d.capacity[key]
		} else {
			spelled = q.String()
		}
		j.refuse(ruleDeviceFields, deviceKeyPath(j.words().path, capacityField, key)+fieldPath(capacityLevel, capacityValueField), "%s %s; %s", spelled, problem, j.words().done)
	}
	return false
}

// taints judges the group's taints: at most 16, each valid. Like the API
// server, it takes taints that repeat a key and effect.
func (j *groupJudge) taints() bool {
	n := len(j.g.Taints)
	if j.d != nil && j.d.taintsOver > 0 {
		n = j.d.taintsOver
	}
	if n > kuberules.MaxDeviceTaints {
		if !j.quiet {
			j.refuse(ruleDeviceTaints, j.words().path+fieldPath(deviceLevel, deviceTaintsField), "%d taints, the most is %d; %s", n, kuberules.MaxDeviceTaints, j.words().done)
		}
		return false
	}
	ok := true
	for i := range j.g.Taints {
		if j.d != nil && j.d.taintsWarned[i] {
			ok = false
			continue
		}
		if !j.taint(i, &j.g.Taints[i]) {
			if j.quiet {
				return false
			}
			ok = false
		}
	}
	return ok
}

// taint judges the i-th taint t: its key a qualified name, its value a
// label value, its effect None, NoSchedule or NoExecute.
func (j *groupJudge) taint(i int, t *DeviceTaint) bool {
	keyProblem := kuberules.LengthProblem(t.Key, kuberules.MaxNameBytes)
	if keyProblem == "" {
		keyProblem = kuberules.TaintKeyProblem(t.Key)
	}
	valueProblem := kuberules.LengthProblem(t.Value, kuberules.MaxValueBytes)
	if valueProblem == "" {
		valueProblem = kuberules.TaintValueProblem(t.Value)
	}
	effectOK := t.Effect == DeviceTaintNone || t.Effect == DeviceTaintNoSchedule || t.Effect == DeviceTaintNoExecute
	switch {
	case keyProblem == "" && valueProblem == "" && effectOK:
		return true
	case j.quiet:
		return false
	}
	path := indexPath(j.words().path+fieldPath(deviceLevel, deviceTaintsField), i)
	done := j.words().done
	if keyProblem != "" {
		j.refuse(ruleDeviceTaints, path+fieldPath(deviceTaintLevel, keyField), "%s is not a valid taint key: %s; %s", text.Quote(t.Key, quoteBytes), keyProblem, done)
	}
	if valueProblem != "" {
		j.refuse(ruleDeviceTaints, path+fieldPath(deviceTaintLevel, valueField), "%s is not a valid taint value: %s; %s", text.Quote(t.Value, quoteBytes), valueProblem, done)
	}
	switch {
	case effectOK:
	case t.Effect == "":
		j.refuse(ruleDeviceTaints, path+fieldPath(deviceTaintLevel, effectField), "missing; %s", done)
	case t.Effect == DeviceTaintEffect(corev1.TaintEffectPreferNoSchedule):
		j.refuse(ruleDeviceTaints, path+fieldPath(deviceTaintLevel, effectField), "PreferNoSchedule is a node taint's effect, not a device's: None, NoSchedule or NoExecute; %s", done)
	default:
		j.refuse(ruleDeviceTaints, path+fieldPath(deviceTaintLevel, effectField), "%s is not None, NoSchedule or NoExecute; %s", text.Quote(string(t.Effect), quoteBytes), done)
	}
	return false
}
