package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/yaml"

	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/vnode"
)

var update = flag.Bool("update", false, "rewrite what is derived: deploy/02-rbac.yaml and deploy/03-node-policy.yaml, with what -print-rbac and -print-node-policy print for the Deployment's flags, and the README's table of flags")

// The manifests of deploy/, by what they hold.
const (
	deployDir        = "deploy"
	deployNamespace  = "00-namespace.yaml"
	deployAccount    = "01-serviceaccount.yaml"
	deployRBAC       = "02-rbac.yaml"
	deployPolicy     = "03-node-policy.yaml"
	deployDeployment = "04-deployment.yaml"
	deployPDB        = "05-poddisruptionbudget.yaml"
	deployService    = "06-service.yaml"
)

// readManifest decodes the one object of a manifest of deploy/.
func readManifest(t *testing.T, file string, into any) {
	t.Helper()
	body, err := os.ReadFile(filepath.Join(deployDir, file))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(body, into); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
}

// printCommand runs the provider's main with args in a child process and
// returns its exit status, its stdout and its stderr.
func printCommand(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = providerEnv()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, stdout.String(), stderr.String()
	case errors.As(err, &exit):
		return exit.ExitCode(), stdout.String(), stderr.String()
	}
	t.Fatalf("%v: %v", args, err)
	return 0, "", ""
}

// flagValue is the value of -name in args, given as -name=value.
func flagValue(args []string, name string) (string, bool) {
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "-"+name+"="); ok {
			return v, true
		}
	}
	return "", false
}

