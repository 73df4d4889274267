package nodeapply

import (
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/pingnode/pingnode/internal/kuberules"
	"github.com/pingnode/pingnode/pingstatus"
)

// The label ownership annotation lists the keys of the labels the plugin
// set, sorted, separated by commas:
// "feature.node.kubernetes.io/cpu-model.vendor_id,nvidia.com/gpu.product".
// No label key holds a comma, so the format is unambiguous.

// labelCheck is the check of a plugin's label by the reply's options.
func (o *Options) labelCheck() kuberules.LabelCheck {
	return kuberules.LabelCheck{Namespaces: o.Reply.LabelNamespaces, Protected: o.Reply.ProtectedLabels}
}

// mayOwnLabel reports whether an entry of the ownership annotation can
// name a label of the plugin's: a valid key in no namespace that is never
// a plugin's, and not one of the provider's own. A key in a namespace the
// provider no longer allows stays the plugin's, so that it is removed.
func mayOwnLabel(check kuberules.LabelCheck, key string) bool {
	p := check.Check(key, "")
	return p.Key == "" && p.Forbidden == "" && !p.Protected
}

// labelEntries calls yield with each entry of an ownership annotation,
// without allocating, until yield returns false.
func labelEntries(annotation string, yield func(string) bool) {
	for rest, more := annotation, annotation != ""; more; {
		var entry string
		entry, rest, more = strings.Cut(rest, ",")
		if !yield(entry) {
			return
		}
	}
}

// labelMerge is the patch's labels merged into a node's (rules
// label-ownership and label-foreign): the labels of the plugin's that go,
// those set to the patch's value (new, or with another value), the label
// ownership annotation after it ("" for none), and what was refused. As
// taintMerge, it is the one implementation of those rules.
type labelMerge struct {
	remove, put []string // keys
	owned       string
	warnings    warnings
}

// labels merges the patch's labels into the node's, when the patch
// carries labels, and writes the merge unless the node has it.
func (a *applier) labels() {
	if !a.patch.ReplaceLabels {
		return
	}
	m := a.mergeLabels(a.node())
	a.warnings = append(a.warnings, m.warnings...)
	if key := a.opts.labelOwnership(); !m.holds(a.node(), key) {
		m.write(a.edit(concernLabels), a.patch.Labels, key)
	}
}

// mergeLabels merges the patch's labels into node's, reading node only:
// the plugin's labels are replaced by the patch's, a listed label set to
// its value, one no longer listed removed unless its entry was refused
// (KeptLabelKeys); everyone else's stay, and a listed label whose key is
// someone else's is refused when its value differs. The patch's labels
// are as pingstatus judged them: valid, in namespaces the options allow.
func (a *applier) mergeLabels(node *corev1.Node) labelMerge {
	var m labelMerge
	check := a.opts.labelCheck()
	key := a.opts.labelOwnership()
	var owned map[string]bool // nil while the annotation lists none
	labelEntries(node.Annotations[key], func(entry string) bool {
		if mayOwnLabel(check, entry) {
			if owned == nil {
				owned = make(map[string]bool, len(a.patch.Labels))
			}
			owned[entry] = true
		} else {
			m.warnings.add(ruleLabelForeign, pingstatus.SubjectAnnotation, pingstatus.Ignored, "metadata.annotations["+key+"]", "entry "+strconv.Quote(entry)+" is not a label a plugin may own; ignored")
		}
		return true
	})
	mine := make([]string, 0, len(owned)+len(a.patch.Labels))
	for _, k := range sortedKeys(owned) {
		if _, present := node.Labels[k]; !present {
			continue
		}
		if _, wanted := a.patch.Labels[k]; wanted {
			continue // set below
		}
		if slices.Contains(a.patch.KeptLabelKeys, k) {
			mine = append(mine, k)
			continue
		}
		m.remove = append(m.remove, k)
	}
	for _, k := range sortedKeys(a.patch.Labels) {
		v := a.patch.Labels[k]
		have, present := node.Labels[k]
		if present && !owned[k] {
			if have != v {
				m.warnings.add(ruleLabelForeign, pingstatus.SubjectLabel, pingstatus.Refused, labelPath(k), "the plugin asks for "+k+"="+v+" but "+k+"="+have+" is not the plugin's; left as it is")
			}
			continue // someone else's: it stays, and satisfies an equal want
		}
		if !present || have != v {
			m.put = append(m.put, k)
		}
		mine = append(mine, k)
	}
	slices.Sort(mine) // the kept ones, then the patch's
	m.owned = strings.Join(mine, ",")
	return m
}

// sortedKeys returns m's keys, sorted, in one allocation.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// holds reports whether node has the merge already: no label to remove
// or set, and the annotation key saying the same.
func (m *labelMerge) holds(node *corev1.Node, key string) bool {
	annotation, present := node.Annotations[key]
	return len(m.remove) == 0 && len(m.put) == 0 && annotation == m.owned && present == (m.owned != "")
}

// write puts the merge into out, a copy of the node it was made from.
func (m *labelMerge) write(out *corev1.Node, labels map[string]string, key string) {
	for _, k := range m.remove {
		delete(out.Labels, k)
	}
	for _, k := range m.put {
		if out.Labels == nil {
			out.Labels = map[string]string{}
		}
		out.Labels[k] = labels[k]
	}
	if len(out.Labels) == 0 {
		out.Labels = nil
	}
	setAnnotation(out, key, m.owned)
}

// setAnnotation sets the annotation key of out to value, or removes it
// when value is empty.
func setAnnotation(out *corev1.Node, key, value string) {
	if value == "" {
		delete(out.Annotations, key)
		return
	}
	if out.Annotations == nil {
		out.Annotations = map[string]string{}
	}
	out.Annotations[key] = value
}

func labelPath(key string) string { return "metadata.labels[" + key + "]" }

// diffLabels lists the labels that differ between in and out, by key.
func diffLabels(changes []Change, in, out map[string]string) []Change {
	for k, o := range out {
		switch i, ok := in[k]; {
		case !ok:
			changes = append(changes, Change{Op: Added, Subject: pingstatus.SubjectLabel, Path: labelPath(k), New: o})
		case i != o:
			changes = append(changes, Change{Op: Modified, Subject: pingstatus.SubjectLabel, Path: labelPath(k), Old: i, New: o})
		}
	}
	for k, i := range in {
		if _, ok := out[k]; !ok {
			changes = append(changes, Change{Op: Removed, Subject: pingstatus.SubjectLabel, Path: labelPath(k), Old: i})
		}
	}
	return changes
}
