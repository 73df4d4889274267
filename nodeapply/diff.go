package nodeapply

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/pingnode/pingnode/internal/kuberules"
	"github.com/pingnode/pingnode/pingstatus"
)

// diff lists what differs between the input and the draft's copy in the
// concerns that wrote to it: capacity and allocatable, taints, labels and
// their ownership annotations, the conditions, the ping-response
// annotation. Quantities compare by value, taints by key and effect, then
// value and the second each was added, and labels by key, then value; the
// order of taints does not count. It says which patch the changes call
// for: taints, labels and their ownership annotations go in the object
// patch, the rest in the status patch.
func (a *applier) diff() (changes []Change, object, status bool) {
	in, out := a.in, a.out
	if a.touched&concernTaints != 0 {
		changes = diffTaints(changes, in.Spec.Taints, out.Spec.Taints)
		changes = diffAnnotation(changes, a.opts.ownership(), in.Annotations, out.Annotations)
	}
	if a.touched&concernLabels != 0 {
		changes = diffLabels(changes, in.Labels, out.Labels)
		changes = diffAnnotation(changes, a.opts.labelOwnership(), in.Annotations, out.Annotations)
	}
	objectChanges := len(changes)
	if a.touched&concernResources != 0 {
		changes = diffResources(changes, "status.capacity", in.Status.Capacity, out.Status.Capacity)
		changes = diffResources(changes, "status.allocatable", in.Status.Allocatable, out.Status.Allocatable)
	}
	if a.touched&concernConditions != 0 {
		changes = diffConditions(changes, in.Status.Conditions, out.Status.Conditions)
	}
	if a.touched&concernPingResponse != 0 {
		changes = diffAnnotation(changes, PingResponseAnnotation, in.Annotations, out.Annotations)
	}
	sortChanges(changes)
	return changes, objectChanges > 0, len(changes) > objectChanges
}

// diffAnnotation adds the change of the annotation key from in to out,
// if any.
func diffAnnotation(changes []Change, key string, in, out map[string]string) []Change {
	old, hadOld := in[key]
	now, hasNew := out[key]
	c := Change{Subject: pingstatus.SubjectAnnotation, Path: "metadata.annotations[" + key + "]"}
	switch {
	case hadOld && hasNew && old != now:
		c.Op, c.Old, c.New = Modified, old, now
	case hadOld && !hasNew:
		c.Op, c.Old = Removed, old
	case !hadOld && hasNew:
		c.Op, c.New = Added, now
	default:
		return changes
	}
	return append(changes, c)
}

func diffResources(changes []Change, path string, in, out corev1.ResourceList) []Change {
	for name, o := range out {
		p := path + "[" + string(name) + "]"
		i, ok := in[name]
		switch {
		case !ok:
			changes = append(changes, Change{Op: Added, Subject: pingstatus.SubjectResource, Path: p, New: o.String()})
		case i.Cmp(o) != 0:
			changes = append(changes, Change{Op: Modified, Subject: pingstatus.SubjectResource, Path: p, Old: i.String(), New: o.String()})
		}
	}
	for name, i := range in {
		if _, ok := out[name]; !ok {
			changes = append(changes, Change{Op: Removed, Subject: pingstatus.SubjectResource, Path: path + "[" + string(name) + "]", Old: i.String()})
		}
	}
	return changes
}

// diffTaints compares the taints of each key and effect. An input node
// that the API server would refuse may repeat a pair; then each side is
// compared as the text of all its taints of that pair.
func diffTaints(changes []Change, in, out []corev1.Taint) []Change {
	if i, _ := kuberules.FirstRepeat(in); i >= 0 {
		return diffTaintTexts(changes, in, out)
	}
	before := make(map[kuberules.TaintID]*corev1.Taint, len(in))
	for i := range in {
		before[kuberules.IDOf(&in[i])] = &in[i]
	}
	for i := range out { // out never repeats a pair
		o := &out[i]
		id := kuberules.IDOf(o)
		b, ok := before[id]
		switch {
		case !ok:
			changes = append(changes, Change{Op: Added, Subject: pingstatus.SubjectTaint, Path: taintPath(id), New: taintText(o)})
		case b.Value != o.Value:
			changes = append(changes, Change{Op: Modified, Subject: pingstatus.SubjectTaint, Path: taintPath(id), Old: taintText(b), New: taintText(o)})
		}
		if ok && !sameTimeAdded(b, o) {
			changes = append(changes, timeAddedChange(id, b, o))
		}
		delete(before, id)
	}
	for id, b := range before {
		changes = append(changes, Change{Op: Removed, Subject: pingstatus.SubjectTaint, Path: taintPath(id), Old: taintText(b)})
	}
	return changes
}

func taintPath(id kuberules.TaintID) string { return "spec.taints[" + id.String() + "]" }

// sameTimeAdded reports whether two taints say they were added at the
// same second, or neither says when.
func sameTimeAdded(a, b *corev1.Taint) bool {
	if !hasTimeAdded(a) || !hasTimeAdded(b) {
		return hasTimeAdded(a) == hasTimeAdded(b)
	}
	return sameSecond(*a.TimeAdded, *b.TimeAdded)
}

// timeAddedChange is the change of the time a taint of the pair id was
// added, from b to o: "spec.taints[key:Effect].timeAdded".
func timeAddedChange(id kuberules.TaintID, b, o *corev1.Taint) Change {
	c := Change{Subject: pingstatus.SubjectTaint, Path: taintPath(id) + ".timeAdded", Op: Modified}
	if hasTimeAdded(b) {
		c.Old = timeText(*b.TimeAdded)
	} else {
		c.Op = Added
	}
	if hasTimeAdded(o) {
		c.New = timeText(*o.TimeAdded)
	} else {
		c.Op = Removed
	}
	return c
}

func diffTaintTexts(changes []Change, in, out []corev1.Taint) []Change {
	before := taintTexts(in)
	after := taintTexts(out)
	for id, now := range after {
		if old, ok := before[id]; !ok {
			changes = append(changes, Change{Op: Added, Subject: pingstatus.SubjectTaint, Path: taintPath(id), New: now})
		} else if old != now {
			changes = append(changes, Change{Op: Modified, Subject: pingstatus.SubjectTaint, Path: taintPath(id), Old: old, New: now})
		}
	}
	for id, old := range before {
		if _, ok := after[id]; !ok {
			changes = append(changes, Change{Op: Removed, Subject: pingstatus.SubjectTaint, Path: taintPath(id), Old: old})
		}
	}
	return changes
}

// taintTexts maps each key and effect to its taints as text, joined by
// ", " where a pair repeats.
func taintTexts(taints []corev1.Taint) map[kuberules.TaintID]string {
	texts := make(map[kuberules.TaintID]string, len(taints))
	for i := range taints {
		id := kuberules.IDOf(&taints[i])
		if old, ok := texts[id]; ok {
			texts[id] = old + ", " + taintText(&taints[i])
			continue
		}
		texts[id] = taintText(&taints[i])
	}
	return texts
}
