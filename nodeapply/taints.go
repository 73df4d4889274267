package nodeapply

import (
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"

	"github.com/pingnode/pingnode/internal/kuberules"
	"github.com/pingnode/pingnode/pingstatus"
)

// taintMerge is the patch's taints merged into a node's (rules 4 to 7):
// the node's taints after it, the ownership annotation after it ("" for
// none), and what was refused. It is the one implementation of those
// rules: the checker computes it from the input, and a steady ping is one
// whose merge is the input's taints and annotation, with no warning, so
// the node is not copied; the build writes it into the copy.
type taintMerge struct {
	taints   []corev1.Taint // read-only: their TimeAdded are the node's or the patch's; write copies them
	owned    string
	warnings warnings
}

// mergeTaints merges the patch's taints into node's, reading node only:
// the plugin's taints are replaced by the patch's list, a listed taint
// the node has keeping its place (and the time it was added), a new one
// added at the end, and one no longer listed removed unless its entry was
// refused (KeptTaintKeys); everyone else's stay.
func (a *checker) mergeTaints(node *corev1.Node) taintMerge {
	var m taintMerge
	warn := m.warnings.add
	unique := a.pluginTaints(warn)
	want := unique.List
	owned := a.previouslyOwned(node, warn)

	result := make([]corev1.Taint, 0, len(node.Spec.Taints)+len(want))
	mine := make([]bool, 0, cap(result)) // whether result[i] is the plugin's
	placed := make([]int, len(want))     // where want[j] stands in result, or -1
	for j := range placed {
		placed[j] = -1
	}
	for i := range node.Spec.Taints {
		t := &node.Spec.Taints[i]
		j, wanted := unique.Index(kuberules.IDOf(t))
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
				warn(pingstatus.SubjectTaint, pingstatus.Refused, taintPath(kuberules.IDOf(w)), "the plugin asks for "+taintText(w)+" but "+taintText(&result[i])+" is not the plugin's; left as it is")
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
// ownership annotation key saying the same, with nothing refused.
func (m *taintMerge) holds(node *corev1.Node, key string) bool {
	annotation, present := node.Annotations[key]
	return len(m.warnings) == 0 && annotation == m.owned && present == (m.owned != "") &&
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
func (a *checker) previouslyOwned(node *corev1.Node, warn warnFunc) ownership {
	o := ownership{all: a.opts.ReplaceAllTaints, protected: a.opts.Reply.ProtectedKeys}
	if o.all {
		return o
	}
	key := a.opts.ownership()
	var invalid []string
	o.listed, invalid = ownedSet(node.Annotations[key])
	for _, entry := range invalid {
		warn(pingstatus.SubjectAnnotation, pingstatus.Ignored, "metadata.annotations["+key+"]", "entry "+strconv.Quote(entry)+" is not key:Effect; ignored")
	}
	return o
}

// ownership says which taints are the plugin's: all but the protected
// ones, or those listed but the protected and reserved ones.
type ownership struct {
	all       bool
	protected []string
	listed    map[kuberules.TaintID]bool
}

func (o *ownership) owns(t *corev1.Taint) bool {
	if kuberules.IsProtectedKey(t.Key, o.protected) {
		return false
	}
	return o.all || o.listed[kuberules.IDOf(t)] && !kuberules.IsReservedKey(t.Key)
}

// pluginTaints returns the patch's taints that Apply may set: valid, with
// keys the plugin may use, unique by key and effect (the last one kept).
// pingstatus already guarantees all this; a hand-built patch may not.
func (a *checker) pluginTaints(warn warnFunc) kuberules.UniqueTaints {
	check := kuberules.TaintCheck{Protected: a.opts.Reply.ProtectedKeys}
	unique := kuberules.NewUniqueTaints(len(a.patch.Taints))
	for i, t := range a.patch.Taints {
		path := func() string { return "patch.taints[" + strconv.Itoa(i) + "]" }
		switch problems := check.Check(&t); {
		case !problems.Valid():
			warn(pingstatus.SubjectTaint, pingstatus.Refused, path(), taintText(&t)+" is not a valid taint; not applied")
			continue
		case problems.Reserved || problems.Protected:
			warn(pingstatus.SubjectTaint, pingstatus.Refused, path(), t.Key+" is not the plugin's to set; not applied")
			continue
		}
		if _, repeated := unique.Add(t, i); repeated {
			warn(pingstatus.SubjectTaint, pingstatus.Repaired, path(), "repeats "+kuberules.IDOf(&t).String()+"; the last one is kept")
		}
	}
	return unique
}
