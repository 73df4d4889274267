package main

import (
	"context"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/vnode"
)

// refusal is a ValidatingAdmissionPolicy and its binding, by which the
// real API server refuses some writes of one node.
type refusal struct {
	t       *testing.T
	name    string // of the policy and the binding
	message string // the refusal's, in the API server's error
	probe   func(ctx context.Context) error
	removed bool
}

// refuse has the API server refuse the writes of operation op to the node
// (the object itself, not its status) for which the CEL expression
// allowed is false, with message. It creates a ValidatingAdmissionPolicy
// and its binding (admissionregistration.k8s.io/v1), and waits until they
// are in force: a policy takes effect when the API server's own informer
// has it, moments later, so probe, a write with dryRun=All that the
// policy refuses, is sent until it is refused. Both are deleted when the
// test ends, if remove has not.
func refuse(t *testing.T, node string, op admissionregistrationv1.OperationType, allowed, message string, probe func(ctx context.Context) error) *refusal {
	t.Helper()
	r := &refusal{t: t, name: "pingnode-test-" + strings.ToLower(string(op)) + "-" + node, message: message, probe: probe}
	fail := admissionregistrationv1.Fail
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: r.name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: &fail,
			MatchConstraints: &admissionregistrationv1.MatchResources{
				ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
					RuleWithOperations: admissionregistrationv1.RuleWithOperations{
						Operations: []admissionregistrationv1.OperationType{op},
						Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"nodes"}},
					},
				}},
			},
			MatchConditions: []admissionregistrationv1.MatchCondition{{Name: "this-node", Expression: "object.metadata.name == '" + node + "'"}},
			Validations:     []admissionregistrationv1.Validation{{Expression: allowed, Message: message}},
		},
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: r.name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        r.name,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
		},
	}
	api := client.AdmissionregistrationV1()
	r.delete(context.Background()) // left by a run that was killed
	if _, err := api.ValidatingAdmissionPolicies().Create(t.Context(), policy, metav1.CreateOptions{}); err != nil {
		t.Fatalf("the policy: %v", err)
	}
	t.Cleanup(func() {
		if !r.removed {
			r.delete(context.Background())
		}
	})
	if _, err := api.ValidatingAdmissionPolicyBindings().Create(t.Context(), binding, metav1.CreateOptions{}); err != nil {
		t.Fatalf("the policy's binding: %v", err)
	}
	eventually(t, "the policy is in force", func(ctx context.Context) (bool, string) {
		err := probe(ctx)
		return r.refused(err), "the probe: " + errorText(err)
	})
	return r
}

// refused reports whether err is the policy's refusal.
func (r *refusal) refused(err error) bool {
	return err != nil && strings.Contains(err.Error(), r.message)
}

// remove deletes the policy and its binding, and waits until the probe
// is accepted.
func (r *refusal) remove() {
	r.t.Helper()
	r.removed = true
	r.delete(r.t.Context())
	eventually(r.t, "the policy is gone", func(ctx context.Context) (bool, string) {
		err := r.probe(ctx)
		return err == nil, "the probe: " + errorText(err)
	})
}

func (r *refusal) delete(ctx context.Context) {
	api := client.AdmissionregistrationV1()
	for what, err := range map[string]error{
		"binding": api.ValidatingAdmissionPolicyBindings().Delete(ctx, r.name, metav1.DeleteOptions{}),
		"policy":  api.ValidatingAdmissionPolicies().Delete(ctx, r.name, metav1.DeleteOptions{}),
	} {
		if err != nil && !apierrors.IsNotFound(err) {
			r.t.Errorf("deleting the %s %s: %v", what, r.name, err)
		}
	}
}

func errorText(err error) string {
	if err == nil {
		return "accepted"
	}
	return err.Error()
}

// refuseRegistration has the API server refuse to create the node.
func refuseRegistration(t *testing.T, node string) *refusal {
	t.Helper()
	return refuse(t, node, admissionregistrationv1.Create, "false", "the test refuses to register "+node,
		func(ctx context.Context) error {
			_, err := client.CoreV1().Nodes().Create(ctx, vnode.StaticNode(node), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			return err
		})
}

// refuseTaint has the API server refuse every write of the node that adds
// a taint with this key, as a webhook or policy of a cluster's own might.
func refuseTaint(t *testing.T, node, key string) *refusal {
	t.Helper()
	has := func(object string) string {
		return "(has(" + object + ".spec.taints) && " + object + ".spec.taints.exists(t, t.key == '" + key + "'))"
	}
	return refuse(t, node, admissionregistrationv1.Update, "!"+has("object")+" || "+has("oldObject"), "the test refuses the taint "+key,
		func(ctx context.Context) error {
			stored, err := client.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if !taintSet(stored)[key+"=x:NoSchedule"] {
				stored.Spec.Taints = append(stored.Spec.Taints, corev1.Taint{Key: key, Value: "x", Effect: corev1.TaintEffectNoSchedule})
			}
			_, err = client.CoreV1().Nodes().Update(ctx, stored, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
			return err
		})
}
