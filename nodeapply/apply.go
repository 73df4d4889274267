package nodeapply

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/pingnode/pingnode/internal/kuberules"
	"github.com/pingnode/pingnode/pingstatus"
)

// OwnershipAnnotation is the annotation in which Apply records the taints
// the plugin set, so that it removes only those, across provider restarts.
const OwnershipAnnotation = "pingnode.io/plugin-taints"

// DefaultProtectedKey is the taint key of interLink's provider, which Apply
// never touches.
const DefaultProtectedKey = pingstatus.DefaultProtectedKey

// Options change how [Apply] merges. The zero value is the safe default.
type Options struct {
	// ProtectedKeys are taint keys, besides [DefaultProtectedKey], that
	// belong to the provider (its static configuration, say). Apply never
	// adds, changes or removes a taint with one of them. Give the same list
	// to [pingstatus.Options.ProtectedKeys].
	ProtectedKeys []string
	// Annotation is the ownership annotation's key; empty means
	// [OwnershipAnnotation].
	Annotation string
	// ReplaceAllTaints is interLink 0.6.2's rule: when the patch carries
	// taints, every taint but the protected ones is replaced by the plugin's
	// list, including an administrator's and the Kubernetes controllers'.
	// The default removes only the taints the plugin set.
	ReplaceAllTaints bool
}

func (o *Options) annotation() string {
	if o.Annotation == "" {
		return OwnershipAnnotation
	}
	return o.Annotation
}

func (o *Options) protected(key string) bool { return kuberules.IsProtectedKey(key, o.ProtectedKeys) }

// Result is what [Apply] returns.
type Result struct {
	// Node is the node after the patch. When Changes is empty it is the
	// input node itself, not a copy: treat it as read-only. Otherwise it is
	// a new node that shares no memory with the input.
	Node *corev1.Node
	// Changes lists what changed, sorted by path. It is empty exactly when
	// Node is semantically equal to the input: then there is nothing to
	// send to the API server.
	Changes []Change
	// Warnings are what Apply refused or repaired, sorted by path.
	Warnings []pingstatus.Warning
}

// Apply merges patch into node and returns the node after it, with the
// changes and warnings. It never modifies node or patch. A nil node is
// treated as an empty one; a nil patch changes nothing.
//
// A ping that changes nothing (the same resources, and the same taints in
// the same order as before) costs no copy and no allocation: Apply returns
// node itself with no changes.
func Apply(node *corev1.Node, patch *pingstatus.NodePatch, opts Options) Result {
	if patch == nil {
		patch = &pingstatus.NodePatch{}
	}
	// The check runs on a value that stays on the stack: the applier
	// escapes (its closures outlive calls), so it is built only when needed.
	check := checker{in: node, patch: patch, opts: opts}
	if check.unchanged() {
		return Result{Node: node}
	}
	a := &applier{checker: check}
	return a.apply()
}

// checker answers, without allocating, whether a patch leaves a node as it
// is.
type checker struct {
	in    *corev1.Node
	patch *pingstatus.NodePatch
	opts  Options
	// What unchanged found, for apply.
	valid, sameResources, sameTaints bool
}

// applier builds the new node when the checker cannot say it is unchanged.
type applier struct {
	checker
	warnings []pingstatus.Warning
	// touched says which parts apply may have changed, so that only those
	// are compared with the input.
	touchedResources, touchedTaints bool
}

func (a *applier) warn(path, message string) {
	a.warnings = append(a.warnings, pingstatus.Warning{Path: path, Message: message})
}

// unchanged reports whether the patch leaves a valid node as it is. False
// means "maybe": apply decides.
func (a *checker) unchanged() bool {
	if a.in == nil {
		a.valid = true
		return a.patch.IsEmpty()
	}
	a.valid = kuberules.NodeProblems(a.in) == nil // if not, apply repairs it
	a.sameResources = a.resourcesUnchanged()
	a.sameTaints = !a.patch.ReplaceTaints || a.taintsUnchanged()
	return a.valid && a.sameResources && a.sameTaints
}

