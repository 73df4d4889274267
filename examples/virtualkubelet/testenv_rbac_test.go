package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// The tests here are of testenv itself: its -rbac mode, on a control plane
// of its own, and the taint eviction controller and the garbage collector,
// on the shared one.

// forbidden reports whether err is the API server's 403 Forbidden, and
// describes err otherwise.
func forbidden(err error) (bool, string) {
	var status apierrors.APIStatus
	if errors.As(err, &status) && status.Status().Code == http.StatusForbidden {
		return true, ""
	}
	if err == nil {
		return false, "allowed (200)"
	}
	return false, err.Error()
}

// mustForbid fails the test unless err is a 403 Forbidden, and returns its
// message.
func mustForbid(t *testing.T, what string, err error) string {
	t.Helper()
	if ok, why := forbidden(err); !ok {
		t.Fatalf("%s: %s, want 403 Forbidden", what, why)
	}
	return err.Error()
}

// TestTestenvRBAC starts a second control plane with -rbac and shows that
// it authorizes as a real cluster: the administrator may do everything and
// the scheduler and controller manager still work; a ServiceAccount token
// minted through the TokenRequest API authenticates as the ServiceAccount,
// which may do only what a Role bound to it allows; the Node authorizer
// gives a kubelet the Secrets its Pods use and no other; NodeRestriction
// keeps it to its own Node. Each step fails under AlwaysAllow.
func TestTestenvRBAC(t *testing.T) {
	needsControlPlane(t)
	dir := filepath.Join(t.TempDir(), "env")
	start := time.Now()
	cmd, kubeconfig, err := startEnv(testenvBin, dir, "-rbac")
	if err != nil {
		t.Fatal(err)
	}
	// Registered after t.TempDir, so it runs before the folder is removed.
	t.Cleanup(func() { stopEnv(cmd) })
	t.Logf("testenv -rbac ready in %s: its probes passed with the administrator's token", time.Since(start).Round(time.Millisecond))

	config, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := kubernetes.NewForConfig(config)
	if err != nil {
		t.Fatal(err)
	}
	// Two nodes, a and b, to be kubelets of in the steps below.
	const nodeA, nodeB = "testenv-rbac-a", "testenv-rbac-b"
	for _, name := range []string{nodeA, nodeB} {
		if _, err := admin.CoreV1().Nodes().Create(t.Context(), readyNode(name), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("administrator", func(t *testing.T) {
		review, err := admin.AuthenticationV1().SelfSubjectReviews().Create(t.Context(), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := review.Status.UserInfo; got.Username != "pingnode-admin" || !strings.Contains(strings.Join(got.Groups, ","), "system:masters") {
			t.Errorf("the administrator is %s in %v, want pingnode-admin in system:masters", got.Username, got.Groups)
		}
		access, err := admin.AuthorizationV1().SelfSubjectAccessReviews().Create(t.Context(), &authorizationv1.SelfSubjectAccessReview{
			Spec: authorizationv1.SelfSubjectAccessReviewSpec{
				ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: "*", Group: "*", Resource: "*"},
			},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !access.Status.Allowed {
			t.Errorf("the administrator may not do everything: %+v", access.Status)
		}
	})

	t.Run("scheduler and controller manager", func(t *testing.T) {
		// The node lifecycle controller lifts the not-ready taint that
		// admission put on the Ready node, and the scheduler binds a Pod
		// to it: both with the administrator's kubeconfig, under RBAC.
		eventually(t, "the not-ready taint is lifted from "+nodeA, func(ctx context.Context) (bool, string) {
			node, err := admin.CoreV1().Nodes().Get(ctx, nodeA, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			return len(node.Spec.Taints) == 0, fmt.Sprintf("taints %v", node.Spec.Taints)
		})
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "testenv-rbac-scheduled", Namespace: metav1.NamespaceDefault},
			Spec: corev1.PodSpec{
				NodeSelector: map[string]string{corev1.LabelHostname: nodeA},
				Containers:   []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}},
			},
		}
		if _, err := admin.CoreV1().Pods(pod.Namespace).Create(t.Context(), pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(t, "the pod is bound to "+nodeA, func(ctx context.Context) (bool, string) {
			got, err := admin.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			return got.Spec.NodeName == nodeA, "spec.nodeName " + got.Spec.NodeName
		})
	})

	t.Run("service account", func(t *testing.T) {
		const ns, name = metav1.NamespaceDefault, "testenv-reader"
		accounts := admin.CoreV1().ServiceAccounts(ns)
		if _, err := accounts.Create(t.Context(), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		token, err := accounts.CreateToken(t.Context(), name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		saConfig := rest.AnonymousClientConfig(config)
		saConfig.BearerToken = token.Status.Token
		sa, err := kubernetes.NewForConfig(saConfig)
		if err != nil {
			t.Fatal(err)
		}

		review, err := sa.AuthenticationV1().SelfSubjectReviews().Create(t.Context(), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := review.Status.UserInfo.Username, "system:serviceaccount:"+ns+":"+name; got != want {
			t.Fatalf("the token authenticates as %q, want %q", got, want)
		}

		_, err = sa.CoreV1().Pods(ns).List(t.Context(), metav1.ListOptions{})
		t.Logf("before a Role: %s", mustForbid(t, "the ServiceAccount lists pods with no rule for it", err))

		role := &rbacv1.Role{
			ObjectMeta: metav1.ObjectMeta{Name: "testenv-pod-reader"},
			Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list"}}},
		}
		if _, err := admin.RbacV1().Roles(ns).Create(t.Context(), role, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		binding := &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "testenv-pod-reader"},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: ns}},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name},
		}
		if _, err := admin.RbacV1().RoleBindings(ns).Create(t.Context(), binding, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(t, "the ServiceAccount lists pods once the Role is bound", func(ctx context.Context) (bool, string) {
			_, err := sa.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return false, err.Error()
			}
			return true, ""
		})
		// The Role is of one namespace, and of reading pods.
		_, err = sa.CoreV1().Pods(metav1.NamespaceSystem).List(t.Context(), metav1.ListOptions{})
		mustForbid(t, "the ServiceAccount lists pods in kube-system", err)
		_, err = sa.CoreV1().Pods(ns).Create(t.Context(), &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "testenv-rbac-by-reader"},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}}},
		}, metav1.CreateOptions{})
		mustForbid(t, "the ServiceAccount creates a pod", err)
	})

	// A kubelet is the user system:node:<name> in the group system:nodes:
	// the administrator (system:masters) may act as it.
	kubeletOf := func(t *testing.T, node string) kubernetes.Interface {
		t.Helper()
		c := rest.CopyConfig(config)
		c.Impersonate = rest.ImpersonationConfig{UserName: "system:node:" + node, Groups: []string{"system:nodes"}}
		kubelet, err := kubernetes.NewForConfig(c)
		if err != nil {
			t.Fatal(err)
		}
		return kubelet
	}

	t.Run("node authorizer", func(t *testing.T) {
		kubelet := kubeletOf(t, nodeA)
		if _, err := kubelet.CoreV1().Nodes().Get(t.Context(), nodeA, metav1.GetOptions{}); err != nil {
			t.Errorf("kubelet of %s reads its own Node: %v", nodeA, err)
		}
		_, err := kubelet.CoreV1().Nodes().Get(t.Context(), nodeB, metav1.GetOptions{})
		mustForbid(t, "kubelet of "+nodeA+" reads "+nodeB, err)

		// A Secret is the kubelet's to read once a Pod bound to its node
		// uses it: a rule of the Node authorizer alone (its graph of
		// Pods), which neither RBAC nor AlwaysAllow has.
		const ns, secret = metav1.NamespaceDefault, "testenv-rbac-secret"
		if _, err := admin.CoreV1().Secrets(ns).Create(t.Context(), &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: secret},
			StringData: map[string]string{"key": "value"},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		_, err = kubelet.CoreV1().Secrets(ns).Get(t.Context(), secret, metav1.GetOptions{})
		t.Logf("before a pod uses it: %s", mustForbid(t, "kubelet of "+nodeA+" reads a Secret no pod of its uses", err))

		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "testenv-rbac-uses-secret", Namespace: ns},
			Spec: corev1.PodSpec{
				NodeName:   nodeA, // bound at once, without the scheduler
				Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}},
				Volumes: []corev1.Volume{{
					Name:         "secret",
					VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: secret}},
				}},
			},
		}
		if _, err := admin.CoreV1().Pods(ns).Create(t.Context(), pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(t, "kubelet of "+nodeA+" reads the Secret its pod uses", func(ctx context.Context) (bool, string) {
			_, err := kubelet.CoreV1().Secrets(ns).Get(ctx, secret, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			return true, ""
		})
		_, err = kubeletOf(t, nodeB).CoreV1().Secrets(ns).Get(t.Context(), secret, metav1.GetOptions{})
		mustForbid(t, "kubelet of "+nodeB+" reads the Secret of a pod on "+nodeA, err)
	})

	t.Run("node restriction", func(t *testing.T) {
		// The Node authorizer lets any kubelet patch any Node; the
		// NodeRestriction admission plugin refuses it another node's.
		kubelet := kubeletOf(t, nodeA)
		patch := []byte(`{"metadata":{"labels":{"example.com/testenv":"patched"}}}`)
		if _, err := kubelet.CoreV1().Nodes().Patch(t.Context(), nodeA, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Errorf("kubelet of %s labels its own Node: %v", nodeA, err)
		}
		_, err := kubelet.CoreV1().Nodes().Patch(t.Context(), nodeB, types.MergePatchType, patch, metav1.PatchOptions{})
		message := mustForbid(t, "kubelet of "+nodeA+" labels "+nodeB, err)
		if want := fmt.Sprintf("node %q is not allowed to modify node %q", nodeA, nodeB); !strings.Contains(message, want) {
			t.Errorf("refused with %q, want NodeRestriction's %q", message, want)
		}
	})
}

