package pingstatus

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/pingnode/pingnode/internal/kuberules"
	"github.com/pingnode/pingnode/internal/text"
)

// Bounds on the work and the warnings that one reply may cause. The
// package comment gives the reasons for each number.
const (
	// maxQuantityBytes is the longest quantity text that goes to the
	// quantity parser, whose work grows faster than the text.
	maxQuantityBytes = 64
	// maxExponent bounds the decimal exponent ("1e100") of a quantity
	// that goes to the quantity parser; beyond it the value is judged
	// without big arithmetic.
	maxExponent = 100
	// quoteBytes is how much of a plugin's text a warning quotes.
	quoteBytes = 64
	// maxHugepageSizes is the most entries resources.hugepages may have:
	// more than there are page sizes (a power of two below 1024 with Ki,
	// Mi or Gi; a machine has two or three).
	maxHugepageSizes = 16
)

// basis reads and judges resources.basis, the value b: "available" or
// "total"; anything else is read as "total", so that nothing is added to
// figures whose meaning is unknown.
func (p *parser) basis(t *tree, b int) Basis {
	path := fieldPath(resourcesLevel, basisField)
	switch {
	case !t.present(b):
		return ""
	case !p.expect(t, b, SubjectResource, Repaired, path, stringKinds, "read as \"total\": nothing is added to the figures"):
		return BasisTotal
	}
	switch s := t.str(b); s {
	case string(BasisAvailable), string(BasisTotal):
		return Basis(s)
	default:
		p.warn(SubjectResource, Repaired, path, "%s is not \"available\" or \"total\"; read as \"total\": nothing is added to the figures", text.Quote(s, quoteBytes))
	}
	return BasisTotal
}

// resources reads and judges the resources object r: cpu, memory, pods,
// ephemeralStorage, accelerators and hugepages, and the basis.
func (p *parser) resources(t *tree, r int) (corev1.ResourceList, Basis) {
	f := t.fields(r, resourcesLevel)
	list := make(corev1.ResourceList, 4)
	p.standard(list, t, f[cpuField], cpuField, corev1.ResourceCPU)
	p.standard(list, t, f[memoryField], memoryField, corev1.ResourceMemory)
	p.standard(list, t, f[podsField], podsField, corev1.ResourcePods)
	p.standard(list, t, f[ephemeralStorageField], ephemeralStorageField, corev1.ResourceEphemeralStorage)
	pages := p.hugepageSizes(t, f[hugepagesField])
	p.acceleratorList(list, t, f[acceleratorsField])
	p.hugepages(list, t, pages)
	basis := p.basis(t, f[basisField])
	if len(list) == 0 {
		return nil, basis
	}
	return list, basis
}

// standard reads and judges the field k of resources, the value q, for
// the resource name.
func (p *parser) standard(list corev1.ResourceList, t *tree, q int, k int, name corev1.ResourceName) {
	path := fieldPath(resourcesLevel, k)
	if !t.present(q) || !p.expect(t, q, SubjectResource, Refused, path, quantityKinds, string(name)+" left unchanged") {
		return
	}
	v, ok := p.quantity(path, name, t.quantityText(q))
	if !ok {
		return
	}
	if v.IsZero() && !p.opts.AllowZero {
		what := "it would drain the node"
		if name == corev1.ResourceEphemeralStorage {
			what = "it would keep every pod that asks for scratch space off the node"
		}
		p.warn(SubjectResource, Refused, path, "zero %s refused (%s; a plugin that wants no pods sets a taint); %s left unchanged", name, what, name)
		return
	}
	list[name] = v
}

// A keyedEntry is an entry of an object whose keys are its entries' own:
// its key, decoded, and its last value.
type keyedEntry struct {
	key   string
	value int
}

// entries returns the entries of the object obj, sorted by key, each with
// its last value.
func (t *tree) entries(obj int) []keyedEntry {
	last := make(map[string]int, t.len(obj))
	for e := t.first(obj); e != none; e = t.next(e) {
		last[unquote(t.key(e))] = e
	}
	out := make([]keyedEntry, 0, len(last))
	for key, e := range last {
		out = append(out, keyedEntry{key, e})
	}
	slices.SortFunc(out, func(a, b keyedEntry) int { return strings.Compare(a.key, b.key) })
	return out
}

