package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/logcount"
	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/metrics"
	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/supervise"
	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/vnode"
)

// What publishing devices costs the control plane, counted by the API
// server (apiserver_request_total) and by the provider's own client: a
// steady ping writes no slice, nor does a restart that finds its pool
// published; and the garbage collector deletes a node's slices with it.

// sliceWrites sums the writes of ResourceSlices the API server counted.
func (r requests) sliceWrites() float64 {
	n := 0.0
	for _, verb := range []string{"POST", "PUT", "PATCH", "APPLY", "DELETE", "DELETECOLLECTION"} {
		n += r.api[verb+" resourceslices"]
	}
	return n
}

// sliceWrites counts the writes of ResourceSlices in the log.
func (l *requestLog) sliceWrites() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, r := range l.requests {
		if r.method != http.MethodGet && strings.Contains(r.path, "/resourceslices") {
			n++
		}
	}
	return n
}

// running runs p until stop is called, or the test ends.
func running(t *testing.T, p *vnode.Node) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- supervise.One(p).Run(ctx) }() // the node, and its ping loop
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("provider: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// quietSlices waits until no ResourceSlice is left of a node that is
// gone, so that the garbage collector deletes none while writes are
// counted.
func quietSlices(t *testing.T) {
	t.Helper()
	within(t, time.Minute, "every ResourceSlice is of a node that exists", func(ctx context.Context) (bool, string) {
		list, err := client.ResourceV1().ResourceSlices().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		for _, s := range list.Items {
			if s.Spec.NodeName == nil {
				continue
			}
			if _, err := client.CoreV1().Nodes().Get(ctx, *s.Spec.NodeName, metav1.GetOptions{}); apierrors.IsNotFound(err) {
				return false, "a slice of the node " + *s.Spec.NodeName + ", which is gone"
			}
		}
		return true, ""
	})
}

// migDevices is a group of n small devices: with two A100s, more than a
// slice holds.
func migDevices(n int) map[string]any {
	return gpuGroup("mig", n, "NVIDIA A100-SXM4-80GB MIG 1g.10gb", "8.0.0", "10Gi")
}

// deviceNames are the names group-0 to group-(n-1).
func deviceNames(group string, n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("%s-%d", group, i)
	}
	return names
}

// TestDevicesSteadyCost: a plugin that says 2 A100s and 200 small devices
// (two slices: 128 and 74) is pinged 20 times, each ping let through by
// the hook before each ping: the API server counts no write of a ResourceSlice,
// nor does the provider's client. The provider is stopped and another
// started against the same node: once its ResourceSlice controller has
// compared the pool with the slices, there is still one pool of the
// node, one generation, the same devices, and no write has been made
// since before the stop.
func TestDevicesSteadyCost(t *testing.T) {
	needsControlPlane(t)
	const driver, name = "steady.gpu.pingnode.example.com", "vk-dra-steady"
	plugin := &fakePlugin{}
	plugin.reply(http.StatusOK, devicesReply(a100Devices(2), migDevices(200)), 0)
	plugin.server = httptest.NewServer(plugin)
	t.Cleanup(plugin.closeServer)
	deleteSlicesAtEnd(t, driver, name)
	t.Cleanup(func() { deleteNode(t, name) })
	cfg := testConfig(name, plugin.server.URL+"/status")
	cfg.DRADriver = driver
	id := grant(t, name, accessFor("", "", []vnode.Config{cfg}, nil))
	var log requestLog
	c := log.clientFor(t, id)

	first := vnode.New(cfg, c, slog.New(slog.NewTextHandler(t.Output(), nil)))
	stopFirst := running(t, first)
	want := append(deviceNames("a100", 2), deviceNames("mig", 200)...)
	before := published(t, driver, name, want...)
	if before.slices != 2 {
		t.Errorf("%d slices, want 2 (128 and 74 devices)", before.slices)
	}
	quietSlices(t)
	step := stepPings(t, first)

	apiBefore, ownBefore := mustReadRequests(t), log.sliceWrites()
	if apiBefore.api["POST resourceslices"] < 2 || ownBefore < 2 {
		t.Fatalf("the creates of the two slices are not counted: %g by the API server, %d by the provider", apiBefore.api["POST resourceslices"], ownBefore)
	}
	step(20)
	steady := mustReadRequests(t).since(apiBefore).sliceWrites()
	own := log.sliceWrites() - ownBefore
	t.Logf("20 steady pings: %g ResourceSlice writes counted by the API server, %d by the provider's client", steady, own)
	if steady != 0 || own != 0 {
		t.Errorf("20 steady pings wrote ResourceSlices: %g counted by the API server, %d by the provider", steady, own)
	}

	// A restart, against the node and its slices as they are.
	stopFirst()
	h := logcount.New(t.Output(), "Completed comparison")
	reg := prometheus.NewRegistry()
	cfg.Metrics = metrics.New(reg)
	second := vnode.New(cfg, c, slog.New(h))
	running(t, second)
	eventually(t, "the second provider hands its pool on, and its controller compares it with the slices", func(context.Context) (bool, string) {
		handed, _ := gather(t, reg).value("pingnode_device_pools_total", "node", name)
		return handed == 1 && h.Count() >= 1, fmt.Sprintf("%g pools handed on, %d syncs", handed, h.Count())
	})
	pings := second.Count.Pings.Load()
	eventually(t, "five more pings", func(context.Context) (bool, string) { return second.Count.Pings.Load() >= pings+5, "pings" })
	after := published(t, driver, name, want...)
	if fmt.Sprint(after.generations) != fmt.Sprint(before.generations) || after.slices != before.slices {
		t.Errorf("after the restart: %s, was %s", after, before)
	}
	restart := mustReadRequests(t).since(apiBefore).sliceWrites()
	own = log.sliceWrites() - ownBefore
	t.Logf("a restart: %g ResourceSlice writes counted by the API server, %d by the provider's client; %s", restart, own, after)
	if restart != 0 || own != 0 {
		t.Errorf("the restart wrote ResourceSlices: %g counted by the API server, %d by the provider", restart, own)
	}
	noWriteErrors(t, second)
}

