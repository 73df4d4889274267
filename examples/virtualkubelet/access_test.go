package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/election"
	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/rights"
	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/vnode"
)

// The tests run every provider as a ServiceAccount of its own, bound to
// exactly the rights internal/rights gives the provider's configuration,
// with a token minted through the TokenRequest API, on a control plane
// that authorizes with RBAC (TestMain starts it with -rbac).

// testNamespace holds the tests' ServiceAccounts.
const testNamespace = metav1.NamespaceDefault

// tokenSeconds is how long a test's token lasts: longer than any test.
const tokenSeconds = 3600

// identities numbers the ServiceAccounts of this test binary, so that
// each is new, though a test starts the same provider twice or runs again
// (go test -count=N).
var identities atomic.Int64

// identity is a ServiceAccount of a test's and the rights bound to it,
// with a token, kept in a file too, as a pod has it, for the kubeconfig of
// a provider in a child process.
type identity struct {
	access    rights.Access
	objects   []runtime.Object // the rights, as applied
	token     string
	tokenFile string
	// config is the API server's configuration with none of the
	// administrator's credentials, which sends the token; client is built
	// on it. testenv keeps the key that signs tokens across a restart of
	// the control plane (-keep), so the token outlives it, as in a real
	// cluster.
	config *rest.Config
	client kubernetes.Interface
}

// grant runs a provider of a's configuration as a new ServiceAccount
// named after base: it creates the ServiceAccount in testNamespace (a's
// ServiceAccount and Namespace are set to it), applies a.Objects() with
// the administrator's client, waits until every rule is in force, and
// mints a token. When the test ends, it deletes them.
func grant(tb testing.TB, base string, a rights.Access) *identity {
	tb.Helper()
	a.Namespace, a.ServiceAccount = testNamespace, fmt.Sprintf("%s-%d", base, identities.Add(1))
	return grantObjects(tb, a, a.Objects())
}

// grantObjects is grant with the rights given as objects (a.Objects()
// with a rule taken away, say), for a's ServiceAccount.
func grantObjects(tb testing.TB, a rights.Access, objects []runtime.Object) *identity {
	tb.Helper()
	needsControlPlane(tb) // every test that runs a provider against the API server comes here
	ctx := context.Background()
	account := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{
		Name: a.ServiceAccount, Namespace: a.Namespace, Labels: map[string]string{"app.kubernetes.io/name": vnode.FieldManager},
	}}
	all := append([]runtime.Object{account}, objects...)
	for _, obj := range all { // left by a run that was killed
		if err := deleteObject(ctx, obj); err != nil {
			tb.Fatalf("deleting %s: %v", describeObject(obj), err)
		}
	}
	tb.Cleanup(func() {
		for _, obj := range all {
			if err := deleteObject(context.Background(), obj); err != nil {
				tb.Errorf("deleting %s: %v", describeObject(obj), err)
			}
		}
	})
	for _, obj := range all {
		if err := createObject(ctx, obj); err != nil {
			tb.Fatalf("creating %s: %v", describeObject(obj), err)
		}
	}
	id := &identity{access: a, objects: objects, tokenFile: filepath.Join(tb.TempDir(), "token")}
	id.mint(tb)
	id.config = rest.AnonymousClientConfig(envConfig)
	id.config.BearerToken = id.token
	c, err := kubernetes.NewForConfig(id.config)
	if err != nil {
		tb.Fatal(err)
	}
	id.client = c
	within(tb, defaultWait, "the rights of "+a.User()+" are in force", func(ctx context.Context) (bool, string) {
		return id.inForce(ctx)
	})
	return id
}

// mint mints a token of the ServiceAccount and writes it to its file.
func (id *identity) mint(tb testing.TB) {
	tb.Helper()
	seconds := int64(tokenSeconds)
	token, err := client.CoreV1().ServiceAccounts(id.access.Namespace).CreateToken(context.Background(), id.access.ServiceAccount,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &seconds}}, metav1.CreateOptions{})
	if err != nil {
		tb.Fatalf("a token for %s: %v", id.access.User(), err)
	}
	if err := os.WriteFile(id.tokenFile, []byte(token.Status.Token), 0o600); err != nil {
		tb.Fatal(err)
	}
	id.token = token.Status.Token
}