// hugepageSizes reads resources.hugepages, the value h: its entries by
// size, each a quantity; one of another JSON type is refused with a
// warning, and the node keeps what it has for that size.
func (p *parser) hugepageSizes(t *tree, h int) []keyedEntry {
	path := fieldPath(resourcesLevel, hugepagesField)
	if !t.present(h) || !p.withinLimit(SubjectResource, path, "hugepages", t.count(h), maxHugepageSizes) ||
		!p.expect(t, h, SubjectResource, Refused, path, objectKinds, "hugepages left unchanged") {
		return nil
	}
	pages := t.entries(h)
	kept := pages[:0]
	for _, e := range pages {
		if !t.present(e.value) || p.expect(t, e.value, SubjectResource, Refused, hugepagesPath(e.key), quantityKinds, "left unchanged") {
			kept = append(kept, e)
		}
	}
	return kept
}

// hugepages judges resources.hugepages: each page size as the kubelet
// names it, each amount a quantity of memory; zero is allowed (the pages
// are gone).
func (p *parser) hugepages(list corev1.ResourceList, t *tree, pages []keyedEntry) {
	for _, e := range pages {
		if !t.present(e.value) {
			continue
		}
		path := hugepagesPath(e.key)
		name, problem := kuberules.HugePageResourceName(e.key)
		if problem != "" {
			p.warn(SubjectResource, Refused, path, "%s is not a page size: %s; entry dropped", text.Quote(e.key, quoteBytes), problem)
			continue
		}
		if v, ok := p.quantity(path, name, t.quantityText(e.value)); ok {
			list[name] = v
		}
	}
}

// quantity parses q, a quantity's text, and judges it as a value of name: not negative, a
// whole number for the resources that count whole, and not too large. On
// refusal it warns and the resource is left unchanged.
func (p *parser) quantity(path string, name corev1.ResourceName, q string) (resource.Quantity, bool) {
	v, problem := readQuantity(q, func() string { return kuberules.LimitText(name) })
	switch {
	case problem != "":
	case kuberules.QuantityProblem(name, v) != "":
		problem = q + " " + kuberules.QuantityProblem(name, v)
	case kuberules.TooLarge(name, v):
		problem = q + " is too large: " + kuberules.LimitText(name)
	default:
		return v, true
	}
	p.warn(SubjectResource, Refused, path, "%s; %s left unchanged", problem, name)
	return v, false
}

// readQuantity parses s, or says why it does not parse, worded to follow
// a path: for a value too large to parse, what the limit is (limit).
// Text longer than maxQuantityBytes, and a decimal exponent beyond
// maxExponent, never reach the quantity parser, whose work (and that of
// comparing its result) grows with both.
func readQuantity(s string, limit func() string) (resource.Quantity, string) {
	spelled := s
	if len(s) > maxQuantityBytes {
		return resource.Quantity{}, fmt.Sprintf("%s is too long for a quantity: %d bytes, the most is %d", text.Quote(s, quoteBytes), len(s), maxQuantityBytes)
	}
	if zero, exp, ok := decimalExponent(s); ok && (exp > maxExponent || exp < -maxExponent) {
		// With at most 64 characters the mantissa is below 10^64 and,
		// unless zero, at least 10^-63: the exponent decides.
		switch {
		case zero:
			s = "0e0"
		case s[0] == '-':
			s = "-1" // negative, which is what is refused
		case exp > 0:
			return resource.Quantity{}, spelled + " is too large: " + limit()
		default:
			s = "1e-10" // the quantity parser rounds it up to 1n, as it would the value
		}
	}
	v, err := resource.ParseQuantity(s)
	if err != nil {
		return v, fmt.Sprintf("%s is not a quantity (%v)", text.Quote(spelled, quoteBytes), err)
	}
	return v, ""
}

// decimalExponent reads s as a quantity with a decimal exponent, like
// "1.5e3" or "-2E-7": whether its mantissa is zero, and its exponent. ok is
// false for any other form, and for an exponent that does not fit in an
// int64 (which the quantity parser refuses itself).
func decimalExponent(s string) (zero bool, exp int64, ok bool) {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	digits, dot := 0, false
	zero = true
mantissa:
	for ; i < len(s); i++ {
		switch c := s[i]; {
		case '0' <= c && c <= '9':
			digits++
			zero = zero && c == '0'
		case c == '.' && !dot:
			dot = true
		default:
			break mantissa
		}
	}
	if digits == 0 || i == len(s) || s[i] != 'e' && s[i] != 'E' {
		return false, 0, false
	}
	exp, err := strconv.ParseInt(s[i+1:], 10, 64)
	if err != nil {
		return false, 0, false
	}
	return zero, exp, true
}

