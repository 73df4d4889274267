package pingstatus

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/pingnode/pingnode/internal/kuberules"
	"github.com/pingnode/pingnode/internal/text"
)

// A judgement is what a patch remembers of being judged: the options
// [Parse] or [Options.Check] judged it with. The patches judged together,
// a reply's and its parts', share one; each keeps its own fingerprint.
type judgement struct{ opts Options }

// seal makes p, and each of its parts' patches, remember that they were
// judged by j, and what each said then.
func (p *NodePatch) seal(j *judgement) {
	for i := range p.Parts {
		p.Parts[i].Patch.seal(j)
	}
	p.judged, p.sum = j, p.fingerprint(true)
}

// judgedBy reports whether p was judged by options that judge as o does,
// and says what it said then.
func (p *NodePatch) judgedBy(o Options) bool {
	return p.judged.by(o) && p.sum == fingerprintOf(p)
}

// by reports whether j is a judgement by options that judge a patch as o
// does: every option but MaxBodyBytes, which bounds a reply's text and
// not what it says.
func (j *judgement) by(o Options) bool {
	if j == nil {
		return false
	}
	a := &j.opts
	return a.AllowZero == o.AllowZero &&
		a.maxAccelerators() == o.maxAccelerators() && a.maxTaints() == o.maxTaints() && a.maxLabels() == o.maxLabels() &&
		a.maxDevices() == o.maxDevices() && a.maxParts() == o.maxParts() &&
		slices.Equal(a.ProtectedKeys, o.ProtectedKeys) && slices.Equal(a.LabelNamespaces, o.LabelNamespaces) &&
		slices.Equal(a.ProtectedLabels, o.ProtectedLabels)
}

// patchPath is the path under which the warnings of [Options.Check] name
// what they are about: "patch.taints[2].key", "patch.resources[cpu]".
const patchPath = "patch"

// Check judges p by the rules of the package comment, the rules [Parse]
// judges a reply with (the same code, once), and returns the patch as
// Parse would have given it for a reply that says the same, with a
// warning for each problem. It is the one entry by which a patch is
// judged: a patch that Parse or Check gave, with options that judge as o
// does, and not changed since (its fingerprint), is judged already and
// returned as it is, without an allocation, and so is a
// patch that holds no entry to judge (a legacy reply's, or the zero
// patch); any other patch, one built by hand or decoded from JSON, is
// judged and returned anew, and remembers it. p itself is never
// modified. Package nodeapply and its steps run Check on the patch
// of every ping they are given, so that they trust what it returns; a
// provider that builds patches by hand calls it once, to see its
// warnings, and hands on the result.
//
// A patch is read as the reply it stands for: its basis first, then by
// it its resources by their names (cpu, memory, pods, ephemeral-storage,
// hugepages-<size> and extended resources, rules quantity-valid to
// accelerator-name and resource-hugepages) and those the backend has
// none of free (Full, rule resource-full), its taints and labels when it
// replaces them (ReplaceTaints, ReplaceLabels), with the keys it keeps, its
// devices (device-name to device-not-counted), its parts (part-entries to
// part-no-sum), each by the limits of o, and by rule patch-fields. A
// patch's TimeAdded of a taint is kept. The warnings name the patch's
// fields under "patch" ("patch.taints[2].key", "patch.labels[k]",
// "patch.devices[a100].count", "patch.parts[3].resources[cpu]").
func (o Options) Check(p *NodePatch) (*NodePatch, []Warning) {
	if p == nil || p.judgedBy(o) || p.holdsNothing() {
		return p, nil
	}
	c := parser{opts: o, at: patchPath}
	out := &NodePatch{Kind: p.Kind, Status: p.Status}
	if p.ReplaceParts {
		c.patchParts(p, out)
	} else {
		c.patchNode(p, out)
		if len(p.Parts) > 0 || p.PartsIncomplete {
			c.withoutReplace("parts", SubjectPart, "ReplaceParts")
		}
	}
	out.seal(&judgement{opts: o})
	return out, c.result()
}

