package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/vnode"
)

// Devices end to end (-dra-driver): the provider publishes each node's
// devices as a pool of ResourceSlices, the real kube-scheduler allocates
// them to pods' claims (the DynamicResources plugin, with NVIDIA's
// attribute names and a CEL selector on memory), the resource claim
// controller makes the claims of templates, and the provider tells each
// pod which devices it was given.

// Device groups as a plugin sends them, with the attributes NVIDIA's
// driver publishes (type, productName, cudaComputeCapability) and its
// capacity memory.
func a100Devices(count int) map[string]any {
	return gpuGroup("a100", count, "NVIDIA A100-SXM4-80GB", "8.0.0", "80Gi")
}

func t4Devices(count int) map[string]any {
	return gpuGroup("t4", count, "Tesla T4", "7.5.0", "16Gi")
}

func gpuGroup(name string, count int, product, capability, memory string) map[string]any {
	return map[string]any{
		"name": name, "count": count,
		"attributes": map[string]any{
			"type":                  map[string]any{"string": "gpu"},
			"productName":           map[string]any{"string": product},
			"cudaComputeCapability": map[string]any{"version": capability},
		},
		"capacity": map[string]any{"memory": map[string]any{"value": memory}},
	}
}

// devicesReply is a reply with resources and the device groups given,
// whose counts are what the backend gives the node, those its pods hold
// included ("basis": "total"), as a plugin that knows nothing of claims
// reports them: a device a claim holds is not free.
func devicesReply(groups ...map[string]any) string {
	if groups == nil {
		groups = []map[string]any{}
	}
	b, err := json.Marshal(map[string]any{"resources": map[string]string{"basis": "total", "cpu": "64", "memory": "256Gi"}, "devices": groups})
	if err != nil {
		panic(err)
	}
	return string(b)
}

// withDriver publishes the node's devices under driver.
func withDriver(driver string) func(*vnode.Config) {
	return func(c *vnode.Config) { c.DRADriver = driver }
}

// pool is a node's pool as the administrator reads its ResourceSlices.
type pool struct {
	names       []string          // the devices of the highest generation, by name
	slices      int               // slices of the highest generation
	count       int64             // their resourceSliceCount
	generations map[int64]int     // slices by generation
	pools       map[string]bool   // the pool names
	owners      map[string]string // slice name: its owner's kind/name/UID
}

func (p pool) String() string {
	names := fmt.Sprint(p.names)
	if len(p.names) > 8 {
		names = fmt.Sprintf("%v … %v (%d)", p.names[:4], p.names[len(p.names)-4:], len(p.names))
	}
	return fmt.Sprintf("devices %s in %d of %d slices; generations %v, pools %v", names, p.slices, p.count, p.generations, p.pools)
}

// readPool reads the node's ResourceSlices of driver.
func readPool(ctx context.Context, driver, node string) (pool, error) {
	list, err := client.ResourceV1().ResourceSlices().List(ctx, metav1.ListOptions{FieldSelector: fields.Set{
		resourcev1.ResourceSliceSelectorDriver: driver, resourcev1.ResourceSliceSelectorNodeName: node,
	}.String()})
	if err != nil {
		return pool{}, err
	}
	p := pool{generations: map[int64]int{}, pools: map[string]bool{}, owners: map[string]string{}}
	top := int64(-1)
	for _, s := range list.Items {
		p.generations[s.Spec.Pool.Generation]++
		p.pools[s.Spec.Pool.Name] = true
		top = max(top, s.Spec.Pool.Generation)
		for _, o := range s.OwnerReferences {
			p.owners[s.Name] = o.Kind + "/" + o.Name + "/" + string(o.UID)
		}
	}
	for _, s := range list.Items {
		if s.Spec.Pool.Generation != top {
			continue
		}
		p.slices++
		p.count = s.Spec.Pool.ResourceSliceCount
		for _, d := range s.Spec.Devices {
			p.names = append(p.names, d.Name)
		}
	}
	slices.Sort(p.names)
	return p, nil
}

