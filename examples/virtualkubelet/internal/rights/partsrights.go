package rights

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// The rights of a provider of its plugin's parts (-parts), beside those of
// rbac.go and nodepolicy.go. Its nodes are named by a template and made
// as parts come, so RBAC cannot name them: it may read, watch, patch and
// delete every node, and renew every Lease in kube-node-lease. The
// admission policy fences what it writes: a node it creates, changes
// (its object or its status) or deletes must carry its ownership label,
// and a part's label that names the node by its template, as the node
// was (oldObject) for a change or a delete, and as it will be (object)
// for a create; its nodes' Leases, events, pods and ResourceSlices must
// be of a node name of its template. Reads cannot be fenced: its token
// reads every node of the cluster (no Secret).

// Parts is how the nodes of a provider of its plugin's parts are named
// and owned.
type Parts struct {
	// Template names each part's node: the part's name in place of
	// Token, which it holds exactly once (-node).
	Template, Token string
	// Part is the regular expression (RE2, as CEL's matches reads it,
	// without anchors) of a part's name, and Names that of the names of
	// the template's nodes, anchored.
	Part, Names string
	// OwnerLabel is the label that says which provider owns a node, whose
	// value on its nodes is Owner (-parts-owner); PartLabel is the label
	// of a part's node that names its part.
	OwnerLabel, Owner, PartLabel string
	// Labels are the labels a part's node is registered with, but its
	// part's and its owner's: the value of its hostname label
	// (kubernetes.io/hostname) is the node's name, whatever it is here.
	Labels map[string]string
}

// partNodeRights are the rules of the nodes of a provider of parts,
// beside the create of rbac.go's.
func (a Access) partNodeRights() []Rule {
	every := " (RBAC cannot name the nodes of a template: every node"
	fenced := "; -print-node-policy fences it to the nodes with its ownership label " + a.Parts.OwnerLabel + "=" + a.Parts.Owner + " and a name of its template " + a.Parts.Template + ")"
	return []Rule{
		rule("", "nodes", nil, "read each part's node at its start and after a conflict, and a new part's before it registers it, to leave alone a node of that name that is not its own"+every+")", "get"),
		rule("", "nodes", nil, "watch the nodes with its ownership label, which it serves at start and after a takeover, and each part's node by name"+every+")", "list", "watch"),
		rule("", "nodes", nil, "send each part's node's object patch: the plugin's taints and labels, the part-gone taint, and their ownership annotations"+every+fenced, "patch"),
		rule("", "nodes/status", nil, "send each part's node's status patch"+every+fenced, "patch"),
		rule("", "nodes", nil, "delete a part's node once its part has been gone for -part-grace and no pod holds it, with its UID and resourceVersion as preconditions"+every+fenced, "delete"),
	}
}

// partLeaseRight is the rule of the Leases of the nodes of a provider of
// parts, beside their create.
func (a Access) partLeaseRight() Rule {
	return rule(coordinationv1.GroupName, "leases", nil, "renew each part's node's Lease, named as the node: read it, then update it (RBAC cannot name the nodes of a template: every Lease in "+corev1.NamespaceNodeLease+"; -print-node-policy fences the updates to the names of its template)", "get", "update")
}

// ours is the CEL expression that holds when the node name expr is one
// of its nodes: in the list of its nodes, or, with parts, a name of its
// template.
func (a Access) ours(expr string) string {
	if a.Parts != nil {
		return expr + ".matches(" + celString(a.Parts.Names) + ")"
	}
	return expr + " in " + celList(a.Nodes)
}

// owned is the CEL expression that holds when the node o (object or
// oldObject) is one of a provider of parts': it has its ownership label,
// and a part's label that names a part whose node's name is the node's.
func (a Access) owned(o string) string {
	prefix, suffix, _ := strings.Cut(a.Parts.Template, a.Parts.Token)
	labels := o + ".metadata.labels"
	part := labels + "[" + celString(a.Parts.PartLabel) + "]"
	named := part
	if prefix != "" {
		named = celString(prefix) + " + " + named
	}
	if suffix != "" {
		named += " + " + celString(suffix)
	}
	return "(has(" + labels + ") && " + celString(a.Parts.OwnerLabel) + " in " + labels + " && " + labels + "[" + celString(a.Parts.OwnerLabel) + "] == " + celString(a.Parts.Owner) +
		" && " + celString(a.Parts.PartLabel) + " in " + labels + " && " + part + ".matches(" + celString("^"+a.Parts.Part+"$") + ")" +
		" && " + o + ".metadata.name == " + named + ")"
}

