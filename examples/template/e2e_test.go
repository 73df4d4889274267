package main

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/pingnode/pingnode/nodeapply"
)

// TestE2E runs the template against the real control plane
// (examples/testenv: etcd, kube-apiserver, kube-scheduler and
// kube-controller-manager) and the sample plugin as shipped
// (examples/plugin), with every setting at its default but the
// kubeconfig and the plugin's URL: the node registers with the plugin's
// capacity, the node lifecycle controller finds it Ready, a change of the
// plugin's taint reaches it, and then, over three pings of a steady
// plugin, the API server counts no write of the node
// (apiserver_request_total) while the node's Lease is renewed.
func TestE2E(t *testing.T) {
	if testing.Short() {
		t.Skip("needs the control plane (examples/testenv); run without -short")
	}
	bin := os.Getenv("PINGNODE_TESTENV")
	if bin == "" {
		t.Skip("PINGNODE_TESTENV names no testenv binary; build one with (cd examples/testenv && go build -o /tmp/testenv .)")
	}
	start := time.Now()
	kubeconfig := startTestenv(t, bin)
	t.Logf("control plane ready in %s", time.Since(start).Round(time.Millisecond))
	restConfig, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := kubernetes.NewForConfig(restConfig)
	if err != nil {
		t.Fatal(err)
	}

	// Two sample plugins, one draining, behind one URL: the plugin's taint
	// changes with no failed ping in between.
	pluginBin := buildSamplePlugin(t)
	plain, draining := startSamplePlugin(t, pluginBin), startSamplePlugin(t, pluginBin, "-drain")
	var backend atomic.Pointer[url.URL]
	backend.Store(plain)
	front := httptest.NewServer(&httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(backend.Load()) }})
	t.Cleanup(front.Close)

	c, err := parseFlags([]string{"-kubeconfig", kubeconfig, "-plugin-url", front.URL + "/status"}, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, c, slog.New(slog.NewTextHandler(t.Output(), nil))) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	})
	nodes := admin.CoreV1().Nodes()

	eventually(t, 10*time.Second, "the node registers with the plugin's capacity", func(ctx context.Context) (bool, string) {
		node, err := nodes.Get(ctx, c.node, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		for name, want := range map[corev1.ResourceName]string{"cpu": "64", "memory": "250000Mi", "pods": "500"} {
			if got := node.Status.Capacity[name]; got.Cmp(resource.MustParse(want)) != 0 {
				return false, fmt.Sprintf("capacity %v", node.Status.Capacity)
			}
		}
		return true, ""
	})
	eventually(t, 20*time.Second, "the node lifecycle controller finds the node Ready", func(ctx context.Context) (bool, string) {
		node, err := nodes.Get(ctx, c.node, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return !slices.ContainsFunc(node.Spec.Taints, func(t corev1.Taint) bool { return t.Key == corev1.TaintNodeNotReady }), fmt.Sprintf("taints %v", node.Spec.Taints)
	})

	backend.Store(draining)
	eventually(t, 3*c.interval, "the plugin's taint reaches the node", func(ctx context.Context) (bool, string) {
		node, err := nodes.Get(ctx, c.node, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return slices.ContainsFunc(node.Spec.Taints, func(t corev1.Taint) bool {
			return t.ToString() == "plugin.example.com/draining=true:NoSchedule"
		}), fmt.Sprintf("taints %v", node.Spec.Taints)
	})

	// A steady plugin: no write of the node for three pings; the Lease
	// renewed meanwhile.
	before := nodeWrites(t, admin)
	node, err := nodes.Get(t.Context(), c.node, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	leases := admin.CoordinationV1().Leases(corev1.NamespaceNodeLease)
	lease, err := leases.Get(t.Context(), c.node, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-time.After(3*c.interval + time.Second):
	case err := <-done:
		t.Fatalf("run returned early: %v", err)
	}
	after := nodeWrites(t, admin)
	for what, n := range after {
		if n != before[what] {
			t.Errorf("%s: %v during three pings of a steady plugin, want none", what, n-before[what])
		}
	}
	if got, err := nodes.Get(t.Context(), c.node, metav1.GetOptions{}); err != nil || got.ResourceVersion != node.ResourceVersion {
		t.Errorf("the node's resourceVersion went from %s to %s (%v) during three pings of a steady plugin", node.ResourceVersion, got.ResourceVersion, err)
	}
	renewed, err := leases.Get(t.Context(), c.node, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !renewed.Spec.RenewTime.After(lease.Spec.RenewTime.Time) || *renewed.Spec.LeaseDurationSeconds != 40 {
		t.Errorf("Lease renewed at %v, then %v, for %ds: want a renewal within %s, for 40s", lease.Spec.RenewTime, renewed.Spec.RenewTime, *renewed.Spec.LeaseDurationSeconds, 3*c.interval)
	}
	if owners := renewed.OwnerReferences; len(owners) != 1 || owners[0].Kind != "Node" || owners[0].UID != node.UID {
		t.Errorf("the Lease's owners = %+v, want the node %s", owners, node.UID)
	}
	if ready := readyOf(node); ready.Status != corev1.ConditionTrue || ready.Reason != nodeapply.ReasonPluginReachable {
		t.Errorf("Ready = %s (%s), want True (%s)", ready.Status, ready.Reason, nodeapply.ReasonPluginReachable)
	}
	t.Logf("the API server counted no write of a node over three pings of a steady plugin (of %v node writes in all)", total(after))
}

func total(counts map[string]float64) float64 {
	sum := 0.0
	for _, n := range counts {
		sum += n
	}
	return sum
}

func readyOf(node *corev1.Node) corev1.NodeCondition {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c
		}
	}
	return corev1.NodeCondition{}
}

// eventually polls check every 100 ms until it reports done, and fails
// the test with its last word after limit.
func eventually(t *testing.T, limit time.Duration, what string, check func(context.Context) (bool, string)) {
	t.Helper()
	last := ""
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, limit, true, func(ctx context.Context) (bool, error) {
		ok, why := check(ctx)
		last = why
		return ok, nil
	})
	if err != nil {
		t.Fatalf("%s: not after %s: %s", what, limit, last)
	}
}

// nodeWrites reads the API server's own count of the writes of nodes
// (apiserver_request_total), by "VERB nodes[/subresource]", every client
// and every response code together.
func nodeWrites(t *testing.T, client kubernetes.Interface) map[string]float64 {
	t.Helper()
	body, err := client.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(t.Context())
	if err != nil {
		t.Fatalf("reading the API server's metrics: %v", err)
	}
	counts := map[string]float64{}
	for line := range strings.Lines(string(body)) {
		rest, ok := strings.CutPrefix(line, "apiserver_request_total{")
		labelText, valueText, found := strings.Cut(rest, "} ")
		if !ok || !found {
			continue
		}
		labels := map[string]string{}
		for pair := range strings.SplitSeq(labelText, ",") {
			k, v, _ := strings.Cut(pair, "=")
			labels[k] = strings.Trim(v, `"`)
		}
		if labels["resource"] != "nodes" || labels["verb"] == "GET" || labels["verb"] == "LIST" || labels["verb"] == "WATCH" {
			continue
		}
		value, err := strconv.ParseFloat(strings.TrimSpace(valueText), 64)
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		what := labels["verb"] + " " + labels["resource"]
		if labels["subresource"] != "" {
			what += "/" + labels["subresource"]
		}
		counts[what] += value
	}
	return counts
}

// startTestenv starts the testenv binary in a folder of the test's, waits
// for its "ready" line, and stops it when the test ends; it returns the
// kubeconfig.
func startTestenv(t *testing.T, bin string) string {
	t.Helper()
	dir := t.TempDir()
	log, err := os.Create(filepath.Join(dir, "testenv.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-dir", filepath.Join(dir, "env"))
	cmd.Stderr = log
	ready, ended := start(t, cmd, false, "ready ")
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-ended:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-ended
		}
		_ = cmd.Wait()
		if t.Failed() {
			out, _ := os.ReadFile(log.Name())
			t.Logf("testenv's log, last lines:\n%s", tail(string(out), 20))
		}
		_ = log.Close()
	})
	select {
	case kubeconfig := <-ready:
		return kubeconfig
	case <-time.After(90 * time.Second):
		t.Fatal("testenv not ready after 90s")
		return ""
	}
}

