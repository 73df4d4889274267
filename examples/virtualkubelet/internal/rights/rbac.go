package rights

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
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
// and lists and deletes every pod; it may read and write only its own
// nodes and their Leases. [Access.Policy] fences the creates by name, and
// the deletes to its nodes' pods being deleted, with a
// ValidatingAdmissionPolicy on the ServiceAccount's user name
// (nodepolicy.go). With a DRA driver it writes ResourceSlices, whose names
// the API server makes up, and reads every claim: the policy fences the
// slices to its driver and its nodes.

// Access is what the rights are for: the provider's ServiceAccount, and
// the configuration it runs.
type Access struct {
	// ServiceAccount and Namespace name the provider's ServiceAccount; the
	// rights are bound to it, and named after it: namespace:serviceaccount.
	ServiceAccount, Namespace string
	// App is the provider's name, the value of the label
	// app.kubernetes.io/name on every object, by which its objects are
	// found among others'.
	App string
	// Nodes are the names of the nodes it runs. A rule that names them is
	// left out when there are none: a rule with no names is of every node.
	Nodes []string
	// Held is whether it counts what its pods hold (-held). It watches
	// the pods bound to its nodes either way, and deletes those being
	// deleted.
	Held bool
	// Election is its leader election's Lease, or nil.
	Election *Lease
	// LabelNamespaces are the namespaces, besides node-feature-discovery's
	// (pingstatus.DefaultLabelNamespaces), in which its plugins may set
	// labels (-label-namespaces): [Access.Policy] lets it change no other
	// label of its nodes, but StaticLabels.
	LabelNamespaces []string
	// DRADriver is the driver under which it publishes its nodes' devices
	// (-dra-driver), or "": then it writes ResourceSlices, reads
	// ResourceClaims, and records events on its pods.
	DRADriver string
	// PodEventReasons are the reasons of the events it records on its
	// pods with a DRA driver, which say which devices they were given:
	// [Access.Policy] lets it record no other event on a pod.
	PodEventReasons []string
	// StaticLabels are the labels of each node's static configuration,
	// by node: its registration labels, which [Access.Policy] lets it set
	// to these values and to no other.
	StaticLabels map[string]map[string]string
	// Jobs is what it writes to run the pods of its nodes as jobs on the
	// backend, or nil: then it runs none.
	Jobs *Jobs
	// Confirm is the backend's confirmation (-confirm), or nil: then it
	// publishes a confirmation device on each node, creates the class
	// that serves them, reads the claims and writes their status.
	Confirm *Confirm
	// Parts is how the nodes of a provider of its plugin's parts (-parts)
	// are named and owned, or nil: RBAC cannot name its nodes, and
	// [Access.Policy] fences them by its template and its ownership label
	// (partsrights.go).
	Parts *Parts
}

// Lease names a Lease: the leader election's.
type Lease struct {
	Namespace, Name string
}

// name is the name of the ClusterRole, the Roles and their bindings:
// namespace:serviceaccount, so that two installations whose
// ServiceAccounts share a name in different namespaces keep their own
// rights (a ClusterRole named after the ServiceAccount alone would be
// overwritten by the second).
func (a Access) name() string { return a.Namespace + ":" + a.ServiceAccount }

// User is the ServiceAccount's user name, as the API server authenticates
// its tokens.
func (a Access) User() string {
	return "system:serviceaccount:" + a.Namespace + ":" + a.ServiceAccount
}

// Rule is one rule with the reason it is there.
type Rule struct {
	rbacv1.PolicyRule
	Why string
}

// Role is the rules of the Role in Namespace, or of the ClusterRole when
// Namespace is "".
type Role struct {
	Namespace string
	Rules     []Rule
}

// rule is a rule of the core or another API group, with its reason.
func rule(group, resource string, names []string, why string, verbs ...string) Rule {
	return Rule{rbacv1.PolicyRule{APIGroups: []string{group}, Resources: []string{resource}, ResourceNames: names, Verbs: verbs}, why}
}