// published waits until the node's pool of driver is complete (one
// pool, named after the node, one generation, all its slices) and lists
// exactly want, and returns it.
func published(t *testing.T, driver, node string, want ...string) pool {
	t.Helper()
	slices.Sort(want)
	var got pool
	eventually(t, fmt.Sprintf("%s publishes %v", node, want), func(ctx context.Context) (bool, string) {
		var err error
		if got, err = readPool(ctx, driver, node); err != nil {
			return false, err.Error()
		}
		return len(got.generations) == 1 && int64(got.slices) == got.count && len(got.pools) == 1 && got.pools[node] &&
			slices.Equal(got.names, want), got.String()
	})
	return got
}

// deleteSlicesAtEnd deletes the node's ResourceSlices of driver now (a
// run that was killed left them) and when the test ends, after the node:
// the garbage collector would, but a second run (-count=2) of the test
// must not find them on its node of the same name.
func deleteSlicesAtEnd(t *testing.T, driver, node string) {
	t.Helper()
	remove := func() {
		err := client.ResourceV1().ResourceSlices().DeleteCollection(context.Background(), metav1.DeleteOptions{}, metav1.ListOptions{
			FieldSelector: fields.Set{resourcev1.ResourceSliceSelectorDriver: driver, resourcev1.ResourceSliceSelectorNodeName: node}.String(),
		})
		if err != nil {
			t.Errorf("deleting the slices of %s: %v", node, err)
		}
	}
	remove()
	t.Cleanup(remove)
}

// startDeviceProvider runs a provider of the node that publishes its
// devices under driver, its plugin replying with the groups given.
func startDeviceProvider(t *testing.T, driver, name string, groups ...map[string]any) (*vnode.Node, *fakePlugin) {
	t.Helper()
	deleteSlicesAtEnd(t, driver, name)
	p, plugin := startProvider(t, name, time.Hour, withDriver(driver))
	plugin.reply(http.StatusOK, devicesReply(groups...), 0)
	return p, plugin
}

// createDeviceClass creates a DeviceClass that selects by cel, serving
// the extended resource extended if not "", and deletes it at the end.
func createDeviceClass(t *testing.T, name, cel, extended string) {
	t.Helper()
	class := &resourcev1.DeviceClass{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       resourcev1.DeviceClassSpec{Selectors: []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{Expression: cel}}}},
	}
	if extended != "" {
		class.Spec.ExtendedResourceName = &extended
	}
	classes := client.ResourceV1().DeviceClasses()
	if err := classes.Delete(t.Context(), name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	if _, err := classes.Create(t.Context(), class, metav1.CreateOptions{}); err != nil {
		t.Fatalf("DeviceClass %s: %v", name, err)
	}
	t.Cleanup(func() {
		if err := classes.Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Error(err)
		}
	})
}

// createClaimTemplate creates a ResourceClaimTemplate of one request,
// gpu, for a device of class that cel selects, tolerating the device
// taints given, and deletes it at the end.
func createClaimTemplate(t *testing.T, name, class, cel string, tolerate ...resourcev1.DeviceToleration) {
	t.Helper()
	template := &resourcev1.ResourceClaimTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: metav1.NamespaceDefault},
		Spec: resourcev1.ResourceClaimTemplateSpec{Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{
			Requests: []resourcev1.DeviceRequest{{Name: "gpu", Exactly: &resourcev1.ExactDeviceRequest{
				DeviceClassName: class,
				Selectors:       []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{Expression: cel}}},
				Tolerations:     tolerate,
			}}},
		}}},
	}
	templates := client.ResourceV1().ResourceClaimTemplates(metav1.NamespaceDefault)
	if err := templates.Delete(t.Context(), name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	if _, err := templates.Create(t.Context(), template, metav1.CreateOptions{}); err != nil {
		t.Fatalf("ResourceClaimTemplate %s: %v", name, err)
	}
	t.Cleanup(func() {
		if err := templates.Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Error(err)
		}
	})
}

// createDevicePod creates a pod whose claim gpu is made from the
// template, tolerating the provider's taints, with requests (extended
// resources among them, their limits equal) if given, and deletes it at
// the end. It waits until no pod of that name is left from before.
func createDevicePod(t *testing.T, name, template string, requests corev1.ResourceList) {
	t.Helper()
	createPodObject(t, devicePod(name, template, requests))
}

