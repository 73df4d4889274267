package main

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestFleetScale measures what a node of its own costs, as TestPartsScale
// measures a part's node: a provider process of N nodes
// ($PINGNODE_FLEET_N, 100 by default), each with a plugin of its own
// that answers steadily, pinged every 5 s, over a window
// ($PINGNODE_FLEET_WINDOW, 1m). It reports per node the goroutines, heap
// and RSS above a provider of one node, the provider's CPU seconds, and
// the node and Lease writes the API server counted, per node-hour; and
// what the provider of one node uses in all. Every node must be Ready
// with its plugin's figures, and its Lease renewed every 10 s. With
// $PINGNODE_FLEET_BEFORE, the path of a provider built from another
// version, it measures that one first, and the ratios. With
// $PINGNODE_FLEET_CHANGING=1, every reply differs from the node's last
// once every node is Ready (its cpu, 64 then 63), so every ping in the
// window changes its node: the CPU a node-hour, over its 720 pings, is
// the CPU of a changing ping.
//
//	PINGNODE_FLEET_BEFORE=/tmp/vk-head go test -run TestFleetScale -v -timeout 30m .
func TestFleetScale(t *testing.T) {
	needsControlPlane(t)
	n, window := scaleSettings(t, "PINGNODE_FLEET", 100, 2)
	changing := os.Getenv("PINGNODE_FLEET_CHANGING") == "1"
	what := fmt.Sprintf("%d nodes of their own", n)
	if changing {
		what += ", every ping changing"
	}
	measureVersions(t, os.Getenv("PINGNODE_FLEET_BEFORE"), what, func(t *testing.T, version, bin string, env []string) partsCost {
		return measureFleet(t, bin, env, "vk-fleet-scale-"+version+"-", n, window, changing)
	})
}

// fleetReady reports whether the n nodes of a fleet, named prefix and
// their index, are Ready with the good reply's figures, as the API
// server's watch cache has them, and says how many are.
func fleetReady(ctx context.Context, prefix string, n int) (bool, string) {
	list, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: "type=virtual-kubelet", ResourceVersion: "0"})
	if err != nil {
		return false, err.Error()
	}
	ready := 0
	for i := range list.Items {
		node := &list.Items[i]
		if !strings.HasPrefix(node.Name, prefix) {
			continue
		}
		if ok, _ := conditionIs(node, corev1.NodeReady, corev1.ConditionTrue); !ok {
			continue
		}
		if ok, _ := hasResources(node, goodResources); ok {
			ready++
		}
	}
	return ready == n, fmt.Sprintf("%d of %d", ready, n)
}

// measureFleet runs bin as a provider of one node, then of n, and
// measures the second against the first.
func measureFleet(t *testing.T, bin string, env []string, prefix string, n int, window time.Duration, changing bool) partsCost {
	plugin := &fleetPlugin{cpu: make([]int, n)}
	for i := range plugin.cpu {
		plugin.cpu[i] = 64
	}
	server := httptest.NewServer(plugin)
	t.Cleanup(server.Close)
	// start starts bin with nodes nodes named prefix and their index, and
	// waits until each is Ready with its plugin's figures.
	start := func(nodes int) (*providerProcess, string) {
		t.Helper()
		addr := freeAddr(t)
		args := []string{"-nodes", strconv.Itoa(nodes), "-node", prefix + Index, "-plugin", server.URL + "/status/" + Index, "-metrics-addr", addr}
		// Once the provider is killed (cleanups run last first): deleted
		// before, its nodes would be registered again, and left NotReady
		// for the tests after, a disruption that stops the node lifecycle
		// controller's evictions.
		t.Cleanup(func() { deleteFleet(t, prefix, nodes) })
		p := runBinary(t, bin, env, grant(t, prefix+"scale", accessOfArgs(t, args)).kubeconfig(t, envHost), args...)
		began := time.Now()
		withinEvery(t, 5*time.Minute, 2*time.Second, fmt.Sprintf("%d nodes Ready with their plugin's figures", nodes), func(ctx context.Context) (bool, string) {
			return fleetReady(ctx, prefix, nodes)
		})
		t.Logf("%d nodes Ready %s after the start", nodes, time.Since(began).Round(time.Second))
		return p, "http://" + addr + "/metrics"
	}
	one, oneURL := start(1)
	time.Sleep(10 * time.Second) // a Lease renewal, two pings
	s1 := sampleProcess(t, one, oneURL)
	t.Logf("a provider of one node: goroutines %g, heap %.1f MB, RSS %.1f MB",
		s1.m["go_goroutines"], s1.m["go_memstats_heap_inuse_bytes"]/1e6, s1.rss)
	one.kill(t)
	deleteFleet(t, prefix, 1)

	p, url := start(n)
	time.Sleep(30 * time.Second) // the first status reports, the controller manager's annotations
	if changing {
		plugin.flipping()
	}
	cost, d := costOver(t, p, url, s1, n-1, n, window) // memory above one node, of the n-1 others
	cost.current = 1
	t.Logf("counted in %s:%s", window, d)
	// Every node's Lease renewed every 10 s is 360 writes a node-hour;
	// the control plane's own Leases (the API server's identity, the
	// scheduler's and the controller manager's elections) add about 40
	// here, with 100 nodes.
	if cost.leaseWrites < 300 || cost.leaseWrites > 450 {
		t.Errorf("%.0f Lease writes a node-hour, want about 360: every node's Lease renewed every 10 s", cost.leaseWrites)
	}
	return cost
}
