package pingstatus

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/pingnode/pingnode/internal/kuberules"
	"github.com/pingnode/pingnode/internal/text"
	"github.com/pingnode/pingnode/pingstatus/internal/jsontree"
)

// shared are the reply's taints and labels beside its parts, which every
// part has before its own (rule part-fields).
type shared struct {
	taintsGiven, taintsRefused bool
	taints                     []corev1.Taint
	keptTaints                 []string
	labelsGiven, labelsRefused bool
	labels                     map[string]string
	keptLabels                 []string
}

// partRef is an entry of the parts list with a valid name.
type partRef struct {
	name string
	i    int // its index in the list
	e    int // its value in the tree
}

// parts reads and judges the reply's parts, in f, the reply's fields,
// into patch (rules part-entries, part-fields and part-no-sum).
func (p *parser) parts(t *jsontree.Tree, f [maxLevelFields]int, patch *NodePatch) {
	for _, k := range [...]int{resourcesField, devicesField} {
		if t.Present(f[k]) {
			p.besideParts(k)
		}
	}
	list := fieldPath(replyLevel, nodesField)
	nodes := f[nodesField]
	if !p.withinLimit(rulePartEntries, SubjectPart, list, "parts", treeCount(t, nodes), p.opts.maxParts()) ||
		!p.expect(t, nodes, SubjectPart, Refused, list, arrayKinds, "parts left unchanged") {
		return
	}
	var s shared
	if taints := f[taintsField]; t.Present(taints) {
		s.taintsGiven = true
		s.taintsRefused = true
		if p.withinLimit(rulePartFields, SubjectTaint, fieldPath(replyLevel, taintsField), "every part's taints", treeCount(t, taints), MaxShared) {
			if replace, out, kept := p.taints(t, taints); replace {
				s.taintsRefused, s.taints, s.keptTaints = false, out, kept
			}
		}
	}
	if labels := f[labelsField]; t.Present(labels) {
		s.labelsGiven = true
		s.labelsRefused = true
		if p.withinLimit(rulePartFields, SubjectLabel, fieldPath(replyLevel, labelsField), "every part's labels", treeCount(t, labels), MaxShared) {
			if replace, out, kept := p.labels(t, labels); replace {
				s.labelsRefused, s.labels, s.keptLabels = false, out, kept
			}
		}
	}
	refs := p.partNames(t, nodes, patch)
	patch.ReplaceParts = true
	patch.Parts = make([]Part, 0, len(refs))
	for _, r := range p.lastOfEachPart(list, refs) {
		p.at, p.part = indexPath(list, r.i), r.name
		pf := memberFields(t, r.e, partLevel)
		part := Part{Name: r.name, Patch: NodePatch{Kind: Structured}}
		p.node(t, pf, &part.Patch)
		p.at, p.part = "", ""
		s.into(&part.Patch, t.Present(pf[taintsField]), t.Present(pf[labelsField]))
		patch.Parts = append(patch.Parts, part)
	}
	slices.SortFunc(patch.Parts, func(a, b Part) int { return strings.Compare(a.Name, b.Name) })
}

// partNames returns the entries of the parts list nodes that are objects
// with a valid name, in order, and warns of the others, which make the
// list incomplete.
func (p *parser) partNames(t *jsontree.Tree, nodes int, patch *NodePatch) []partRef {
	list := fieldPath(replyLevel, nodesField)
	refs := make([]partRef, 0, t.Len(nodes))
	i := -1
	for e := t.First(nodes); e != none; e = t.Next(e) {
		i++
		path := indexPath(list, i)
		if !p.expect(t, e, SubjectPart, Refused, path, objectKinds, "entry dropped, and no part leaves") {
			patch.PartsIncomplete = true
			continue
		}
		n := memberFields(t, e, partLevel)[partNameField]
		namePath := path + "." + levelFields[partLevel][partNameField]
		switch {
		case !t.Present(n):
			p.warn(rulePartEntries, SubjectPart, Refused, namePath, "missing; entry dropped, and no part leaves")
			patch.PartsIncomplete = true
			continue
		case !p.expect(t, n, SubjectPart, Refused, namePath, stringKinds, "entry dropped, and no part leaves"):
			patch.PartsIncomplete = true
			continue
		}
		name := t.Str(n)
		if !p.partName(namePath, name) {
			patch.PartsIncomplete = true
			continue
		}
		refs = append(refs, partRef{name: name, i: i, e: e})
	}
	return refs
}