// devicePod is the pod createDevicePod creates.
func devicePod(name, template string, requests corev1.ResourceList) *corev1.Pod {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: metav1.NamespaceDefault},
		Spec: corev1.PodSpec{
			Tolerations: providerTolerations(),
			Containers: []corev1.Container{{Name: "job", Image: "example.com/job", Resources: corev1.ResourceRequirements{
				Requests: requests, Limits: limitsFor(requests),
			}}},
			TerminationGracePeriodSeconds: new(int64),
		},
	}
	if template != "" {
		pod.Spec.ResourceClaims = []corev1.PodResourceClaim{{Name: "gpu", ResourceClaimTemplateName: &template}}
		pod.Spec.Containers[0].Resources.Claims = []corev1.ResourceClaim{{Name: "gpu"}}
	}
	return pod
}

// createPodObject creates pod, once no pod of its name is left from
// before, and deletes it when the test ends.
func createPodObject(t *testing.T, pod *corev1.Pod) {
	t.Helper()
	deletePod(t, pod.Name)
	eventually(t, "no pod "+pod.Name+" left", func(ctx context.Context) (bool, string) {
		_, err := client.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), errorText(err)
	})
	if _, err := client.CoreV1().Pods(pod.Namespace).Create(t.Context(), pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("pod %s: %v", pod.Name, err)
	}
	t.Cleanup(func() { deletePod(t, pod.Name) })
}

// podClaim returns the ResourceClaim behind the pod's claim gpu, or the
// one the scheduler made for its extended resources.
func podClaim(ctx context.Context, name string) (*resourcev1.ResourceClaim, error) {
	pod, err := client.CoreV1().Pods(metav1.NamespaceDefault).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	claim := ""
	for _, s := range pod.Status.ResourceClaimStatuses {
		if s.Name == "gpu" && s.ResourceClaimName != nil {
			claim = *s.ResourceClaimName
		}
	}
	if s := pod.Status.ExtendedResourceClaimStatus; s != nil {
		claim = s.ResourceClaimName
	}
	if claim == "" {
		return nil, fmt.Errorf("pod %s names no claim yet: status %+v", name, pod.Status)
	}
	return client.ResourceV1().ResourceClaims(metav1.NamespaceDefault).Get(ctx, claim, metav1.GetOptions{})
}

// allocated checks that the pod's claim was given one device of the
// node's pool of driver, named group-N (of any group, with group empty),
// and returns its name.
func allocated(t *testing.T, pod, driver, node, group string) string {
	t.Helper()
	claim, err := podClaim(t.Context(), pod)
	if err != nil {
		t.Fatal(err)
	}
	if claim.Status.Allocation == nil || len(claim.Status.Allocation.Devices.Results) != 1 {
		t.Fatalf("the claim %s of %s: allocation %+v, want one device", claim.Name, pod, claim.Status.Allocation)
	}
	r := claim.Status.Allocation.Devices.Results[0]
	if r.Driver != driver || r.Pool != node || group != "" && !strings.HasPrefix(r.Device, group+"-") {
		t.Errorf("the claim %s of %s was given %s/%s/%s, want a %s device of the pool %s of %s", claim.Name, pod, r.Driver, r.Pool, r.Device, group, node, driver)
	}
	if !slices.ContainsFunc(claim.Status.ReservedFor, func(c resourcev1.ResourceClaimConsumerReference) bool { return c.Name == pod }) {
		t.Errorf("the claim %s is reserved for %v, not %s", claim.Name, claim.Status.ReservedFor, pod)
	}
	return r.Device
}

// podEvents lists the events on the pod of this name and UID with reason.
func podEvents(ctx context.Context, t *testing.T, name, reason string) []corev1.Event {
	t.Helper()
	pod, err := client.CoreV1().Pods(metav1.NamespaceDefault).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	list, err := client.CoreV1().Events(metav1.NamespaceDefault).List(ctx, metav1.ListOptions{FieldSelector: fields.Set{
		"involvedObject.kind": "Pod", "involvedObject.name": name, "involvedObject.uid": string(pod.UID), "reason": reason,
	}.String()})
	if err != nil {
		t.Fatal(err)
	}
	return list.Items
}

