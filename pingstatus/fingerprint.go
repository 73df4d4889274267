package pingstatus

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// A fingerprint is a 64-bit hash of what a patch says, field by field,
// so that a judged patch that was changed afterwards (a part moved, a
// name repeated, a taint appended, a figure edited) is told from the
// patch that was judged, and judged afresh (see [Options.Check]). Each
// value is written with its length or its kind first, so that two
// patches that say different things write different words; maps are
// summed entry by entry, in no order. Each word is mixed in by a
// multiply and a shift (FNV-1a's way, a word at a time); computing it
// allocates nothing.
type fingerprint uint64

const (
	fnvOffset fingerprint = 14695981039346656037
	mixer     fingerprint = 0x9e3779b97f4a7c15 // 2^64 over the golden ratio, odd
)

// fingerprintOf is the fingerprint of p: its fields, its parts' names
// and what each part's patch says.
func fingerprintOf(p *NodePatch) fingerprint { return p.fingerprint(false) }

// fingerprint is p's fingerprint; with sealed, that of each part's patch
// is the one it keeps, just computed ([NodePatch.seal]).
func (p *NodePatch) fingerprint(sealed bool) fingerprint {
	h := fnvOffset
	h.int(int64(p.Kind))
	h.string(p.Status)
	fingerprintQuantities(&h, p.Resources)
	h.int(int64(len(p.Full)))
	for _, r := range p.Full {
		h.string(string(r))
	}
	h.bool(p.ReplaceTaints)
	h.taints(p.Taints)
	h.strings(p.KeptTaintKeys)
	h.bool(p.ReplaceLabels)
	h.labels(p.Labels)
	h.strings(p.KeptLabelKeys)
	h.string(string(p.Basis))
	h.bool(p.ReplaceDevices)
	h.int(int64(len(p.Devices)))
	for i := range p.Devices {
		h.device(&p.Devices[i])
	}
	h.strings(p.KeptDeviceGroups)
	h.bool(p.ReplaceParts)
	h.int(int64(len(p.Parts)))
	for i := range p.Parts {
		h.string(p.Parts[i].Name)
		part := &p.Parts[i].Patch
		if sealed {
			h.int(int64(part.sum))
		} else {
			h.int(int64(fingerprintOf(part)))
		}
	}
	h.bool(p.PartsIncomplete)
	return h
}

// int mixes n into h: the high bits of the product reach the low ones
// by the shift.
func (h *fingerprint) int(n int64) {
	x := (*h ^ fingerprint(n)) * mixer
	*h = x ^ x>>32
}

func (h *fingerprint) bool(b bool) {
	if b {
		h.int(1)
	} else {
		h.int(0)
	}
}

// string mixes s into h, its length first, then eight bytes a word.
func (h *fingerprint) string(s string) {
	h.int(int64(len(s)))
	for len(s) > 0 {
		var w int64
		n := min(8, len(s))
		for i := range n {
			w |= int64(s[i]) << (8 * i)
		}
		h.int(w)
		s = s[n:]
	}
}

// nilOr writes whether a list or a map is nil (no news) or not (a list,
// maybe empty), then its length.
func (h *fingerprint) nilOr(isNil bool, n int) {
	h.bool(isNil)
	h.int(int64(n))
}

func (h *fingerprint) strings(list []string) {
	h.nilOr(list == nil, len(list))
	for _, s := range list {
		h.string(s)
	}
}

// quantity writes q: its format, and its value, exactly: a whole number
// as it is, another in nano units (a quantity's finest) while that fits
// in an int64, and its text beyond (which allocates, for a figure of 9
// billion or more that is not whole).
func (h *fingerprint) quantity(q resource.Quantity) {
	h.string(string(q.Format))
	switch v, whole := q.AsInt64(); {
	case whole:
		h.int('w')
		h.int(v)
	case q.CmpInt64(-maxNanos) > 0 && q.CmpInt64(maxNanos) < 0:
		h.int('n')
		h.int(q.ScaledValue(resource.Nano))
	default:
		h.int('s')
		h.string(q.String())
	}
}

// maxNanos bounds the figures whose nano units fit in an int64.
const maxNanos = 9_000_000_000

// fingerprintQuantities writes m into h: a resource list, or a device's capacity.
func fingerprintQuantities[K ~string](h *fingerprint, m map[K]resource.Quantity) {
	h.nilOr(m == nil, len(m))
	var sum fingerprint
	for name, q := range m {
		e := fnvOffset
		e.string(string(name))
		e.quantity(q)
		sum += e
	}
	h.int(int64(sum))
}

func (h *fingerprint) labels(m map[string]string) {
	h.nilOr(m == nil, len(m))
	var sum fingerprint
	for k, v := range m {
		e := fnvOffset
		e.string(k)
		e.string(v)
		sum += e
	}
	h.int(int64(sum))
}

func (h *fingerprint) taints(list []corev1.Taint) {
	h.nilOr(list == nil, len(list))
	for i := range list {
		t := &list[i]
		h.string(t.Key)
		h.string(t.Value)
		h.string(string(t.Effect))
		h.bool(t.TimeAdded == nil)
		if t.TimeAdded != nil {
			h.int(t.TimeAdded.UnixNano())
		}
	}
}

func (h *fingerprint) device(g *DeviceGroup) {
	h.string(g.Name)
	h.int(int64(g.Count))
	h.nilOr(g.Attributes == nil, len(g.Attributes))
	var sum fingerprint
	for name, a := range g.Attributes {
		e := fnvOffset
		e.string(name)
		e.optional(a.IntValue != nil, "")
		if a.IntValue != nil {
			e.int(*a.IntValue)
		}
		e.optional(a.BoolValue != nil, "")
		if a.BoolValue != nil {
			e.bool(*a.BoolValue)
		}
		e.optional(a.StringValue != nil, deref(a.StringValue))
		e.optional(a.VersionValue != nil, deref(a.VersionValue))
		sum += e
	}
	h.int(int64(sum))
	fingerprintQuantities(h, g.Capacity)
	h.nilOr(g.Taints == nil, len(g.Taints))
	for _, t := range g.Taints {
		h.string(t.Key)
		h.string(t.Value)
		h.string(string(t.Effect))
	}
}

// optional writes whether a value is set, and s.
func (h *fingerprint) optional(set bool, s string) {
	h.bool(set)
	h.string(s)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