func (a *checker) resourcesUnchanged() bool {
	for name, q := range a.patch.Resources {
		if resourceProblem(name, q) != "" ||
			!holds(a.in.Status.Capacity, name, q) || !holds(a.in.Status.Allocatable, name, q) {
			return false
		}
	}
	return true
}

// holds reports whether list has q for name, by value.
func holds(list corev1.ResourceList, name corev1.ResourceName, q resource.Quantity) bool {
	v, ok := list[name]
	return ok && v.Cmp(q) == 0
}

// resourceProblem returns why a patch may not set name to q, or "".
func resourceProblem(name corev1.ResourceName, q resource.Quantity) string {
	if p := kuberules.ResourceNameProblem(name); p != "" {
		return "resource name " + p
	}
	return kuberules.QuantityProblem(name, q)
}

// taintsUnchanged reports whether the plugin's taints on the node are, in
// order, exactly the patch's, and the ownership annotation lists them.
func (a *checker) taintsUnchanged() bool {
	want := a.patch.Taints
	annotation, present := a.in.Annotations[a.opts.annotation()]
	if present && annotation == "" {
		return false // apply removes the empty annotation
	}
	next := newOwnedCursor(annotation)
	k := 0
	for i := range a.in.Spec.Taints {
		t := &a.in.Spec.Taints[i]
		var plugin bool
		if a.opts.ReplaceAllTaints {
			plugin = !a.opts.protected(t.Key)
		} else {
			id, ok, more := next.peek()
			plugin = more && ok && id == kuberules.IDOf(t)
		}
		if !plugin {
			continue
		}
		if a.opts.protected(t.Key) || kuberules.IsReservedKey(t.Key) && !a.opts.ReplaceAllTaints {
			return false
		}
		if k >= len(want) || !sameTaint(t, &want[k]) {
			return false
		}
		k++
		if !a.opts.ReplaceAllTaints {
			next.advance()
		}
	}
	if k != len(want) {
		return false
	}
	if a.opts.ReplaceAllTaints { // the annotation must list the plugin's list
		for _, w := range want {
			id, ok, more := next.peek()
			if !more || !ok || id != kuberules.IDOf(&w) {
				return false
			}
			next.advance()
		}
	}
	_, _, more := next.peek()
	return !more
}

// sameTaint reports whether two taints have the same key, value and effect
// (when it was added does not count).
func sameTaint(a, b *corev1.Taint) bool {
	return a.Key == b.Key && a.Value == b.Value && a.Effect == b.Effect
}

// apply builds the new node, then lists what differs from the input.
func (a *applier) apply() Result {
	var out *corev1.Node
	if a.in == nil {
		out = &corev1.Node{}
	} else {
		out = a.in.DeepCopy()
	}
	a.touchedResources = !a.valid || !a.sameResources
	a.touchedTaints = !a.valid || !a.sameTaints
	if a.touchedResources {
		a.resources(out) // first, so that repair leaves alone what the patch replaces
	}
	if !a.valid {
		a.repair(out)
	}
	if a.touchedTaints && a.patch.ReplaceTaints {
		a.taints(out)
	}
	slices.SortStableFunc(a.warnings, func(x, y pingstatus.Warning) int { return strings.Compare(x.Path, y.Path) })
	changes := a.diff(out)
	if len(changes) == 0 {
		return Result{Node: a.in, Warnings: a.warnings}
	}
	return Result{Node: out, Changes: changes, Warnings: a.warnings}
}

// resources writes each valid quantity of the patch to capacity and
// allocatable, keeping the node's spelling where the value is equal.
func (a *applier) resources(out *corev1.Node) {
	for name, q := range a.patch.Resources {
		if p := resourceProblem(name, q); p != "" {
			a.warn("patch.resources["+string(name)+"]", q.String()+": "+p+"; not applied")
			continue
		}
		setQuantity(&out.Status.Capacity, name, q)
		setQuantity(&out.Status.Allocatable, name, q)
	}
}

func setQuantity(list *corev1.ResourceList, name corev1.ResourceName, q resource.Quantity) {
	if holds(*list, name, q) {
		return
	}
	if *list == nil {
		*list = corev1.ResourceList{}
	}
	(*list)[name] = q.DeepCopy()
}