// TestDeployMatchesFlags: deploy/02-rbac.yaml and 03-node-policy.yaml are
// what -print-rbac and -print-node-policy print for the Deployment's own
// flags, byte for byte (go test -run TestDeployMatchesFlags -update
// rewrites them); the Deployment runs as the ServiceAccount those name,
// with two replicas and leader election, its identity from the pod's
// name, its probes on the metrics server, and a security context that
// leaves it nothing: non-root, a read-only root file system, no privilege
// escalation, no capability. The disruption budget and the metrics
// Service select its pods.
func TestDeployMatchesFlags(t *testing.T) {
	var d appsv1.Deployment
	readManifest(t, deployDeployment, &d)
	if len(d.Spec.Template.Spec.Containers) != 1 {
		t.Fatalf("%d containers, want the provider's", len(d.Spec.Template.Spec.Containers))
	}
	c := d.Spec.Template.Spec.Containers[0]
	// The kubelet expands $(VAR) in args from the container's env: here,
	// values of the downward API's kind.
	expanded := make([]string, len(c.Args))
	for i, a := range c.Args {
		expanded[i] = strings.NewReplacer("$(POD_NAME)", "pingnode-provider-0", "$(POD_IP)", "10.0.0.1").Replace(a)
	}
	for _, print := range []struct{ flag, file string }{{"print-rbac", deployRBAC}, {"print-node-policy", deployPolicy}} {
		code, stdout, stderr := printCommand(t, append(expanded, "-"+print.flag)...)
		if code != 0 || stderr != "" {
			t.Fatalf("-%s: exit status %d, want 0:\n%s", print.flag, code, stderr)
		}
		path := filepath.Join(deployDir, print.file)
		if *update {
			if err := os.WriteFile(path, []byte(stdout), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		shipped, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if string(shipped) != stdout {
			t.Errorf("%s is not what -%s prints for the Deployment's flags (-update rewrites it):\n%s", path, print.flag, lineDiff(string(shipped), stdout))
		}
	}

	account, ok := flagValue(c.Args, "service-account")
	if !ok {
		account = DefaultServiceAccount
	}
	var sa corev1.ServiceAccount
	readManifest(t, deployAccount, &sa)
	var ns corev1.Namespace
	readManifest(t, deployNamespace, &ns)
	if got := d.Namespace + "/" + d.Spec.Template.Spec.ServiceAccountName; got != account || sa.Namespace+"/"+sa.Name != account || ns.Name != d.Namespace {
		t.Errorf("the Deployment runs as %s, the ServiceAccount is %s/%s in the namespace %s: want all %s", got, sa.Namespace, sa.Name, ns.Name, account)
	}
	if d.Spec.Replicas == nil || *d.Spec.Replicas != 2 || !slices.Contains(c.Args, "-leader-elect") {
		t.Errorf("replicas %v, args %v: want two, with -leader-elect", d.Spec.Replicas, c.Args)
	}
	if namespace, _ := flagValue(c.Args, "leader-elect-namespace"); namespace != d.Namespace {
		t.Errorf("the election's Lease in %q, want the Deployment's namespace %s", namespace, d.Namespace)
	}
	fromPod := func(name, path string) bool {
		i := slices.IndexFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == name })
		return i >= 0 && c.Env[i].ValueFrom != nil && c.Env[i].ValueFrom.FieldRef != nil && c.Env[i].ValueFrom.FieldRef.FieldPath == path
	}
	if id, _ := flagValue(c.Args, "leader-elect-id"); id != "$(POD_NAME)" || !fromPod("POD_NAME", "metadata.name") {
		t.Errorf("-leader-elect-id %q, env %+v: want the pod's name from the downward API", id, c.Env)
	}
	if ip, _ := flagValue(c.Args, "node-ip"); ip != "$(POD_IP)" || !fromPod("POD_IP", "status.podIP") || len(c.Env) != 2 {
		t.Errorf("-node-ip %q, env %+v: want the pod's IP from the downward API, and no other variable", ip, c.Env)
	}
	for name, flag := range map[string]string{"metrics": "metrics-addr", "kubelet": "kubelet-addr"} {
		addr, _ := flagValue(c.Args, flag)
		_, port, err := net.SplitHostPort(addr)
		i := slices.IndexFunc(c.Ports, func(p corev1.ContainerPort) bool { return p.Name == name })
		if err != nil || i < 0 || port != strconv.Itoa(int(c.Ports[i].ContainerPort)) || len(c.Ports) != 2 {
			t.Errorf("-%s %q, ports %+v: want its port named %s", flag, addr, c.Ports, name)
		}
	}
	for probe, path := range map[*corev1.Probe]string{c.LivenessProbe: "/healthz", c.ReadinessProbe: "/readyz"} {
		if probe == nil || probe.HTTPGet == nil || probe.HTTPGet.Path != path || probe.HTTPGet.Port.String() != "metrics" {
			t.Errorf("probe %+v: want GET %s on the metrics port", probe, path)
		}
	}
	pod, sc := d.Spec.Template.Spec.SecurityContext, c.SecurityContext
	if pod == nil || pod.RunAsNonRoot == nil || !*pod.RunAsNonRoot || pod.SeccompProfile == nil || pod.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault ||
		sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
		sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) > 0 {
		t.Errorf("security contexts: pod %+v, container %+v", pod, sc)
	}

	labels := d.Spec.Template.Labels
	var pdb policyv1.PodDisruptionBudget
	readManifest(t, deployPDB, &pdb)
	if pdb.Namespace != d.Namespace || pdb.Spec.Selector == nil || !subset(pdb.Spec.Selector.MatchLabels, labels) || pdb.Spec.MaxUnavailable == nil || pdb.Spec.MaxUnavailable.IntValue() != 1 {
		t.Errorf("PodDisruptionBudget %+v: want at most one of the Deployment's pods down", pdb.Spec)
	}
	var svc corev1.Service
	readManifest(t, deployService, &svc)
	if svc.Namespace != d.Namespace || !subset(svc.Spec.Selector, labels) || len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].TargetPort.String() != "metrics" {
		t.Errorf("Service %+v: want the Deployment's pods' metrics port", svc.Spec)
	}
}

// subset reports whether every label of sel is in labels, with its value.
func subset(sel, labels map[string]string) bool {
	for k, v := range sel {
		if labels[k] != v {
			return false
		}
	}
	return len(sel) > 0
}

// lineDiff shows the first line where two texts differ.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := range max(len(w), len(g)) {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			return "line " + strconv.Itoa(i+1) + ":\n- " + a + "\n+ " + b
		}
	}
	return ""
}

// warnings collects the API server's warnings to a client.
type warnings struct {
	mu   sync.Mutex
	said []string
}

func (w *warnings) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.said = append(w.said, text)
}

func (w *warnings) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	said := w.said
	w.said = nil
	return said
}

