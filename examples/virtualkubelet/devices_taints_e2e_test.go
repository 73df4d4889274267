package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"

	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/vnode"
)

// Device health end to end: a plugin's device group may carry taints, in
// the shape of the node's; they reach the ResourceSlices, the scheduler
// keeps claims that do not tolerate them off the device (NoSchedule), and
// kube-controller-manager's device-taint-eviction-controller deletes the
// pods that use a device tainted NoExecute, whose deletion the provider
// then finishes (internal/vnode's podfinish.go). Replies read as available, the default.

// pluginLabel is the label the replies of these tests set on the node.
const pluginLabel = "feature.node.kubernetes.io/cpu-model.vendor_id"

// availableReply is a reply as the sample plugin sends one: figures of
// what is free now (no basis: available, the default), no taint, a label,
// and the device groups given.
func availableReply(groups ...map[string]any) string {
	if groups == nil {
		groups = []map[string]any{}
	}
	b, err := json.Marshal(map[string]any{
		"status":    "ok",
		"resources": map[string]string{"cpu": "64", "memory": "256Gi", "pods": "500"},
		"taints":    []any{},
		"labels":    map[string]string{pluginLabel: "AMD"},
		"devices":   groups,
	})
	if err != nil {
		panic(err)
	}
	return string(b)
}

// a100Group is a group of A100s named name.
func a100Group(name string, count int) map[string]any {
	return gpuGroup(name, count, "NVIDIA A100-SXM4-80GB", "8.0.0", "80Gi")
}

// withDeviceTaint is group with the device taint key=value:effect.
func withDeviceTaint(group map[string]any, key, value string, effect resourcev1.DeviceTaintEffect) map[string]any {
	tainted := maps.Clone(group)
	tainted["taints"] = []map[string]string{{"key": key, "value": value, "effect": string(effect)}}
	return tainted
}

// xid is the taint NVIDIA's driver puts on a GPU for a fatal XID (79: the
// GPU has fallen off the bus).
const xidKey, xidValue = "gpu.nvidia.com/xid", "79"

// deviceTaints reads the taints of each device of the node's slices of
// driver, as key=value:Effect.
func deviceTaints(ctx context.Context, driver, node string) (map[string][]string, error) {
	list, err := client.ResourceV1().ResourceSlices().List(ctx, metav1.ListOptions{FieldSelector: fields.Set{
		resourcev1.ResourceSliceSelectorDriver: driver, resourcev1.ResourceSliceSelectorNodeName: node,
	}.String()})
	if err != nil {
		return nil, err
	}
	out := map[string][]string{}
	for _, s := range list.Items {
		for _, d := range s.Spec.Devices {
			taints := []string{}
			for _, taint := range d.Taints {
				taints = append(taints, fmt.Sprintf("%s=%s:%s", taint.Key, taint.Value, taint.Effect))
			}
			out[d.Name] = taints
		}
	}
	return out, nil
}

// taintedAs waits until the node's devices of driver carry exactly the
// taints want (device: its taints, as key=value:Effect; a device left
// out has none).
func taintedAs(t *testing.T, driver, node string, want map[string][]string) {
	t.Helper()
	eventually(t, fmt.Sprintf("the devices of %s tainted %v", node, want), func(ctx context.Context) (bool, string) {
		got, err := deviceTaints(ctx, driver, node)
		if err != nil {
			return false, err.Error()
		}
		for device := range want {
			if _, ok := got[device]; !ok {
				return false, fmt.Sprintf("no device %s: devices %v", device, got)
			}
		}
		for device, taints := range got {
			if !slices.Equal(taints, want[device]) {
				return false, fmt.Sprintf("devices %v", got)
			}
		}
		return true, ""
	})
}

// healthKept checks that nothing else was lost: the node's resources, its
// protected and static taints alone (but the controllers'), its static
// labels and the plugin's label; and the API server refused no write.
func healthKept(t *testing.T, p *vnode.Node, name string) {
	t.Helper()
	eventually(t, "nothing lost on "+name, func(ctx context.Context) (bool, string) {
		node := stored(ctx, t, name)
		if ok, why := hasResources(node, map[string]string{"cpu": "64", "memory": "256Gi", "pods": "500"}); !ok {
			return false, why
		}
		if taints := taintSet(node); !equalSets(taints, map[string]bool{protectedTaint: true, staticTaint: true}) {
			return false, "taints " + strings.Join(keys(taints), ", ")
		}
		want := maps.Clone(vnode.StaticNode(name).Labels)
		want[pluginLabel] = "AMD"
		return hasLabels(node, want)
	})
	noWriteErrors(t, p)
}

