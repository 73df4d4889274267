package nodeapply

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/pingnode/pingnode/internal/kuberules"
)

// diff lists what differs between in and out in the fields Apply writes:
// capacity, allocatable, taints and the ownership annotation. Quantities
// compare by value and taints by key and effect, then value; the order of
// taints does not count.
func diff(in, out *corev1.Node, annotation string) []Change {
	if in == nil {
		in = &corev1.Node{}
	}
	var changes []Change
	changes = diffResources(changes, "status.capacity", in.Status.Capacity, out.Status.Capacity)
	changes = diffResources(changes, "status.allocatable", in.Status.Allocatable, out.Status.Allocatable)
	changes = diffTaints(changes, in.Spec.Taints, out.Spec.Taints)
	old, hadOld := in.Annotations[annotation]
	now, hasNew := out.Annotations[annotation]
	if c, ok := compare("metadata.annotations["+annotation+"]", old, hadOld, now, hasNew); ok {
		changes = append(changes, c)
	}
	sortChanges(changes)
	return changes
}

// compare returns the change from (old, hadOld) to (now, hasNew), if any.
func compare(path, old string, hadOld bool, now string, hasNew bool) (Change, bool) {
	switch {
	case hadOld && hasNew && old != now:
		return Change{Op: Modified, Path: path, Old: old, New: now}, true
	case hadOld && !hasNew:
		return Change{Op: Removed, Path: path, Old: old}, true
	case !hadOld && hasNew:
		return Change{Op: Added, Path: path, New: now}, true
	}
	return Change{}, false
}

func diffResources(changes []Change, path string, in, out corev1.ResourceList) []Change {
	for name, o := range out {
		p := path + "[" + string(name) + "]"
		i, ok := in[name]
		switch {
		case !ok:
			changes = append(changes, Change{Op: Added, Path: p, New: o.String()})
		case i.Cmp(o) != 0:
			changes = append(changes, Change{Op: Modified, Path: p, Old: i.String(), New: o.String()})
		}
	}
	for name, i := range in {
		if _, ok := out[name]; !ok {
			changes = append(changes, Change{Op: Removed, Path: path + "[" + string(name) + "]", Old: i.String()})
		}
	}
	return changes
}

// diffTaints compares the taints of each key and effect. A valid node has
// at most one; an invalid input node may have repeats, which Apply's repair
// removes, so each side is the list of all of them.
func diffTaints(changes []Change, in, out []corev1.Taint) []Change {
	before := taintTexts(in)
	after := taintTexts(out)
	for id, now := range after {
		path := "spec.taints[" + id.String() + "]"
		if old, ok := before[id]; !ok {
			changes = append(changes, Change{Op: Added, Path: path, New: now})
		} else if old != now {
			changes = append(changes, Change{Op: Modified, Path: path, Old: old, New: now})
		}
	}
	for id, old := range before {
		if _, ok := after[id]; !ok {
			changes = append(changes, Change{Op: Removed, Path: "spec.taints[" + id.String() + "]", Old: old})
		}
	}
	return changes
}

// taintTexts maps each key and effect to its taints as text, joined by
// ", " in the rare case of repeats.
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
