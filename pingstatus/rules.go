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
	"github.com/pingnode/pingnode/pingstatus/internal/jsontree"
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

// basis reads resources.basis, the value b, and judges it (rule
// resource-basis).
func (p *parser) basis(t *jsontree.Tree, b int) Basis {
	path := fieldPath(resourcesLevel, basisField)
	switch {
	case !t.Present(b):
		return ""
	case !p.expect(t, b, SubjectResource, Repaired, path, stringKinds, "read as \"total\": nothing is added to the figures"):
		return BasisTotal
	}
	return p.judgeBasis(path, t.Str(b))
}

// judgeBasis judges a basis, s at path: "available" or "total"; anything
// else is read as "total", so that nothing is added to figures whose
// meaning is unknown (rule resource-basis).
func (p *parser) judgeBasis(path, s string) Basis {
	switch s {
	case string(BasisAvailable), string(BasisTotal):
		return Basis(s)
	}
	p.warn(ruleResourceBasis, SubjectResource, Repaired, path, "%s is not \"available\" or \"total\"; read as \"total\": nothing is added to the figures", text.Quote(s, quoteBytes))
	return BasisTotal
}

// resources reads and judges the resources object r: cpu, memory, pods,
// ephemeralStorage, accelerators and hugepages, and the basis, which is
// read first, wherever it stands, since the figures are judged by it
// (rule resource-full). It returns the figures to write, the basis, and
// the resources the backend has none of free now.
func (p *parser) resources(t *jsontree.Tree, r int) (corev1.ResourceList, Basis, []corev1.ResourceName) {
	f := memberFields(t, r, resourcesLevel)
	basis := p.basis(t, f[basisField])
	p.free = basis != BasisTotal
	list := make(corev1.ResourceList, 4)
	var full []corev1.ResourceName
	p.standard(list, &full, t, f[cpuField], cpuField, corev1.ResourceCPU)
	p.standard(list, &full, t, f[memoryField], memoryField, corev1.ResourceMemory)
	p.standard(list, &full, t, f[podsField], podsField, corev1.ResourcePods)
	p.standard(list, &full, t, f[ephemeralStorageField], ephemeralStorageField, corev1.ResourceEphemeralStorage)
	pages := p.hugepageSizes(t, f[hugepagesField])
	p.acceleratorList(list, t, f[acceleratorsField])
	p.hugepages(list, t, pages)
	if len(list) == 0 {
		return nil, basis, full
	}
	return list, basis, full
}

// standard reads the field k of resources, the value q, for the resource
// name, and judges it: a figure goes into list, and a resource the
// backend has none of free now into full.
func (p *parser) standard(list corev1.ResourceList, full *[]corev1.ResourceName, t *jsontree.Tree, q int, k int, name corev1.ResourceName) {
	path := fieldPath(resourcesLevel, k)
	if !t.Present(q) || !p.expect(t, q, SubjectResource, Refused, path, quantityKinds, string(name)+" left unchanged") {
		return
	}
	spelled := t.QuantityText(q)
	if v, ok := p.quantity(path, name, spelled); ok {
		p.take(list, full, path, name, v, spelled)
	}
}

// take judges v, spelled so, as the quantity of the resource name at
// path, and puts it where the verdict says: the figure into list, or,
// for a backend full now, the resource into full.
func (p *parser) take(list corev1.ResourceList, full *[]corev1.ResourceName, path string, name corev1.ResourceName, v resource.Quantity, spelled string) {
	switch p.judgeQuantity(path, name, v, spelled) {
	case acceptedQuantity:
		list[name] = v
	case backendFull:
		*full = append(*full, name)
	}
}

// isStandard reports whether name is one of the resources a reply names
// by a field of its own: cpu, memory, pods and ephemeral-storage.
func isStandard(name corev1.ResourceName) bool {
	switch name {
	case corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourcePods, corev1.ResourceEphemeralStorage:
		return true
	}
	return false
}

// A verdict is what [parser.judgeQuantity] makes of a quantity.
type verdict int

