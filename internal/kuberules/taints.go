package kuberules

import (
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// DefaultProtectedKey is the taint key that interLink's provider sets on its
// virtual node itself. No plugin may set or remove it.
const DefaultProtectedKey = "virtual-node.interlink/no-schedule"

// UnreachableTaintKey is the key of the NoSchedule taint that nodeapply
// puts on a node whose plugin has not answered for the grace, when asked
// to keep running pods instead of turning Ready False. It is pingnode's:
// no plugin may set it.
const UnreachableTaintKey = "pingnode.io/plugin-unreachable"

// PartGoneTaintKey is the key of the NoSchedule taint that nodeapply puts
// on a part's node once the plugin's reply no longer lists the part, the
// time it was added saying since when. It is pingnode's: no plugin may
// set it.
const PartGoneTaintKey = "pingnode.io/part-gone"

// BackendFullTaintKey is the key of the NoSchedule taint that nodeapply
// puts on a node whose plugin's reply says the backend has no free cpu
// or memory now, its value the resources it has none of. It is
// pingnode's: no plugin may set it.
const BackendFullTaintKey = "pingnode.io/backend-full"

// Bounds on names and values, for input whose length nothing else bounds.
const (
	// MaxNameBytes is the longest qualified name: a 253-byte DNS
	// subdomain, '/', and a 63-byte name.
	MaxNameBytes = 253 + 1 + 63
	// MaxValueBytes is the longest label value, and so taint value.
	MaxValueBytes = 63
)

// LengthProblem returns, in the words of apimachinery, why s is longer
// than max bytes, or "" if it is not.
func LengthProblem(s string, max int) string {
	if len(s) <= max {
		return ""
	}
	return "must be no more than " + strconv.Itoa(max) + " bytes"
}

// reservedPrefixes are the taint key prefixes that Kubernetes controllers own.
var reservedPrefixes = [...]string{
	"node.kubernetes.io/",
	"node.cloudprovider.kubernetes.io/",
	"node-role.kubernetes.io/",
}

// IsReservedKey reports whether key belongs to a Kubernetes controller
// (node.kubernetes.io/*, node.cloudprovider.kubernetes.io/*,
// node-role.kubernetes.io/*) or to pingnode itself ([IsPingnodeKey]).
func IsReservedKey(key string) bool {
	if IsPingnodeKey(key) {
		return true
	}
	for _, p := range reservedPrefixes {
		if strings.HasPrefix(key, p) {
			return true
		}
	}
	return false
}

// IsPingnodeKey reports whether key is one of pingnode's own taints,
// which nodeapply alone puts and removes: [UnreachableTaintKey],
// [PartGoneTaintKey] and [BackendFullTaintKey].
func IsPingnodeKey(key string) bool {
	return key == UnreachableTaintKey || key == PartGoneTaintKey || key == BackendFullTaintKey
}

// IsProtectedKey reports whether key is [DefaultProtectedKey] or one of extra.
func IsProtectedKey(key string, extra []string) bool {
	if key == DefaultProtectedKey {
		return true
	}
	for _, k := range extra {
		if key == k {
			return true
		}
	}
	return false
}

// IsValidEffect reports whether e is one of the three effects a node taint may
// have.
func IsValidEffect(e corev1.TaintEffect) bool {
	switch e {
	case corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
		return true
	}
	return false
}

// TaintKeyProblem returns why key is not a valid taint key (a qualified name),
// or "" if it is valid.
func TaintKeyProblem(key string) string { return QualifiedNameProblem(key) }

// TaintValueProblem returns why value is not a valid taint value (a label
// value, possibly empty), or "" if it is valid.
func TaintValueProblem(value string) string {
	return labelValueProblem(value)
}

// TaintID is what makes a taint unique on a node: its key and effect.
type TaintID struct {
	Key    string
	Effect corev1.TaintEffect
}

// IDOf returns the identity of t.
func IDOf(t *corev1.Taint) TaintID { return TaintID{Key: t.Key, Effect: t.Effect} }

// String returns the identity as kubectl writes it: key:Effect.
func (id TaintID) String() string { return id.Key + ":" + string(id.Effect) }

// TaintProblems is what is wrong with one taint; each field is empty or
// false when that part is right.
type TaintProblems struct {
	// Key and Value say why the key is not a qualified name, or the value
	// not a label value (the API server refuses the node).
	Key, Value string
	// Effect reports that the effect is not NoSchedule, PreferNoSchedule
	// or NoExecute.
	Effect bool
	// Reserved reports that the key belongs to Kubernetes controllers
	// ([IsReservedKey]), Protected that it belongs to the provider
	// ([IsProtectedKey]).
	Reserved, Protected bool
}

// Valid reports whether the API server takes the taint: its key, value
// and effect are valid.
func (p TaintProblems) Valid() bool { return p.Key == "" && p.Value == "" && !p.Effect }

// TaintCheck is the one check of a taint that pingstatus and nodeapply
// both run; each caller decides in what order the problems count and
// what it does about them.
type TaintCheck struct {
	// Protected are the provider's keys besides [DefaultProtectedKey].
	Protected []string
	// Bounded refuses a key longer than [MaxNameBytes] and a value longer
	// than [MaxValueBytes] by their length alone, with [LengthProblem]'s
	// words: for untrusted text, so that the name rules never read a
	// megabyte.
	Bounded bool
}

// Check returns what is wrong with t. It does not allocate when t is
// valid.
func (c TaintCheck) Check(t *corev1.Taint) TaintProblems {
	p := c.validity(t)
	p.Reserved = IsReservedKey(t.Key)
	p.Protected = IsProtectedKey(t.Key, c.Protected)
	return p
}

// validity returns what the API server finds wrong with t: its key, value
// and effect, not whose key it is.
func (c TaintCheck) validity(t *corev1.Taint) TaintProblems {
	var p TaintProblems
	if c.Bounded {
		p.Key, p.Value = LengthProblem(t.Key, MaxNameBytes), LengthProblem(t.Value, MaxValueBytes)
	}
	if p.Key == "" {
		p.Key = TaintKeyProblem(t.Key)
	}
	if p.Value == "" {
		p.Value = TaintValueProblem(t.Value)
	}
	p.Effect = !IsValidEffect(t.Effect)
	return p
}

// UniqueTaints collects taints unique by key and effect, as a node must
// hold them: of taints that repeat a key and effect, the last one is
// kept, in the place of the first. Up to a few taints it finds repeats
// pair by pair, with no map (and, as a local variable, no allocation but
// List's); past that, with a map.
type UniqueTaints struct {
	// List is the taints so far, in the order their pairs were first met.
	List []corev1.Taint
	// from[i] is where List[i] stood in the caller's input, while List
	// is short; past that, at holds where each pair stands in List, and
	// where its taint stood in the input.
	from [pairwiseLimit]int
	at   map[TaintID]taintPlace
}

// taintPlace is where a pair stands in List, and where its taint stood in
// the caller's input; int32, so that a map of them is no larger than one of
// ints (a list of 2^31 taints does not fit in memory).
type taintPlace struct{ list, from int32 }

// NewUniqueTaints returns an empty collection with room for n taints.
func NewUniqueTaints(n int) UniqueTaints {
	return UniqueTaints{List: make([]corev1.Taint, 0, n)}
}

// Add adds t, which stood at from in the caller's input. When an earlier
// taint has t's key and effect, t takes its place, and Add returns where
// that earlier one stood in the input, and true.
func (u *UniqueTaints) Add(t corev1.Taint, from int) (earlier int, repeated bool) {
	id := IDOf(&t)
	if i, ok := u.Index(id); ok {
		u.List[i] = t
		if u.at != nil {
			earlier = int(u.at[id].from)
			u.at[id] = taintPlace{int32(i), int32(from)}
		} else {
			earlier, u.from[i] = u.from[i], from
		}
		return earlier, true
	}
	n := len(u.List)
	switch {
	case u.at != nil:
		u.at[id] = taintPlace{int32(n), int32(from)}
	case n < pairwiseLimit:
		u.from[n] = from
	default: // one taint too many to look for pairs one by one
		u.at = make(map[TaintID]taintPlace, max(cap(u.List), 2*pairwiseLimit))
		for i := range u.List {
			u.at[IDOf(&u.List[i])] = taintPlace{int32(i), int32(u.from[i])}
		}
		u.at[id] = taintPlace{int32(n), int32(from)}
	}
	u.List = append(u.List, t)
	return -1, false
}

// Index returns where the taint with key and effect id stands in List.
func (u *UniqueTaints) Index(id TaintID) (int, bool) {
	if u.at != nil {
		at, ok := u.at[id]
		return int(at.list), ok
	}
	for i := range u.List {
		if IDOf(&u.List[i]) == id {
			return i, true
		}
	}
	return -1, false
}

// IndexTaints returns list, taints unique by key and effect already, as
// a collection to look up by key and effect: list itself is its List,
// read-only, and past a few taints a map is made.
func IndexTaints(list []corev1.Taint) UniqueTaints {
	u := UniqueTaints{List: list}
	if len(list) > pairwiseLimit {
		u.at = make(map[TaintID]taintPlace, len(list))
		for i := range list {
			u.at[IDOf(&list[i])] = taintPlace{int32(i), int32(i)}
		}
	}
	return u
}