// manifests are deploy/'s objects, in the order of their files, which is
// the order kubectl apply -f deploy/ applies them in.
func manifests(t *testing.T) map[string][]*unstructured.Unstructured {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(deployDir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]*unstructured.Unstructured{}
	for _, file := range files {
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		decoder := utilyaml.NewYAMLOrJSONDecoder(f, 4096)
		for {
			obj := &unstructured.Unstructured{}
			err := decoder.Decode(&obj.Object)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			if len(obj.Object) > 0 { // not a document of comments alone
				out[filepath.Base(file)] = append(out[filepath.Base(file)], obj)
			}
		}
		_ = f.Close()
	}
	return out
}

// applier applies objects with server-side apply, as the administrator,
// and keeps the API server's warnings.
type applier struct {
	dynamic  dynamic.Interface
	mapper   *restmapper.DeferredDiscoveryRESTMapper
	warnings *warnings
}

func newApplier(t *testing.T) *applier {
	t.Helper()
	a := &applier{warnings: &warnings{}}
	config := rest.CopyConfig(envConfig)
	config.WarningHandler = a.warnings
	var err error
	if a.dynamic, err = dynamic.NewForConfig(config); err != nil {
		t.Fatal(err)
	}
	a.mapper = restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(client.Discovery()))
	return a
}

// resource is where obj is served.
func (a *applier) resource(obj *unstructured.Unstructured) (dynamic.ResourceInterface, error) {
	gvk := obj.GroupVersionKind()
	mapping, err := a.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, err
	}
	r := a.dynamic.Resource(mapping.Resource)
	if mapping.Scope.Name() == "namespace" {
		return r.Namespace(obj.GetNamespace()), nil
	}
	return r, nil
}

// apply applies obj, with dryRun=All if dryRun.
func (a *applier) apply(ctx context.Context, obj *unstructured.Unstructured, dryRun bool) error {
	r, err := a.resource(obj)
	if err != nil {
		return err
	}
	opts := metav1.ApplyOptions{FieldManager: "pingnode-e2e", Force: true}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	_, err = r.Apply(ctx, obj.GetName(), obj, opts)
	return err
}