// TestDevicesTaintNoSchedule: of two A100 groups of one device each,
// a100a's tainted gpu.nvidia.com/xid=79:NoSchedule, the slices carry the
// taint on a100a-0 alone; a claim that does not tolerate it is given
// a100b-0, and a second such claim, with a100b-0 taken and a100a-0 free
// but tainted, cannot be allocated. Both devices stay published, the
// taint stays, and the node keeps its taints and labels.
func TestDevicesTaintNoSchedule(t *testing.T) {
	needsControlPlane(t)
	const driver, name = "noschedule.gpu.pingnode.example.com", "vk-dra-noschedule"
	deleteSlicesAtEnd(t, driver, name)
	p, plugin := startProvider(t, name, time.Hour, withDriver(driver), func(c *vnode.Config) { c.CountHeld = true })
	tainted := map[string][]string{"a100a-0": {xidKey + "=" + xidValue + ":NoSchedule"}}
	plugin.reply(http.StatusOK, availableReply(withDeviceTaint(a100Group("a100a", 1), xidKey, xidValue, resourcev1.DeviceTaintEffectNoSchedule), a100Group("a100b", 1)), 0)
	published(t, driver, name, "a100a-0", "a100b-0")
	taintedAs(t, driver, name, tainted)
	schedulable(t, name)

	class := "pingnode-noschedule-gpu"
	createDeviceClass(t, class, gpuClass(driver), "")
	createClaimTemplate(t, "pingnode-noschedule-big-gpu", class, atLeast40Gi(driver))
	createDevicePod(t, "dra-noschedule-1", "pingnode-noschedule-big-gpu", nil)
	boundTo(t, "dra-noschedule-1", name)
	if device := allocated(t, "dra-noschedule-1", driver, name, "a100b"); device != "a100b-0" {
		t.Errorf("dra-noschedule-1 was given %s, want the untainted a100b-0", device)
	}
	createDevicePod(t, "dra-noschedule-2", "pingnode-noschedule-big-gpu", nil)
	pendingFor(t, "dra-noschedule-2", "cannot allocate all claims")

	morePings(t, p, 3)
	published(t, driver, name, "a100a-0", "a100b-0")
	taintedAs(t, driver, name, tainted)
	healthKept(t, p, name)
}

// gpuPod is a pod whose claim gpu is made from template, tolerating the
// provider's taints, with a grace period of longGrace: gone within a
// test, it was deleted by its node.
func gpuPod(name, template string) *corev1.Pod {
	pod := devicePod(name, template, nil)
	grace := longGrace
	pod.Spec.TerminationGracePeriodSeconds = &grace
	return pod
}

// evictedForDevice waits until the pod of this name and UID is gone, and
// checks that the device taint eviction controller marked it for
// deletion (its event DeviceTaintManagerEviction).
func evictedForDevice(t *testing.T, name string, uid types.UID) {
	t.Helper()
	within(t, time.Minute, name+" is evicted and deleted", func(ctx context.Context) (bool, string) { return gone(ctx, name, uid) })
	eventually(t, name+" was marked by the device taint eviction controller", func(ctx context.Context) (bool, string) {
		list, err := client.CoreV1().Events(metav1.NamespaceDefault).List(ctx, metav1.ListOptions{FieldSelector: fields.Set{
			"involvedObject.kind": "Pod", "involvedObject.uid": string(uid), "reason": "DeviceTaintManagerEviction",
		}.String()})
		if err != nil {
			return false, err.Error()
		}
		return len(list.Items) > 0, "no DeviceTaintManagerEviction event"
	})
}