// acceleratorList reads and judges resources.accelerators, the value
// accs: each entry an object, its resourceType a string and its available
// a quantity, or the entry is dropped.
func (p *parser) acceleratorList(list corev1.ResourceList, t *tree, accs int) {
	listPath := fieldPath(resourcesLevel, acceleratorsField)
	if !t.present(accs) || !p.withinLimit(SubjectResource, listPath, "accelerators", t.count(accs), p.opts.maxAccelerators()) ||
		!p.expect(t, accs, SubjectResource, Refused, listPath, arrayKinds, "accelerators left unchanged") {
		return
	}
	first := make(map[corev1.ResourceName]int, t.len(accs))
	i := -1
	for a := t.first(accs); a != none; a = t.next(a) {
		i++
		path := indexPath(listPath, i)
		typePath, availablePath := path+fieldPath(acceleratorLevel, resourceTypeField), path+fieldPath(acceleratorLevel, availableField)
		if t.present(a) && !p.expect(t, a, SubjectResource, Refused, path, objectKinds, "entry dropped") {
			continue
		}
		f := t.objectFields(a, acceleratorLevel)
		rt, available := f[resourceTypeField], f[availableField]
		if t.present(rt) && !p.expect(t, rt, SubjectResource, Refused, typePath, stringKinds, "entry dropped") ||
			t.present(available) && !p.expect(t, available, SubjectResource, Refused, availablePath, quantityKinds, "entry dropped") {
			continue
		}
		resourceType := t.strOr(rt, "")
		name := corev1.ResourceName(resourceType)
		problem := kuberules.LengthProblem(resourceType, kuberules.MaxNameBytes)
		if problem == "" {
			problem = kuberules.ExtendedResourceNameProblem(name)
		}
		if problem != "" {
			p.warn(SubjectResource, Refused, typePath, "%s is not an extended resource name: %s; entry dropped", text.Quote(resourceType, quoteBytes), problem)
			continue
		}
		if !t.present(available) {
			p.warn(SubjectResource, Refused, availablePath, "missing; entry dropped")
			continue
		}
		v, ok := p.quantity(availablePath, name, t.quantityText(available))
		if !ok {
			continue
		}
		if p.listsDevices && !v.IsZero() {
			p.warn(SubjectResource, Refused, availablePath, "%s devices refused: a reply that lists devices counts none as accelerators (a DeviceClass's extendedResourceName serves %s from the devices, and a count beside them lets the scheduler give the same devices twice); only 0 is read, to clear an earlier count; entry dropped", v.String(), name)
			continue
		}
		j, seen := first[name]
		if !seen {
			first[name] = i
			list[name] = v
			continue
		}
		sum := list[name].DeepCopy()
		sum.Add(v)
		if kuberules.TooLarge(name, sum) {
			p.warn(SubjectResource, Refused, path, "%s repeats %s and the sum is too large: %s; entry dropped", name, indexPath(listPath, j), kuberules.LimitText(name))
			continue
		}
		p.warn(SubjectResource, Repaired, path, "%s repeats %s; the two are summed", name, indexPath(listPath, j))
		list[name] = sum
	}
}