// nodeCreated is the CEL expression that holds when a node it creates
// is one of its own.
func (a Access) nodeCreated() string {
	if a.Parts != nil {
		return a.owned("object")
	}
	return a.ours("object.metadata.name")
}

// ownNodes says, for a message, what its own nodes are.
func (a Access) ownNodes() string {
	if a.Parts == nil {
		return ""
	}
	return ", named " + a.Parts.Template + " and labelled " + a.Parts.OwnerLabel + "=" + a.Parts.Owner + " and " + a.Parts.PartLabel + " with the part"
}

// notDeleted is the start of the label fence's expression: a node deleted
// has no labels to fence (object is null), and only a provider of parts
// deletes nodes.
func (a Access) notDeleted() string {
	if a.Parts == nil {
		return ""
	}
	return "request.operation == 'DELETE' || "
}

// partValidations are the policy's validations of a provider of parts:
// it may change and delete only its own nodes, as they were.
func (a Access) partValidations() []admissionregistrationv1.Validation {
	if a.Parts == nil {
		return nil
	}
	forbidden := metav1.StatusReasonForbidden
	who := "the pingnode provider " + a.Namespace + "/" + a.ServiceAccount
	return []admissionregistrationv1.Validation{
		{
			Expression: "request.resource.resource != 'nodes' || request.operation != 'UPDATE' || " + a.owned("oldObject"),
			Message:    who + " may change only its own nodes" + a.ownNodes(),
			Reason:     &forbidden,
		},
		{
			Expression: "request.resource.resource != 'nodes' || request.operation != 'DELETE' || " + a.owned("oldObject"),
			Message:    who + " may delete only its own nodes" + a.ownNodes(),
			Reason:     &forbidden,
		},
	}
}

// partLabelVariables are the policy's variables for [labelFence] with
// parts: the static labels of a node are those of the node of its part,
// for a node of its template, and none for another.
func (a Access) partLabelVariables() []admissionregistrationv1.Variable {
	prefix, suffix, _ := strings.Cut(a.Parts.Template, a.Parts.Token)
	name := "object.metadata.name"
	fixed := maps.Clone(a.Parts.Labels)
	delete(fixed, corev1.LabelHostname)
	entries := make([]string, 0, len(fixed)+3)
	for _, k := range slices.Sorted(maps.Keys(fixed)) {
		entries = append(entries, celString(k)+": "+celString(fixed[k]))
	}
	// A map literal's values are of one type: the object's are dyn.
	entries = append(entries, celString(a.Parts.PartLabel)+": string(variables.partOf)", celString(a.Parts.OwnerLabel)+": "+celString(a.Parts.Owner))
	withHost := append([]string{celString(corev1.LabelHostname) + ": string(" + name + ")"}, entries...)
	return []admissionregistrationv1.Variable{
		{Name: "labels", Expression: "has(object.metadata.labels) ? object.metadata.labels : {}"},
		{Name: "oldLabels", Expression: "oldObject != null && has(oldObject.metadata.labels) ? oldObject.metadata.labels : {}"},
		{Name: "labelNamespaces", Expression: celList(a.labelNamespaces())},
		{Name: "partOf", Expression: a.ours(name) + " ? " + name + ".substring(" + strconv.Itoa(len(prefix)) + ", " + name + ".size() - " + strconv.Itoa(len(suffix)) + ") : ''"},
		{Name: "staticLabels", Expression: "variables.partOf == '' ? {} : (" + name + ".size() <= " + strconv.Itoa(validation.LabelValueMaxLength) +
			" ? {" + strings.Join(withHost, ", ") + "} : {" + strings.Join(entries, ", ") + "})"},
	}
}