// partName judges name, at path, as a part's name: a DNS label of at most
// 63 characters (rule part-entries).
func (p *parser) partName(path, name string) bool {
	if problem := kuberules.PartNameProblem(name); problem != "" {
		p.warn(rulePartEntries, SubjectPart, Refused, path, "%s is not a valid part name: %s; entry dropped, and no part leaves", text.Quote(name, quoteBytes), problem)
		return false
	}
	return true
}

// besideParts warns that the field k of the reply, resources or devices,
// is ignored beside the parts, whose parts replace a sum (rule
// part-no-sum).
func (p *parser) besideParts(k int) {
	p.warn(rulePartNoSum, nowhere.child(replyLevel, k).subject(), Ignored, fieldPath(replyLevel, k), "beside %q, whose parts replace a sum; ignored", fieldPath(replyLevel, nodesField))
}

// lastOfEachPart returns the entries refs but, of entries with the same
// name, the last alone, and warns at each later one of the one before,
// which is passed over unread (rule part-entries), as of device groups.
// list is the parts list's path.
func (p *parser) lastOfEachPart(list string, refs []partRef) []partRef {
	byName := slices.Clone(refs)
	slices.SortStableFunc(byName, func(a, b partRef) int { return strings.Compare(a.name, b.name) })
	var before map[int]int // the index of an entry to that of the one before it of its name
	for k := 1; k < len(byName); k++ {
		if byName[k].name == byName[k-1].name {
			if before == nil {
				before = make(map[int]int)
			}
			before[byName[k].i] = byName[k-1].i
		}
	}
	if before == nil {
		return refs
	}
	last := make(map[string]int, len(before))
	for _, r := range refs {
		if j, repeats := before[r.i]; repeats {
			p.part = r.name
			p.warn(rulePartEntries, SubjectPart, Repaired, indexPath(list, r.i), "%s repeats %s; the last one is used", r.name, indexPath(list, j))
			p.part = ""
		}
		last[r.name] = r.i
	}
	out := refs[:0:0]
	for _, r := range refs {
		if last[r.name] == r.i {
			out = append(out, r)
		}
	}
	return out
}

// into gives part, a part's patch, the reply's taints and labels before
// its own (its own given, or not, as ownTaints and ownLabels say): of a
// taint's key and effect, or a label's key, in both, the part's counts,
// as of a pair or key given twice the last does. A list of the reply's
// that was refused leaves every part's list of that field unchanged.
// The parts share the reply's lists when they have none of their own:
// read-only.
func (s *shared) into(part *NodePatch, ownTaints, ownLabels bool) {
	switch {
	case s.taintsRefused || ownTaints && !part.ReplaceTaints:
		part.ReplaceTaints, part.Taints, part.KeptTaintKeys = false, nil, nil
	case s.taintsGiven && !ownTaints:
		part.ReplaceTaints, part.Taints, part.KeptTaintKeys = true, s.taints, s.keptTaints
	case s.taintsGiven:
		part.Taints = beforeOwn(s.taints, part.Taints)
		part.KeptTaintKeys = union(s.keptTaints, part.KeptTaintKeys)
	}
	switch {
	case s.labelsRefused || ownLabels && !part.ReplaceLabels:
		part.ReplaceLabels, part.Labels, part.KeptLabelKeys = false, nil, nil
	case s.labelsGiven && !ownLabels:
		part.ReplaceLabels, part.Labels, part.KeptLabelKeys = true, s.labels, s.keptLabels
	case s.labelsGiven:
		labels := make(map[string]string, len(s.labels)+len(part.Labels))
		for k, v := range s.labels {
			labels[k] = v
		}
		for k, v := range part.Labels {
			labels[k] = v
		}
		part.Labels = labels
		part.KeptLabelKeys = union(s.keptLabels, part.KeptLabelKeys)
	}
}

// beforeOwn returns the reply's taints, then the part's own, each list
// unique by key and effect: of a pair in both, the part's taint stands in
// the reply's place, as the last of a repeated pair does (rule taint-unique). The
// reply's list is at most MaxShared long, so a look through it for each
// of the part's taints, whose number the body bounds, costs no set.
func beforeOwn(reply, own []corev1.Taint) []corev1.Taint {
	out := make([]corev1.Taint, len(reply), len(reply)+len(own))
	copy(out, reply)
	for _, t := range own {
		i := slices.IndexFunc(out[:len(reply)], func(r corev1.Taint) bool { return r.Key == t.Key && r.Effect == t.Effect })
		if i < 0 {
			out = append(out, t)
		} else {
			out[i] = t
		}
	}
	return out
}

// union returns the keys in a or b, sorted, each once; nil for none.
func union(a, b []string) []string {
	if len(a)+len(b) == 0 {
		return nil
	}
	out := slices.Concat(a, b)
	slices.Sort(out)
	return slices.Compact(out)
}
