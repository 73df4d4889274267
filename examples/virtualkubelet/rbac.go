package main

import (
	"bytes"
	"fmt"
	"slices"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
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
// name until it exists) nor select pods by spec.nodeName. So a provider
// may create any node and any Lease in kube-node-lease, and lists every
// pod; it may read and write only its own nodes and their Leases.

// Access is what the rights are for: the provider's ServiceAccount, and
// the configuration it runs.
type Access struct {
	// ServiceAccount and Namespace name the provider's ServiceAccount; the
	// rights are bound to it, and named after it.
	ServiceAccount, Namespace string
	// Nodes are the names of the nodes it runs.
	Nodes []string
	// Held is whether it counts what its pods hold (-held): then it
	// watches the pods bound to its nodes.
	Held bool
	// Election is its leader election, or nil.
	Election *Election
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

// rights are the rules, in the order they are printed.
func (a Access) rights() []namespaceRights {
	nodes := slices.Clone(a.Nodes)
	cluster := []accessRule{
		{rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"create"}},
			"register its nodes, and again when someone deletes one (RBAC cannot name what does not exist yet)"},
		{rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"nodes"}, ResourceNames: nodes, Verbs: []string{"get", "list", "watch", "patch"}},
			"read its nodes at start and after a conflict, watch each by name (an informer with a metadata.name field selector), and send the taints patch"},
		{rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"nodes/status"}, ResourceNames: nodes, Verbs: []string{"patch"}},
			"the Virtual Kubelet node controller patches the status (resources, conditions, labels and annotations)"},
	}
	if a.Held {
		cluster = append(cluster, accessRule{
			rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"list", "watch"}},
			"watch the pods bound to its nodes, to count what they hold (RBAC cannot select pods by spec.nodeName, so every pod)",
		})
	}
	out := []namespaceRights{
		{"", cluster},
		{corev1.NamespaceNodeLease, []accessRule{
			{rbacv1.PolicyRule{APIGroups: []string{coordinationv1.GroupName}, Resources: []string{"leases"}, Verbs: []string{"create"}},
				"create each node's Lease, its heartbeat, at the first renewal"},
			{rbacv1.PolicyRule{APIGroups: []string{coordinationv1.GroupName}, Resources: []string{"leases"}, ResourceNames: nodes, Verbs: []string{"get", "update"}},
				"renew each node's Lease, named as the node"},
		}},
		{metav1.NamespaceDefault, []accessRule{
			{rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}},
				"record events on its nodes (a node's events are in the default namespace; a repeated one is patched)"},
		}},
	}
	if e := a.Election; e != nil {
		election := []accessRule{
			{rbacv1.PolicyRule{APIGroups: []string{coordinationv1.GroupName}, Resources: []string{"leases"}, Verbs: []string{"create"}},
				"create the leader election Lease, if no replica has yet"},
			{rbacv1.PolicyRule{APIGroups: []string{coordinationv1.GroupName}, Resources: []string{"leases"}, ResourceNames: []string{e.Name}, Verbs: []string{"get", "update"}},
				"take and renew the leader election Lease"},
		}
		if i := slices.IndexFunc(out, func(o namespaceRights) bool { return o.namespace == e.Namespace }); i >= 0 {
			out[i].rules = append(out[i].rules, election...)
		} else {
			out = append(out, namespaceRights{e.Namespace, election})
		}
	}
	return out
}

// Objects returns the ClusterRole, the Roles and their bindings to the
// ServiceAccount.
func (a Access) Objects() []runtime.Object {
	subject := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: a.ServiceAccount, Namespace: a.Namespace}
	var objects []runtime.Object
	for _, r := range a.rights() {
		rules := make([]rbacv1.PolicyRule, len(r.rules))
		for i := range r.rules {
			rules[i] = r.rules[i].PolicyRule
		}
		meta := metav1.ObjectMeta{Name: a.ServiceAccount, Namespace: r.namespace, Labels: map[string]string{"app.kubernetes.io/name": FieldManager}}
		if r.namespace == "" {
			objects = append(objects,
				&rbacv1.ClusterRole{TypeMeta: typeMeta("ClusterRole"), ObjectMeta: meta, Rules: rules},
				&rbacv1.ClusterRoleBinding{TypeMeta: typeMeta("ClusterRoleBinding"), ObjectMeta: meta, Subjects: []rbacv1.Subject{subject},
					RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: meta.Name}})
			continue
		}
		objects = append(objects,
			&rbacv1.Role{TypeMeta: typeMeta("Role"), ObjectMeta: meta, Rules: rules},
			&rbacv1.RoleBinding{TypeMeta: typeMeta("RoleBinding"), ObjectMeta: meta, Subjects: []rbacv1.Subject{subject},
				RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: meta.Name}})
	}
	return objects
}

func typeMeta(kind string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: kind}
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
	fmt.Fprintf(&b, "# The rights of the pingnode provider's ServiceAccount %s/%s, for its nodes %v.\n", a.Namespace, a.ServiceAccount, a.Nodes)
	for _, obj := range a.Objects() {
		doc, err := yaml.Marshal(obj)
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
