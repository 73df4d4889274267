package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/pingnode/pingnode/pingstatus"
)

// The provider's rights, as data: the least RBAC that lets it run a given
// configuration, and nothing more. Every rule says why it is there, and an
// end-to-end test takes each one away in turn and shows what breaks.
//
// RBAC can name objects (resourceNames) for get, update, patch, delete,
// and for list and watch when the request selects metadata.name, as the
// provider's node informer does; it cannot for create (the object has no
// name until it exists) nor select pods by spec.nodeName. So with RBAC
// alone a provider may create any node and any Lease in kube-node-lease,
// and lists every pod; it may read and write only its own nodes and their
// Leases. [Access.Policy] fences the creates by name with a
// ValidatingAdmissionPolicy on the ServiceAccount's user name.

// Access is what the rights are for: the provider's ServiceAccount, and
// the configuration it runs.
type Access struct {
	// ServiceAccount and Namespace name the provider's ServiceAccount; the
	// rights are bound to it, and named after it (see [Access.Name]).
	ServiceAccount, Namespace string
	// Nodes are the names of the nodes it runs. A rule that names them is
	// left out when there are none: a rule with no names is of every node.
	Nodes []string
	// Held is whether it counts what its pods hold (-held): then it
	// watches the pods bound to its nodes.
	Held bool
	// Election is its leader election, or nil.
	Election *Election
	// LabelNamespaces are the namespaces, besides node-feature-discovery's
	// (pingstatus.DefaultLabelNamespaces), in which its plugins may set
	// labels (-label-namespaces): [Access.Policy] lets it change no other
	// label of its nodes, but StaticLabels.
	LabelNamespaces []string
	// StaticLabels are the labels of each node's static configuration,
	// by node: its registration labels, which [Access.Policy] lets it set
	// to these values and to no other.
	StaticLabels map[string]map[string]string
}

// accessFor is the Access of the ServiceAccount namespace/name that runs
// the providers of configs, with election (nil: none): the one source of
// the rights, for -print-rbac and for the tests.
func accessFor(namespace, name string, configs []Config, election *Election) Access {
	a := Access{ServiceAccount: name, Namespace: namespace, Election: election}
	for _, c := range configs {
		if c.Static != nil {
			a.Nodes = append(a.Nodes, c.Static.Name)
			if a.StaticLabels == nil {
				a.StaticLabels = map[string]map[string]string{}
			}
			a.StaticLabels[c.Static.Name] = maps.Clone(c.Static.Labels)
		}
		a.Held = a.Held || c.CountHeld
		for _, ns := range c.LabelNamespaces {
			if !slices.Contains(a.LabelNamespaces, ns) {
				a.LabelNamespaces = append(a.LabelNamespaces, ns)
			}
		}
	}
	return a
}

// Name is the name of the ClusterRole, the Roles and their bindings:
// namespace:serviceaccount, so that two installations whose
// ServiceAccounts share a name in different namespaces keep their own
// rights (a ClusterRole named after the ServiceAccount alone would be
// overwritten by the second).
func (a Access) Name() string { return a.Namespace + ":" + a.ServiceAccount }

// User is the ServiceAccount's user name, as the API server authenticates
// its tokens.
func (a Access) User() string {
	return "system:serviceaccount:" + a.Namespace + ":" + a.ServiceAccount
}

// accessRule is one rule with the reason it is there.
type accessRule struct {
	rbacv1.PolicyRule
	why string
}

// namespaceRights are the rules in one namespace; "" for the cluster-wide
// role.
type namespaceRights struct {
	namespace string
	rules     []accessRule
}

// rule is a rule of the core or another API group, with its reason.
func rule(group, resource string, names []string, why string, verbs ...string) accessRule {
	return accessRule{rbacv1.PolicyRule{APIGroups: []string{group}, Resources: []string{resource}, ResourceNames: names, Verbs: verbs}, why}
}

