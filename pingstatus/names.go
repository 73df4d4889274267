package pingstatus

import "github.com/pingnode/pingnode/internal/kuberules"

// MaxPartNameBytes is the longest name of a part (rule part-entries): a
// DNS label. A provider that names a part's node after its part leaves
// room for it.
const MaxPartNameBytes = kuberules.MaxPartNameBytes

// PartNameProblem returns why name cannot name a part (rule
// part-entries: a DNS label of at most [MaxPartNameBytes]), or "" when it
// can: the check Parse makes of each part's name, for a provider that
// reads a part's name back from its node's.
func PartNameProblem(name string) string { return kuberules.PartNameProblem(name) }

// LabelNamespaceProblem returns why no provider may allow plugins to set
// labels in the namespace ns (rule label-namespace: not a DNS subdomain,
// or kubernetes.io, k8s.io and their subdomains but node-feature-discovery's
// two), or "" when one may, as in [Options.LabelNamespaces]: a provider
// checks its setting with it once, at start.
func LabelNamespaceProblem(ns string) string { return kuberules.NamespaceProblem(ns) }
