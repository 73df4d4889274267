package pingstatus

import (
	"fmt"
	"maps"
	"slices"
	"strconv"

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

// unknownBasis stands for a basis of the wrong JSON type, already warned
// about.
const unknownBasis = "\x00"

// basis judges resources.basis: "available" or "total"; anything else is
// read as "total", so that nothing is added to figures whose meaning is
// unknown.
func (p *parser) basis(b *string) Basis {
	switch {
	case b == nil:
		return ""
	case *b == string(BasisAvailable), *b == string(BasisTotal):
		return Basis(*b)
	case *b != unknownBasis:
		p.warn(SubjectResource, Repaired, fieldPath(resourcesLevel, basisField), "%s is not \"available\" or \"total\"; read as \"total\": nothing is added to the figures", text.Quote(*b, quoteBytes))
	}
	return BasisTotal
}

// resources judges cpu, memory, pods and accelerators.
func (p *parser) resources(r *resources) corev1.ResourceList {
	list := make(corev1.ResourceList, 4+len(r.Accelerators)+len(r.Hugepages))
	p.standard(list, cpuField, corev1.ResourceCPU, r.CPU)
	p.standard(list, memoryField, corev1.ResourceMemory, r.Memory)
	p.standard(list, podsField, corev1.ResourcePods, r.Pods)
	p.standard(list, ephemeralStorageField, corev1.ResourceEphemeralStorage, r.EphemeralStorage)
	p.acceleratorList(list, r.Accelerators)
	p.hugepages(list, r.Hugepages)
	if len(list) == 0 {
		return nil
	}
	return list
}

// standard judges the field k of resources, q, for the resource name.
func (p *parser) standard(list corev1.ResourceList, k int, name corev1.ResourceName, q quantity) {
	if !q.set {
		return
	}
	path := fieldPath(resourcesLevel, k)
	v, ok := p.quantity(path, name, q)
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

// hugepages judges resources.hugepages: each page size as the kubelet
// names it, each amount a quantity of memory; zero is allowed (the pages
// are gone).
func (p *parser) hugepages(list corev1.ResourceList, pages map[string]quantity) {
	for _, size := range slices.Sorted(maps.Keys(pages)) {
		q := pages[size]
		if !q.set {
			continue
		}
		path := hugepagesPath(size)
		name, problem := kuberules.HugePageResourceName(size)
		if problem != "" {
			p.warn(SubjectResource, Refused, path, "%s is not a page size: %s; entry dropped", text.Quote(size, quoteBytes), problem)
			continue
		}
		if v, ok := p.quantity(path, name, q); ok {
			list[name] = v
		}
	}
}

// quantity parses q and judges it as a value of name: not negative, a
// whole number for the resources that count whole, and not too large. On
// refusal it warns and the resource is left unchanged.
func (p *parser) quantity(path string, name corev1.ResourceName, q quantity) (resource.Quantity, bool) {
	v, problem := readQuantity(q.text, func() string { return kuberules.LimitText(name) })
	switch {
	case problem != "":
	case kuberules.QuantityProblem(name, v) != "":
		problem = q.text + " " + kuberules.QuantityProblem(name, v)
	case kuberules.TooLarge(name, v):
		problem = q.text + " is too large: " + kuberules.LimitText(name)
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

func (p *parser) acceleratorList(list corev1.ResourceList, accs []accelerator) {
	listPath := fieldPath(resourcesLevel, acceleratorsField)
	if !p.withinLimit(SubjectResource, listPath, "accelerators", len(accs), p.opts.maxAccelerators()) {
		return
	}
	first := make(map[corev1.ResourceName]int, len(accs))
	for i, a := range accs {
		if a.dropped {
			continue
		}
		path := indexPath(listPath, i)
		name := corev1.ResourceName(a.ResourceType)
		problem := kuberules.LengthProblem(a.ResourceType, kuberules.MaxNameBytes)
		if problem == "" {
			problem = kuberules.ExtendedResourceNameProblem(name)
		}
		if problem != "" {
			p.warn(SubjectResource, Refused, path+fieldPath(acceleratorLevel, resourceTypeField), "%s is not an extended resource name: %s; entry dropped", text.Quote(a.ResourceType, quoteBytes), problem)
			continue
		}
		availablePath := path + fieldPath(acceleratorLevel, availableField)
		if !a.Available.set {
			p.warn(SubjectResource, Refused, availablePath, "missing; entry dropped")
			continue
		}
		v, ok := p.quantity(availablePath, name, a.Available)
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

// taints judges the plugin's taint list. Over the limit, the whole field is
// no news. Otherwise the result is the plugin's whole list (possibly empty)
// and the keys of entries refused for their value.
func (p *parser) taints(in []taint) (replace bool, out []corev1.Taint, kept []string) {
	list := fieldPath(replyLevel, taintsField)
	if !p.withinLimit(SubjectTaint, list, "taints", len(in), p.opts.maxTaints()) {
		return false, nil, nil
	}
	kept = p.keptOnBadValue
	check := p.taintCheck()
	unique := kuberules.NewUniqueTaints(len(in))
	for i, t := range in {
		if t.dropped {
			continue
		}
		path := indexPath(list, i)
		taint := corev1.Taint{Key: t.Key, Value: t.Value, Effect: corev1.TaintEffect(t.Effect)}
		problems := check.Check(&taint)
		switch {
		case problems.Key != "":
			p.warn(SubjectTaint, Refused, path+fieldPath(taintLevel, keyField), "%s is not a valid taint key: %s; entry dropped", text.Quote(t.Key, quoteBytes), problems.Key)
			continue
		case problems.Reserved && t.Key == kuberules.UnreachableTaintKey:
			p.warn(SubjectTaint, Refused, path+fieldPath(taintLevel, keyField), "%s is pingnode's own, for a plugin that does not answer; entry dropped", t.Key)
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
	return true, unique.List, kept
}

// taintCheck is the check of a plugin's taint: bounded, since the reply's
// text is, and with the provider's protected keys.
func (p *parser) taintCheck() kuberules.TaintCheck {
	return kuberules.TaintCheck{Protected: p.opts.ProtectedKeys, Bounded: true}
}
