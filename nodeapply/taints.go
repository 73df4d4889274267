package nodeapply

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"

	"github.com/pingnode/pingnode/internal/kuberules"
	"github.com/pingnode/pingnode/pingstatus"
)

// taints replaces the plugin's taints on out with the patch's list, and
// records which taints are now the plugin's in the ownership annotation.
func (a *applier) taints(out *corev1.Node) {
	unique := a.pluginTaints()
	want := unique.List
	owned := a.previouslyOwned(out)
	kept := make(map[string]bool, len(a.patch.KeptTaintKeys))
	for _, k := range a.patch.KeptTaintKeys {
		kept[k] = true
	}

	result := make([]corev1.Taint, 0, len(out.Spec.Taints)+len(want))
	mine := make([]bool, 0, cap(result)) // whether result[i] is the plugin's
	placed := make([]int, len(want))     // where want[j] stands in result, or -1
	for j := range placed {
		placed[j] = -1
	}
	for _, t := range out.Spec.Taints {
		j, wanted := unique.Index(kuberules.IDOf(&t))
		switch {
		case !owned(&t): // someone else's: it stays, and satisfies an equal want
			if wanted {
				placed[j] = len(result)
			}
			result, mine = append(result, t), append(mine, false)
		case wanted: // still wanted: updated in place, keeping when it was added
			w := want[j]
			w.TimeAdded = t.TimeAdded
			placed[j] = len(result)
			result, mine = append(result, w), append(mine, true)
		case kept[t.Key]: // the plugin's entry for it was refused: keep what it had
			result, mine = append(result, t), append(mine, true)
		}
	}
	for j := range want {
		w := &want[j]
		if i := placed[j]; i >= 0 {
			if !mine[i] && result[i].Value != w.Value {
				a.warn(pingstatus.SubjectTaint, pingstatus.Refused, taintPath(kuberules.IDOf(w)), "the plugin asks for "+taintText(w)+" but "+taintText(&result[i])+" is not the plugin's; left as it is")
			}
			continue // in place, or already satisfied by someone else's and not adopted
		}
		result, mine = append(result, *w), append(mine, true)
	}
	if len(result) == 0 {
		result = nil
	}
	out.Spec.Taints = result
	a.recordOwned(out, mine)
}

// previouslyOwned returns the rule for which of out's taints the plugin
// owns: those the ownership annotation lists, or in compatibility mode all
// but the protected ones.
func (a *applier) previouslyOwned(out *corev1.Node) func(*corev1.Taint) bool {
	if a.opts.ReplaceAllTaints {
		return func(t *corev1.Taint) bool { return !a.opts.protected(t.Key) }
	}
	key := a.opts.ownership()
	set, invalid := ownedSet(out.Annotations[key])
	for _, entry := range invalid {
		a.warn(pingstatus.SubjectAnnotation, pingstatus.Ignored, "metadata.annotations["+key+"]", "entry "+strconv.Quote(entry)+" is not key:Effect; ignored")
	}
	return func(t *corev1.Taint) bool {
		return set[kuberules.IDOf(t)] && !a.opts.protected(t.Key) && !kuberules.IsReservedKey(t.Key)
	}
}

// pluginTaints returns the patch's taints that Apply may set: valid, with
// keys the plugin may use, unique by key and effect (the last one kept).
// pingstatus already guarantees all this; a hand-built patch may not.
func (a *applier) pluginTaints() kuberules.UniqueTaints {
	check := kuberules.TaintCheck{Protected: a.opts.Reply.ProtectedKeys}
	unique := kuberules.NewUniqueTaints(len(a.patch.Taints))
	for i, t := range a.patch.Taints {
		path := func() string { return "patch.taints[" + strconv.Itoa(i) + "]" }
		switch problems := check.Check(&t); {
		case !problems.Valid():
			a.warn(pingstatus.SubjectTaint, pingstatus.Refused, path(), taintText(&t)+" is not a valid taint; not applied")
			continue
		case problems.Reserved || problems.Protected:
			a.warn(pingstatus.SubjectTaint, pingstatus.Refused, path(), t.Key+" is not the plugin's to set; not applied")
			continue
		}
		t.TimeAdded = t.TimeAdded.DeepCopy()
		if _, repeated := unique.Add(t, i); repeated {
			a.warn(pingstatus.SubjectTaint, pingstatus.Repaired, path(), "repeats "+kuberules.IDOf(&t).String()+"; the last one is kept")
		}
	}
	return unique
}

// recordOwned writes the ownership annotation for the taints that mine
// marks as the plugin's, or removes it when there are none.
func (a *applier) recordOwned(out *corev1.Node, mine []bool) {
	setAnnotation(out, a.opts.ownership(), formatOwned(out.Spec.Taints, mine))
}
