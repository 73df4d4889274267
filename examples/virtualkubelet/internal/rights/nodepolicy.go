package rights

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/pingnode/pingnode/pingstatus"
)

// What RBAC cannot name, fenced by admission: a ValidatingAdmissionPolicy
// on the ServiceAccount's user name that lets it create only its own
// nodes, their Leases, its leader election Lease and events on its nodes,
// change only the labels of its nodes that its plugins may set, delete
// only the pods of its nodes that are being deleted, and, with a DRA
// driver, write only ResourceSlices of its driver on its nodes
// (-print-node-policy). Its rights themselves are in rbac.go.

// Policy returns a ValidatingAdmissionPolicy and its binding, both named
// as the RBAC objects are (namespace:serviceaccount) with ":" read as ".",
// that fence what RBAC cannot name: requests of the ServiceAccount's user
// may create only its own nodes, only their Leases in kube-node-lease and
// the leader election Lease, and events only on its own nodes. It fences
// the labels of its nodes too, as NodeRestriction fences a kubelet's
// (KEP-279), so that a provider taken over cannot label its nodes into
// workloads meant for others: a create, an update or a status update of a
// node may add, change or remove a label only in the allowed namespaces
// (node-feature-discovery's and [Access.LabelNamespaces], each with its
// subdomains), and may set the node's static labels to their static
// values; any other label must stay as it was. A pod it deletes must be
// bound to one of its nodes and being deleted already (oldObject, the pod
// as stored: spec.nodeName and metadata.deletionTimestamp), so that it
// finishes the deletions others began on its nodes, and begins none, nor
// ends another node's pod. Running pods ([Access.Jobs]), it may change on
// a pod nothing but the annotations of its jobs, write the status only of
// a pod bound to one of its nodes, and record events on pods only of
// their jobs, from one of its nodes. With a DRA driver ([Access.DRADriver]), a
// ResourceSlice it creates, updates or deletes must be of that driver and
// on one of its nodes (spec.nodeName), as the slice was and as it will be
// (KEP-4381 suggests such a policy for a driver's identity), and the
// events it records on pods must be of their devices
// ([Access.PodEventReasons]), from one of its nodes (source.host). Other
// users' requests are not matched. It needs
// admissionregistration.k8s.io/v1 (Kubernetes 1.30 and later).
func (a Access) Policy() []runtime.Object {
	name := strings.ReplaceAll(a.name(), ":", ".")
	leases := "(request.namespace == '" + corev1.NamespaceNodeLease + "' && " + a.ours("object.metadata.name") + ")"
	leaseMessage := "the pingnode provider " + a.Namespace + "/" + a.ServiceAccount + " may create only its nodes' Leases"
	if a.Parts != nil {
		leaseMessage = "the pingnode provider " + a.Namespace + "/" + a.ServiceAccount + " may create and renew only its nodes' Leases"
	}
	if e := a.Election; e != nil {
		leases += " || (request.namespace == '" + e.Namespace + "' && object.metadata.name == '" + e.Name + "')"
		leaseMessage += " and its leader election Lease"
	}
	forbidden := metav1.StatusReasonForbidden
	fail := admissionregistrationv1.Fail
	rules := []admissionregistrationv1.NamedRuleWithOperations{
		namedRule("", "nodes", admissionregistrationv1.Create, admissionregistrationv1.Update),
		namedRule("", "nodes/status", admissionregistrationv1.Update),
		namedRule(coordinationv1.GroupName, "leases", admissionregistrationv1.Create),
		namedRule("", "events", admissionregistrationv1.Create, admissionregistrationv1.Update),
		namedRule("", "pods", admissionregistrationv1.Delete),
	}
	if a.Parts != nil { // it deletes its nodes, and renews Leases RBAC cannot name
		rules[0].Operations = append(rules[0].Operations, admissionregistrationv1.Delete)
		rules[2].Operations = append(rules[2].Operations, admissionregistrationv1.Update)
	}
	events := "(object.involvedObject.kind == 'Node' && " + a.ours("object.involvedObject.name") + ")"
	eventMessage := "the pingnode provider " + a.Namespace + "/" + a.ServiceAccount + " may record events only on its own nodes"
	if a.DRADriver != "" || a.Confirm != nil {
		rules = append(rules, namedRule(resourcev1.GroupName, "resourceslices", admissionregistrationv1.Create, admissionregistrationv1.Update, admissionregistrationv1.Delete))
	}
	podsExpression := "request.resource.resource != 'pods' || " + podFence(a.ours)
	podsMessage := "the pingnode provider " + a.Namespace + "/" + a.ServiceAccount + " may delete only pods bound to its own nodes that are being deleted"
	if a.Confirm != nil {
		rules = append(rules, namedRule(resourcev1.GroupName, "deviceclasses", admissionregistrationv1.Create))
	}
	if a.Jobs != nil {
		rules[4].Operations = append(rules[4].Operations, admissionregistrationv1.Update)
		rules = append(rules, namedRule("", "pods/status", admissionregistrationv1.Update))
		podsExpression = "request.resource.resource != 'pods' || (request.operation == 'DELETE' && " + podFence(a.ours) + ") || " +
			"(request.operation == 'UPDATE' && !" + statusRequest + " && " + annotationFence(a.Jobs.Annotations) + ") || " +
			"(request.operation == 'UPDATE' && " + statusRequest + " && has(oldObject.spec.nodeName) && " + a.ours("oldObject.spec.nodeName") + ")"
		podsMessage += ", change on a pod nothing but its annotations " + strings.Join(a.Jobs.Annotations, " and ") + ", and write the status only of pods bound to its own nodes"
	}
	if reasons := a.podEventReasons(); len(reasons) > 0 {
		events += " || (object.involvedObject.kind == 'Pod' && object.reason in " + celList(reasons) +
			" && has(object.source) && has(object.source.host) && " + a.ours("object.source.host") + ")"
		eventMessage += ", and on pods only " + a.podEventsWhy() + ", from its own nodes"
	}
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		TypeMeta:   typeMeta(admissionregistrationv1.SchemeGroupVersion.String(), "ValidatingAdmissionPolicy"),
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: a.labels()},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy:    &fail,
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: rules},
			MatchConditions: []admissionregistrationv1.MatchCondition{
				{Name: "the-provider", Expression: "request.userInfo.username == '" + a.User() + "'"},
			},
			Variables: a.labelVariables(),
			Validations: []admissionregistrationv1.Validation{
				{
					Expression: "request.resource.resource != 'nodes' || request.operation != 'CREATE' || " + a.nodeCreated(),
					Message:    "the pingnode provider " + a.Namespace + "/" + a.ServiceAccount + " may create only its own nodes" + a.ownNodes(),
					Reason:     &forbidden,
				},
				{Expression: "request.resource.resource != 'leases' || " + leases, Message: leaseMessage, Reason: &forbidden},
				{Expression: "request.resource.resource != 'events' || " + events, Message: eventMessage, Reason: &forbidden},
				{Expression: podsExpression, Message: podsMessage, Reason: &forbidden},
				{
					Expression: "request.resource.resource != 'nodes' || " + a.notDeleted() + labelFence,
					Message: "the pingnode provider " + a.Namespace + "/" + a.ServiceAccount + " may change its nodes' labels only in " +
						strings.Join(a.labelNamespaces(), ", ") + " and their subdomains, and set their static labels",
					Reason: &forbidden,
				},
			},
		},
	}
	if drivers := a.sliceDrivers(); len(drivers) > 0 {
		policy.Spec.Validations = append(policy.Spec.Validations, admissionregistrationv1.Validation{
			Expression: sliceFence(drivers, a.ours),
			Message:    "the pingnode provider " + a.Namespace + "/" + a.ServiceAccount + " may write only ResourceSlices of its " + plural("driver", drivers) + " on its own nodes",
			Reason:     &forbidden,
		})
	}
	if c := a.Confirm; c != nil {
		policy.Spec.Validations = append(policy.Spec.Validations, admissionregistrationv1.Validation{
			Expression: "request.resource.resource != 'deviceclasses' || object.metadata.name == " + celString(c.Class),
			Message:    "the pingnode provider " + a.Namespace + "/" + a.ServiceAccount + " may create only the DeviceClass " + c.Class,
			Reason:     &forbidden,
		})
	}
	if a.Jobs != nil {
		policy.Spec.Variables = append(policy.Spec.Variables,
			admissionregistrationv1.Variable{Name: "annotations", Expression: "has(object.metadata.annotations) ? object.metadata.annotations : {}"},
			admissionregistrationv1.Variable{Name: "oldAnnotations", Expression: "oldObject != null && has(oldObject.metadata.annotations) ? oldObject.metadata.annotations : {}"},
		)
	}
	policy.Spec.Validations = append(policy.Spec.Validations, a.partValidations()...)
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		TypeMeta:   typeMeta(admissionregistrationv1.SchemeGroupVersion.String(), "ValidatingAdmissionPolicyBinding"),
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: a.labels()},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        name,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
		},
	}
	return []runtime.Object{policy, binding}
}

