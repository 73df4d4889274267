package dra_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/nodeapply/devicepool"
	"github.com/pingnode/pingnode/nodeapply/dra"
	"github.com/pingnode/pingnode/pingstatus"
)

const (
	driver   = "gpu.nvidia.com"
	poolName = "vk-a100"
)

// gpus is a reply's devices: a A100s and t T4s, with NVIDIA's names.
func gpus(a, t int) *pingstatus.NodePatch {
	return &pingstatus.NodePatch{Kind: pingstatus.Structured, ReplaceDevices: true, Devices: []pingstatus.DeviceGroup{
		{Name: "a100", Count: a, Attributes: map[string]pingstatus.DeviceAttribute{
			"type": {StringValue: ptr.To("gpu")}, "productName": {StringValue: ptr.To("NVIDIA A100-SXM4-80GB")},
			"cudaComputeCapability": {VersionValue: ptr.To("8.0.0")}, "gpu.nvidia.com/memoryGiB": {IntValue: ptr.To[int64](80)},
			"mig": {BoolValue: ptr.To(false)},
		}, Capacity: map[string]resource.Quantity{"memory": resource.MustParse("80Gi")}},
		{Name: "t4", Count: t, Attributes: map[string]pingstatus.DeviceAttribute{
			"type": {StringValue: ptr.To("gpu")}, "productName": {StringValue: ptr.To("Tesla T4")},
			"cudaComputeCapability": {VersionValue: ptr.To("7.5.0")},
		}, Capacity: map[string]resource.Quantity{"memory": resource.MustParse("16Gi")}},
	}}
}

// slice is the one ResourceSlice of pool, generation g, with devices.
func slice(g int64, devices []resourcev1.Device) *resourcev1.ResourceSlice {
	return &resourcev1.ResourceSlice{
		ObjectMeta: metav1.ObjectMeta{Name: "vk-a100-gpu.nvidia.com-x"},
		Spec: resourcev1.ResourceSliceSpec{
			Driver: driver, NodeName: ptr.To("vk"),
			Pool:    resourcev1.ResourcePool{Name: poolName, Generation: g, ResourceSliceCount: 1},
			Devices: devices,
		},
	}
}

// allocated is a claim whose allocation names devices of the pool, and
// one of another driver.
func allocated(name string, pod types.UID, devices ...string) *resourcev1.ResourceClaim {
	c := &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}}
	c.Status.Allocation = &resourcev1.AllocationResult{}
	for _, d := range devices {
		c.Status.Allocation.Devices.Results = append(c.Status.Allocation.Devices.Results,
			resourcev1.DeviceRequestAllocationResult{Request: "gpu", Driver: driver, Pool: poolName, Device: d})
	}
	c.Status.Allocation.Devices.Results = append(c.Status.Allocation.Devices.Results,
		resourcev1.DeviceRequestAllocationResult{Request: "nic", Driver: "nic.example.com", Pool: poolName, Device: "a100-0"})
	if pod != "" {
		c.Status.ReservedFor = []resourcev1.ResourceClaimConsumerReference{{Resource: "pods", Name: "p", UID: pod}}
	}
	return c
}

