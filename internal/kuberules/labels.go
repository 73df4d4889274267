package kuberules

import "strings"

// The namespaces of node labels (a label key's prefix, a DNS subdomain)
// and who may set labels in them. A plugin describes its backend in
// namespaces the provider allows, as node-feature-discovery writes only
// into the namespaces it is allowed; it never writes where Kubernetes
// fences a kubelet's own labels (KEP-279, the NodeRestriction admission
// plugin), since a node that labels itself there can capture workloads
// dedicated to other nodes.

// DefaultLabelNamespaces are the namespaces in which a plugin may set
// labels without the provider's say: node-feature-discovery's defaults,
// with their subdomains.
var DefaultLabelNamespaces = [...]string{"feature.node.kubernetes.io", "profile.node.kubernetes.io"}

// The reasons a label key is never a plugin's, worded to read after
// "is in a namespace no plugin may set: ".
const (
	forbiddenUnprefixed      = "an unprefixed key belongs to the cluster's users and administrators"
	forbiddenNodeRestriction = "node-restriction.kubernetes.io labels are how administrators fence nodes"
	forbiddenKubernetes      = "kubernetes.io and k8s.io labels belong to Kubernetes and the kubelet"
)

// InNamespace reports whether prefix, a label key's prefix, is the
// namespace ns or one of its subdomains.
func InNamespace(prefix, ns string) bool {
	if !strings.HasSuffix(prefix, ns) {
		return false
	}
	rest := prefix[:len(prefix)-len(ns)]
	return rest == "" || strings.HasSuffix(rest, ".")
}

// ForbiddenLabelProblem returns why no plugin may set the label key,
// whatever the provider allows, or "" when a provider may allow it:
// an unprefixed key, and kubernetes.io, k8s.io and their subdomains
// (node-restriction.kubernetes.io among them), but for
// [DefaultLabelNamespaces]. key must be a qualified name.
func ForbiddenLabelProblem(key string) string {
	prefix, _, ok := strings.Cut(key, "/")
	switch {
	case !ok:
		return forbiddenUnprefixed
	case InNamespace(prefix, "node-restriction.kubernetes.io"):
		return forbiddenNodeRestriction
	case !InNamespace(prefix, "kubernetes.io") && !InNamespace(prefix, "k8s.io"):
		return ""
	}
	for _, ns := range DefaultLabelNamespaces {
		if InNamespace(prefix, ns) {
			return ""
		}
	}
	return forbiddenKubernetes
}

// LabelProblems is what is wrong with one label a plugin asks for; each
// field is empty or false when that part is right, and the fields after
// Key are judged only when the key is valid.
type LabelProblems struct {
	// Key and Value say why the key is not a qualified name, or the value
	// not a label value (the API server refuses the node).
	Key, Value string
	// Forbidden says why the key's namespace is never a plugin's
	// ([ForbiddenLabelProblem]).
	Forbidden string
	// NotAllowed reports that the key's namespace is not one the provider
	// allows; Protected that the key is one the provider sets itself.
	NotAllowed, Protected bool
}

// Valid reports whether the API server takes the label.
func (p LabelProblems) Valid() bool { return p.Key == "" && p.Value == "" }

// Mine reports whether the label is valid and the plugin may set it.
func (p LabelProblems) Mine() bool {
	return p.Valid() && p.Forbidden == "" && !p.NotAllowed && !p.Protected
}

// LabelCheck is the one check of a plugin's label that pingstatus and
// nodeapply both run.
type LabelCheck struct {
	// Namespaces are the namespaces the provider allows besides
	// [DefaultLabelNamespaces], each with its subdomains.
	Namespaces []string
	// Protected are the label keys the provider sets itself.
	Protected []string
	// Bounded refuses a key longer than [MaxNameBytes] and a value longer
	// than [MaxValueBytes] by their length alone (see [TaintCheck]).
	Bounded bool
}

// Check returns what is wrong with the label key=value. It does not
// allocate.
func (c LabelCheck) Check(key, value string) LabelProblems {
	var p LabelProblems
	if c.Bounded {
		p.Key, p.Value = LengthProblem(key, MaxNameBytes), LengthProblem(value, MaxValueBytes)
	}
	if p.Key == "" {
		p.Key = QualifiedNameProblem(key)
	}
	if p.Value == "" {
		p.Value = labelValueProblem(value)
	}
	if p.Key != "" {
		return p
	}
	p.Forbidden = ForbiddenLabelProblem(key)
	p.NotAllowed = !c.Allowed(key)
	for _, k := range c.Protected {
		p.Protected = p.Protected || k == key
	}
	return p
}

// Allowed reports whether key, a qualified name, is in one of the
// namespaces the check allows ([DefaultLabelNamespaces] and Namespaces).
// It says nothing of whether the key is forbidden.
func (c LabelCheck) Allowed(key string) bool {
	prefix, _, ok := strings.Cut(key, "/")
	if !ok {
		return false
	}
	for _, ns := range DefaultLabelNamespaces {
		if InNamespace(prefix, ns) {
			return true
		}
	}
	for _, ns := range c.Namespaces {
		if ns != "" && InNamespace(prefix, ns) {
			return true
		}
	}
	return false
}

// NamespaceProblem returns why ns cannot be a namespace a provider allows
// for its plugin's labels: it must be a lowercase DNS subdomain, and not
// one whose labels no plugin may set. "" when it can.
func NamespaceProblem(ns string) string {
	if !isDNS1123Subdomain(ns) {
		return problemPrefix
	}
	if p := ForbiddenLabelProblem(ns + "/x"); p != "" {
		return "no plugin may set labels there: " + p
	}
	return ""
}
