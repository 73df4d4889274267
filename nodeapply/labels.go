package nodeapply

import (
	"maps"
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

// labelsUnchanged reports, without allocating, whether the labels are as
// the patch asks already: each wanted label on the node with its value
// (the plugin's, or someone else's equal one), and the ownership
// annotation listing, sorted and once each, only wanted labels and those
// the plugin keeps for a refused value.
func (a *checker) labelsUnchanged() bool {
	check := a.opts.labelCheck()
	key := a.opts.labelOwnership()
	annotation, present := a.in.Annotations[key]
	if present && annotation == "" {
		return false // apply removes the empty annotation
	}
	for k, v := range a.patch.Labels {
		if !check.Check(k, v).Mine() {
			return false // apply refuses it with a warning
		}
		if have, ok := a.in.Labels[k]; !ok || have != v {
			return false
		}
	}
	same, prev, first := true, "", true
	labelEntries(annotation, func(entry string) bool {
		_, wanted := a.patch.Labels[entry]
		_, onNode := a.in.Labels[entry]
		kept := onNode && slices.Contains(a.patch.KeptLabelKeys, entry)
		same = (first || prev < entry) && (wanted || kept && mayOwnLabel(check, entry)) // a wanted one is the plugin's to set, checked above
		prev, first = entry, false
		return same
	})
	return same
}

// labels replaces the plugin's labels on out with the patch's, and
// records which labels are now the plugin's in the ownership annotation.
func (a *applier) labels(out *corev1.Node) {
	check := a.opts.labelCheck()
	key := a.opts.labelOwnership()
	owned := map[string]bool{}
	labelEntries(out.Annotations[key], func(entry string) bool {
		if mayOwnLabel(check, entry) {
			owned[entry] = true
		} else {
			a.warn(pingstatus.SubjectAnnotation, pingstatus.Ignored, "metadata.annotations["+key+"]", "entry "+strconv.Quote(entry)+" is not a label a plugin may own; ignored")
		}
		return true
	})
	var mine []string
	for _, k := range slices.Sorted(maps.Keys(owned)) {
		if _, present := out.Labels[k]; !present {
			continue
		}
		if _, wanted := a.patch.Labels[k]; wanted {
			continue // set below
		}
		if slices.Contains(a.patch.KeptLabelKeys, k) {
			mine = append(mine, k)
			continue
		}
		delete(out.Labels, k)
	}
	for _, k := range slices.Sorted(maps.Keys(a.patch.Labels)) {
		v := a.patch.Labels[k]
		switch p := check.Check(k, v); {
		case !p.Valid():
			a.warn(pingstatus.SubjectLabel, pingstatus.Refused, "patch.labels["+k+"]", strconv.Quote(k+"="+v)+" is not a valid label; not applied")
			continue
		case !p.Mine():
			a.warn(pingstatus.SubjectLabel, pingstatus.Refused, "patch.labels["+k+"]", k+" is not the plugin's to set; not applied")
			continue
		}
		if have, present := out.Labels[k]; present && !owned[k] {
			if have != v {
				a.warn(pingstatus.SubjectLabel, pingstatus.Refused, labelPath(k), "the plugin asks for "+k+"="+v+" but "+k+"="+have+" is not the plugin's; left as it is")
			}
			continue // someone else's: it stays, and satisfies an equal want
		}
		if out.Labels == nil {
			out.Labels = map[string]string{}
		}
		out.Labels[k] = v
		mine = append(mine, k)
	}
	if len(out.Labels) == 0 {
		out.Labels = nil
	}
	slices.Sort(mine)
	setAnnotation(out, key, strings.Join(mine, ","))
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
