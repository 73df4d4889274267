package main

import (
	"bufio"
	"context"
	"encoding/json"
	"log/slog"
	"maps"
	"net/http"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/poddata"
	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/vnode"
)

// Devices that exist (issue "Devices that exist"): a plugin reports what
// is free now ("basis" left out: "available", the default), and a device
// a claim holds for a pod its backend has not started yet is still in
// that free count. The provider must not publish it a second time.

// samplePlugin builds examples/plugin (a small program, standard library
// and pingstatus only) and runs it with args on a free port of 127.0.0.1
// until the test ends, and returns its status URL.
func samplePlugin(t *testing.T, args ...string) string {
	t.Helper()
	return serveExample(t, "plugin", "serving the ping reply on ", args...)
}

// serveExample builds the command examples/<dir> and runs it with args
// on a free port of 127.0.0.1 (-addr 127.0.0.1:0) until the test ends,
// and returns the URL that follows marker in the first line of its
// stderr that holds marker. A test that fails shows the end of its log.
func serveExample(t *testing.T, dir, marker string, args ...string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), dir)
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = filepath.Join("..", dir)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building examples/%s: %v\n%s", dir, err, out)
	}
	cmd := exec.Command(bin, append([]string{"-addr", "127.0.0.1:0"}, args...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var (
		mu     sync.Mutex
		output strings.Builder
	)
	serving := make(chan string, 1)
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		scanner := bufio.NewScanner(stderr)
		for scanner.Scan() {
			line := scanner.Text()
			mu.Lock()
			output.WriteString(line + "\n")
			mu.Unlock()
			if _, url, ok := strings.Cut(line, marker); ok {
				select {
				case serving <- strings.Fields(url)[0]:
				default:
				}
			}
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-drained
		_ = cmd.Wait()
		if t.Failed() {
			mu.Lock()
			t.Logf("the log of examples/%s:\n%s", dir, tail(output.String(), 20))
			mu.Unlock()
		}
	})
	select {
	case url := <-serving:
		return url
	case <-drained:
	case <-time.After(30 * time.Second):
	}
	mu.Lock()
	defer mu.Unlock()
	t.Fatalf("examples/%s %v does not serve:\n%s", dir, args, output.String())
	return ""
}

// configOfArgs is the configuration of the provider's command line args,
// as its start runs it: the flags' defaults for every flag not given.
func configOfArgs(tb testing.TB, args ...string) vnode.Config {
	tb.Helper()
	_, configs, _ := settingsOfArgs(tb, args)
	return configs[0]
}

// runConfig runs a provider of cfg until the test ends, as its own
// ServiceAccount (as startProvider does), reading its pods' data as its
// node (as runProviders does), and waits until its node is registered
// and it has pinged.
func runConfig(t *testing.T, cfg vnode.Config) *vnode.Node {
	t.Helper()
	name := cfg.Static.Name
	id := grant(t, name, accessFor("", "", []vnode.Config{cfg}, nil))
	cfg.Process.Data = poddata.NodeSource(id.config)
	p := vnode.New(cfg, id.client, slog.New(slog.NewTextHandler(t.Output(), nil)))
	runProvider(t, p, func() { deleteNode(t, name) })
	eventually(t, "the node is registered and the provider pings", func(ctx context.Context) (bool, string) {
		_, err := client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		return err == nil && p.Count.Pings.Load() > 0, "no node yet"
	})
	return p
}

// deviceHistory is every device name that the node's slices of a driver
// have listed, in any version of them the API server sent, since it
// started: what the scheduler could have allocated at some moment.
type deviceHistory struct {
	mu   sync.Mutex
	seen map[string]bool
}

// watchDevices starts recording the devices of the node's slices of
// driver, until the test ends.
func watchDevices(t *testing.T, driver, node string) *deviceHistory {
	t.Helper()
	h := &deviceHistory{seen: map[string]bool{}}
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.FieldSelector = fields.Set{resourcev1.ResourceSliceSelectorDriver: driver, resourcev1.ResourceSliceSelectorNodeName: node}.String()
	}))
	informer := factory.Resource().V1().ResourceSlices().Informer()
	record := func(obj any) {
		slice, ok := obj.(*resourcev1.ResourceSlice)
		if !ok {
			return
		}
		h.mu.Lock()
		defer h.mu.Unlock()
		for _, d := range slice.Spec.Devices {
			h.seen[d.Name] = true
		}
	}
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: record, UpdateFunc: func(_, obj any) { record(obj) }}); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	factory.Start(stop)
	t.Cleanup(func() {
		close(stop)
		factory.Shutdown()
	})
	if !cache.WaitForCacheSync(t.Context().Done(), informer.HasSynced) {
		t.Fatal("the slices' watch did not sync")
	}
	return h
}

// names are the devices seen, sorted.
func (h *deviceHistory) names() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Sorted(maps.Keys(h.seen))
}

