package nodeapply

import (
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"

	"github.com/pingnode/pingnode/internal/kuberules"
	"github.com/pingnode/pingnode/pingstatus"
)

// taintMerge is the patch's taints merged into a node's (rules
// taint-ownership, taint-replace, taint-foreign and taint-replace-all):
// the node's taints after it, the ownership annotation after it ("" for
// none), and what was refused. It is the one implementation of those
// rules: a steady ping is one whose merge is the node's taints and
// annotation, which taints then leaves as they are, uncopied.
type taintMerge struct {
	taints   []corev1.Taint // read-only: their TimeAdded are the node's or the patch's; write copies them
	owned    string
	warnings warnings
}

// taints merges the patch's taints into the node's, when the patch
// carries a taints list, and writes the merge unless the node has it.
func (a *applier) taints() {
	if !a.patch.ReplaceTaints {
		return
	}
	m := a.mergeTaints(a.node())
	a.warnings = append(a.warnings, m.warnings...)
	if key := a.opts.ownership(); !m.holds(a.node(), key) {
		m.write(a.edit(concernTaints), key)
	}
}

// mergeTaints merges the patch's taints into node's, reading node only:
// the plugin's taints are replaced by the patch's list, a listed taint
// the node has keeping its place (and the time it was added), a new one
// added at the end, and one no longer listed removed unless its entry was
// refused (KeptTaintKeys); everyone else's stay. The patch's taints are
// as pingstatus judged them: valid, the plugin's to set, unique by key
// and effect.
func (a *applier) mergeTaints(node *corev1.Node) taintMerge {
	var m taintMerge
	want := a.patch.Taints
	index := kuberules.IndexTaints(want)
	owned := a.previouslyOwned(node, m.warnings.add)

	result := make([]corev1.Taint, 0, len(node.Spec.Taints)+len(want))
	mine := make([]bool, 0, cap(result)) // whether result[i] is the plugin's
	placed := make([]int, len(want))     // where want[j] stands in result, or -1
	for j := range placed {
		placed[j] = -1
	}
	for i := range node.Spec.Taints {
		t := &node.Spec.Taints[i]
		j, wanted := index.Index(kuberules.IDOf(t))
		switch {
		case !owned.owns(t): // someone else's: it stays, and satisfies an equal want
			if wanted {
				placed[j] = len(result)
			}
			result, mine = append(result, *t), append(mine, false)
		case wanted: // still wanted: updated in place, keeping when it was added
			w := want[j]
			w.TimeAdded = t.TimeAdded
			placed[j] = len(result)
			result, mine = append(result, w), append(mine, true)
		case slices.Contains(a.patch.KeptTaintKeys, t.Key): // the plugin's entry for it was refused: keep what it had
			result, mine = append(result, *t), append(mine, true)
		}
	}
	for j := range want {
		w := &want[j]
		if i := placed[j]; i >= 0 {
			if !mine[i] && result[i].Value != w.Value {
				m.warnings.add(ruleTaintForeign, pingstatus.SubjectTaint, pingstatus.Refused, taintPath(kuberules.IDOf(w)), "the plugin asks for "+taintText(w)+" but "+taintText(&result[i])+" is not the plugin's; left as it is")
			}
			continue // in place, or already satisfied by someone else's and not adopted
		}
		result, mine = append(result, *w), append(mine, true)
	}
	if len(result) > 0 {
		m.taints = result
	}
	m.owned = formatOwned(result, mine)
	return m
}

// holds reports whether node has the merge already: the same taints in
// the same order, each with the same value and time added, and the
// ownership annotation key saying the same.
func (m *taintMerge) holds(node *corev1.Node, key string) bool {
	annotation, present := node.Annotations[key]
	return annotation == m.owned && present == (m.owned != "") &&
		slices.EqualFunc(m.taints, node.Spec.Taints, func(x, y corev1.Taint) bool {
			return x.Key == y.Key && x.Value == y.Value && x.Effect == y.Effect && x.TimeAdded.Equal(y.TimeAdded)
		})
}

// write puts the merge into out, a copy of the node it was made from,
// sharing no memory with the input.
func (m *taintMerge) write(out *corev1.Node, key string) {
	out.Spec.Taints = nil
	for i := range m.taints {
		out.Spec.Taints = append(out.Spec.Taints, *m.taints[i].DeepCopy())
	}
	setAnnotation(out, key, m.owned)
}

// previouslyOwned returns which of node's taints the plugin owns: those
// the ownership annotation lists, or in compatibility mode all but the
// protected ones.
func (a *applier) previouslyOwned(node *corev1.Node, warn warnFunc) ownership {
	o := ownership{all: a.opts.ReplaceAllTaints, protected: a.opts.Reply.ProtectedKeys}
	if o.all {
		return o
	}
	key := a.opts.ownership()
	var invalid []string
	o.listed, invalid = ownedSet(node.Annotations[key])
	for _, entry := range invalid {
		warn(ruleTaintOwnership, pingstatus.SubjectAnnotation, pingstatus.Ignored, "metadata.annotations["+key+"]", "entry "+strconv.Quote(entry)+" is not key:Effect; ignored")
	}
	return o
}

// ownership says which taints are the plugin's: all but the protected
// ones and pingnode's own, or those listed but the protected and reserved
// ones (pingnode's own among them).
type ownership struct {
	all       bool
	protected []string
	listed    map[kuberules.TaintID]bool
}

func (o *ownership) owns(t *corev1.Taint) bool {
	if kuberules.IsProtectedKey(t.Key, o.protected) || kuberules.IsPingnodeKey(t.Key) {
		return false
	}
	return o.all || o.listed[kuberules.IDOf(t)] && !kuberules.IsReservedKey(t.Key)
}