// sliceFence is the CEL expression that holds when a request is not of
// ResourceSlices, or writes a slice of driver on one of its nodes (node
// is the expression that a node name is one: [Access.ours]): the slice created or updated (object), and the slice updated or
// deleted (oldObject), so that a slice of another node or driver can be
// neither made one of its own nor taken over.
func sliceFence(drivers []string, node func(string) string) string {
	ours := func(o string) string {
		driver := " == " + celString(drivers[0])
		if len(drivers) > 1 {
			driver = " in " + celList(drivers)
		}
		return "(" + o + ".spec.driver" + driver + " && has(" + o + ".spec.nodeName) && " + node(o+".spec.nodeName") + ")"
	}
	return "request.resource.resource != 'resourceslices' || ((request.operation == 'DELETE' || " + ours("object") + ") && " +
		"(request.operation == 'CREATE' || " + ours("oldObject") + "))"
}

// plural is "driver a" for one, and "drivers a, b" for more.
func plural(word string, names []string) string {
	if len(names) == 1 {
		return word + " " + names[0]
	}
	return word + "s " + strings.Join(names, ", ")
}

// sliceDrivers are the drivers whose ResourceSlices it writes: its
// devices' (-dra-driver), and its confirmation devices' (-confirm).
func (a Access) sliceDrivers() []string {
	var out []string
	if a.DRADriver != "" {
		out = append(out, a.DRADriver)
	}
	if a.Confirm != nil && a.Confirm.Driver != a.DRADriver {
		out = append(out, a.Confirm.Driver)
	}
	return out
}