// TestPublishedAndReadBack: what Apply publishes, turned into a slice and
// read back with the claims and the node's pods, is the pool Apply left,
// held devices marked, and running those of a pod the backend runs; the
// same reply on it then changes nothing and allocates nothing in Apply,
// so a provider that reads its pool from its slices at every ping writes
// nothing on a steady backend.
func TestPublishedAndReadBack(t *testing.T) {
	first := devicepool.Apply(nil, nodeapply.Ping{Reply: gpus(8, 16)}, pingstatus.Options{})
	if len(first.Devices) != 24 || len(first.Changes) == 0 {
		t.Fatalf("first reply: %d devices, changed %v", len(first.Devices), len(first.Changes) > 0)
	}
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	pods := []*corev1.Pod{pod("u1", corev1.PodRunning, at.Add(-time.Minute))}
	claims := []*resourcev1.ResourceClaim{allocated("c1", "u1", "a100-0", "a100-1"), allocated("c2", "", "t4-20"), nil}
	// An older generation of the pool, with a device since gone: passed over.
	old := slice(1, []resourcev1.Device{{Name: "a100-99"}})
	published := []*resourcev1.ResourceSlice{old, slice(2, dra.Devices(first.Devices)), nil}
	read := dra.Pool(published, claims, pods, at, driver, poolName)

	want := append([]devicepool.Device(nil), first.Devices...)
	want[0].Held, want[1].Held = true, true
	want[0].Running, want[1].Running = true, true                     // u1 runs on the backend
	want = append(want, devicepool.Device{Name: "t4-20", Held: true}) // allocated, no longer published, its claim for no pod yet
	if diff := cmp.Diff(want, read, cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })); diff != "" {
		t.Errorf("pool read back (-want +got):\n%s", diff)
	}

	again := devicepool.Apply(read, nodeapply.Ping{Reply: gpus(8, 16)}, pingstatus.Options{})
	// The reply's 8 A100s are free now, besides the 2 held for u1, which
	// the backend runs: a100-8 and a100-9 join. t4-20 is held, for a pod
	// the backend does not run yet: the reply's 16 free T4s include it,
	// so it stays published, described again, and t4-15 goes.
	var paths []string
	for _, c := range again.Changes {
		paths = append(paths, c.Op.String()+" "+c.Path)
	}
	if diff := cmp.Diff([]string{"added devices[a100-8]", "added devices[a100-9]", "removed devices[t4-15]", "modified devices[t4-20]"}, paths); diff != "" || len(again.Changes) == 0 {
		t.Fatalf("changes (-want +got):\n%s", diff)
	}
	steady := dra.Pool([]*resourcev1.ResourceSlice{slice(3, dra.Devices(again.Devices))}, claims, pods, at, driver, poolName)
	var res devicepool.Result
	reply, _ := pingstatus.Options{}.Check(gpus(8, 16)) // judged once, as Parse gives a reply
	allocs := testing.AllocsPerRun(20, func() {
		res = devicepool.Apply(steady, nodeapply.Ping{Reply: reply}, pingstatus.Options{})
	})
	if len(res.Changes) != 0 || allocs != 0 {
		t.Errorf("steady pool read back: changes %v, %v allocations, want none", res.Changes, allocs)
	}
}

// TestDevicesShareNothing: the devices Devices returns have maps and
// values of their own.
func TestDevicesShareNothing(t *testing.T) {
	pool := devicepool.Apply(nil, nodeapply.Ping{Reply: gpus(2, 0)}, pingstatus.Options{}).Devices
	out := dra.Devices(pool)
	*out[0].Attributes["productName"].StringValue = "changed"
	out[0].Attributes["new"] = resourcev1.DeviceAttribute{}
	if s := *pool[0].Attributes["productName"].StringValue; s != "NVIDIA A100-SXM4-80GB" {
		t.Errorf("a change of the published device reached the pool: %q", s)
	}
	if _, ok := out[1].Attributes["new"]; ok {
		t.Error("two devices share their attributes")
	}
	want := resourcev1.Device{Name: "a100-1", Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{
		"type": {StringValue: ptr.To("gpu")}, "productName": {StringValue: ptr.To("NVIDIA A100-SXM4-80GB")},
		"cudaComputeCapability": {VersionValue: ptr.To("8.0.0")}, "gpu.nvidia.com/memoryGiB": {IntValue: ptr.To[int64](80)},
		"mig": {BoolValue: ptr.To(false)},
	}, Capacity: map[resourcev1.QualifiedName]resourcev1.DeviceCapacity{"memory": {Value: resource.MustParse("80Gi")}}}
	if diff := cmp.Diff(want, out[1], cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })); diff != "" {
		t.Errorf("device (-want +got):\n%s", diff)
	}
}