// inForce reports whether the API server, asked with the ServiceAccount's
// token, allows every verb of every rule of its rights: the authorizer
// reads Roles and bindings from caches of its own, moments after they are
// created, and a provider started before would be refused.
func (id *identity) inForce(ctx context.Context) (bool, string) {
	for _, obj := range id.objects {
		var namespace string
		var rules []rbacv1.PolicyRule
		switch o := obj.(type) {
		case *rbacv1.ClusterRole:
			rules = o.Rules
		case *rbacv1.Role:
			namespace, rules = o.Namespace, o.Rules
		default:
			continue
		}
		for _, r := range rules {
			for _, verb := range r.Verbs {
				resource, subresource, _ := strings.Cut(r.Resources[0], "/")
				attrs := &authorizationv1.ResourceAttributes{
					Namespace: namespace, Verb: verb, Group: r.APIGroups[0], Resource: resource, Subresource: subresource,
				}
				if len(r.ResourceNames) > 0 {
					attrs.Name = r.ResourceNames[0]
				}
				review, err := id.client.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx,
					&authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: attrs}}, metav1.CreateOptions{})
				if err != nil {
					return false, err.Error()
				}
				if !review.Status.Allowed {
					return false, fmt.Sprintf("%s %s/%s %q in %q not allowed yet", verb, r.APIGroups[0], r.Resources[0], attrs.Name, namespace)
				}
			}
		}
	}
	return true, ""
}

// kubeconfig writes a kubeconfig that reaches the API server at server
// (the test environment's, or a proxy of the test's, over TLS: client-go
// sends a kubeconfig's credentials over TLS only) with the
// ServiceAccount's token file, and returns its path.
func (id *identity) kubeconfig(tb testing.TB, server string) string {
	tb.Helper()
	// A proxy of the test's serves TLS with a certificate of its own.
	cluster := &clientcmdapi.Cluster{Server: server, InsecureSkipTLSVerify: true}
	if server == envHost { // how the administrator's kubeconfig trusts it
		admin, err := clientcmd.LoadFromFile(envKubeconfig)
		if err != nil {
			tb.Fatal(err)
		}
		for _, c := range admin.Clusters {
			cluster = c.DeepCopy()
		}
	}
	path := filepath.Join(tb.TempDir(), "kubeconfig")
	err := clientcmd.WriteToFile(clientcmdapi.Config{
		Clusters:       map[string]*clientcmdapi.Cluster{"testenv": cluster},
		AuthInfos:      map[string]*clientcmdapi.AuthInfo{id.access.ServiceAccount: {TokenFile: id.tokenFile}},
		Contexts:       map[string]*clientcmdapi.Context{"provider": {Cluster: "testenv", AuthInfo: id.access.ServiceAccount}},
		CurrentContext: "provider",
	}, path)
	if err != nil {
		tb.Fatal(err)
	}
	return path
}