// holdsNothing reports whether p holds no entry to judge (a legacy
// reply's patch, the zero patch, or one that only replaces lists with
// empty ones): what Check would give for it is p as it is.
func (p *NodePatch) holdsNothing() bool {
	return len(p.Resources) == 0 && len(p.Full) == 0 && p.Basis == "" && len(p.KeptTaintKeys)+len(p.KeptLabelKeys)+len(p.KeptDeviceGroups) == 0 &&
		(p.Taints == nil || p.ReplaceTaints && len(p.Taints) == 0) && (p.Labels == nil || p.ReplaceLabels && len(p.Labels) == 0) &&
		(p.Devices == nil || p.ReplaceDevices && len(p.Devices) == 0) && (p.Parts == nil || p.ReplaceParts && len(p.Parts) == 0)
}

// withoutReplace warns that a patch's list, at path, is given without
// the field that says it replaces the node's (replace): no news (rule
// patch-fields).
func (p *parser) withoutReplace(path string, s Subject, replace string) {
	p.warn(rulePatchFields, s, Ignored, path, "given without %s: no news; ignored", replace)
}

// patchNode judges the fields of a node of the patch in, the patch's own
// or a part's, into out.
func (p *parser) patchNode(in, out *NodePatch) {
	p.listsDevices = in.ReplaceDevices && len(in.Devices)+len(in.KeptDeviceGroups) > 0
	if in.Basis != "" {
		out.Basis = p.judgeBasis("basis", string(in.Basis))
	}
	p.free = out.Basis != BasisTotal
	out.Resources, out.Full = p.patchResources(in.Resources, in.Full)
	switch {
	case in.ReplaceTaints:
		out.ReplaceTaints, out.Taints, out.KeptTaintKeys = p.patchTaints(in.Taints, in.KeptTaintKeys)
	case len(in.Taints)+len(in.KeptTaintKeys) > 0:
		p.withoutReplace("taints", SubjectTaint, "ReplaceTaints")
	}
	switch {
	case in.ReplaceLabels:
		out.ReplaceLabels, out.Labels, out.KeptLabelKeys = p.patchLabels(in.Labels, in.KeptLabelKeys)
	case len(in.Labels)+len(in.KeptLabelKeys) > 0:
		p.withoutReplace("labels", SubjectLabel, "ReplaceLabels")
	}
	switch {
	case in.ReplaceDevices:
		replace, groups, refused := p.devices(&groupList{groups: in.Devices})
		if replace {
			out.ReplaceDevices, out.Devices = true, groups
			out.KeptDeviceGroups = slices.Clip(p.keptGroups(in.KeptDeviceGroups, refused, groups)) // never appended to the input's
		}
	case len(in.Devices)+len(in.KeptDeviceGroups) > 0:
		p.withoutReplace("devices", SubjectDevice, "ReplaceDevices")
	}
}

// patchResources judges a patch's resources by their names: cpu, memory,
// pods and ephemeral-storage, a reply's fields; hugepages-<size>, a
// reply's hugepages; any other an extended resource, a reply's
// accelerator. It returns the figures to write, and the resources the
// backend has none of free now: those the figures say so of, and those
// the patch's Full says so of ([parser.patchFull]).
func (p *parser) patchResources(in corev1.ResourceList, given []corev1.ResourceName) (corev1.ResourceList, []corev1.ResourceName) {
	if len(in)+len(given) == 0 {
		return nil, nil
	}
	out := make(corev1.ResourceList, len(in))
	var full []corev1.ResourceName
	for _, name := range slices.Sorted(maps.Keys(in)) { // cpu before memory, as Full lists them
		q := in[name]
		path := labelPath("resources", string(name))
		size, hugepages := strings.CutPrefix(string(name), corev1.ResourceHugePagesPrefix)
		switch {
		case isStandard(name):
		case hugepages:
			if _, ok := p.pageSize(path, size); !ok {
				continue
			}
		case !p.extendedName(path, name):
			continue
		}
		switch p.judgeQuantity(path, name, q, q.String()) {
		case backendFull:
			full = append(full, name)
		case acceptedQuantity:
			if isStandard(name) || hugepages || p.counted(path, name, q) {
				out[name] = q
			}
		}
	}
	full = p.patchFull(given, out, full)
	if len(out) == 0 {
		out = nil
	}
	return out, full
}