// TestTestenvTaintEviction shows the taint eviction controller at work: once
// a node is not Ready, a pod on it that tolerates the NoExecute taints for
// 3 seconds is evicted after them, and a pod that tolerates them with no
// limit stays. The node and a Ready neighbour have a zone of their own, so
// that the zone is not fully disrupted whatever other tests' nodes are.
func TestTestenvTaintEviction(t *testing.T) {
	needsControlPlane(t)
	const zone, name, neighbour = "testenv-eviction", "testenv-eviction", "testenv-eviction-neighbour"
	for _, n := range []string{name, neighbour} {
		node := readyNode(n)
		node.Labels[corev1.LabelTopologyZone] = zone
		createNode(t, node)
	}
	for _, n := range []string{name, neighbour} {
		eventually(t, "the not-ready taint is lifted from "+n, func(ctx context.Context) (bool, string) {
			found, why := notReadyNoSchedule(ctx, n)
			return !found, why
		})
	}

	seconds := int64(3)
	tolerate := func(limit *int64) []corev1.Toleration {
		return []corev1.Toleration{
			{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: limit},
			{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: limit},
		}
	}
	const evicted, stays = "testenv-evicted", "testenv-tolerates-forever"
	pods := client.CoreV1().Pods(metav1.NamespaceDefault)
	for _, p := range []struct {
		name        string
		tolerations []corev1.Toleration
	}{{evicted, tolerate(&seconds)}, {stays, tolerate(nil)}} {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: p.name, Namespace: metav1.NamespaceDefault},
			Spec: corev1.PodSpec{
				NodeName:    name, // bound at once, without the scheduler
				Tolerations: p.tolerations,
				Containers:  []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}},
			},
		}
		if _, err := pods.Create(t.Context(), pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { deletePod(t, p.name) })
	}

	setReady(t, name, corev1.ConditionFalse)
	notReady := time.Now()
	within(t, 30*time.Second, "the pod that tolerates 3s is evicted", func(ctx context.Context) (bool, string) {
		pod, err := pods.Get(ctx, evicted, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		if pod.DeletionTimestamp == nil {
			return false, "no deletionTimestamp; node " + noExecuteTaints(ctx, name)
		}
		for _, c := range pod.Status.Conditions {
			if c.Type == corev1.DisruptionTarget && c.Reason == "DeletionByTaintManager" {
				return true, ""
			}
		}
		return false, fmt.Sprintf("deleted, but not by the taint eviction controller: conditions %v", pod.Status.Conditions)
	})
	if after := time.Since(notReady); after < time.Duration(seconds)*time.Second {
		t.Errorf("evicted %s after the node turned NotReady, before its toleration of %ds ended", after, seconds)
	} else {
		t.Logf("evicted %s after the node turned NotReady", after.Round(time.Millisecond))
	}

	// The controller decided for both pods when it saw the taint: the one
	// with no limit would have gone by now too.
	pod, err := pods.Get(t.Context(), stays, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pod.DeletionTimestamp != nil {
		t.Errorf("the pod that tolerates the taints forever is being deleted, since %s", pod.DeletionTimestamp)
	}
	if taints := noExecuteTaints(t.Context(), name); !strings.Contains(taints, corev1.TaintNodeNotReady) {
		t.Errorf("the node has lost its not-ready taint: %s", taints)
	}
}

// noExecuteTaints lists the NoExecute taints of the node of this name.
func noExecuteTaints(ctx context.Context, name string) string {
	node, err := client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err.Error()
	}
	var taints []string
	for _, taint := range node.Spec.Taints {
		if taint.Effect == corev1.TaintEffectNoExecute {
			taints = append(taints, taint.ToString())
		}
	}
	return "NoExecute taints [" + strings.Join(taints, ", ") + "]"
}