// buildSamplePlugin builds examples/plugin, a program of the parent
// module, and returns the binary's path.
func buildSamplePlugin(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "plugin")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = "../plugin"
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the sample plugin: %v\n%s", err, out)
	}
	return bin
}

// startSamplePlugin runs the sample plugin with args on a free port of
// 127.0.0.1 until the test ends, and returns its address.
func startSamplePlugin(t *testing.T, bin string, args ...string) *url.URL {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"-addr", "127.0.0.1:0"}, args...)...)
	serving, ended := start(t, cmd, true, "serving the ping reply on ")
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-ended
		_ = cmd.Wait()
	})
	select {
	case status := <-serving:
		u, err := url.Parse(status)
		if err != nil {
			t.Fatal(err)
		}
		return &url.URL{Scheme: u.Scheme, Host: u.Host}
	case <-time.After(10 * time.Second):
		t.Fatal("the sample plugin does not serve after 10s")
		return nil
	}
}

// start starts cmd, killed if the test process dies, and reads its stdout
// (or with stderr, its stderr) until it ends: found gets what follows
// marker in the first line that holds it, and ended is closed once the
// output has ended, when cmd may be waited for.
func start(t *testing.T, cmd *exec.Cmd, stderr bool, marker string) (found <-chan string, ended <-chan struct{}) {
	t.Helper()
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	pipe, err := cmd.StdoutPipe()
	if stderr {
		pipe, err = cmd.StderrPipe()
	}
	if err == nil {
		err = cmd.Start()
	}
	if err != nil {
		t.Fatal(err)
	}
	foundc, endedc := make(chan string, 1), make(chan struct{})
	go func() {
		defer close(endedc)
		scanner := bufio.NewScanner(pipe)
		for scanner.Scan() {
			if _, after, ok := strings.Cut(scanner.Text(), marker); ok {
				select {
				case foundc <- after:
				default:
				}
			}
		}
	}()
	return foundc, endedc
}

func tail(s string, lines int) string {
	all := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(all[max(0, len(all)-lines):], "\n")
}