func TestPodDevices(t *testing.T) {
	pool := devicepool.Apply(nil, nodeapply.Ping{Reply: gpus(2, 1)}, pingstatus.Options{}).Devices
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", UID: "u1"}}
	pod.Spec.ResourceClaims = []corev1.PodResourceClaim{
		{Name: "big", ResourceClaimTemplateName: ptr.To("big-gpu")},
		{Name: "shared", ResourceClaimName: ptr.To("shared")},
		{Name: "none", ResourceClaimTemplateName: ptr.To("maybe")},
	}
	pod.Status.ResourceClaimStatuses = []corev1.PodResourceClaimStatus{
		{Name: "big", ResourceClaimName: ptr.To("p-big-x1")},
		{Name: "none"}, // the controller decided no claim is needed
	}
	owned := func(c *resourcev1.ResourceClaim, uid types.UID) *resourcev1.ResourceClaim {
		c.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: "p", UID: uid, Controller: ptr.To(true)}}
		return c
	}
	tests := []struct {
		name   string
		claims map[string]*resourcev1.ResourceClaim
		want   []string // device names, or nil for a refusal
	}{
		{"reserved", map[string]*resourcev1.ResourceClaim{
			"p-big-x1": owned(allocated("p-big-x1", "u1", "a100-1"), "u1"),
			"shared":   allocated("shared", "u1", "t4-0", "a100-0"),
		}, []string{"a100-1", "t4-0", "a100-0"}},
		{"template claim of another pod", map[string]*resourcev1.ResourceClaim{
			"p-big-x1": owned(allocated("p-big-x1", "u1", "a100-1"), "u2"),
			"shared":   allocated("shared", "u1", "t4-0"),
		}, nil},
		{"not reserved for the pod", map[string]*resourcev1.ResourceClaim{
			"p-big-x1": owned(allocated("p-big-x1", "u2", "a100-1"), "u1"),
			"shared":   allocated("shared", "u1", "t4-0"),
		}, nil},
		{"not allocated", map[string]*resourcev1.ResourceClaim{
			"p-big-x1": owned(&resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: "p-big-x1", Namespace: "default"}}, "u1"),
			"shared":   allocated("shared", "u1", "t4-0"),
		}, nil},
		{"missing", map[string]*resourcev1.ResourceClaim{
			"p-big-x1": owned(allocated("p-big-x1", "u1", "a100-1"), "u1"),
		}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := dra.PodDevices(pod, func(name string) *resourcev1.ResourceClaim { return tc.claims[name] }, pool, driver, poolName)
			if tc.want == nil {
				if !errors.Is(err, dra.ErrNotAllowed) || got != nil {
					t.Fatalf("PodDevices = %v, %v; want a refusal", got, err)
				}
				t.Log(err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, d := range got {
				names = append(names, d.Device.Name)
				if d.Device.Attributes["productName"].StringValue == nil {
					t.Errorf("%s: no attributes: %+v", d.Device.Name, d)
				}
			}
			if diff := cmp.Diff(tc.want, names); diff != "" {
				t.Errorf("devices (-want +got):\n%s", diff)
			}
			if got[0].PodClaim != "big" || got[0].Claim != "p-big-x1" || got[0].Request != "gpu" {
				t.Errorf("first device: %+v", got[0])
			}
		})
	}
	// A classic request served through a DeviceClass's
	// extendedResourceName: the scheduler's claim, named in the pod's
	// status, counts as one more claim of the pod.
	classic := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "default", UID: "u3"}}
	classic.Status.ExtendedResourceClaimStatus = &corev1.PodExtendedResourceClaimStatus{ResourceClaimName: "c-extended-resources-x"}
	extended := map[string]*resourcev1.ResourceClaim{"c-extended-resources-x": allocated("c-extended-resources-x", "u3", "t4-0")}
	got, err := dra.PodDevices(classic, func(name string) *resourcev1.ResourceClaim { return extended[name] }, pool, driver, poolName)
	if err != nil || len(got) != 1 || got[0].Device.Name != "t4-0" || got[0].PodClaim != "" || got[0].Claim != "c-extended-resources-x" {
		t.Errorf("the scheduler's claim for extended resources: %+v, %v", got, err)
	}
	if _, err := dra.PodDevices(classic, func(string) *resourcev1.ResourceClaim { return nil }, pool, driver, poolName); !errors.Is(err, dra.ErrNotAllowed) {
		t.Errorf("the scheduler's claim missing: %v, want a refusal", err)
	}
	_, err = dra.PodDevices(&corev1.Pod{Spec: corev1.PodSpec{ResourceClaims: []corev1.PodResourceClaim{{Name: "big", ResourceClaimTemplateName: ptr.To("t")}}}},
		func(string) *resourcev1.ResourceClaim { return nil }, pool, driver, poolName)
	if !errors.Is(err, dra.ErrNotAllowed) {
		t.Errorf("a template's claim not made yet: %v, want a refusal", err)
	}
}
