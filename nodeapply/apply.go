package nodeapply

import (
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/pingnode/pingnode/internal/kuberules"
	"github.com/pingnode/pingnode/pingstatus"
)

// Apply merges one ping into node and returns the node after it, with the
// changes and warnings. It never modifies node or anything in ping. A nil
// node is read as an empty one.
//
// A ping that changes nothing (the plugin answered as before) costs no
// copy: Apply returns node itself with no changes. Without taints and
// labels in the reply it costs no allocation either; their merges
// allocate a few slices of their own (rule 1).
func Apply(node *corev1.Node, ping Ping, opts Options) Result {
	if node == nil {
		node = &corev1.Node{}
	}
	// The check runs on a value that stays on the stack: the applier
	// escapes (its closures outlive calls), so it is built only when needed.
	check := newChecker(node, ping, opts)
	if check.unchanged() {
		return check.result(node, nil)
	}
	a := &applier{checker: check}
	return a.apply()
}

// newChecker returns the checker of a ping on node: the reply, or no
// news.
func newChecker(node *corev1.Node, ping Ping, opts Options) checker {
	check := checker{in: node, ping: ping, opts: opts, patch: ping.Reply}
	if check.patch == nil || !ping.Reached() || ping.Unlisted {
		check.patch = &noNews
	}
	return check
}

// noNews is the patch of a ping without a reply: a read-only zero value,
// shared so that such a ping allocates nothing for it.
var noNews = pingstatus.NodePatch{}

// checker answers, without copying the node, whether a ping leaves it as
// it is: each part's rule run on the input, the taints' and the labels'
// merges kept for the build.
type checker struct {
	in    *corev1.Node
	ping  Ping
	patch *pingstatus.NodePatch // the reply, or no news
	opts  Options
	// at is the ping's time to the second, zero when conditions are left
	// alone; wants are what the ping asks of Ready and the connectivity
	// condition, and virtual whether it asks for the virtual node's
	// conditions too (see wantCount and want). pastGrace says that the
	// plugin has failed for the grace, fence what the ping asks of the
	// unreachable taint, and partGone what it asks of the part-gone taint.
	at        time.Time
	wants     [2]conditionWant
	virtual   bool
	pastGrace bool
	fence     fence
	partGone  fence
	// What unchanged found, for apply.
	valid, sameResources, sameTaints, sameLabels, sameConditions, sameAnnotation bool
	// The merges of the patch's taints and labels into the input, when
	// it carries them (for the taints, merged says so: not on an invalid
	// node, whose taints are merged once repaired).
	taintMerge taintMerge
	merged     bool
	labelMerge labelMerge
}

// warnFunc adds a warning about the part s of the node, at path, saying
// what was done (do).
type warnFunc func(s pingstatus.Subject, do pingstatus.Action, path, message string)

// warnings collects what Apply refused or repaired; add is its warnFunc.
type warnings []pingstatus.Warning

func (w *warnings) add(s pingstatus.Subject, do pingstatus.Action, path, message string) {
	*w = append(*w, pingstatus.Warning{Path: path, Message: message, Subject: s, Action: do})
}

// applier builds the new node when the checker cannot say it is unchanged.
type applier struct {
	checker
	warnings warnings
	// touched says which parts apply may have changed, so that only those
	// are compared with the input.
	touchedResources, touchedTaints, touchedLabels, touchedConditions, touchedAnnotation bool
	// What diff found: changes for the object patch, for the status patch.
	objectChanged, statusChanged bool
}

// warn adds a warning about the part s of the node, at path, saying what
// was done (do).
func (a *applier) warn(s pingstatus.Subject, do pingstatus.Action, path, message string) {
	a.warnings.add(s, do, path, message)
}

// unchanged reports whether the patch leaves a valid node as it is. False
// means "maybe": apply decides.
func (a *checker) unchanged() bool {
	if !a.ping.At.IsZero() {
		a.at = a.ping.At.UTC().Truncate(time.Second)
		a.conditionWants()
	}
	a.sameConditions = a.conditionsUnchanged()
	a.sameAnnotation = a.pingResponseUnchanged()
	a.fence = a.fenceWant()
	a.partGone = a.partGoneWant()
	a.valid = kuberules.NodeProblems(a.in) == nil // if not, apply repairs it
	a.sameResources = a.resourcesUnchanged()
	if a.patch.ReplaceTaints && a.valid { // an invalid node's taints are merged once repaired
		a.taintMerge = a.mergeTaints(a.in)
		a.merged = true
	}
	a.sameTaints = (!a.patch.ReplaceTaints || a.merged && a.taintMerge.holds(a.in, a.opts.ownership())) &&
		a.fenceUnchanged() && a.partGoneUnchanged()
	if a.patch.ReplaceLabels {
		a.labelMerge = a.mergeLabels(a.in)
	}
	a.sameLabels = !a.patch.ReplaceLabels || a.labelMerge.holds(a.in, a.opts.labelOwnership())
	return a.valid && a.sameResources && a.sameTaints && a.sameLabels && a.sameConditions && a.sameAnnotation &&
		!a.ignoredReply() && !a.failedWithoutTime() && !a.ignoredUnlisted()
}

// ignoredReply reports whether the ping failed, or is Unlisted, but
// carries a reply, which Apply ignores.
func (a *checker) ignoredReply() bool {
	return (!a.ping.Reached() || a.ping.Unlisted) && a.ping.Reply != nil && !a.ping.Reply.IsEmpty()
}

// ignoredUnlisted reports whether the ping failed but says Unlisted,
// which Apply ignores: a failed ping changes no part.
func (a *checker) ignoredUnlisted() bool { return !a.ping.Reached() && a.ping.Unlisted }

