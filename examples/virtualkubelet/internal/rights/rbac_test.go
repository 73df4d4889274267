package rights

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ruleKey names a rule by where it is, what it is of, and its verbs, as
// the provider's tests that take each rule away name it.
func ruleKey(namespace string, r rbacv1.PolicyRule) string {
	if namespace == "" {
		namespace = "cluster"
	}
	return namespace + " " + strings.Join(r.Resources, ",") + " " + strings.Join(r.Verbs, ",")
}

// TestRightsObjects: the rights of a fleet with an election, as objects:
// one rule a reason, names where RBAC takes them, every object named
// after the ServiceAccount and its namespace, bound to it, and labelled
// with the provider's name. A rule that
// would name nothing is left out rather than granted for every object.
func TestRightsObjects(t *testing.T) {
	e := &Lease{Namespace: "pingnode", Name: "pingnode-fleet"}
	a := Access{ServiceAccount: "provider", Namespace: "pingnode", App: "pingnode-provider", Nodes: []string{"vk-0", "vk-1"}, Held: true, Election: e}
	var got []string
	for _, obj := range a.Objects() {
		switch o := obj.(type) {
		case *rbacv1.ClusterRole:
			for _, r := range o.Rules {
				got = append(got, fmt.Sprintf("%s %v", ruleKey("", r), r.ResourceNames))
			}
		case *rbacv1.Role:
			for _, r := range o.Rules {
				got = append(got, fmt.Sprintf("%s %v", ruleKey(o.Namespace, r), r.ResourceNames))
			}
		case *rbacv1.ClusterRoleBinding:
			if o.Subjects[0].Name != "provider" || o.Subjects[0].Namespace != "pingnode" || o.RoleRef.Name != "pingnode:provider" {
				t.Errorf("ClusterRoleBinding %+v", o)
			}
		case *rbacv1.RoleBinding:
			if o.Subjects[0].Name != "provider" || o.Subjects[0].Namespace != "pingnode" || o.RoleRef.Name != "pingnode:provider" {
				t.Errorf("RoleBinding %+v", o)
			}
		}
		o := obj.(metav1.Object)
		if o.GetName() != "pingnode:provider" {
			t.Errorf("%T %s: want it named pingnode:provider", obj, o.GetName())
		}
		if app := o.GetLabels()["app.kubernetes.io/name"]; app != "pingnode-provider" {
			t.Errorf("%T %s: app.kubernetes.io/name=%s, want the provider's name, pingnode-provider", obj, o.GetName(), app)
		}
	}
	want := []string{
		"cluster nodes create []",
		"cluster nodes get [vk-0 vk-1]",
		"cluster nodes list,watch [vk-0 vk-1]",
		"cluster nodes patch [vk-0 vk-1]",
		"cluster nodes/status patch [vk-0 vk-1]",
		"cluster pods list,watch []",
		"cluster pods delete []",
		"kube-node-lease leases create []",
		"kube-node-lease leases get,update [vk-0 vk-1]",
		"default events create,patch []",
		"pingnode leases create []",
		"pingnode leases get,update [pingnode-fleet]",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rules (-want +got):\n%s", diff)
	}

	// The election in kube-node-lease shares the nodes' create rule.
	e.Namespace = corev1.NamespaceNodeLease
	for _, r := range a.Roles() {
		if r.Namespace == corev1.NamespaceNodeLease && len(r.Rules) != 3 {
			t.Errorf("kube-node-lease: %d rules, want create, and get and update of the nodes' Leases and of the election's", len(r.Rules))
		}
	}

	// No node: no rule that would name nothing, and so everything.
	for _, r := range (Access{ServiceAccount: "provider", Namespace: "pingnode"}).Roles() {
		for _, rule := range r.Rules {
			if len(rule.ResourceNames) == 0 && !slices.Contains(rule.Verbs, "create") && !slices.Equal(rule.Resources, []string{"events"}) {
				t.Errorf("with no node: %s, of every object", ruleKey(r.Namespace, rule.PolicyRule))
			}
		}
	}
	if _, err := a.YAML(); err != nil {
		t.Error(err)
	}
	if _, err := a.PolicyYAML(); err != nil {
		t.Error(err)
	}
}