// rights are the rules, in the order they are printed. Each has one
// reason, and a rule that names objects is left out when there is no name
// to give it.
func (a Access) rights() []namespaceRights {
	nodes := slices.Clone(a.Nodes)
	named := len(nodes) > 0
	cluster := []accessRule{
		rule("", "nodes", nil, "register its nodes, and again when someone deletes one (RBAC cannot name what does not exist yet)", "create"),
	}
	if named {
		cluster = append(cluster,
			rule("", "nodes", nodes, "read each node at start, after a conflict, and before each status patch (the Virtual Kubelet node controller)", "get"),
			rule("", "nodes", nodes, "watch each node by name: an informer with a metadata.name field selector, which RBAC authorizes as a request for that name", "list", "watch"),
			rule("", "nodes", nodes, "send the object patch: the plugin's taints and labels and their ownership annotations (the node controller sends no spec)", "patch"),
			rule("", "nodes/status", nodes, "the node controller patches the status (resources, conditions, and the annotations in which it records what it applied)", "patch"),
		)
	}
	if a.Held {
		cluster = append(cluster,
			rule("", "pods", nil, "watch the pods bound to its nodes, to count what they hold (RBAC cannot select pods by spec.nodeName, so every pod)", "list", "watch"))
	}
	leases := []accessRule{
		rule(coordinationv1.GroupName, "leases", nil, "create each node's Lease, its heartbeat, at the first renewal (RBAC cannot name what does not exist yet)", "create"),
	}
	if named {
		leases = append(leases,
			rule(coordinationv1.GroupName, "leases", nodes, "renew each node's Lease, named as the node: read it, then update it", "get", "update"))
	}
	out := []namespaceRights{
		{"", cluster},
		{corev1.NamespaceNodeLease, leases},
		{metav1.NamespaceDefault, []accessRule{
			rule("", "events", nil, "record events on its nodes (a node's events are in the default namespace; a repeated one is patched; RBAC cannot name events, whose names are made up as they are created)", "create", "patch"),
		}},
	}
	if e := a.Election; e != nil {
		election := []accessRule{
			rule(coordinationv1.GroupName, "leases", nil, "create the leader election Lease, if no replica has yet (RBAC cannot name what does not exist yet)", "create"),
		}
		if e.Name != "" {
			election = append(election,
				rule(coordinationv1.GroupName, "leases", []string{e.Name}, "take and renew the leader election Lease: read it, then update it", "get", "update"))
		}
		i := slices.IndexFunc(out, func(o namespaceRights) bool { return o.namespace == e.Namespace })
		if i < 0 {
			out = append(out, namespaceRights{e.Namespace, nil})
			i = len(out) - 1
		}
		for _, r := range election {
			// In kube-node-lease, the election's create is the nodes'.
			j := slices.IndexFunc(out[i].rules, func(o accessRule) bool { return samePolicyRule(o.PolicyRule, r.PolicyRule) })
			if j >= 0 {
				out[i].rules[j].why += "; " + r.why
				continue
			}
			out[i].rules = append(out[i].rules, r)
		}
	}
	return out
}

func samePolicyRule(a, b rbacv1.PolicyRule) bool {
	return slices.Equal(a.APIGroups, b.APIGroups) && slices.Equal(a.Resources, b.Resources) &&
		slices.Equal(a.ResourceNames, b.ResourceNames) && slices.Equal(a.Verbs, b.Verbs)
}

// Objects returns the ClusterRole, the Roles and their bindings to the
// ServiceAccount, all named [Access.Name]. The ServiceAccount itself is
// not among them.
func (a Access) Objects() []runtime.Object {
	subject := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: a.ServiceAccount, Namespace: a.Namespace}
	var objects []runtime.Object
	for _, r := range a.rights() {
		rules := make([]rbacv1.PolicyRule, len(r.rules))
		for i := range r.rules {
			rules[i] = r.rules[i].PolicyRule
		}
		meta := metav1.ObjectMeta{Name: a.Name(), Namespace: r.namespace, Labels: map[string]string{"app.kubernetes.io/name": FieldManager}}
		if r.namespace == "" {
			objects = append(objects,
				&rbacv1.ClusterRole{TypeMeta: typeMeta(rbacv1.SchemeGroupVersion.String(), "ClusterRole"), ObjectMeta: meta, Rules: rules},
				&rbacv1.ClusterRoleBinding{TypeMeta: typeMeta(rbacv1.SchemeGroupVersion.String(), "ClusterRoleBinding"), ObjectMeta: meta, Subjects: []rbacv1.Subject{subject},
					RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: meta.Name}})
			continue
		}
		objects = append(objects,
			&rbacv1.Role{TypeMeta: typeMeta(rbacv1.SchemeGroupVersion.String(), "Role"), ObjectMeta: meta, Rules: rules},
			&rbacv1.RoleBinding{TypeMeta: typeMeta(rbacv1.SchemeGroupVersion.String(), "RoleBinding"), ObjectMeta: meta, Subjects: []rbacv1.Subject{subject},
				RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: meta.Name}})
	}
	return objects
}

func typeMeta(apiVersion, kind string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: apiVersion, Kind: kind}
}

// YAML returns the objects as YAML documents, each rule with its reason
// as a comment before it, as -print-rbac prints them and deploy/rbac.yaml
// holds them.
func (a Access) YAML() ([]byte, error) {
	var b bytes.Buffer
	reasons := map[string][]string{}
	for _, r := range a.rights() {
		for _, rule := range r.rules {
			reasons[r.namespace] = append(reasons[r.namespace], rule.why)
		}
	}
	fmt.Fprintf(&b, "# The rights of the pingnode provider's ServiceAccount %s/%s (printed by -print-rbac), for %s.\n", a.Namespace, a.ServiceAccount, a.describe())
	for _, obj := range a.Objects() {
		doc, err := marshalYAML(obj)
		if err != nil {
			return nil, err
		}
		b.WriteString("---\n")
		var ns string
		switch o := obj.(type) {
		case *rbacv1.ClusterRole:
			ns = o.Namespace
		case *rbacv1.Role:
			ns = o.Namespace
		default:
			b.Write(doc)
			continue
		}
		for i, why := range reasons[ns] {
			fmt.Fprintf(&b, "# rule %d: %s\n", i+1, why)
		}
		b.Write(doc)
	}
	return b.Bytes(), nil
}