const (
	// refusedQuantity: a warning says why, and the resource is left
	// unchanged.
	refusedQuantity verdict = iota
	// acceptedQuantity: the figure is written.
	acceptedQuantity
	// backendFull: a zero cpu or memory among figures of what the backend
	// has available, the backend full now (rule resource-full). The figure
	// is not written, a warning says so, and the patch records the
	// resource in Full.
	backendFull
)

// judgeQuantity judges v, spelled so, as the quantity of the resource
// name at path: not negative nor too large (rule quantity-valid), whole
// for a resource that counts whole (rule resource-whole), and not zero
// for cpu, memory, pods and ephemeral-storage unless AllowZero: a zero
// cpu or memory among free figures (p.free) says the backend is full now
// (rule resource-full), and any other such zero is refused (rule
// resource-nonzero). It warns of all but an accepted figure.
func (p *parser) judgeQuantity(path string, name corev1.ResourceName, v resource.Quantity, spelled string) verdict {
	rule, problem := ruleQuantityValid, kuberules.QuantityProblem(name, v)
	switch {
	case problem != "" && v.Sign() >= 0:
		rule, problem = ruleResourceWhole, spelled+" "+problem
	case problem != "":
		problem = spelled + " " + problem
	case kuberules.TooLarge(name, v):
		problem = spelled + " is too large: " + kuberules.LimitText(name)
	case !v.IsZero() || p.opts.AllowZero || !isStandard(name):
		return acceptedQuantity
	case p.free && (name == corev1.ResourceCPU || name == corev1.ResourceMemory):
		p.warn(ruleResourceFull, SubjectResource, Refused, path, "the backend has no free %s now: %s left as it was, the node takes no new pod (taint %s) until a reply gives more", name, name, kuberules.BackendFullTaintKey)
		return backendFull
	default:
		what := "it would drain the node"
		switch name {
		case corev1.ResourceCPU, corev1.ResourceMemory:
			what = "a total of zero would drain the node"
		case corev1.ResourceEphemeralStorage:
			what = "it would keep every pod that asks for scratch space off the node"
		}
		p.warn(ruleResourceNonzero, SubjectResource, Refused, path, "zero %s refused (%s; a plugin that wants no pods sets a taint); %s left unchanged", name, what, name)
		return refusedQuantity
	}
	p.warn(rule, SubjectResource, Refused, path, "%s; %s left unchanged", problem, name)
	return refusedQuantity
}

// A keyedEntry is an entry of an object whose keys are its entries' own:
// its key, decoded, and its last value.
type keyedEntry struct {
	key   string
	value int
}