// remove deletes obj, if it is there.
func (a *applier) remove(ctx context.Context, obj *unstructured.Unstructured) error {
	r, err := a.resource(obj)
	if err != nil {
		return err
	}
	if err := r.Delete(ctx, obj.GetName(), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return nil
}

// TestDeployDryRun applies every manifest of deploy/ to the real API
// server with a server-side dry run, as the administrator: all are
// admitted, with no warning (the namespace enforces, and warns of, the
// restricted Pod Security Standard; a Deployment without its security
// contexts draws warnings there, which shows the check is not empty).
// Then it applies the ServiceAccount, its rights and the node policy for
// real, and shows, with the ServiceAccount's own token, that they let it
// create its node and refuse it a node of another name. The namespace
// must exist for the objects in it to be admitted at all, even in a dry
// run: it is created, and deleted at the end (testenv runs no namespace
// controller, so the test empties and finalizes it itself).
func TestDeployDryRun(t *testing.T) {
	needsControlPlane(t)
	ctx := t.Context()
	a := newApplier(t)
	all := manifests(t)
	ns := all[deployNamespace][0]
	deleteNamespaceAtEnd(t, ns.GetName())
	if err := a.apply(ctx, ns, false); err != nil {
		t.Fatalf("the namespace: %v", err)
	}
	a.warnings.take()
	for _, file := range slices.Sorted(maps.Keys(all)) {
		for _, obj := range all[file] {
			what := file + ": " + obj.GetKind() + " " + obj.GetName()
			if err := a.apply(ctx, obj, true); err != nil {
				t.Errorf("%s: %v", what, err)
			}
			for _, w := range a.warnings.take() {
				t.Errorf("%s: warning: %s", what, w)
			}
		}
	}

	// The same Deployment without its security contexts is warned of.
	bare := all[deployDeployment][0].DeepCopy()
	unstructured.RemoveNestedField(bare.Object, "spec", "template", "spec", "securityContext")
	containers, _, _ := unstructured.NestedSlice(bare.Object, "spec", "template", "spec", "containers")
	delete(containers[0].(map[string]any), "securityContext")
	if err := unstructured.SetNestedSlice(bare.Object, containers, "spec", "template", "spec", "containers"); err != nil {
		t.Fatal(err)
	}
	if err := a.apply(ctx, bare, true); err != nil {
		t.Fatal(err)
	}
	if said := a.warnings.take(); len(said) == 0 || !strings.Contains(strings.Join(said, "\n"), "PodSecurity") {
		t.Errorf("a Deployment without security contexts: warnings %q, want PodSecurity's", said)
	} else {
		t.Logf("without its security contexts: %s", strings.Join(said, "; "))
	}

	// For real: the ServiceAccount, its rights, the node policy.
	var real []*unstructured.Unstructured
	for _, file := range []string{deployAccount, deployRBAC, deployPolicy} {
		real = append(real, all[file]...)
	}
	t.Cleanup(func() {
		for _, obj := range slices.Backward(real) {
			if err := a.remove(context.Background(), obj); err != nil {
				t.Errorf("deleting %s %s: %v", obj.GetKind(), obj.GetName(), err)
			}
		}
	})
	for _, obj := range real {
		if err := a.apply(ctx, obj, false); err != nil {
			t.Fatalf("%s %s: %v", obj.GetKind(), obj.GetName(), err)
		}
	}
	var sa corev1.ServiceAccount
	readManifest(t, deployAccount, &sa)
	seconds := int64(tokenSeconds)
	token, err := client.CoreV1().ServiceAccounts(sa.Namespace).CreateToken(ctx, sa.Name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &seconds}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	config := rest.AnonymousClientConfig(envConfig)
	config.BearerToken = token.Status.Token
	provider, err := kubernetes.NewForConfig(config)
	if err != nil {
		t.Fatal(err)
	}
	var d appsv1.Deployment
	readManifest(t, deployDeployment, &d)
	node, _ := flagValue(d.Spec.Template.Spec.Containers[0].Args, "node")
	register := func(ctx context.Context, name string) error {
		_, err := provider.CoreV1().Nodes().Create(ctx, vnode.StaticNode(name), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err
	}
	const refusal = "may create only its own nodes"
	eventually(t, "the rights and the policy in force: "+node+" allowed, another name refused by the policy", func(ctx context.Context) (bool, string) {
		if err := register(ctx, node); err != nil {
			return false, node + ": " + err.Error()
		}
		err := register(ctx, "not-"+node)
		if ok, _ := forbidden(err); !ok || !strings.Contains(errorText(err), refusal) {
			return false, "not-" + node + ": " + errorText(err)
		}
		return true, ""
	})
}

// deleteNamespaceAtEnd deletes the namespace when the test ends, as the
// namespace controller would, which testenv does not run: it waits for
// the serviceaccount controller's "default" ServiceAccount (so that none
// is made after), deletes the namespace, then its ServiceAccounts, then
// finalizes it.
func deleteNamespaceAtEnd(t *testing.T, name string) {
	t.Helper()
	t.Cleanup(func() {
		ctx := context.Background()
		namespaces := client.CoreV1().Namespaces()
		if _, err := namespaces.Get(ctx, name, metav1.GetOptions{}); apierrors.IsNotFound(err) {
			return
		}
		eventually(t, "the default ServiceAccount of "+name, func(ctx context.Context) (bool, string) {
			_, err := client.CoreV1().ServiceAccounts(name).Get(ctx, "default", metav1.GetOptions{})
			return err == nil, errorText(err)
		})
		if err := namespaces.Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
		accounts, err := client.CoreV1().ServiceAccounts(name).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, sa := range accounts.Items {
			if err := client.CoreV1().ServiceAccounts(name).Delete(ctx, sa.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				t.Error(err)
			}
		}
		ns, err := namespaces.Get(ctx, name, metav1.GetOptions{})
		if err == nil {
			ns.Spec.Finalizers = nil
			if _, err := namespaces.Finalize(ctx, ns, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
				t.Error(err)
			}
		}
		eventually(t, "the namespace "+name+" is gone", func(ctx context.Context) (bool, string) {
			_, err := namespaces.Get(ctx, name, metav1.GetOptions{})
			return apierrors.IsNotFound(err), errorText(err)
		})
	})
}