// marshalYAML is obj as a YAML document, without an empty status.
func marshalYAML(obj runtime.Object) ([]byte, error) {
	doc, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var fields map[string]any
	if err := json.Unmarshal(doc, &fields); err != nil {
		return nil, err
	}
	if status, ok := fields["status"].(map[string]any); ok && len(status) == 0 {
		delete(fields, "status")
	}
	return yaml.Marshal(fields)
}

// describe says what the rights are for, in a line.
func (a Access) describe() string {
	s := "its nodes " + strings.Join(a.Nodes, ", ")
	if a.Held {
		s += ", counting what their pods hold"
	}
	if e := a.Election; e != nil {
		s += ", with the leader election Lease " + e.Namespace + "/" + e.Name
	}
	return s
}

// Policy returns a ValidatingAdmissionPolicy and its binding, both named
// [Access.Name] with ":" read as ".", that fence what RBAC cannot name:
// requests of the ServiceAccount's user may create only its own nodes,
// only their Leases in kube-node-lease and the leader election Lease, and
// events only on its own nodes. It fences the labels of its nodes too, as
// NodeRestriction fences a kubelet's (KEP-279), so that a provider taken
// over cannot label its nodes into workloads meant for others: a create,
// an update or a status update of a node may add, change or remove a
// label only in the allowed namespaces (node-feature-discovery's and
// [Access.LabelNamespaces], each with its subdomains), and may set the
// node's static labels to their static values; any other label must stay
// as it was. Other users' requests are not matched. It needs
// admissionregistration.k8s.io/v1 (Kubernetes 1.30 and later).
func (a Access) Policy() []runtime.Object {
	name := strings.ReplaceAll(a.Name(), ":", ".")
	nodes := celList(a.Nodes)
	leases := "(request.namespace == '" + corev1.NamespaceNodeLease + "' && object.metadata.name in " + nodes + ")"
	leaseMessage := "the pingnode provider " + a.Namespace + "/" + a.ServiceAccount + " may create only its nodes' Leases"
	if e := a.Election; e != nil {
		leases += " || (request.namespace == '" + e.Namespace + "' && object.metadata.name == '" + e.Name + "')"
		leaseMessage += " and its leader election Lease"
	}
	forbidden := metav1.StatusReasonForbidden
	fail := admissionregistrationv1.Fail
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		TypeMeta:   typeMeta(admissionregistrationv1.SchemeGroupVersion.String(), "ValidatingAdmissionPolicy"),
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app.kubernetes.io/name": FieldManager}},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: &fail,
			MatchConstraints: &admissionregistrationv1.MatchResources{ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{
				namedRule("", "nodes", admissionregistrationv1.Create, admissionregistrationv1.Update),
				namedRule("", "nodes/status", admissionregistrationv1.Update),
				namedRule(coordinationv1.GroupName, "leases", admissionregistrationv1.Create),
				namedRule("", "events", admissionregistrationv1.Create, admissionregistrationv1.Update),
			}},
			MatchConditions: []admissionregistrationv1.MatchCondition{
				{Name: "the-provider", Expression: "request.userInfo.username == '" + a.User() + "'"},
			},
			Variables: a.labelVariables(),
			Validations: []admissionregistrationv1.Validation{
				{
					Expression: "request.resource.resource != 'nodes' || request.operation != 'CREATE' || object.metadata.name in " + nodes,
					Message:    "the pingnode provider " + a.Namespace + "/" + a.ServiceAccount + " may create only its own nodes",
					Reason:     &forbidden,
				},
				{Expression: "request.resource.resource != 'leases' || " + leases, Message: leaseMessage, Reason: &forbidden},
				{
					Expression: "request.resource.resource != 'events' || (object.involvedObject.kind == 'Node' && object.involvedObject.name in " + nodes + ")",
					Message:    "the pingnode provider " + a.Namespace + "/" + a.ServiceAccount + " may record events only on its own nodes",
					Reason:     &forbidden,
				},
				{
					Expression: "request.resource.resource != 'nodes' || " + labelFence,
					Message: "the pingnode provider " + a.Namespace + "/" + a.ServiceAccount + " may change its nodes' labels only in " +
						strings.Join(a.labelNamespaces(), ", ") + " and their subdomains, and set their static labels",
					Reason: &forbidden,
				},
			},
		},
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		TypeMeta:   typeMeta(admissionregistrationv1.SchemeGroupVersion.String(), "ValidatingAdmissionPolicyBinding"),
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app.kubernetes.io/name": FieldManager}},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        name,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
		},
	}
	return []runtime.Object{policy, binding}
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
	fmt.Fprintf(&b, "# for %s: the nodes, Leases and events it may create, and the labels of its nodes it may change. Kubernetes 1.30 and later.\n", a.describe())
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