// toldOnce waits until the pod has one event of reason whose message holds
// each of want, and checks it was said once: one event, of count 1, a few
// pings later.
func toldOnce(t *testing.T, p *vnode.Node, pod, reason string, want ...string) string {
	t.Helper()
	var message string
	eventually(t, pod+" is told "+reason, func(ctx context.Context) (bool, string) {
		events := podEvents(ctx, t, pod, reason)
		if len(events) != 1 {
			return false, fmt.Sprintf("%d events:%s", len(events), describe(events))
		}
		message = events[0].Message
		for _, w := range want {
			if !strings.Contains(message, w) {
				return false, fmt.Sprintf("%q lacks %q", message, w)
			}
		}
		return true, ""
	})
	pings := p.Count.Pings.Load()
	eventually(t, "three more pings", func(context.Context) (bool, string) { return p.Count.Pings.Load() >= pings+3, "pings" })
	if events := podEvents(t.Context(), t, pod, reason); len(events) != 1 || events[0].Count != 1 {
		t.Errorf("%s: %s said again:%s", pod, reason, describe(events))
	}
	return message
}

// gpuClass is the CEL of NVIDIA's DeviceClass, for driver.
func gpuClass(driver string) string {
	return fmt.Sprintf("device.driver == '%s' && device.attributes['%s'].type == 'gpu'", driver, driver)
}

// atLeast40Gi is the CEL of a claim for a large GPU, of driver.
func atLeast40Gi(driver string) string {
	return fmt.Sprintf("device.capacity['%s'].memory.compareTo(quantity('40Gi')) >= 0", driver)
}

// TestDevicesScheduler: two virtual nodes, one whose plugin says 2 A100
// (80Gi) and one with 2 T4 (16Gi), publish them; pods whose claims select
// a GPU of 40Gi or more by CEL land on the A100 node, each given an A100
// of its pool; with both taken, a third stays Pending (the scheduler
// cannot allocate its claim); a claim for less than 20Gi lands on the T4
// node. Each pod is told, once, which device it was given. Then the
// plugins' devices change and the slices follow: a third A100 (the pod
// Pending lands on it), one A100 (the three held stay published), four
// (one free), the T4s gone.
func TestDevicesScheduler(t *testing.T) {
	needsControlPlane(t)
	const driver, big, small = "sched.gpu.pingnode.example.com", "vk-dra-a100", "vk-dra-t4"
	pa, pluginA := startDeviceProvider(t, driver, big, a100Devices(2))
	pt, pluginT := startDeviceProvider(t, driver, small, t4Devices(2))
	published(t, driver, big, "a100-0", "a100-1")
	published(t, driver, small, "t4-0", "t4-1")
	schedulable(t, big)
	schedulable(t, small)

	class := "pingnode-sched-gpu"
	createDeviceClass(t, class, gpuClass(driver), "")
	createClaimTemplate(t, "pingnode-big-gpu", class, atLeast40Gi(driver))
	createClaimTemplate(t, "pingnode-small-gpu", class, fmt.Sprintf("device.capacity['%s'].memory.compareTo(quantity('20Gi')) < 0", driver))

	given := map[string]bool{}
	for _, pod := range []string{"dra-big-1", "dra-big-2"} {
		createDevicePod(t, pod, "pingnode-big-gpu", nil)
		boundTo(t, pod, big)
		device := allocated(t, pod, driver, big, "a100")
		if given[device] {
			t.Errorf("%s given %s twice", pod, device)
		}
		given[device] = true
	}
	createDevicePod(t, "dra-big-3", "pingnode-big-gpu", nil)
	pendingFor(t, "dra-big-3", "cannot allocate all claims")
	createDevicePod(t, "dra-small-1", "pingnode-small-gpu", nil)
	boundTo(t, "dra-small-1", small)
	t4 := allocated(t, "dra-small-1", driver, small, "t4")

	for _, pod := range []string{"dra-big-1", "dra-big-2"} {
		device := allocated(t, pod, driver, big, "a100")
		t.Logf("%s: %s", pod, toldOnce(t, pa, pod, vnode.ReasonDevicesGiven, device+" ", `productName "NVIDIA A100-SXM4-80GB"`, "memory 80Gi"))
	}
	t.Logf("dra-small-1: %s", toldOnce(t, pt, "dra-small-1", vnode.ReasonDevicesGiven, t4+" ", `productName "Tesla T4"`, "memory 16Gi"))

	// A third A100: published, and the pod Pending lands on it.
	pluginA.reply(http.StatusOK, devicesReply(a100Devices(3)), 0)
	published(t, driver, big, "a100-0", "a100-1", "a100-2")
	boundTo(t, "dra-big-3", big)
	if device := allocated(t, "dra-big-3", driver, big, "a100"); device != "a100-2" {
		t.Errorf("dra-big-3 was given %s, want the new a100-2", device)
	}
	toldOnce(t, pa, "dra-big-3", vnode.ReasonDevicesGiven, "a100-2 ")

	// Fewer A100s than the pods hold: the three held stay published while
	// their group is listed, whatever the count; four is one free more.
	pluginA.reply(http.StatusOK, devicesReply(a100Devices(1)), 0)
	pings := pa.Count.Pings.Load()
	eventually(t, "five more pings", func(context.Context) (bool, string) { return pa.Count.Pings.Load() >= pings+5, "pings" })
	published(t, driver, big, "a100-0", "a100-1", "a100-2")
	pluginA.reply(http.StatusOK, devicesReply(a100Devices(4)), 0)
	published(t, driver, big, "a100-0", "a100-1", "a100-2", "a100-3")

	// The T4 group gone: its devices go, the held one too; the pool stays,
	// empty.
	pluginT.reply(http.StatusOK, devicesReply(), 0)
	if p := published(t, driver, small); p.slices != 1 {
		t.Errorf("an empty pool in %d slices, want one", p.slices)
	}
	if _, err := podClaim(t.Context(), "dra-small-1"); err != nil {
		t.Errorf("the claim of dra-small-1: %v", err)
	}

	// Nothing lost on the nodes, no write refused.
	for _, name := range []string{big, small} {
		if ok, why := hasResources(stored(t.Context(), t, name), map[string]string{"cpu": "64", "memory": "256Gi"}); !ok {
			t.Errorf("%s: %s", name, why)
		}
	}
	noWriteErrors(t, pa)
	noWriteErrors(t, pt)
}