// podFence is the CEL expression that holds when the pod deleted, as
// stored (oldObject: a delete has no object), is bound to one of its
// nodes (node: [Access.ours]) and is being deleted already.
func podFence(node func(string) string) string {
	return "(has(oldObject.spec.nodeName) && " + node("oldObject.spec.nodeName") + " && has(oldObject.metadata.deletionTimestamp))"
}

// statusRequest is the CEL expression that holds when a request is of
// the status subresource; a request of no subresource has none.
const statusRequest = "(has(request.subResource) && request.subResource == 'status')"

// annotationFence is the CEL expression, over the variables of
// [Access.labelVariables] and the annotations', that holds when a pod
// updated changed only in the annotations keys: its spec, labels,
// finalizers and other annotations are as they were.
func annotationFence(keys []string) string {
	ours := celList(keys)
	return "(object.spec == oldObject.spec && variables.labels == variables.oldLabels" +
		" && has(object.metadata.finalizers) == has(oldObject.metadata.finalizers) && (!has(object.metadata.finalizers) || object.metadata.finalizers == oldObject.metadata.finalizers)" +
		" && variables.annotations.all(k, k in " + ours + " || (k in variables.oldAnnotations && variables.oldAnnotations[k] == variables.annotations[k]))" +
		" && variables.oldAnnotations.all(k, k in " + ours + " || k in variables.annotations))"
}

// labelFence is the CEL expression, over the variables of
// [Access.labelVariables], that holds when a node's labels changed only
// as the provider may change them: each label added or changed is in an
// allowed namespace or is a static label set to its static value, and
// each label removed is in an allowed namespace.
const labelFence = "variables.labels.all(k, (k in variables.oldLabels && variables.oldLabels[k] == variables.labels[k]) || " +
	"(k in variables.staticLabels && variables.staticLabels[k] == variables.labels[k]) || " + allowedKey + ")" +
	" && variables.oldLabels.all(k, k in variables.labels || " + allowedKey + ")"