// readReply is the plugin's reply at url, as JSON.
func readReply(t *testing.T, url string) map[string]any {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	var reply map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&reply); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("the plugin's reply: %s, %v", resp.Status, err)
	}
	return reply
}

// TestDevicesSamplePlugin is the case, with the sample plugin
// (examples/plugin -devices examples/plugin/testdata/gpus.json, its
// figures given as totals: two A100s and four T4s) and the provider at
// its flags' defaults (-held, a ping each 5 s) with -dra-driver. Two pods
// whose claims select 40Gi or more land, each given an A100, and run on
// the backend; a third stays Pending (its claim cannot be allocated):
// over several pings the provider publishes a100-0 and a100-1 alone, and
// no other A100 ever appears in any version of the node's slices. The
// T4s and the node's taints and labels stay as they were.
//
// The sample plugin's figures are static: it runs the pods it is sent
// but takes nothing they hold from what its flags say, so they are all it
// gives the node (-basis total). Read as available, the default, each
// pod that runs would add the device it holds to two that stay free,
// and the third pod would be given a device the backend has not.
func TestDevicesSamplePlugin(t *testing.T) {
	needsControlPlane(t)
	const driver, name = "sample.gpu.pingnode.example.com", "vk-dra-sample"
	url := samplePlugin(t, "-devices", "../plugin/testdata/gpus.json", "-basis", "total")
	reply := readReply(t, url)
	if resources, _ := reply["resources"].(map[string]any); resources == nil || resources["basis"] != "total" {
		t.Fatalf("the sample plugin's resources %v: want figures given as totals", reply["resources"])
	}
	deleteSlicesAtEnd(t, driver, name)
	history := watchDevices(t, driver, name)
	cfg := configOfArgs(t, "-node", name, "-plugin", url, "-dra-driver", driver)
	if !cfg.CountHeld || cfg.Interval != 5*time.Second {
		t.Fatalf("-held %v, -interval %s: want the defaults", cfg.CountHeld, cfg.Interval)
	}
	p := runConfig(t, cfg)
	all := []string{"a100-0", "a100-1", "t4-0", "t4-1", "t4-2", "t4-3"}
	published(t, driver, name, all...)
	schedulable(t, name)

	class := "pingnode-sample-gpu"
	createDeviceClass(t, class, gpuClass(driver), "")
	createClaimTemplate(t, "pingnode-sample-big-gpu", class, atLeast40Gi(driver))
	given := map[string]bool{}
	for _, pod := range []string{"dra-sample-1", "dra-sample-2"} {
		createDevicePod(t, pod, "pingnode-sample-big-gpu", nil)
		boundTo(t, pod, name)
		device := allocated(t, pod, driver, name, "a100")
		if given[device] {
			t.Errorf("%s given %s twice", pod, device)
		}
		given[device] = true
	}
	createDevicePod(t, "dra-sample-3", "pingnode-sample-big-gpu", nil)
	pendingFor(t, "dra-sample-3", "cannot allocate all claims")

	// Several pings with both claims allocated and both pods running.
	for _, pod := range []string{"dra-sample-1", "dra-sample-2"} {
		eventually(t, pod+" runs", func(context.Context) (bool, string) {
			phase := storedPod(t, pod).Status.Phase
			return phase == corev1.PodRunning, string(phase)
		})
	}
	pings := p.Count.Pings.Load()
	within(t, time.Minute, "three more pings", func(context.Context) (bool, string) { return p.Count.Pings.Load() >= pings+3, "pings" })
	published(t, driver, name, all...)
	if got := history.names(); !slices.Equal(got, all) {
		t.Errorf("devices published at some point: %v, want only %v", got, all)
	}
	for _, pod := range []string{"dra-sample-1", "dra-sample-2"} {
		got, err := client.CoreV1().Pods(metav1.NamespaceDefault).Get(t.Context(), pod, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Spec.NodeName != name || got.Status.Phase != corev1.PodRunning {
			t.Errorf("%s: on %q, phase %s: want bound to %s, and Running", pod, got.Spec.NodeName, got.Status.Phase, name)
		}
	}
	if node, why, err := placement(t.Context(), "dra-sample-3"); err != nil || node != "" {
		t.Errorf("dra-sample-3 bound to %q (%v, %s), want it Pending", node, err, why)
	}

	// Nothing lost: the node's resources, taints and labels.
	node := stored(t.Context(), t, name)
	if ok, why := hasResources(node, map[string]string{"cpu": "64", "memory": "250000Mi", "pods": "500"}); !ok {
		t.Errorf("resources: %s", why)
	}
	if taints := taintSet(node); !equalSets(taints, map[string]bool{protectedTaint: true, staticTaint: true}) {
		t.Errorf("taints %v, want the protected and the static one", keys(taints))
	}
	if ok, why := hasLabels(node, vnode.StaticNode(name).Labels); !ok {
		t.Errorf("labels: %s", why)
	}
	noWriteErrors(t, p)
	t.Logf("%d pings; devices ever published: %v", p.Count.Pings.Load(), history.names())
}
