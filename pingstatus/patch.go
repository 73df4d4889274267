package pingstatus

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/pingnode/pingnode/internal/kuberules"
)

// DefaultProtectedKey is the taint key that interLink's provider sets on its
// own virtual node. No plugin may set it, and nodeapply never removes it.
const DefaultProtectedKey = kuberules.DefaultProtectedKey

// The limits that the zero [Options] stand for.
const (
	DefaultMaxBodyBytes    = 1 << 20
	DefaultMaxAccelerators = 256
	DefaultMaxTaints       = 256
)

// Options change how [Parse] judges a reply. The zero value is the safe
// default.
type Options struct {
	// AllowZero accepts "0" for cpu, memory and pods. By default a zero is
	// refused with a warning: a plugin that reports no cpu would silently
	// drain the node, and the tool for "take no pods" is a taint.
	AllowZero bool
	// ProtectedKeys are taint keys, besides [DefaultProtectedKey], that
	// belong to the provider: a plugin entry with one of them is dropped.
	ProtectedKeys []string
	// MaxBodyBytes is the largest reply accepted; a larger one is ignored
	// whole. Zero or less means [DefaultMaxBodyBytes].
	MaxBodyBytes int
	// MaxAccelerators is the most accelerator entries accepted; a longer
	// list is ignored whole. Zero or less means [DefaultMaxAccelerators].
	MaxAccelerators int
	// MaxTaints is the most taint entries accepted; a longer list is
	// ignored whole. Zero or less means [DefaultMaxTaints].
	MaxTaints int
}

func (o Options) maxBodyBytes() int    { return orDefault(o.MaxBodyBytes, DefaultMaxBodyBytes) }
func (o Options) maxAccelerators() int { return orDefault(o.MaxAccelerators, DefaultMaxAccelerators) }
func (o Options) maxTaints() int       { return orDefault(o.MaxTaints, DefaultMaxTaints) }

func orDefault(n, def int) int {
	if n <= 0 {
		return def
	}
	return n
}

// Kind says what sort of reply a body was.
type Kind int

const (
	// Legacy is a body that is not a JSON object: plain text, an array,
	// null, a number, a string, or nothing. It carries no news.
	Legacy Kind = iota
	// Structured is a JSON object; its fields were judged one by one.
	Structured
	// Unusable is a body that looked like a JSON object but did not parse,
	// or was larger than the limit. It carries no news; a warning says why.
	Unusable
)

// String returns "legacy", "structured" or "unusable".
func (k Kind) String() string {
	switch k {
	case Legacy:
		return "legacy"
	case Structured:
		return "structured"
	case Unusable:
		return "unusable"
	}
	return "Kind(?)"
}

// NodePatch is what a reply asks of the node, with every entry already
// valid by Kubernetes' rules. The zero NodePatch changes nothing.
type NodePatch struct {
	// Kind says what sort of reply this came from.
	Kind Kind
	// Status is the reply's status text, for logs.
	Status string
	// Resources holds the accepted quantities: cpu, memory, pods and
	// extended resources. A resource that is absent is no news.
	Resources corev1.ResourceList
	// ReplaceTaints reports whether the reply carried a taints list. When
	// true, Taints (possibly empty) is the plugin's whole list; when false,
	// the node's taints are left alone.
	ReplaceTaints bool
	// Taints is the plugin's list, unique by key and effect, with valid
	// keys, values and effects, and no reserved or protected keys.
	Taints []corev1.Taint
	// KeptTaintKeys are keys of taint entries refused for a bad value. The
	// plugin still means a taint with that key, so nodeapply keeps the
	// plugin's current taints with these keys instead of removing them.
	KeptTaintKeys []string
	// Basis is what the resources' figures are, as the reply says: what
	// the backend has available now, or the total it gives the node. ""
	// when the reply does not say.
	Basis Basis
}

// Basis says what a reply's resource figures are.
type Basis string

const (
	// BasisAvailable figures are what the backend can take now: what this
	// node's pods already use on the backend is not in them. It is what a
	// reply that does not say is taken to mean.
	BasisAvailable Basis = "available"
	// BasisTotal figures are all the backend gives this node, what this
	// node's pods use included: nothing is added to them.
	BasisTotal Basis = "total"
)

// IsEmpty reports whether p asks for no change at all.
func (p *NodePatch) IsEmpty() bool {
	return len(p.Resources) == 0 && !p.ReplaceTaints
}

// Warning is a problem found in a reply, and what was done about it.
type Warning struct {
	// Path is the JSON path of what it is about, like "taints[2].effect";
	// empty for the reply as a whole.
	Path string
	// Message says what was wrong and what was done instead.
	Message string
}

// String returns "path: message", or the message alone for the whole reply.
func (w Warning) String() string {
	if w.Path == "" {
		return w.Message
	}
	return w.Path + ": " + w.Message
}
