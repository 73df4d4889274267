package nodeapply_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/pingstatus"
)

// gpuGroups returns a reply's devices: a A100s and t T4s, described with
// NVIDIA's attribute names.
func gpuGroups(a, t int) *pingstatus.NodePatch {
	s := func(v string) *string { return &v }
	return &pingstatus.NodePatch{Kind: pingstatus.Structured, ReplaceDevices: true, Devices: []pingstatus.DeviceGroup{
		{Name: "a100", Count: a, Attributes: map[string]pingstatus.DeviceAttribute{
			"type": {StringValue: s("gpu")}, "productName": {StringValue: s("NVIDIA A100-SXM4-80GB")},
			"architecture": {StringValue: s("Ampere")}, "cudaComputeCapability": {VersionValue: s("8.0.0")},
			"driverVersion": {VersionValue: s("550.54.15")},
		}, Capacity: map[string]resource.Quantity{"memory": resource.MustParse("80Gi")}},
		{Name: "t4", Count: t, Attributes: map[string]pingstatus.DeviceAttribute{
			"type": {StringValue: s("gpu")}, "productName": {StringValue: s("Tesla T4")},
			"architecture": {StringValue: s("Turing")}, "cudaComputeCapability": {VersionValue: s("7.5.0")},
			"driverVersion": {VersionValue: s("550.54.15")},
		}, Capacity: map[string]resource.Quantity{"memory": resource.MustParse("16Gi")}},
	}}
}

// steadyDevices returns a node and the pool on which a reply of 64
// devices (32 A100s, 4 of them held, and 32 T4s) is applied already, and
// that reply.
func steadyDevices(t testing.TB) (node *corev1.Node, pool []nodeapply.Device, patch *pingstatus.NodePatch) {
	t.Helper()
	patch = gpuGroups(28, 32)
	first := nodeapply.Apply(nil, nodeapply.Ping{Reply: gpuGroups(32, 32)}, nodeapply.Options{PublishDevices: true})
	pool = append([]nodeapply.Device(nil), first.Devices...)
	for i := range 4 {
		pool[i].Held = true
	}
	res := nodeapply.Apply(first.Node, nodeapply.Ping{Reply: patch, Devices: pool}, nodeapply.Options{PublishDevices: true})
	if len(res.Devices) != 64 {
		t.Fatalf("%d devices, want 64", len(res.Devices))
	}
	return res.Node, res.Devices, patch
}

// TestSteadyDevicesDoNotAllocate pins down the contract for a steady
// backend with devices: the pool given back as it was, no change, no
// allocation.
func TestSteadyDevicesDoNotAllocate(t *testing.T) {
	node, pool, patch := steadyDevices(t)
	var res nodeapply.Result
	allocs := testing.AllocsPerRun(100, func() {
		res = nodeapply.Apply(node, nodeapply.Ping{Reply: patch, Devices: pool}, nodeapply.Options{PublishDevices: true})
	})
	if allocs != 0 {
		t.Errorf("a steady ping with 64 devices allocates %v times, want 0", allocs)
	}
	if res.NeedsDevices() || len(res.Changes) != 0 || len(res.DeviceChanges) != 0 || &res.Devices[0] != &pool[0] {
		t.Errorf("a steady ping changed the pool: %v %v", res.Changes, res.DeviceChanges)
	}
}

// BenchmarkDevices measures Apply with 64 devices: on a steady pool, and
// when one device more is free. The nested module nodeapply/dra measures
// the changed list against a DeepCopy of the ResourceSlice it becomes.
//
//	go test ./nodeapply -run '^$' -bench Devices -count 10 > devices.txt
//	benchstat devices.txt
func BenchmarkDevices(b *testing.B) {
	node, pool, patch := steadyDevices(b)
	more := gpuGroups(29, 32)
	b.Run("case=steady", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if res := nodeapply.Apply(node, nodeapply.Ping{Reply: patch, Devices: pool}, nodeapply.Options{PublishDevices: true}); res.NeedsDevices() {
				b.Fatal(res.DeviceChanges)
			}
		}
	})
	b.Run("case=one-more", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if res := nodeapply.Apply(node, nodeapply.Ping{Reply: more, Devices: pool}, nodeapply.Options{PublishDevices: true}); !res.NeedsDevices() {
				b.Fatal("no change")
			}
		}
	})
}

// TestDevicesOffCostNothing pins down that a provider that publishes no
// devices (PublishDevices off, the zero Options) pays nothing for a
// plugin that sends them: no change, no pool, no allocation.
func TestDevicesOffCostNothing(t *testing.T) {
	node, _, patch := steadyDevices(t)
	var res nodeapply.Result
	allocs := testing.AllocsPerRun(100, func() {
		res = nodeapply.Apply(node, nodeapply.Ping{Reply: patch}, nodeapply.Options{})
	})
	if allocs != 0 || res.NeedsDevices() || res.Devices != nil || len(res.Changes) != 0 {
		t.Errorf("devices off: %v allocations, pool %v, changes %v %v; want none", allocs, res.Devices, res.Changes, res.DeviceChanges)
	}
}
