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
// allocate a few slices of their own (rule merge-pure).
func Apply(node *corev1.Node, ping Ping, opts Options) Result {
	if node == nil {
		node = &corev1.Node{}
	}
	a := applier{draft: draft{in: node}, ping: ping, opts: opts, patch: &noNews}
	a.judge()
	a.apply()
	return a.result()
}

// noNews is the patch of a ping without a reply: a read-only zero value,
// shared so that such a ping allocates nothing for it.
var noNews = pingstatus.NodePatch{}

// The concerns of a node that Apply writes, each by one function that
// both decides whether it changes and writes the change.
type concern uint8

const (
	concernResources    concern = 1 << iota // status.capacity and status.allocatable
	concernTaints                           // spec.taints and the taint ownership annotation
	concernLabels                           // the labels and the label ownership annotation
	concernConditions                       // the conditions the ping sets
	concernPingResponse                     // interLink's ping-response annotation
)

// A draft is the node as the concerns write it: the input until a
// concern changes something, then a copy of it, made once, which every
// later concern reads and writes. A ping that changes nothing is never
// copied.
type draft struct {
	in, out *corev1.Node
	// touched are the concerns that wrote to out, which are compared with
	// the input for the changes.
	touched concern
}

// node returns the node as written so far, to read.
func (d *draft) node() *corev1.Node {
	if d.out != nil {
		return d.out
	}
	return d.in
}

// edit returns the node to write the concern c into: the copy, made now
// if it was not yet.
func (d *draft) edit(c concern) *corev1.Node {
	if d.out == nil {
		d.out = d.in.DeepCopy()
	}
	d.touched |= c
	return d.out
}

// An applier merges one ping into a node, concern by concern.
type applier struct {
	draft
	ping  Ping
	opts  Options
	patch *pingstatus.NodePatch // the reply as judged, or no news
	// at is the ping's time to the second, zero when conditions are left
	// alone.
	at       time.Time
	warnings warnings
}

// warnFunc adds a warning of the rule named rule about the part s of the
// node, at path, saying what was done (do).
type warnFunc func(rule string, s pingstatus.Subject, do pingstatus.Action, path, message string)

// warnings collects what Apply refused or repaired; add is its warnFunc.
type warnings []pingstatus.Warning

func (w *warnings) add(rule string, s pingstatus.Subject, do pingstatus.Action, path, message string) {
	*w = append(*w, pingstatus.Warning{Path: path, Message: message, Subject: s, Action: do, Rule: rule})
}

// warn adds a warning of the rule named rule about the part s of the
// node, at path, saying what was done (do).
func (a *applier) warn(rule string, s pingstatus.Subject, do pingstatus.Action, path, message string) {
	a.warnings.add(rule, s, do, path, message)
}

// judge takes the ping's reply, when the ping is answered and not
// Unlisted, through the gate ([Judge]): a patch that Parse or Check gave
// is taken as it is, any other judged once, by Check, with the reply's
// options (rule node-valid), and a Body without a Reply parsed. The
// warnings of that judgement are Apply's, but for those about devices,
// which are the pool's (package devicepool). A reply that Apply does not
// take is ignored with a warning.
func (a *applier) judge() {
	reply := a.ping.Reply
	switch {
	case a.ping.Reached() && !a.ping.Unlisted:
		judged, warnings := Judge(a.ping, a.opts.Reply)
		for _, w := range warnings {
			if w.Subject != pingstatus.SubjectDevice {
				a.warnings = append(a.warnings, w)
			}
		}
		if judged.Reply != nil {
			a.patch = judged.Reply
		}
	case reply == nil:
	case !a.ping.Reached() && !reply.IsEmpty():
		a.warn(ruleFailureKeeps, pingstatus.SubjectReply, pingstatus.Ignored, "ping.reply", "the ping failed; its reply is ignored")
	case a.ping.Unlisted && a.ping.Reached() && !reply.IsEmpty():
		a.warn(rulePartGone, pingstatus.SubjectReply, pingstatus.Ignored, "ping.reply", "the ping is Unlisted (the reply does not list this node's part); its reply is ignored")
	}
	if !a.ping.Reached() && a.ping.Unlisted {
		a.warn(ruleFailureKeeps, pingstatus.SubjectReply, pingstatus.Ignored, "ping.unlisted", "the ping failed, and a failed ping changes no part; Unlisted is ignored")
	}
	if !a.ping.Reached() && a.ping.At.IsZero() {
		a.warn(ruleConditionSet, pingstatus.SubjectCondition, pingstatus.Ignored, "ping.at", "a failed ping without a time; conditions left as they are")
	}
	if !a.ping.At.IsZero() {
		a.at = a.ping.At.UTC().Truncate(time.Second)
	}
}

// apply runs each concern in turn on the draft. The resources go before
// the repair, so that the repair leaves alone what the reply replaces;
// the repair before the taints, which are merged into a valid node.
func (a *applier) apply() {
	a.conditions()
	a.pingResponse()
	a.resources()
	a.repair()
	a.taints()
	a.unreachableTaint()
	a.partGoneTaint()
	a.backendFullTaint()
	a.labels()
}

// result returns the Result of the draft: the input itself when no
// concern changed it, or the copy with the changes between the two.
func (a *applier) result() Result {
	slices.SortStableFunc(a.warnings, func(x, y pingstatus.Warning) int { return strings.Compare(x.Path, y.Path) })
	r := Result{Node: a.in, Warnings: a.warnings, in: a.in, ownership: a.opts.ownership(), labelOwnership: a.opts.labelOwnership()}
	if a.out == nil {
		return r
	}
	if changes, object, status := a.diff(); len(changes) > 0 {
		r.Node, r.Changes, r.objectPatch, r.statusPatch = a.out, changes, object, status
	}
	return r
}

// resources writes each quantity of the reply, with what the provider's
// own pods hold of it, to capacity and allocatable (rule
// resource-written), keeping the node's spelling where the value is
// equal.
func (a *applier) resources() {
	for name, q := range a.patch.Resources {
		v, problem := a.wanted(name, q)
		if problem != "" {
			held := a.ping.Held[name]
			a.warn(ruleResourceWritten, pingstatus.SubjectResource, pingstatus.Refused, "ping.held["+string(name)+"]", held.String()+": "+problem+"; the reply's "+q.String()+" used alone")
		}
		if node := a.node(); !holds(node.Status.Capacity, name, v) || !holds(node.Status.Allocatable, name, v) {
			out := a.edit(concernResources)
			setQuantity(&out.Status.Capacity, name, v)
			setQuantity(&out.Status.Allocatable, name, v)
		}
	}
}

// wanted returns the value the ping asks for name, whose reply says q:
// q and what the provider's own pods hold of it (Ping.Held). When the held
// amount is refused, it returns q alone and why, so that the node never
// claims more than the backend reported.
func (a *applier) wanted(name corev1.ResourceName, q resource.Quantity) (resource.Quantity, string) {
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

// setQuantity sets name to q in list, unless it holds it already.
func setQuantity(list *corev1.ResourceList, name corev1.ResourceName, q resource.Quantity) {
	if holds(*list, name, q) {
		return
	}
	if *list == nil {
		*list = corev1.ResourceList{}
	}
	(*list)[name] = q.DeepCopy()
}