// patchFull judges a patch's Full, given, beside its judged figures, out,
// and full, the resources those said the backend has none of free now
// (rule resource-full). An entry is what a zero among free figures says
// in a reply, and the patch Parse gave for one holds it as it is: it
// passes, once, unless it is no cpu or memory, or the resource has a
// figure in out, which counts, or the basis is "total", whose zeros say
// no such thing, each dropped with a warning; with AllowZero it is
// written as a figure of zero, as a reply's zero is. It returns full and
// the entries that pass, sorted, each once; nil for none.
func (p *parser) patchFull(given []corev1.ResourceName, out corev1.ResourceList, full []corev1.ResourceName) []corev1.ResourceName {
	for i, name := range given {
		path := indexPath("full", i)
		_, figure := out[name]
		switch {
		case name != corev1.ResourceCPU && name != corev1.ResourceMemory:
			p.warn(ruleResourceFull, SubjectResource, Refused, path, "%s is not cpu or memory, the resources a backend is full of; dropped", text.Quote(string(name), quoteBytes))
		case slices.Contains(full, name): // said already: once is enough
		case figure:
			p.warn(ruleResourceFull, SubjectResource, Refused, path, "%s has a figure in resources, which counts; dropped", name)
		case !p.free:
			p.warn(ruleResourceFull, SubjectResource, Refused, path, "%s: the basis is \"total\", whose zero says no backend is full (rule resource-nonzero); dropped", name)
		case p.opts.AllowZero:
			p.warn(ruleResourceFull, SubjectResource, Repaired, path, "%s: with AllowZero a zero is a figure; 0 written", name)
			out[name] = resource.Quantity{Format: resource.DecimalSI}
		default:
			full = append(full, name)
		}
	}
	if len(full) == 0 {
		return nil
	}
	slices.Sort(full)
	return full
}

// patchTaints judges a patch's taints, and the keys it keeps: the taint
// judge's, as of a reply's list, but for the time each was added, which
// is kept.
func (p *parser) patchTaints(in []corev1.Taint, given []string) (replace bool, out []corev1.Taint, kept []string) {
	list := fieldPath(replyLevel, taintsField)
	if !p.withinLimit(ruleListLimit, SubjectTaint, list, "taints", len(in), p.partLimit(p.opts.maxTaints())) {
		return false, nil, nil
	}
	j := p.taintJudge(list, len(in))
	for i, t := range in {
		p.addTaint(&j, t, i)
	}
	return true, j.unique.List, p.keptKeys("keptTaintKeys", SubjectTaint, ruleTaintValid, given, j.mayKeep, j.kept)
}

// patchLabels judges a patch's labels, and the keys it keeps, by the
// label judge, as of a reply's.
func (p *parser) patchLabels(in map[string]string, given []string) (replace bool, out map[string]string, kept []string) {
	list := fieldPath(replyLevel, labelsField)
	if !p.withinLimit(ruleListLimit, SubjectLabel, list, "labels", len(in), p.partLimit(p.opts.maxLabels())) {
		return false, nil, nil
	}
	j := p.labelJudge(list, len(in))
	for _, k := range slices.Sorted(maps.Keys(in)) {
		p.addLabel(&j, k, in[k])
	}
	return true, j.out, p.keptKeys("keptLabelKeys", SubjectLabel, ruleLabelValid, given, j.mayKeep, j.kept)
}

// partLimit returns the limit of a list of taints or labels, limit for a
// reply's: a part's, which holds the reply's list beside its own, takes
// MaxShared more (rule part-fields).
func (p *parser) partLimit(limit int) int {
	if p.part != "" {
		return limit + MaxShared
	}
	return limit
}

// keptKeys returns the keys a patch keeps, of its taints or labels: those
// it was given that the plugin may own (another is dropped, with a
// warning at list, by the rule named rule), and those its list refused,
// sorted, each once.
func (p *parser) keptKeys(list string, s Subject, rule string, given []string, mayKeep func(string) bool, refused []string) []string {
	var keep []string
	for i, key := range given {
		if mayKeep(key) {
			keep = append(keep, key)
			continue
		}
		p.warn(rule, s, Refused, indexPath(list, i), "%s is no key the plugin may own; dropped", text.Quote(key, quoteBytes))
	}
	return union(keep, refused)
}

