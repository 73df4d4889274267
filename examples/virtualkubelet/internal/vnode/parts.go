package vnode

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/pingnode/pingnode/pingstatus"
)

// A backend's parts (-parts): the machines, or partitions of identical
// machines, that a plugin's reply lists ("nodes", pingstatus rules part-entries, part-fields
// and part-no-sum), each served as a node of its own. One ping of the plugin serves
// every part's node: the parts supervisor (internal/supervise) pings, parses,
// asks nodeapply/parts what becomes of each part's node, and feeds each
// node's runner, a [Node] like any other, the part's ping instead of
// a ping of its own (internal/supervise). This file says what a part's node is:
// its name, made from a template, its labels, and how the provider tells
// its own nodes from everyone else's.

// PartToken stands for a part's name in the -node template of a provider
// that serves parts: -node 'slurm-{part}' names the node of the part
// cn001 slurm-cn001. It is replaced as text, once.
const PartToken = "{part}"

// PartLabel is the label of a part's node that names its part, so that a
// pod can select a partition (nodeSelector pingnode.io/part: gpu), and
// OwnerLabel the label that says which provider owns it: its value is
// [Parts.Owner]. A provider serves, adopts, changes and deletes only the
// nodes with its own OwnerLabel, whose name is its template's for the
// part PartLabel names; it never touches another node, even one whose
// name its template makes.
const (
	PartLabel  = "pingnode.io/part"
	OwnerLabel = "pingnode.io/parts-of"
)

// maxNodeNameBytes is the longest node name: a DNS subdomain.
const maxNodeNameBytes = validation.DNS1123SubdomainMaxLength

// PartPattern is the regular expression of a part's name: a DNS label
// of at most pingstatus.MaxPartNameBytes characters.
const PartPattern = `[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?`

// Parts is the configuration of a provider that serves its plugin's parts
// (-parts); [Config.Parts].
type Parts struct {
	// Template names each part's node: the part's name in place of
	// [PartToken], which it holds exactly once (-node).
	Template string
	// Owner is the value of [OwnerLabel] on the nodes of this provider
	// (-parts-owner): a label value, not empty.
	Owner string
	// Grace is how long a part's node keeps its running pods after its
	// part has left the reply (nodeapply.Options.PartGrace, -part-grace);
	// zero means nodeapply.DefaultGrace.
	Grace time.Duration
}

// DefaultOwner is the owner of the nodes of template when -parts-owner is
// not given: the template with [PartToken] read as "part"
// ('slurm-{part}' is slurm-part).
func DefaultOwner(template string) string {
	return strings.Replace(template, PartToken, "part", 1)
}

// check returns the first setting of p that cannot work, as a
// *SettingError.
func (p *Parts) check() error {
	if problem := TemplateProblem(p.Template); problem != "" {
		return settingError("Parts.Template", p.Template, "%s", problem)
	}
	if problems := validation.IsValidLabelValue(p.Owner); p.Owner == "" || len(problems) > 0 {
		if p.Owner == "" {
			problems = []string{"empty"}
		}
		return settingError("Parts.Owner", p.Owner, "want a label value (the value of %s on its nodes): %s", OwnerLabel, strings.Join(problems, "; "))
	}
	if p.Grace < 0 {
		return settingError("Parts.Grace", p.Grace, "want zero or more")
	}
	return nil
}

// TemplateProblem says why template cannot name the node of every part
// (a DNS label of at most 63 characters) as a valid node name, a DNS
// subdomain of at most 253, or returns "". A part's name starts and ends
// with a letter or a digit and holds only those and '-', as "a" does: a
// template that makes a node name of "a" and of a 63-character part, with
// at most 253-63 characters around the token, makes one of every part.
func TemplateProblem(template string) string {
	if n := strings.Count(template, PartToken); n != 1 {
		return fmt.Sprintf("with -parts, the name must hold %s exactly once, the part's name (it holds it %d times)", PartToken, n)
	}
	prefix, suffix, _ := strings.Cut(template, PartToken)
	if around, most := len(prefix)+len(suffix), maxNodeNameBytes-pingstatus.MaxPartNameBytes; around > most {
		return fmt.Sprintf("%d characters around %s, want at most %d, so that a part's name of %d makes a node name of at most %d", around, PartToken, most, pingstatus.MaxPartNameBytes, maxNodeNameBytes)
	}
	for _, part := range []string{"a", strings.Repeat("a", pingstatus.MaxPartNameBytes)} {
		if problems := validation.IsDNS1123Subdomain(prefix + part + suffix); len(problems) > 0 {
			return fmt.Sprintf("with the part %q it names the node %q, which is no node name: %s", part, prefix+part+suffix, strings.Join(problems, "; "))
		}
	}
	return ""
}