// Roles are the rules, by the Role (or the ClusterRole) they are of, in
// the order they are printed. Each has one reason, and a rule that names
// objects is left out when there is no name to give it.
func (a Access) Roles() []Role {
	nodes := slices.Clone(a.Nodes)
	named := len(nodes) > 0
	cluster := []Rule{
		rule("", "nodes", nil, "register its nodes, and again when someone deletes one (RBAC cannot name what does not exist yet)", "create"),
	}
	if a.Parts != nil {
		cluster = append(cluster, a.partNodeRights()...)
	} else if named {
		cluster = append(cluster,
			rule("", "nodes", nodes, "read each node at start, and after a conflict", "get"),
			rule("", "nodes", nodes, "watch each node by name: an informer with a metadata.name field selector, which RBAC authorizes as a request for that name", "list", "watch"),
			rule("", "nodes", nodes, "send the object patch: the plugin's taints and labels and their ownership annotations", "patch"),
			rule("", "nodes/status", nodes, "send the status patch: resources and conditions", "patch"),
		)
	}
	if named || a.Parts != nil { // no node, no pod bound to it
		cluster = append(cluster, a.podRights()...)
	}
	if (named || a.Parts != nil) && a.Jobs != nil {
		cluster = append(cluster, a.jobRights()...)
		cluster = append(cluster, a.dataRights()...)
	}
	events := rule("", "events", nil, "record events on its nodes (a node's events are in the default namespace; a repeated one is patched; RBAC cannot name events, whose names are made up as they are created)", "create", "patch")
	if a.DRADriver != "" {
		cluster = append(cluster, a.deviceRights()...)
	}
	podEvents := len(a.podEventReasons()) > 0
	if podEvents {
		// Events on pods are in the pods' namespaces: every namespace.
		cluster = append(cluster, rule("", "events", nil, "record events on its nodes (in the default namespace) and on the pods bound to them ("+a.podEventsWhy()+"), in the pods' namespaces (a repeated one is patched; RBAC cannot name events, whose names are made up as they are created)", "create", "patch"))
	}
	if a.Confirm != nil {
		cluster = append(cluster, a.confirmRights()...)
	}
	leases := []Rule{
		rule(coordinationv1.GroupName, "leases", nil, "create each node's Lease, its heartbeat, at the first renewal (RBAC cannot name what does not exist yet)", "create"),
	}
	if a.Parts != nil {
		leases = append(leases, a.partLeaseRight())
	} else if named {
		leases = append(leases,
			rule(coordinationv1.GroupName, "leases", nodes, "renew each node's Lease, named as the node: read it, then update it", "get", "update"))
	}
	out := []Role{{"", cluster}, {corev1.NamespaceNodeLease, leases}}
	if !podEvents { // else the cluster-wide rule has them
		out = append(out, Role{metav1.NamespaceDefault, []Rule{events}})
	}
	if e := a.Election; e != nil {
		election := []Rule{
			rule(coordinationv1.GroupName, "leases", nil, "create the leader election Lease, if no replica has yet (RBAC cannot name what does not exist yet)", "create"),
		}
		if e.Name != "" {
			election = append(election,
				rule(coordinationv1.GroupName, "leases", []string{e.Name}, "take and renew the leader election Lease: read it, then update it", "get", "update"))
		}
		i := slices.IndexFunc(out, func(o Role) bool { return o.Namespace == e.Namespace })
		if i < 0 {
			out = append(out, Role{e.Namespace, nil})
			i = len(out) - 1
		}
		for _, r := range election {
			// In kube-node-lease, the election's create is the nodes'.
			j := slices.IndexFunc(out[i].Rules, func(o Rule) bool { return samePolicyRule(o.PolicyRule, r.PolicyRule) })
			if j >= 0 {
				out[i].Rules[j].Why += "; " + r.Why
				continue
			}
			out[i].Rules = append(out[i].Rules, r)
		}
	}
	return out
}