// ownersOf says whose the node's slices of driver are: the owners'
// kind/name/UID, sorted, one per slice.
func ownersOf(ctx context.Context, driver, node string) ([]string, error) {
	list, err := client.ResourceV1().ResourceSlices().List(ctx, metav1.ListOptions{FieldSelector: fields.Set{
		resourcev1.ResourceSliceSelectorDriver: driver, resourcev1.ResourceSliceSelectorNodeName: node,
	}.String()})
	if err != nil {
		return nil, err
	}
	var owners []string
	for _, s := range list.Items {
		var o []string
		for _, r := range s.OwnerReferences {
			o = append(o, r.Kind+"/"+r.Name+"/"+string(r.UID))
		}
		owners = append(owners, strings.Join(o, ","))
	}
	slices.Sort(owners)
	return owners, nil
}

// deviceGCLimit bounds how long a node's slices outlive it: the garbage
// collector's reaction, and once the provider registered the node again,
// the ResourceSlice controller's delay after an informer event (30 s, its
// default) before it publishes the pool anew.
const deviceGCLimit = 75 * time.Second

// TestDevicesNodeDeleted: the node deleted by someone while the provider
// runs, its slices go with it (the garbage collector: their owner is
// gone), and the provider, which registers the node again, publishes the
// pool again, owned by the new node. The provider stopped and the node
// deleted, its slices go, and nothing publishes them again.
func TestDevicesNodeDeleted(t *testing.T) {
	needsControlPlane(t)
	const driver, name = "gc.gpu.pingnode.example.com", "vk-dra-gc"
	p, _ := startDeviceProvider(t, driver, name, a100Devices(2))
	published(t, driver, name, "a100-0", "a100-1")
	node := stored(t.Context(), t, name)
	want := []string{"Node/" + name + "/" + string(node.UID)}
	if owners, err := ownersOf(t.Context(), driver, name); err != nil || !slices.Equal(owners, want) {
		t.Fatalf("the slices' owners: %v (%v), want %v", owners, err, want)
	}

	if err := client.CoreV1().Nodes().Delete(t.Context(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	deleted := time.Now()
	within(t, deviceGCLimit, "the node registered again, its pool published again, owned by it", func(ctx context.Context) (bool, string) {
		again, err := client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil || again.UID == node.UID {
			return false, "not registered again yet"
		}
		owners, err := ownersOf(ctx, driver, name)
		if err != nil {
			return false, err.Error()
		}
		return slices.Equal(owners, []string{"Node/" + name + "/" + string(again.UID)}), fmt.Sprintf("owners %v", owners)
	})
	t.Logf("published again %s after the node was deleted", time.Since(deleted).Round(time.Second))
	published(t, driver, name, "a100-0", "a100-1")
	noWriteErrors(t, p)
}

// TestDevicesGoWithNode: the provider stopped, its node deleted, the
// garbage collector deletes the node's slices.
func TestDevicesGoWithNode(t *testing.T) {
	needsControlPlane(t)
	const driver, name = "gone.gpu.pingnode.example.com", "vk-dra-gone"
	deleteSlicesAtEnd(t, driver, name)
	plugin := &fakePlugin{}
	plugin.reply(http.StatusOK, devicesReply(a100Devices(2)), 0)
	plugin.server = httptest.NewServer(plugin)
	t.Cleanup(plugin.closeServer)
	t.Cleanup(func() { deleteNode(t, name) })
	cfg := testConfig(name, plugin.server.URL+"/status")
	cfg.DRADriver = driver
	id := grant(t, name, accessFor("", "", []vnode.Config{cfg}, nil))
	stop := running(t, vnode.New(cfg, id.client, slog.New(slog.NewTextHandler(t.Output(), nil))))
	published(t, driver, name, "a100-0", "a100-1")
	stop()
	if err := client.CoreV1().Nodes().Delete(t.Context(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	deleted := time.Now()
	within(t, deviceGCLimit, "the garbage collector deletes the node's slices", func(ctx context.Context) (bool, string) {
		p, err := readPool(ctx, driver, name)
		if err != nil {
			return false, err.Error()
		}
		return len(p.generations) == 0, p.String()
	})
	t.Logf("slices gone %s after the node", time.Since(deleted).Round(time.Millisecond))
}

// TestDevicesUntilNews: a provider that restarts while its plugin sends
// no devices (resources alone, then a failed ping) writes no slice and
// deletes none: the pool stays published as it was, for the scheduler;
// its first reply with devices starts the ResourceSlice controller, which
// publishes them.
func TestDevicesUntilNews(t *testing.T) {
	needsControlPlane(t)
	const driver, name = "news.gpu.pingnode.example.com", "vk-dra-news"
	plugin := &fakePlugin{}
	plugin.reply(http.StatusOK, devicesReply(a100Devices(2)), 0)
	plugin.server = httptest.NewServer(plugin)
	t.Cleanup(plugin.closeServer)
	deleteSlicesAtEnd(t, driver, name)
	t.Cleanup(func() { deleteNode(t, name) })
	cfg := testConfig(name, plugin.server.URL+"/status")
	cfg.DRADriver = driver
	id := grant(t, name, accessFor("", "", []vnode.Config{cfg}, nil))
	stopFirst := running(t, vnode.New(cfg, id.client, slog.New(slog.NewTextHandler(t.Output(), nil))))
	before := published(t, driver, name, "a100-0", "a100-1")
	stopFirst()

	plugin.reply(http.StatusOK, `{"resources":{"cpu":"32"}}`, 0)
	var log requestLog
	second := vnode.New(cfg, log.clientFor(t, id), slog.New(slog.NewTextHandler(t.Output(), nil)))
	running(t, second)
	eventually(t, "the second provider pings", func(context.Context) (bool, string) { return second.Count.Pings.Load() > 0, "no ping" })
	step := stepPings(t, second)
	step(5)
	plugin.reply(http.StatusServiceUnavailable, "down", 0)
	step(3)
	plugin.reply(http.StatusOK, `{"resources":{"cpu":"32"}}`, 0)
	step(2)
	if n := log.sliceWrites(); n != 0 {
		t.Errorf("the provider wrote %d ResourceSlices without a reply with devices", n)
	}
	if after := published(t, driver, name, "a100-0", "a100-1"); fmt.Sprint(after.generations) != fmt.Sprint(before.generations) {
		t.Errorf("the pool went from %s to %s", before, after)
	}

	plugin.reply(http.StatusOK, devicesReply(a100Devices(3)), 0)
	step(1)
	published(t, driver, name, "a100-0", "a100-1", "a100-2")
	noWriteErrors(t, second)
}

// TestDevicesIgnoredWithoutDriver: without -dra-driver, a plugin that
// sends devices (one group refused) changes nothing but the node: no
// slice, no warning of its devices counted or recorded, and one log line,
// at the first, that they are ignored.
func TestDevicesIgnoredWithoutDriver(t *testing.T) {
	needsControlPlane(t)
	const name = "vk-dra-none"
	h := logcount.New(t.Output(), "only -dra-driver publishes")
	reg := prometheus.NewRegistry()
	p, plugin := startProviderLogging(t, name, time.Hour, h, func(c *vnode.Config) { c.Metrics = metrics.New(reg) })
	bad := a100Devices(2)
	bad["name"] = "Not A Name"
	plugin.reply(http.StatusOK, devicesReply(t4Devices(2), bad), 0)
	eventually(t, "the reply's resources are stored", func(ctx context.Context) (bool, string) {
		return hasResources(stored(ctx, t, name), map[string]string{"cpu": "64", "memory": "256Gi"})
	})
	step := stepPings(t, p)
	step(10)
	if n := h.Count(); n != 1 {
		t.Errorf("said %d times that the devices are ignored, want once", n)
	}
	for _, action := range []string{"refused", "repaired", "ignored"} {
		if n, _ := gather(t, reg).value("pingnode_warnings_total", "node", name, "subject", "device", "action", action); n != 0 {
			t.Errorf("pingnode_warnings_total{subject=device,action=%s} %g, want none: the devices are not read", action, n)
		}
	}
	list, err := client.ResourceV1().ResourceSlices().List(t.Context(), metav1.ListOptions{FieldSelector: resourcev1.ResourceSliceSelectorNodeName + "=" + name})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 0 {
		t.Errorf("%d ResourceSlices of the node, want none", len(list.Items))
	}
	noWriteErrors(t, p)
}