// settingsOfArgs parses the provider's command line args as its start
// does, the flags' defaults for every flag not given, and returns the
// flags and their settings.
func settingsOfArgs(tb testing.TB, args []string) (*flags, []vnode.Config, *election.Election) {
	tb.Helper()
	fs := flag.NewFlagSet("virtualkubelet", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f := registerFlags(fs)
	if err := fs.Parse(args); err != nil {
		tb.Fatalf("%v: %v", args, err)
	}
	configs, e, err := f.settings(fs.Args())
	if err != nil {
		tb.Fatalf("%v: %v", args, err)
	}
	return f, configs, e
}

// accessOfArgs is the Access of the provider's command line args, as
// -print-rbac gives it.
func accessOfArgs(tb testing.TB, args []string) rights.Access {
	tb.Helper()
	f, configs, e := settingsOfArgs(tb, args)
	return f.access(configs, e)
}

// createObject creates one of the objects of the rights with the
// administrator's client.
func createObject(ctx context.Context, obj runtime.Object) error {
	create := metav1.CreateOptions{}
	var err error
	switch o := obj.(type) {
	case *corev1.ServiceAccount:
		_, err = client.CoreV1().ServiceAccounts(o.Namespace).Create(ctx, o, create)
	case *rbacv1.ClusterRole:
		_, err = client.RbacV1().ClusterRoles().Create(ctx, o, create)
	case *rbacv1.ClusterRoleBinding:
		_, err = client.RbacV1().ClusterRoleBindings().Create(ctx, o, create)
	case *rbacv1.Role:
		_, err = client.RbacV1().Roles(o.Namespace).Create(ctx, o, create)
	case *rbacv1.RoleBinding:
		_, err = client.RbacV1().RoleBindings(o.Namespace).Create(ctx, o, create)
	case *admissionregistrationv1.ValidatingAdmissionPolicy:
		_, err = client.AdmissionregistrationV1().ValidatingAdmissionPolicies().Create(ctx, o, create)
	case *admissionregistrationv1.ValidatingAdmissionPolicyBinding:
		_, err = client.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Create(ctx, o, create)
	default:
		err = fmt.Errorf("no way to create a %T", obj)
	}
	return err
}

// deleteObject deletes one of them, if it is there.
func deleteObject(ctx context.Context, obj runtime.Object) error {
	del := metav1.DeleteOptions{}
	var err error
	switch o := obj.(type) {
	case *corev1.ServiceAccount:
		err = client.CoreV1().ServiceAccounts(o.Namespace).Delete(ctx, o.Name, del)
	case *rbacv1.ClusterRole:
		err = client.RbacV1().ClusterRoles().Delete(ctx, o.Name, del)
	case *rbacv1.ClusterRoleBinding:
		err = client.RbacV1().ClusterRoleBindings().Delete(ctx, o.Name, del)
	case *rbacv1.Role:
		err = client.RbacV1().Roles(o.Namespace).Delete(ctx, o.Name, del)
	case *rbacv1.RoleBinding:
		err = client.RbacV1().RoleBindings(o.Namespace).Delete(ctx, o.Name, del)
	case *admissionregistrationv1.ValidatingAdmissionPolicy:
		err = client.AdmissionregistrationV1().ValidatingAdmissionPolicies().Delete(ctx, o.Name, del)
	case *admissionregistrationv1.ValidatingAdmissionPolicyBinding:
		err = client.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Delete(ctx, o.Name, del)
	default:
		return fmt.Errorf("no way to delete a %T", obj)
	}
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// describeObject names an object of the rights, for a message.
func describeObject(obj runtime.Object) string {
	o, ok := obj.(metav1.Object)
	if !ok {
		return fmt.Sprintf("%T", obj)
	}
	kind := strings.TrimPrefix(fmt.Sprintf("%T", obj), "*")
	if o.GetNamespace() != "" {
		return kind + " " + o.GetNamespace() + "/" + o.GetName()
	}
	return kind + " " + o.GetName()
}

// leftRights lists the ServiceAccounts, RBAC objects and admission
// policies of the provider (labelled app.kubernetes.io/name as
// internal/rights labels them) that are still there: after the tests,
// none should be.
func leftRights(ctx context.Context) ([]string, error) {
	selector := metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=" + vnode.FieldManager}
	var left []string
	add := func(kind string, items []metav1.Object) {
		for _, o := range items {
			name := o.GetName()
			if o.GetNamespace() != "" {
				name = o.GetNamespace() + "/" + name
			}
			left = append(left, kind+" "+name)
		}
	}
	accounts, err := client.CoreV1().ServiceAccounts(metav1.NamespaceAll).List(ctx, selector)
	if err != nil {
		return nil, err
	}
	add("ServiceAccount", objects(accounts.Items))
	clusterRoles, err := client.RbacV1().ClusterRoles().List(ctx, selector)
	if err != nil {
		return nil, err
	}
	add("ClusterRole", objects(clusterRoles.Items))
	clusterBindings, err := client.RbacV1().ClusterRoleBindings().List(ctx, selector)
	if err != nil {
		return nil, err
	}
	add("ClusterRoleBinding", objects(clusterBindings.Items))
	roles, err := client.RbacV1().Roles(metav1.NamespaceAll).List(ctx, selector)
	if err != nil {
		return nil, err
	}
	add("Role", objects(roles.Items))
	bindings, err := client.RbacV1().RoleBindings(metav1.NamespaceAll).List(ctx, selector)
	if err != nil {
		return nil, err
	}
	add("RoleBinding", objects(bindings.Items))
	policies, err := client.AdmissionregistrationV1().ValidatingAdmissionPolicies().List(ctx, selector)
	if err != nil {
		return nil, err
	}
	add("ValidatingAdmissionPolicy", objects(policies.Items))
	policyBindings, err := client.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().List(ctx, selector)
	if err != nil {
		return nil, err
	}
	add("ValidatingAdmissionPolicyBinding", objects(policyBindings.Items))
	return left, nil
}

// objects are the items of a list, as metav1.Objects.
func objects[T any, P interface {
	*T
	metav1.Object
}](items []T) []metav1.Object {
	out := make([]metav1.Object, len(items))
	for i := range items {
		out[i] = P(&items[i])
	}
	return out
}