// podRights are the rules of the pods bound to its nodes: it watches them
// whatever the configuration, since it finishes their deletion.
func (a Access) podRights() []Rule {
	why := "watch the pods bound to its nodes, to finish their deletion"
	switch {
	case a.Held && a.DRADriver != "":
		why += ", to count what they hold and to tell them their devices"
	case a.Held:
		why += " and to count what they hold"
	case a.DRADriver != "":
		why += " and to tell them their devices"
	}
	return []Rule{
		rule("", "pods", nil, why+" (RBAC cannot select pods by spec.nodeName, so every pod)", "list", "watch"),
		rule("", "pods", nil, "finish the deletion of a pod bound to its nodes, which its backend has stopped: delete it with grace period 0 and its UID as a precondition, as the kubelet does (RBAC cannot select pods by spec.nodeName, so every pod; -print-node-policy fences it to its nodes' pods being deleted)", "delete"),
	}
}

// deviceRights are the rules of publishing devices under a DRA driver
// (-dra-driver), beside the pods' and the events'.
func (a Access) deviceRights() []Rule {
	return []Rule{
		rule(resourcev1.GroupName, "resourceslices", nil, "watch its nodes' ResourceSlices of its driver: its own cache, and the ResourceSlice controller's, each selected by spec.driver and spec.nodeName (RBAC cannot select by field, so every slice)", "list", "watch"),
		rule(resourcev1.GroupName, "resourceslices", nil, "publish its nodes' devices: the ResourceSlice controller creates, updates and deletes the slices of each node's pool (RBAC cannot name them: the API server makes their names up; -print-node-policy fences them to its driver and nodes)", "create", "update", "delete"),
		rule(resourcev1.GroupName, "resourceclaims", nil, "watch the claims, for which of its devices they hold and which its pods were given (RBAC cannot select claims by the pool of their devices, so every claim)", "list", "watch"),
		rule(resourcev1.GroupName, "resourceclaims", nil, "read a pod's claim as stored before it says the pod may not use it, as the kubelet reads it: the cache may not hold the scheduler's allocation yet", "get"),
	}
}

func samePolicyRule(a, b rbacv1.PolicyRule) bool {
	return slices.Equal(a.APIGroups, b.APIGroups) && slices.Equal(a.Resources, b.Resources) &&
		slices.Equal(a.ResourceNames, b.ResourceNames) && slices.Equal(a.Verbs, b.Verbs)
}

// Objects returns the ClusterRole, the Roles and their bindings to the
// ServiceAccount, all named namespace:serviceaccount. The ServiceAccount
// itself is not among them.
func (a Access) Objects() []runtime.Object {
	subject := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: a.ServiceAccount, Namespace: a.Namespace}
	var objects []runtime.Object
	for _, r := range a.Roles() {
		rules := make([]rbacv1.PolicyRule, len(r.Rules))
		for i := range r.Rules {
			rules[i] = r.Rules[i].PolicyRule
		}
		meta := metav1.ObjectMeta{Name: a.name(), Namespace: r.Namespace, Labels: a.labels()}
		if r.Namespace == "" {
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

// labels are the labels of every object: the provider's name.
func (a Access) labels() map[string]string {
	return map[string]string{"app.kubernetes.io/name": a.App}
}

// YAML returns the objects as YAML documents, each rule with its reason
// as a comment before it, as -print-rbac prints them and deploy/rbac.yaml
// holds them.
func (a Access) YAML() ([]byte, error) {
	var b bytes.Buffer
	reasons := map[string][]string{}
	for _, r := range a.Roles() {
		for _, rule := range r.Rules {
			reasons[r.Namespace] = append(reasons[r.Namespace], rule.Why)
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
	if p := a.Parts; p != nil {
		s = "the nodes of its plugin's parts, named " + p.Template + " and labelled " + p.OwnerLabel + "=" + p.Owner
	}
	if a.Held {
		s += ", counting what their pods hold"
	}
	if a.Jobs != nil {
		s += ", running their pods on the backend"
	}
	if a.DRADriver != "" {
		s += ", publishing their devices as " + a.DRADriver
	}
	if a.Confirm != nil {
		s += ", holding pods until the backend runs them"
	}
	if e := a.Election; e != nil {
		s += ", with the leader election Lease " + e.Namespace + "/" + e.Name
	}
	return s
}
