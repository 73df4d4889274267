package pingstatus

import (
	"slices"

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
	DefaultMaxLabels       = 256
	DefaultMaxDevices      = 1024
	// DefaultMaxParts is Kubernetes' own limit of nodes in a cluster.
	DefaultMaxParts = 5000
	// MaxShared is the most taints, and the most labels, that a reply may
	// give beside its parts, each of them every part's (rule part-fields): each
	// part with a list of its own gets a copy of the reply's, so that
	// 5,000 parts cost at most 80,000 entries of each.
	MaxShared = 16
)

// DefaultLabelNamespaces returns the namespaces in which a plugin may set
// labels unless the provider allows more ([Options.LabelNamespaces]):
// node-feature-discovery's defaults, feature.node.kubernetes.io and
// profile.node.kubernetes.io, each with its subdomains.
func DefaultLabelNamespaces() []string { return slices.Clone(kuberules.DefaultLabelNamespaces[:]) }

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
	// whole. Zero or less means [DefaultMaxBodyBytes]. A provider reads at
	// most [Options.ReadLimit] bytes of a reply.
	MaxBodyBytes int
	// MaxAccelerators is the most accelerator entries accepted; a longer
	// list is ignored whole. Zero or less means [DefaultMaxAccelerators].
	MaxAccelerators int
	// MaxTaints is the most taint entries accepted; a longer list is
	// ignored whole. Zero or less means [DefaultMaxTaints].
	MaxTaints int
	// LabelNamespaces are the namespaces, besides
	// [DefaultLabelNamespaces], in which the plugin may set labels: a
	// label key's prefix must be one of them or a subdomain of one
	// ("nvidia.com" allows nvidia.com/gpu.product). Whatever they say, no
	// plugin may set an unprefixed label, nor one in kubernetes.io, k8s.io
	// or their subdomains (node-restriction.kubernetes.io among them) but
	// for the default namespaces.
	LabelNamespaces []string
	// ProtectedLabels are label keys that the provider sets itself (at
	// registration, from its configuration): a plugin entry with one of
	// them is dropped, even in an allowed namespace.
	ProtectedLabels []string
	// MaxLabels is the most label entries accepted; more are ignored
	// whole. Zero or less means [DefaultMaxLabels].
	MaxLabels int
	// MaxDevices is the most device groups a reply may list, and the most
	// devices their counts may add up to; more are ignored whole. Zero or
	// less means [DefaultMaxDevices]; more than 100000 counts as 100000.
	MaxDevices int
	// MaxParts is the most parts a reply may list; more are ignored
	// whole. Zero or less means [DefaultMaxParts]. A provider that serves
	// parts may need a larger MaxBodyBytes: a part of a few resources and
	// labels is about 100 bytes.
	MaxParts int
}

// ReadLimit is how many bytes of a reply a provider reads: one more than
// MaxBodyBytes, so that Parse can tell a reply over the limit (and ignore
// it, with a warning) from one at the limit. Read with
// io.LimitReader(body, opts.ReadLimit()).
func (o Options) ReadLimit() int64 { return int64(o.maxBodyBytes()) + 1 }

func (o Options) maxBodyBytes() int    { return orDefault(o.MaxBodyBytes, DefaultMaxBodyBytes) }
func (o Options) maxAccelerators() int { return orDefault(o.MaxAccelerators, DefaultMaxAccelerators) }
func (o Options) maxTaints() int       { return orDefault(o.MaxTaints, DefaultMaxTaints) }
func (o Options) maxLabels() int       { return orDefault(o.MaxLabels, DefaultMaxLabels) }
func (o Options) maxParts() int        { return orDefault(o.MaxParts, DefaultMaxParts) }
func (o Options) maxDevices() int      { return min(orDefault(o.MaxDevices, DefaultMaxDevices), 100000) }

// labelCheck is the check of a plugin's label by these options:
// bounded, since the reply's text is.
func (o Options) labelCheck() kuberules.LabelCheck {
	return kuberules.LabelCheck{Namespaces: o.LabelNamespaces, Protected: o.ProtectedLabels, Bounded: true}
}

func orDefault(n, def int) int {
	if n <= 0 {
		return def
	}
	return n
}