// TestDevicesExtendedResource (KEP-5004): a DeviceClass with
// spec.extendedResourceName example.com/t4 selects the T4s the plugin
// publishes; a classic pod that requests example.com/t4: 1 lands on the
// node through a device (the scheduler makes a claim for it, named in
// the pod's status.extendedResourceClaimStatus, allocated a T4 of the
// node's pool), and is told which; a pod beyond the free T4s stays
// Pending; no node advertises example.com/t4 in its allocatable.
func TestDevicesExtendedResource(t *testing.T) {
	needsControlPlane(t)
	const driver, name, extended = "ext.gpu.pingnode.example.com", "vk-dra-extended", "example.com/t4"
	p, _ := startDeviceProvider(t, driver, name, t4Devices(2), a100Devices(1))
	published(t, driver, name, "a100-0", "t4-0", "t4-1")
	schedulable(t, name)
	createDeviceClass(t, "pingnode-t4", fmt.Sprintf("device.driver == '%s' && device.attributes['%s'].productName == 'Tesla T4'", driver, driver), extended)

	requests := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), extended: resource.MustParse("1")}
	var devices []string
	for _, pod := range []string{"dra-t4-1", "dra-t4-2"} {
		createDevicePod(t, pod, "", requests)
		boundTo(t, pod, name)
		device := allocated(t, pod, driver, name, "t4")
		devices = append(devices, device)
		toldOnce(t, p, pod, vnode.ReasonDevicesGiven, device+" ", "its extended resources", `productName "Tesla T4"`)
	}
	if devices[0] == devices[1] {
		t.Errorf("both pods were given %s", devices[0])
	}
	createDevicePod(t, "dra-t4-3", "", requests)
	t.Logf("beyond the free T4s: %s", pending(t, "dra-t4-3"))

	nodes, err := client.CoreV1().Nodes().List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes.Items {
		if q, ok := n.Status.Allocatable[extended]; ok {
			t.Errorf("node %s advertises %s %s: the scheduler would count the devices twice", n.Name, extended, q.String())
		}
	}
	noWriteErrors(t, p)
}