// NodeName is the name of part's node.
func (p *Parts) NodeName(part string) string {
	return strings.Replace(p.Template, PartToken, part, 1)
}

// Pattern is the regular expression (RE2, as CEL's matches reads it) of
// the names of the template's nodes.
func (p *Parts) Pattern() string {
	prefix, suffix, _ := strings.Cut(p.Template, PartToken)
	return "^" + regexp.QuoteMeta(prefix) + PartPattern + regexp.QuoteMeta(suffix) + "$"
}

// Owns reports whether node is one of this provider's: it has the
// provider's [OwnerLabel], and [PartLabel] names a part whose node's
// name is the node's.
func (p *Parts) Owns(node *corev1.Node) bool {
	_, ok := p.PartOf(node)
	return ok && node.Labels[OwnerLabel] == p.Owner
}

// PartOf returns the part of an owned node, from its [PartLabel], and
// reports whether the label names a part whose node's name is the node's.
func (p *Parts) PartOf(node *corev1.Node) (string, bool) {
	if node == nil {
		return "", false
	}
	part, ok := node.Labels[PartLabel]
	if !ok || pingstatus.PartNameProblem(part) != "" || p.NodeName(part) != node.Name {
		return part, false
	}
	return part, true
}

// ForPart returns the configuration of part's node, from c, the
// configuration of the provider that serves its plugin's parts: c with
// the static node named after the part, labelled with it and with the
// owner. kubernetes.io/hostname is the node's name, as for a node of its
// own, unless the name is longer than a label value may be (63
// characters): such a node has none, and pods select it by [PartLabel].
func (c *Config) ForPart(part string) Config {
	cfg := *c
	name := c.Parts.NodeName(part)
	cfg.Static = StaticNode(name)
	for resource, q := range c.StaticResources {
		cfg.Static.Status.Capacity[resource] = q.DeepCopy()
		cfg.Static.Status.Allocatable[resource] = q.DeepCopy()
	}
	labels := cfg.Static.Labels
	labels[PartLabel], labels[OwnerLabel] = part, c.Parts.Owner
	if len(validation.IsValidLabelValue(name)) > 0 {
		delete(labels, corev1.LabelHostname)
	}
	cfg.Part = part
	return cfg
}

// StaticLabelKeys are the keys of the labels of the static node, sorted,
// which no plugin may set: with parts, those of every part's node (its
// hostname among them, though a node of a long name has none).
func (c *Config) StaticLabelKeys() []string {
	static := c.Static
	if c.Parts != nil {
		static = StaticNode("")
		static.Labels[PartLabel], static.Labels[OwnerLabel] = "", ""
	}
	if static == nil {
		return nil
	}
	return slices.Sorted(maps.Keys(static.Labels))
}

// ours returns node, read with err, or an error if it is another's
// ([Node.foreign]).
func (p *Node) ours(node *corev1.Node, err error) (*corev1.Node, error) {
	if err == nil {
		err = p.foreign(node)
	}
	if err != nil {
		return nil, err
	}
	return node, nil
}

// foreign returns an error if node, as stored, is not this provider's to
// touch: a part's node (-parts) without the provider's ownership label
// (parts.go), though its name is the part's. A node of its own is always
// the provider's.
func (p *Node) foreign(node *corev1.Node) error {
	if p.cfg.Parts == nil || p.cfg.Parts.Owns(node) {
		return nil
	}
	p.another.Store(true)
	return fmt.Errorf("the node %s is not this provider's (it lacks the label %s=%s of its part %s); it is left alone", node.Name, OwnerLabel, p.cfg.Parts.Owner, p.cfg.Part)
}
