package nodeapply

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/pingnode/pingnode/pingstatus"
)

// Result is what [Apply] returns. It also builds the patches that bring
// the node as it was to Node ([Result.ObjectPatch], [Result.StatusPatch]),
// with the options Apply was given, so that a patch can never be paired
// with other options than the merge it comes from.
type Result struct {
	// Node is the node after the ping. When Changes is empty it is the
	// input node itself, not a copy (or, for a nil input, an empty node):
	// treat it as read-only. Otherwise it is a new node that shares no
	// memory with the input.
	Node *corev1.Node
	// Changes lists what changed, sorted by path. It is empty exactly when
	// Node is semantically equal to the input: then there is nothing to
	// send to the API server.
	Changes []Change
	// Warnings are what Apply refused or repaired, sorted by path.
	Warnings []pingstatus.Warning

	in                        *corev1.Node // the input, as Apply read it
	ownership, labelOwnership string       // the ownership annotations' keys
	objectPatch, statusPatch  bool
}

// NeedsObjectPatch reports whether the taints, the labels or their
// ownership annotations changed: whether [Result.ObjectPatch] is not nil.
func (r Result) NeedsObjectPatch() bool { return r.objectPatch }

// NeedsStatusPatch reports whether capacity, allocatable, a condition or
// the ping-response annotation changed: whether [Result.StatusPatch] is
// not nil.
func (r Result) NeedsStatusPatch() bool { return r.statusPatch }

// FiguresOnly reports whether every change is of a figure: a resource's
// capacity or allocatable ([pingstatus.SubjectResource]), and nothing else.
// A provider may hold such a change back, as the kubelet writes a changed
// status at most every nodeStatusUpdateFrequency (10 s): the next ping,
// applied to the node as it stands, finds the change still to make, so
// several changes of a backend's free cpus in between are one write. A
// change of a taint, a label, a condition or an annotation goes at once.
// False when nothing changed.
func (r Result) FiguresOnly() bool {
	for _, c := range r.Changes {
		if c.Subject != pingstatus.SubjectResource {
			return false
		}
	}
	return len(r.Changes) > 0
}