// TestTestenvGarbageCollector: the Lease in kube-node-lease of a deleted
// Node, which names the Node as its owner as a kubelet's Lease does, is
// deleted by the garbage collector; no stale Lease is left for a node of
// the same name registered later.
func TestTestenvGarbageCollector(t *testing.T) {
	needsControlPlane(t)
	const name = "testenv-gc"
	createNode(t, readyNode(name))
	node, err := client.CoreV1().Nodes().Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	leases := client.CoordinationV1().Leases(corev1.NamespaceNodeLease)
	holder, duration := name, int32(40)
	lease := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{
			Name: name,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "v1", Kind: "Node", Name: name, UID: node.UID,
			}},
		},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &duration, RenewTime: &metav1.MicroTime{Time: time.Now()}},
	}
	if _, err := leases.Create(t.Context(), lease, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		err := leases.Delete(context.Background(), name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting lease %s: %v", name, err)
		}
	})

	if err := client.CoreV1().Nodes().Delete(t.Context(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	deleted := time.Now()
	eventually(t, "the garbage collector deletes the Lease of the deleted Node", func(ctx context.Context) (bool, string) {
		got, err := leases.Get(ctx, name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return true, ""
		case err != nil:
			return false, err.Error()
		default:
			return false, fmt.Sprintf("still there, owned by %v", got.OwnerReferences)
		}
	})
	t.Logf("Lease deleted %s after its Node", time.Since(deleted).Round(time.Millisecond))
}