// patchParts judges a patch's parts, as a reply's (rules part-entries,
// part-fields and part-no-sum): each name, the last of a name, each
// part's fields by the rules of a node's, and the patch's own taints and
// labels, every part's.
func (p *parser) patchParts(in, out *NodePatch) {
	if len(in.Resources) > 0 || len(in.Full) > 0 || in.Basis != "" {
		p.besideParts(resourcesField)
	}
	if in.ReplaceDevices || len(in.Devices)+len(in.KeptDeviceGroups) > 0 {
		p.besideParts(devicesField)
	}
	list := "parts"
	if !p.withinLimit(rulePartEntries, SubjectPart, list, "parts", len(in.Parts), p.opts.maxParts()) {
		return
	}
	var s shared
	if in.ReplaceTaints {
		s.taintsGiven, s.taintsRefused = true, true
		if p.withinLimit(rulePartFields, SubjectTaint, fieldPath(replyLevel, taintsField), "every part's taints", len(in.Taints), MaxShared) {
			if replace, taints, kept := p.patchTaints(in.Taints, in.KeptTaintKeys); replace {
				s.taintsRefused, s.taints, s.keptTaints = false, taints, kept
			}
		}
	}
	if in.ReplaceLabels {
		s.labelsGiven, s.labelsRefused = true, true
		if p.withinLimit(rulePartFields, SubjectLabel, fieldPath(replyLevel, labelsField), "every part's labels", len(in.Labels), MaxShared) {
			if replace, labels, kept := p.patchLabels(in.Labels, in.KeptLabelKeys); replace {
				s.labelsRefused, s.labels, s.keptLabels = false, labels, kept
			}
		}
	}
	refs := make([]partRef, 0, len(in.Parts))
	out.PartsIncomplete = in.PartsIncomplete
	for i := range in.Parts {
		if !p.partName(indexPath(list, i)+".name", in.Parts[i].Name) {
			out.PartsIncomplete = true
			continue
		}
		refs = append(refs, partRef{name: in.Parts[i].Name, i: i, e: i})
	}
	out.ReplaceParts = true
	out.Parts = make([]Part, 0, len(refs))
	for _, r := range p.lastOfEachPart(list, refs) {
		own := &in.Parts[r.e].Patch
		p.at, p.part = patchPath+"."+indexPath(list, r.i), r.name
		part := Part{Name: r.name, Patch: NodePatch{Kind: Structured}}
		p.patchNode(own, &part.Patch)
		if own.ReplaceParts || len(own.Parts) > 0 {
			p.warn(rulePatchFields, SubjectPart, Ignored, "parts", "a part lists no parts of its own; ignored")
		}
		p.at, p.part = patchPath, ""
		s.into(&part.Patch, own.ReplaceTaints, own.ReplaceLabels)
		out.Parts = append(out.Parts, part)
	}
	slices.SortFunc(out.Parts, func(a, b Part) int { return strings.Compare(a.Name, b.Name) })
}

// keptGroups returns the names of the groups a checked patch keeps: those
// it kept (given), each a valid group name (another is dropped, with a
// warning), and those its list refused (refused), sorted, each once, and
// none of a group the list publishes (groups, sorted). It is given itself
// when nothing changes.
func (p *parser) keptGroups(given, refused []string, groups []DeviceGroup) []string {
	if len(refused) == 0 && keptInOrder(given, groups) {
		return given
	}
	var kept []string
	for i, name := range given {
		if problem := kuberules.DeviceGroupNameProblem(name); problem != "" {
			p.warn(ruleDeviceName, SubjectDevice, Refused, "keptDeviceGroups["+strconv.Itoa(i)+"]", "%s is not a valid device group name: %s; dropped", text.Quote(name, quoteBytes), problem)
			continue
		}
		kept = append(kept, name)
	}
	kept = slices.Compact(slices.Sorted(slices.Values(append(kept, refused...))))
	kept = slices.DeleteFunc(kept, func(name string) bool { return listed(groups, name) })
	if len(kept) == 0 {
		return nil
	}
	return kept
}

// keptInOrder reports whether kept is sorted, each name once and valid,
// and names none of groups (sorted), allocating nothing.
func keptInOrder(kept []string, groups []DeviceGroup) bool {
	for i, name := range kept {
		if i > 0 && kept[i-1] >= name || kuberules.DeviceGroupNameProblem(name) != "" || listed(groups, name) {
			return false
		}
	}
	return true
}

// listed reports whether groups, sorted by name, has a group named name.
func listed(groups []DeviceGroup, name string) bool {
	_, found := slices.BinarySearchFunc(groups, name, func(g DeviceGroup, name string) int { return strings.Compare(g.Name, name) })
	return found
}