// taints reads and judges the plugin's taint list, the value in. Over the
// limit, the whole field is no news. Otherwise the result is the plugin's
// whole list (possibly empty) and the keys of entries refused for their
// value: first those whose value is no string, then those whose value is
// no label value. An entry that is no object, or whose key is no string,
// is dropped; an effect that is no string becomes NoSchedule.
func (p *parser) taints(tr *tree, in int) (replace bool, out []corev1.Taint, kept []string) {
	list := fieldPath(replyLevel, taintsField)
	if !p.withinLimit(SubjectTaint, list, "taints", tr.count(in), p.opts.maxTaints()) ||
		!p.expect(tr, in, SubjectTaint, Refused, list, arrayKinds, "taints left unchanged") {
		return false, nil, nil
	}
	var keptNotString []string
	check := p.taintCheck()
	unique := kuberules.NewUniqueTaints(tr.len(in))
	i := -1
	for e := tr.first(in); e != none; e = tr.next(e) {
		i++
		path := indexPath(list, i)
		if tr.present(e) && !p.expect(tr, e, SubjectTaint, Refused, path, objectKinds, "entry dropped") {
			continue
		}
		f := tr.objectFields(e, taintLevel)
		if tr.present(f[keyField]) && !p.expect(tr, f[keyField], SubjectTaint, Refused, path+fieldPath(taintLevel, keyField), stringKinds, "entry dropped") {
			continue
		}
		t := TaintResponse{Key: tr.strOr(f[keyField], "")}
		if v := f[valueField]; tr.present(v) && tr.nodes[v].kind != stringKind {
			done := "entry dropped"
			if p.taintCheck().Check(&corev1.Taint{Key: t.Key}).Key == "" {
				done += ", the plugin's current " + t.Key + " taints kept"
				keptNotString = append(keptNotString, t.Key)
			}
			valuePath := path + fieldPath(taintLevel, valueField)
			p.shapeWarn(SubjectTaint, Refused, valuePath, "must be a string, got %s; %s", tr.describe(v), done)
			continue
		}
		t.Value = tr.strOr(f[valueField], "")
		if eff := f[effectField]; !tr.present(eff) || p.expect(tr, eff, SubjectTaint, Repaired, path+fieldPath(taintLevel, effectField), stringKinds, "NoSchedule used") {
			t.Effect = tr.strOr(eff, "")
		} else {
			t.Effect = string(corev1.TaintEffectNoSchedule)
		}
		taint := corev1.Taint{Key: t.Key, Value: t.Value, Effect: corev1.TaintEffect(t.Effect)}
		problems := check.Check(&taint)
		switch {
		case problems.Key != "":
			p.warn(SubjectTaint, Refused, path+fieldPath(taintLevel, keyField), "%s is not a valid taint key: %s; entry dropped", text.Quote(t.Key, quoteBytes), problems.Key)
			continue
		case problems.Reserved && t.Key == kuberules.UnreachableTaintKey:
			p.warn(SubjectTaint, Refused, path+fieldPath(taintLevel, keyField), "%s is pingnode's own, for a plugin that does not answer; entry dropped", t.Key)
			continue
		case problems.Reserved && t.Key == kuberules.PartGoneTaintKey:
			p.warn(SubjectTaint, Refused, path+fieldPath(taintLevel, keyField), "%s is pingnode's own, for a part the reply no longer lists; entry dropped", t.Key)
			continue
		case problems.Reserved:
			p.warn(SubjectTaint, Refused, path+fieldPath(taintLevel, keyField), "%s belongs to Kubernetes controllers; entry dropped", t.Key)
			continue
		case problems.Protected:
			p.warn(SubjectTaint, Refused, path+fieldPath(taintLevel, keyField), "%s belongs to the provider; entry dropped", t.Key)
			continue
		case problems.Value != "":
			p.warn(SubjectTaint, Refused, path+fieldPath(taintLevel, valueField), "%s is not a valid taint value: %s; entry dropped, the plugin's current %s taints kept", text.Quote(t.Value, quoteBytes), problems.Value, t.Key)
			kept = append(kept, t.Key)
			continue
		}
		if problems.Effect {
			effectPath := path + fieldPath(taintLevel, effectField)
			if t.Effect == "" {
				p.warn(SubjectTaint, Repaired, effectPath, "missing; NoSchedule used")
			} else {
				p.warn(SubjectTaint, Repaired, effectPath, "%s is not NoSchedule, PreferNoSchedule or NoExecute; NoSchedule used", text.Quote(t.Effect, quoteBytes))
			}
			taint.Effect = corev1.TaintEffectNoSchedule
		}
		if earlier, repeated := unique.Add(taint, i); repeated {
			p.warn(SubjectTaint, Repaired, path, "repeats %s of %s; the last one is kept", kuberules.IDOf(&taint), indexPath(list, earlier))
		}
	}
	return true, unique.List, append(keptNotString, kept...)
}

// taintCheck is the check of a plugin's taint: bounded, since the reply's
// text is, and with the provider's protected keys.
func (p *parser) taintCheck() kuberules.TaintCheck {
	return kuberules.TaintCheck{Protected: p.opts.ProtectedKeys, Bounded: true}
}