// failedWithoutTime reports whether the ping failed but has no time, so
// that its conditions cannot be written.
func (a *checker) failedWithoutTime() bool { return !a.ping.Reached() && a.ping.At.IsZero() }

func (a *checker) resourcesUnchanged() bool {
	for name, q := range a.patch.Resources {
		if resourceProblem(name, q) != "" {
			return false
		}
		v, problem := a.wanted(name, q)
		if problem != "" || !holds(a.in.Status.Capacity, name, v) || !holds(a.in.Status.Allocatable, name, v) {
			return false
		}
	}
	return true
}

// wanted returns the value the ping asks for name, whose reply says q:
// q and what the provider's own pods hold of it (Ping.Held). When the held
// amount is refused, it returns q alone and why, so that the node never
// claims more than the backend reported.
func (a *checker) wanted(name corev1.ResourceName, q resource.Quantity) (resource.Quantity, string) {
	held, ok := a.ping.Held[name]
	if !ok || a.patch.Basis == pingstatus.BasisTotal { // the reply's figures hold the pods' share already
		return q, ""
	}
	if p := kuberules.QuantityProblem(name, held); p != "" {
		return q, p
	}
	sum := q.DeepCopy() // q may share a decimal with the patch
	sum.Add(held)
	if kuberules.TooLarge(name, sum) {
		return q, "with it the sum is too large (" + kuberules.LimitText(name) + ")"
	}
	return sum, ""
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

// apply builds the new node, then lists what differs from the input.
func (a *applier) apply() Result {
	out := a.build(false)
	changes := a.diff(out)
	if len(changes) == 0 {
		return a.result(a.in, a.warnings)
	}
	r := a.result(out, a.warnings)
	r.Changes, r.objectPatch, r.statusPatch = changes, a.objectChanged, a.statusChanged
	return r
}

// result is a Result with node and warnings, and no changes.
func (a *checker) result(node *corev1.Node, warnings []pingstatus.Warning) Result {
	return Result{Node: node, Warnings: warnings, in: a.in, ownership: a.opts.ownership(), labelOwnership: a.opts.labelOwnership()}
}

// build returns a copy of the input with the ping merged into the parts
// that the checker did not find unchanged, or with everything, into every
// part (the merge in full, which the checker's verdict must agree with).
func (a *applier) build(everything bool) *corev1.Node {
	out := a.in.DeepCopy()
	a.touchedResources = everything || !a.valid || !a.sameResources
	a.touchedTaints = everything || !a.valid || !a.sameTaints
	a.touchedLabels = everything || !a.sameLabels
	a.touchedConditions = everything || !a.sameConditions
	a.touchedAnnotation = everything && a.opts.KeepPingResponse || !a.sameAnnotation
	switch {
	case a.ignoredReply() && !a.ping.Reached():
		a.warn(pingstatus.SubjectReply, pingstatus.Ignored, "ping.reply", "the ping failed; its reply is ignored")
	case a.ignoredReply():
		a.warn(pingstatus.SubjectReply, pingstatus.Ignored, "ping.reply", "the ping is Unlisted (the reply does not list this node's part); its reply is ignored")
	}
	if a.ignoredUnlisted() {
		a.warn(pingstatus.SubjectReply, pingstatus.Ignored, "ping.unlisted", "the ping failed, and a failed ping changes no part; Unlisted is ignored")
	}
	if a.failedWithoutTime() {
		a.warn(pingstatus.SubjectCondition, pingstatus.Ignored, "ping.at", "a failed ping without a time; conditions left as they are")
	}
	if a.touchedConditions {
		a.conditions(out)
	}
	if a.touchedAnnotation {
		a.setPingResponse(out)
	}
	if a.touchedResources {
		a.resources(out) // first, so that repair leaves alone what the patch replaces
	}
	if !a.valid {
		a.repair(out)
	}
	if a.touchedTaints && a.patch.ReplaceTaints {
		if !a.merged { // repaired, or a build of everything
			a.taintMerge, a.merged = a.mergeTaints(out), true
		}
		a.warnings = append(a.warnings, a.taintMerge.warnings...)
		a.taintMerge.write(out, a.opts.ownership())
	}
	if a.touchedTaints {
		a.setFence(out)
		a.setPartGone(out)
	}
	if a.touchedLabels && a.patch.ReplaceLabels {
		a.warnings = append(a.warnings, a.labelMerge.warnings...)
		a.labelMerge.write(out, a.patch.Labels, a.opts.labelOwnership())
	}
	slices.SortStableFunc(a.warnings, func(x, y pingstatus.Warning) int { return strings.Compare(x.Path, y.Path) })
	return out
}

// resources writes each valid quantity of the patch to capacity and
// allocatable, keeping the node's spelling where the value is equal.
func (a *applier) resources(out *corev1.Node) {
	for name, q := range a.patch.Resources {
		if p := resourceProblem(name, q); p != "" {
			a.warn(pingstatus.SubjectResource, pingstatus.Refused, "patch.resources["+string(name)+"]", q.String()+": "+p+"; not applied")
			continue
		}
		v, problem := a.wanted(name, q)
		if problem != "" {
			held := a.ping.Held[name]
			a.warn(pingstatus.SubjectResource, pingstatus.Refused, "ping.held["+string(name)+"]", held.String()+": "+problem+"; the reply's "+q.String()+" used alone")
		}
		setQuantity(&out.Status.Capacity, name, v)
		setQuantity(&out.Status.Allocatable, name, v)
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