// missingClaimPod is a pod bound to node at once (no scheduler), whose
// claim gpu names the ResourceClaim claim.
func missingClaimPod(name, node, claim string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: metav1.NamespaceDefault},
		Spec: corev1.PodSpec{
			NodeName:                      node,
			Tolerations:                   providerTolerations(),
			ResourceClaims:                []corev1.PodResourceClaim{{Name: "gpu", ResourceClaimName: &claim}},
			Containers:                    []corev1.Container{{Name: "job", Image: "example.com/job", Resources: corev1.ResourceRequirements{Claims: []corev1.ResourceClaim{{Name: "gpu"}}}}},
			TerminationGracePeriodSeconds: new(int64),
		},
	}
}

// TestDevicesClaimNotAllowed: a pod bound to the node whose claim does
// not exist is told, once, that it may not use it (Warning
// ClaimNotAllowed, as the kubelet refuses it); once the claim exists,
// allocated a device of the node's pool and reserved for the pod, the
// pod is told which device it was given, and the device is held: it stays
// published when the plugin's count falls to zero.
func TestDevicesClaimNotAllowed(t *testing.T) {
	needsControlPlane(t)
	const driver, name, claim = "refused.gpu.pingnode.example.com", "vk-dra-refused", "vk-dra-refused-claim"
	p, plugin := startDeviceProvider(t, driver, name, a100Devices(2))
	published(t, driver, name, "a100-0", "a100-1")
	claims := client.ResourceV1().ResourceClaims(metav1.NamespaceDefault)
	if err := claims.Delete(t.Context(), claim, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	pod := missingClaimPod("dra-refused", name, claim)
	createPodObject(t, pod)
	t.Logf("no claim: %s", toldOnce(t, p, pod.Name, vnode.ReasonClaimNotAllowed, claim, "does not exist"))

	// The claim, allocated a100-1 by hand and reserved for the pod, as the
	// scheduler would have.
	stored, err := client.CoreV1().Pods(metav1.NamespaceDefault).Get(t.Context(), pod.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	made, err := claims.Create(t.Context(), &resourcev1.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{Name: claim, Namespace: metav1.NamespaceDefault},
		Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{
			Name: "gpu", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: "gpu.example.com"},
		}}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := claims.Delete(context.Background(), claim, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Error(err)
		}
	})
	made.Status = resourcev1.ResourceClaimStatus{
		Allocation: &resourcev1.AllocationResult{Devices: resourcev1.DeviceAllocationResult{Results: []resourcev1.DeviceRequestAllocationResult{{
			Request: "gpu", Driver: driver, Pool: name, Device: "a100-1",
		}}}},
		ReservedFor: []resourcev1.ResourceClaimConsumerReference{{Resource: "pods", Name: pod.Name, UID: stored.UID}},
	}
	if _, err := claims.UpdateStatus(t.Context(), made, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Logf("allowed: %s", toldOnce(t, p, pod.Name, vnode.ReasonDevicesGiven, "a100-1 ", "ResourceClaim "+claim))
	// Each refusal is said once. Between the claim's creation and its
	// allocation (two writes, as the API server takes a status), the
	// provider may see it unallocated and say that once too: another
	// refusal, not the first said again.
	events := podEvents(t.Context(), t, pod.Name, vnode.ReasonClaimNotAllowed)
	said := map[string]bool{}
	for _, e := range events {
		if e.Count != 1 || said[e.Message] || !strings.Contains(e.Message, "does not exist") && !strings.Contains(e.Message, "is not allocated") {
			t.Errorf("the refusal said again, or another:%s", describe(events))
			break
		}
		said[e.Message] = true
	}
	if !slices.ContainsFunc(events, func(e corev1.Event) bool { return strings.Contains(e.Message, "does not exist") }) {
		t.Errorf("no refusal says the claim does not exist:%s", describe(events))
	}

	// Held: a plugin that says none leaves it published.
	plugin.reply(http.StatusOK, devicesReply(a100Devices(0)), 0)
	published(t, driver, name, "a100-1")
	noWriteErrors(t, p)
}