// TestDevicesTaintNoExecute: two A100 groups of one device each, a pod
// on each device; the plugin taints the group of the first pod's device
// gpu.nvidia.com/xid=79:NoExecute. kube-controller-manager's device taint
// eviction controller deletes that pod (with its grace period of an
// hour), and the delete completes: the provider deletes it at once, as a
// kubelet whose pod has stopped. The other pod, on the healthy device,
// stays. A claim that does not tolerate the taint then cannot be
// allocated; one whose request tolerates it (key gpu.nvidia.com/xid,
// operator Exists, effect NoExecute) is given the tainted device, and its
// pod is not evicted. Both devices stay published, the other untainted,
// and the node keeps its taints and labels.
func TestDevicesTaintNoExecute(t *testing.T) {
	needsControlPlane(t)
	const driver, name = "noexecute.gpu.pingnode.example.com", "vk-dra-noexecute"
	deleteSlicesAtEnd(t, driver, name)
	p, plugin := startProvider(t, name, time.Hour, withDriver(driver), func(c *vnode.Config) { c.CountHeld = true })
	plugin.reply(http.StatusOK, availableReply(a100Group("a100a", 1), a100Group("a100b", 1)), 0)
	published(t, driver, name, "a100a-0", "a100b-0")
	schedulable(t, name)

	class := "pingnode-noexecute-gpu"
	createDeviceClass(t, class, gpuClass(driver), "")
	createClaimTemplate(t, "pingnode-noexecute-big-gpu", class, atLeast40Gi(driver))
	createClaimTemplate(t, "pingnode-noexecute-tolerant-gpu", class, atLeast40Gi(driver), resourcev1.DeviceToleration{
		Key: xidKey, Operator: resourcev1.DeviceTolerationOpExists, Effect: resourcev1.DeviceTaintEffectNoExecute,
	})
	const evicted, stays = "dra-noexecute-evicted", "dra-noexecute-stays"
	createPodObject(t, gpuPod(evicted, "pingnode-noexecute-big-gpu"))
	boundTo(t, evicted, name)
	failing := allocated(t, evicted, driver, name, "")
	createPodObject(t, gpuPod(stays, "pingnode-noexecute-big-gpu"))
	boundTo(t, stays, name)
	healthy := allocated(t, stays, driver, name, "")
	if failing == healthy {
		t.Fatalf("both pods were given %s", failing)
	}
	failingGroup, healthyGroup := strings.TrimSuffix(failing, "-0"), strings.TrimSuffix(healthy, "-0")
	pod, err := client.CoreV1().Pods(metav1.NamespaceDefault).Get(t.Context(), evicted, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}

	// The GPU fails.
	plugin.reply(http.StatusOK, availableReply(
		withDeviceTaint(a100Group(failingGroup, 1), xidKey, xidValue, resourcev1.DeviceTaintEffectNoExecute), a100Group(healthyGroup, 1)), 0)
	tainted := map[string][]string{failing: {xidKey + "=" + xidValue + ":NoExecute"}}
	taintedAs(t, driver, name, tainted)
	evictedForDevice(t, evicted, pod.UID)
	if ok, why := untouched(t.Context(), stays); !ok {
		t.Errorf("the pod on the healthy device: %s", why)
	}

	// Its claim gone with it, the tainted device is free: a claim that
	// does not tolerate the taint waits; one that tolerates it gets it.
	eventually(t, "the evicted pod's claim is gone", func(ctx context.Context) (bool, string) {
		claims, err := client.ResourceV1().ResourceClaims(metav1.NamespaceDefault).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		for _, c := range claims.Items {
			for _, o := range c.OwnerReferences {
				if o.UID == pod.UID {
					return false, "claim " + c.Name + " of the evicted pod"
				}
			}
		}
		return true, ""
	})
	createDevicePod(t, "dra-noexecute-intolerant", "pingnode-noexecute-big-gpu", nil)
	pendingFor(t, "dra-noexecute-intolerant", "cannot allocate all claims")
	const tolerant = "dra-noexecute-tolerant"
	createPodObject(t, gpuPod(tolerant, "pingnode-noexecute-tolerant-gpu"))
	boundTo(t, tolerant, name)
	if device := allocated(t, tolerant, driver, name, failingGroup); device != failing {
		t.Errorf("%s was given %s, want the tainted %s, which it tolerates", tolerant, device, failing)
	}
	morePings(t, p, 3)
	for _, pod := range []string{tolerant, stays} {
		if ok, why := untouched(t.Context(), pod); !ok {
			t.Errorf("%s: %s", pod, why)
		}
	}
	if node, _, err := placement(t.Context(), "dra-noexecute-intolerant"); err != nil || node != "" {
		t.Errorf("dra-noexecute-intolerant bound to %q (%v), want it Pending", node, err)
	}

	published(t, driver, name, "a100a-0", "a100b-0")
	taintedAs(t, driver, name, tainted)
	healthKept(t, p, name)
}