// allowedKey holds when the label key k has a prefix that is an allowed
// namespace or a subdomain of one.
const allowedKey = "variables.labelNamespaces.exists(n, k.startsWith(n + '/') || " +
	"(k.indexOf('/') > 0 && k.substring(0, k.indexOf('/')).endsWith('.' + n)))"

// labelVariables are the policy's variables for [labelFence]: the labels
// of the object and of the old object (none on a create), the allowed
// namespaces, and the static labels of the node at hand (none for another
// node).
func (a Access) labelVariables() []admissionregistrationv1.Variable {
	if a.Parts != nil {
		return a.partLabelVariables()
	}
	static := make([]string, 0, len(a.StaticLabels))
	for _, node := range slices.Sorted(maps.Keys(a.StaticLabels)) {
		labels := a.StaticLabels[node]
		entries := make([]string, 0, len(labels))
		for _, k := range slices.Sorted(maps.Keys(labels)) {
			entries = append(entries, celString(k)+": "+celString(labels[k]))
		}
		static = append(static, celString(node)+": {"+strings.Join(entries, ", ")+"}")
	}
	return []admissionregistrationv1.Variable{
		{Name: "labels", Expression: "has(object.metadata.labels) ? object.metadata.labels : {}"},
		{Name: "oldLabels", Expression: "oldObject != null && has(oldObject.metadata.labels) ? oldObject.metadata.labels : {}"},
		{Name: "labelNamespaces", Expression: celList(a.labelNamespaces())},
		{Name: "staticByNode", Expression: "{" + strings.Join(static, ", ") + "}"},
		{Name: "staticLabels", Expression: "object.metadata.name in variables.staticByNode ? variables.staticByNode[object.metadata.name] : {}"},
	}
}

// labelNamespaces are the namespaces in which the plugins may set labels:
// node-feature-discovery's, then [Access.LabelNamespaces].
func (a Access) labelNamespaces() []string {
	out := pingstatus.DefaultLabelNamespaces()
	for _, ns := range a.LabelNamespaces {
		if !slices.Contains(out, ns) {
			out = append(out, ns)
		}
	}
	return out
}

// celString is s as a CEL string literal.
func celString(s string) string {
	return strconv.Quote(s)
}

func namedRule(group, resource string, ops ...admissionregistrationv1.OperationType) admissionregistrationv1.NamedRuleWithOperations {
	return admissionregistrationv1.NamedRuleWithOperations{RuleWithOperations: admissionregistrationv1.RuleWithOperations{
		Operations: ops,
		Rule:       admissionregistrationv1.Rule{APIGroups: []string{group}, APIVersions: []string{"*"}, Resources: []string{resource}},
	}}
}

// celList is names as a CEL list of strings. Node and Lease names hold no
// quote or backslash.
func celList(names []string) string {
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = "'" + n + "'"
	}
	return "[" + strings.Join(quoted, ", ") + "]"
}

// PolicyYAML returns [Access.Policy] as YAML documents, as
// -print-node-policy prints them and deploy/node-policy.yaml holds them.
func (a Access) PolicyYAML() ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# What RBAC cannot name, fenced for the pingnode provider's ServiceAccount %s/%s (printed by -print-node-policy),\n", a.Namespace, a.ServiceAccount)
	what := "the nodes, Leases and events it may create, the labels of its nodes it may change, and the pods it may delete"
	if a.Parts != nil {
		what = "the nodes, Leases and events it may create, the nodes it may change and delete and their labels, and the pods it may delete"
	}
	if a.Jobs != nil {
		what = strings.Replace(what, ", and the pods it may delete", ", the pods it may delete, and the annotations and statuses of pods it may write", 1)
	}
	if len(a.sliceDrivers()) > 0 {
		what += ", and the ResourceSlices it may write"
	}
	if a.Confirm != nil {
		what += ", and the DeviceClass it may create"
	}
	fmt.Fprintf(&b, "# for %s: %s. Kubernetes 1.30 and later.\n", a.describe(), what)
	for _, obj := range a.Policy() {
		doc, err := marshalYAML(obj)
		if err != nil {
			return nil, err
		}
		b.WriteString("---\n")
		b.Write(doc)
	}
	return b.Bytes(), nil
}
