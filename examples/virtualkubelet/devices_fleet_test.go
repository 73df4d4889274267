package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/vnode"
)

// TestDevicesFleetProcess: the command itself, in a child process, with
// -dra-driver and a fleet of two nodes, as a ServiceAccount bound to
// exactly what -print-rbac gives for its flags: each node publishes its
// pool, and the nodes share one claim cache, from which each pod bound to
// either is told which device it was given.
func TestDevicesFleetProcess(t *testing.T) {
	needsControlPlane(t)
	const driver = "fleet.gpu.pingnode.example.com"
	nodes := []string{"vk-dra-fleet-0", "vk-dra-fleet-1"}
	plugin := &fakePlugin{}
	plugin.reply(http.StatusOK, devicesReply(a100Devices(1)), 0)
	plugin.server = httptest.NewServer(plugin)
	t.Cleanup(plugin.closeServer)
	for _, n := range nodes {
		deleteSlicesAtEnd(t, driver, n)
		t.Cleanup(func() { deleteNode(t, n) })
	}
	startProviderProcess(t, "-nodes", "2", "-node", "vk-dra-fleet-{i}", "-plugin", plugin.server.URL+"/status/{i}",
		"-interval", "250ms", "-timeout", "200ms", "-dra-driver", driver)
	for _, n := range nodes {
		published(t, driver, n, "a100-0")
		schedulable(t, n)
	}

	class := "pingnode-fleet-gpu"
	createDeviceClass(t, class, gpuClass(driver), "")
	createClaimTemplate(t, "pingnode-fleet-gpu", class, atLeast40Gi(driver))
	on := map[string]bool{}
	for i := range nodes {
		pod := fmt.Sprintf("dra-fleet-%d", i)
		createDevicePod(t, pod, "pingnode-fleet-gpu", nil)
		node := ""
		eventually(t, pod+" is bound", func(ctx context.Context) (bool, string) {
			got, why, err := placement(ctx, pod)
			if err != nil {
				return false, err.Error()
			}
			node = got
			return got != "", "unschedulable: " + why
		})
		on[node] = true
		device := allocated(t, pod, driver, node, "a100")
		eventually(t, pod+" is told its device", func(ctx context.Context) (bool, string) {
			events := podEvents(ctx, t, pod, vnode.ReasonDevicesGiven)
			return len(events) == 1 && strings.Contains(events[0].Message, device+" "), describe(events)
		})
	}
	if len(on) != len(nodes) {
		t.Errorf("the pods are on %v, want one on each node (one A100 each)", on)
	}
}