// entries returns the entries of the object obj, sorted by key, each with
// its last value.
func entries(t *jsontree.Tree, obj int) []keyedEntry {
	last := make(map[string]int, t.Len(obj))
	for e := t.First(obj); e != none; e = t.Next(e) {
		last[jsontree.Unquote(t.Key(e))] = e
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
func (p *parser) hugepageSizes(t *jsontree.Tree, h int) []keyedEntry {
	path := fieldPath(resourcesLevel, hugepagesField)
	if !t.Present(h) || !p.withinLimit(ruleResourceHugepages, SubjectResource, path, "hugepages", treeCount(t, h), maxHugepageSizes) ||
		!p.expect(t, h, SubjectResource, Refused, path, objectKinds, "hugepages left unchanged") {
		return nil
	}
	pages := entries(t, h)
	kept := pages[:0]
	for _, e := range pages {
		if !t.Present(e.value) || p.expect(t, e.value, SubjectResource, Refused, hugepagesPath(e.key), quantityKinds, "left unchanged") {
			kept = append(kept, e)
		}
	}
	return kept
}

// hugepages judges resources.hugepages: each page size as the kubelet
// names it, each amount a quantity of memory; zero is allowed (the pages
// are gone).
func (p *parser) hugepages(list corev1.ResourceList, t *jsontree.Tree, pages []keyedEntry) {
	for _, e := range pages {
		if !t.Present(e.value) {
			continue
		}
		path := hugepagesPath(e.key)
		name, ok := p.pageSize(path, e.key)
		if !ok {
			continue
		}
		spelled := t.QuantityText(e.value)
		if v, ok := p.quantity(path, name, spelled); ok && p.judgeQuantity(path, name, v, spelled) == acceptedQuantity {
			list[name] = v
		}
	}
}

// pageSize judges size, at path, as a page size the kubelet names, and
// returns its resource (rule resource-hugepages).
func (p *parser) pageSize(path, size string) (corev1.ResourceName, bool) {
	name, problem := kuberules.HugePageResourceName(size)
	if problem != "" {
		p.warn(ruleResourceHugepages, SubjectResource, Refused, path, "%s is not a page size: %s; entry dropped", text.Quote(size, quoteBytes), problem)
		return "", false
	}
	return name, true
}

// quantity parses q, a quantity's text, as a value of name (rule
// quantity-valid). When it does not parse it warns, and the resource is
// left unchanged.
func (p *parser) quantity(path string, name corev1.ResourceName, q string) (resource.Quantity, bool) {
	v, problem := readQuantity(q, func() string { return kuberules.LimitText(name) })
	if problem != "" {
		p.warn(ruleQuantityValid, SubjectResource, Refused, path, "%s; %s left unchanged", problem, name)
		return v, false
	}
	return v, true
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
func (p *parser) acceleratorList(list corev1.ResourceList, t *jsontree.Tree, accs int) {
	listPath := fieldPath(resourcesLevel, acceleratorsField)
	if !t.Present(accs) || !p.withinLimit(ruleListLimit, SubjectResource, listPath, "accelerators", treeCount(t, accs), p.opts.maxAccelerators()) ||
		!p.expect(t, accs, SubjectResource, Refused, listPath, arrayKinds, "accelerators left unchanged") {
		return
	}
	first := make(map[corev1.ResourceName]int, t.Len(accs))
	i := -1
	for a := t.First(accs); a != none; a = t.Next(a) {
		i++
		path := indexPath(listPath, i)
		typePath, availablePath := path+fieldPath(acceleratorLevel, resourceTypeField), path+fieldPath(acceleratorLevel, availableField)
		if t.Present(a) && !p.expect(t, a, SubjectResource, Refused, path, objectKinds, "entry dropped") {
			continue
		}
		f := objectFields(t, a, acceleratorLevel)
		rt, available := f[resourceTypeField], f[availableField]
		if t.Present(rt) && !p.expect(t, rt, SubjectResource, Refused, typePath, stringKinds, "entry dropped") ||
			t.Present(available) && !p.expect(t, available, SubjectResource, Refused, availablePath, quantityKinds, "entry dropped") {
			continue
		}
		name := corev1.ResourceName(strOr(t, rt, ""))
		if !p.extendedName(typePath, name) {
			continue
		}
		if !t.Present(available) {
			p.warn(ruleAcceleratorName, SubjectResource, Refused, availablePath, "missing; entry dropped")
			continue
		}
		spelled := t.QuantityText(available)
		v, ok := p.quantity(availablePath, name, spelled)
		if !ok || p.judgeQuantity(availablePath, name, v, spelled) != acceptedQuantity || !p.counted(availablePath, name, v) {
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
			p.warn(ruleAcceleratorName, SubjectResource, Refused, path, "%s repeats %s and the sum is too large: %s; entry dropped", name, indexPath(listPath, j), kuberules.LimitText(name))
			continue
		}
		p.warn(ruleAcceleratorName, SubjectResource, Repaired, path, "%s repeats %s; the two are summed", name, indexPath(listPath, j))
		list[name] = sum
	}
}

// extendedName judges name, at path, as an accelerator's resource type:
// an extended resource name (rule accelerator-name).
func (p *parser) extendedName(path string, name corev1.ResourceName) bool {
	problem := kuberules.LengthProblem(string(name), kuberules.MaxNameBytes)
	if problem == "" {
		problem = kuberules.ExtendedResourceNameProblem(name)
	}
	if problem != "" {
		p.warn(ruleAcceleratorName, SubjectResource, Refused, path, "%s is not an extended resource name: %s; entry dropped", text.Quote(string(name), quoteBytes), problem)
		return false
	}
	return true
}

// counted reports whether v devices of the extended resource name, at
// path, may be counted: in a reply that lists devices, only 0 (rule
// device-not-counted).
func (p *parser) counted(path string, name corev1.ResourceName, v resource.Quantity) bool {
	if !p.listsDevices || v.IsZero() {
		return true
	}
	p.warn(ruleDeviceNotCounted, SubjectResource, Refused, path, "%s devices refused: a reply that lists devices counts none as accelerators (a DeviceClass's extendedResourceName serves %s from the devices, and a count beside them lets the scheduler give the same devices twice); only 0 is read, to clear an earlier count; entry dropped", v.String(), name)
	return false
}

// taints reads the plugin's taint list, the value in, and judges it.
// Over the limit, the whole field is no news (rule list-limit).
// Otherwise the result is the plugin's whole list (possibly empty) and
// the keys of entries refused for their value: first those whose value
// is no string, then those whose value is no label value. An entry that
// is no object, or whose key is no string, is dropped; an effect that is
// no string becomes NoSchedule.
func (p *parser) taints(tr *jsontree.Tree, in int) (replace bool, out []corev1.Taint, kept []string) {
	list := fieldPath(replyLevel, taintsField)
	if !p.withinLimit(ruleListLimit, SubjectTaint, list, "taints", treeCount(tr, in), p.opts.maxTaints()) ||
		!p.expect(tr, in, SubjectTaint, Refused, list, arrayKinds, "taints left unchanged") {
		return false, nil, nil
	}
	var keptNotString []string
	j := p.taintJudge(list, tr.Len(in))
	i := -1
	for e := tr.First(in); e != none; e = tr.Next(e) {
		i++
		path := indexPath(list, i)
		if tr.Present(e) && !p.expect(tr, e, SubjectTaint, Refused, path, objectKinds, "entry dropped") {
			continue
		}
		f := objectFields(tr, e, taintLevel)
		if tr.Present(f[keyField]) && !p.expect(tr, f[keyField], SubjectTaint, Refused, path+fieldPath(taintLevel, keyField), stringKinds, "entry dropped") {
			continue
		}
		key := strOr(tr, f[keyField], "")
		if v := f[valueField]; tr.Present(v) && tr.Kind(v) != jsontree.String {
			done := "entry dropped"
			if j.mayKeep(key) {
				done += ", the plugin's current " + key + " taints kept"
				keptNotString = append(keptNotString, key)
			}
			valuePath := path + fieldPath(taintLevel, valueField)
			p.shapeWarn(ruleValueType, SubjectTaint, Refused, valuePath, "must be a string, got %s; %s", describe(tr, v), done)
			continue
		}
		taint := corev1.Taint{Key: key, Value: strOr(tr, f[valueField], "")}
		if eff := f[effectField]; !tr.Present(eff) || p.expect(tr, eff, SubjectTaint, Repaired, path+fieldPath(taintLevel, effectField), stringKinds, "NoSchedule used") {
			taint.Effect = corev1.TaintEffect(strOr(tr, eff, ""))
		} else {
			taint.Effect = corev1.TaintEffectNoSchedule
		}
		p.addTaint(&j, taint, i)
	}
	return true, j.unique.List, append(keptNotString, j.kept...)
}

// A taintJudge judges the entries of a list of the plugin's taints, one
// by one, by the rules taint-valid, taint-reserved and taint-unique:
// Parse's of a reply's entries, and Check's of a patch's taints.
type taintJudge struct {
	list  string // the list's path, "taints"
	check kuberules.TaintCheck
	// unique are the taints kept, unique by key and effect, the last of a
	// pair in the place of the first; kept the keys of the entries
	// refused for their value.
	unique kuberules.UniqueTaints
	kept   []string
}

// taintJudge returns the judge of the list at list, of n entries: bounded,
// since a reply's text is, and with the provider's protected keys.
func (p *parser) taintJudge(list string, n int) taintJudge {
	return taintJudge{list: list, check: kuberules.TaintCheck{Protected: p.opts.ProtectedKeys, Bounded: true}, unique: kuberules.NewUniqueTaints(n)}
}

// mayKeep reports whether the plugin may own a taint with key: whether
// an entry of it refused for its value keeps the plugin's current
// taints with it.
func (j *taintJudge) mayKeep(key string) bool {
	p := j.check.Check(&corev1.Taint{Key: key, Effect: corev1.TaintEffectNoSchedule})
	return p.Key == "" && !p.Reserved && !p.Protected
}

// addTaint judges taint, the list's entry i, by j, and keeps it when it passes: a
// valid key, not one that Kubernetes controllers, pingnode or the
// provider own, a valid value, and an effect, read as NoSchedule when it
// is empty or unknown. Of two entries with one key and effect the last
// is kept.
func (p *parser) addTaint(j *taintJudge, taint corev1.Taint, i int) {
	// The paths are built for a warning only: a valid taint costs none.
	path := func() string { return indexPath(j.list, i) }
	keyPath := func() string { return path() + fieldPath(taintLevel, keyField) }
	switch problems := j.check.Check(&taint); {
	case problems.Key != "":
		p.warn(ruleTaintValid, SubjectTaint, Refused, keyPath(), "%s is not a valid taint key: %s; entry dropped", text.Quote(taint.Key, quoteBytes), problems.Key)
		return
	case problems.Reserved && taint.Key == kuberules.UnreachableTaintKey:
		p.warn(ruleTaintReserved, SubjectTaint, Refused, keyPath(), "%s is pingnode's own, for a plugin that does not answer; entry dropped", taint.Key)
		return
	case problems.Reserved && taint.Key == kuberules.PartGoneTaintKey:
		p.warn(ruleTaintReserved, SubjectTaint, Refused, keyPath(), "%s is pingnode's own, for a part the reply no longer lists; entry dropped", taint.Key)
		return
	case problems.Reserved && taint.Key == kuberules.BackendFullTaintKey:
		p.warn(ruleTaintReserved, SubjectTaint, Refused, keyPath(), "%s is pingnode's own, for a backend with no free cpu or memory now; entry dropped", taint.Key)
		return
	case problems.Reserved:
		p.warn(ruleTaintReserved, SubjectTaint, Refused, keyPath(), "%s belongs to Kubernetes controllers; entry dropped", taint.Key)
		return
	case problems.Protected:
		p.warn(ruleTaintReserved, SubjectTaint, Refused, keyPath(), "%s belongs to the provider; entry dropped", taint.Key)
		return
	case problems.Value != "":
		p.warn(ruleTaintValid, SubjectTaint, Refused, path()+fieldPath(taintLevel, valueField), "%s is not a valid taint value: %s; entry dropped, the plugin's current %s taints kept", text.Quote(taint.Value, quoteBytes), problems.Value, taint.Key)
		j.kept = append(j.kept, taint.Key)
		return
	case problems.Effect:
		effectPath := path() + fieldPath(taintLevel, effectField)
		if taint.Effect == "" {
			p.warn(ruleTaintValid, SubjectTaint, Repaired, effectPath, "missing; NoSchedule used")
		} else {
			p.warn(ruleTaintValid, SubjectTaint, Repaired, effectPath, "%s is not NoSchedule, PreferNoSchedule or NoExecute; NoSchedule used", text.Quote(string(taint.Effect), quoteBytes))
		}
		taint.Effect = corev1.TaintEffectNoSchedule
	}
	if earlier, repeated := j.unique.Add(taint, i); repeated {
		p.warn(ruleTaintUnique, SubjectTaint, Repaired, path(), "repeats %s of %s; the last one is kept", kuberules.IDOf(&taint), indexPath(j.list, earlier))
	}
}
