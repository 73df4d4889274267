package nodeapply

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"

	"github.com/pingnode/pingnode/internal/kuberules"
)

// taints replaces the plugin's taints on out with the patch's list, and
// records which taints are now the plugin's in the ownership annotation.
func (a *applier) taints(out *corev1.Node) {
	want := a.pluginTaints()
	wantAt := make(map[kuberules.TaintID]int, len(want))
	for j := range want {
		wantAt[kuberules.IDOf(&want[j])] = j
	}
	owned := a.previouslyOwned(out)
	kept := make(map[string]bool, len(a.patch.KeptTaintKeys))
	for _, k := range a.patch.KeptTaintKeys {
		kept[k] = true
	}

	result := make([]corev1.Taint, 0, len(out.Spec.Taints)+len(want))
	used := make([]bool, len(want))
	mine := make(map[kuberules.TaintID]bool, len(want))
	foreign := make(map[kuberules.TaintID]int, len(out.Spec.Taints)) // index in result
	for _, t := range out.Spec.Taints {
		id := kuberules.IDOf(&t)
		if !owned(&t) {
			result = append(result, t)
			foreign[id] = len(result) - 1
			continue
		}
		if j, ok := wantAt[id]; ok { // still wanted: updated in place, keeping when it was added
			w := want[j]
			w.TimeAdded = t.TimeAdded
			result = append(result, w)
			used[j], mine[id] = true, true
			continue
		}
		if kept[t.Key] { // the plugin's entry for it was refused: keep what it had
			result = append(result, t)
			mine[id] = true
		}
	}
	for j, w := range want {
		if used[j] {
			continue
		}
		id := kuberules.IDOf(&w)
		if i, ok := foreign[id]; ok {
			if result[i].Value != w.Value {
				a.warn("spec.taints["+id.String()+"]", "the plugin asks for "+taintText(&w)+" but "+taintText(&result[i])+" is not the plugin's; left as it is")
			}
			continue // already satisfied, and not adopted
		}
		result = append(result, w)
		mine[id] = true
	}
	if len(result) == 0 {
		result = nil
	}
	out.Spec.Taints = result
	a.recordOwned(out, func(t *corev1.Taint) bool { return mine[kuberules.IDOf(t)] })
}

// previouslyOwned returns the rule for which of out's taints the plugin
// owns: those the ownership annotation lists, or in compatibility mode all
// but the protected ones.
func (a *applier) previouslyOwned(out *corev1.Node) func(*corev1.Taint) bool {
	if a.opts.ReplaceAllTaints {
		return func(t *corev1.Taint) bool { return !a.opts.protected(t.Key) }
	}
	key := a.opts.annotation()
	set, invalid := ownedSet(out.Annotations[key])
	for _, entry := range invalid {
		a.warn("metadata.annotations["+key+"]", "entry "+strconv.Quote(entry)+" is not key:Effect; ignored")
	}
	return func(t *corev1.Taint) bool {
		return set[kuberules.IDOf(t)] && !a.opts.protected(t.Key) && !kuberules.IsReservedKey(t.Key)
	}
}

// pluginTaints returns the patch's taints that Apply may set: valid, with
// keys the plugin may use, unique by key and effect (the last one kept).
// pingstatus already guarantees all this; a hand-built patch may not.
func (a *applier) pluginTaints() []corev1.Taint {
	want := make([]corev1.Taint, 0, len(a.patch.Taints))
	at := make(map[kuberules.TaintID]int, len(a.patch.Taints))
	for i, t := range a.patch.Taints {
		path := "patch.taints[" + strconv.Itoa(i) + "]"
		switch {
		case kuberules.TaintKeyProblem(t.Key) != "" || kuberules.TaintValueProblem(t.Value) != "" || !kuberules.IsValidEffect(t.Effect):
			a.warn(path, taintText(&t)+" is not a valid taint; not applied")
			continue
		case kuberules.IsReservedKey(t.Key) || a.opts.protected(t.Key):
			a.warn(path, t.Key+" is not the plugin's to set; not applied")
			continue
		}
		t.TimeAdded = t.TimeAdded.DeepCopy()
		id := kuberules.IDOf(&t)
		if j, dup := at[id]; dup {
			a.warn(path, "repeats "+id.String()+"; the last one is kept")
			want[j] = t
			continue
		}
		at[id] = len(want)
		want = append(want, t)
	}
	return want
}

// recordOwned writes the ownership annotation for the taints mine reports,
// or removes it when there are none.
func (a *applier) recordOwned(out *corev1.Node, mine func(*corev1.Taint) bool) {
	key := a.opts.annotation()
	value := formatOwned(out.Spec.Taints, mine)
	if value == "" {
		delete(out.Annotations, key)
		return
	}
	if out.Annotations == nil {
		out.Annotations = map[string]string{}
	}
	out.Annotations[key] = value
}
