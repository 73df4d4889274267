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
// devices is applied already, and that reply: 32 A100s, 4 of them held
// for pods the backend runs and 2 for pods it has not started, and 32
// T4s. Read as available, the reply says 28 A100s free (the 2 not started
// among them: 4 + 28 are published); as a total, 32.
func steadyDevices(t testing.TB, basis pingstatus.Basis) (node *corev1.Node, pool []nodeapply.Device, patch *pingstatus.NodePatch) {
	t.Helper()
	patch = gpuGroups(28, 32)
	if basis == pingstatus.BasisTotal {
		patch = gpuGroups(32, 32)
	}
	patch.Basis = basis
	first := nodeapply.Apply(nil, nodeapply.Ping{Reply: gpuGroups(32, 32)}, nodeapply.Options{PublishDevices: true})
	pool = append([]nodeapply.Device(nil), first.Devices...)
	for i := range 6 {
		pool[i].Held, pool[i].Running = true, i < 4
	}
	res := nodeapply.Apply(first.Node, nodeapply.Ping{Reply: patch, Devices: pool}, nodeapply.Options{PublishDevices: true})
	if len(res.Devices) != 64 || res.NeedsDevices() {
		t.Fatalf("%d devices, changes %v; want the 64 as they were", len(res.Devices), res.DeviceChanges)
	}
	return res.Node, res.Devices, patch
}

// TestSteadyDevicesDoNotAllocate pins down the contract for a steady
// backend with devices, some held for pods the backend runs and some for
// pods it has not started, with either basis: the pool given back as it
// was, no change, no allocation.
func TestSteadyDevicesDoNotAllocate(t *testing.T) {
	for _, basis := range []pingstatus.Basis{"", pingstatus.BasisTotal} {
		node, pool, patch := steadyDevices(t, basis)
		var res nodeapply.Result
		allocs := testing.AllocsPerRun(100, func() {
			res = nodeapply.Apply(node, nodeapply.Ping{Reply: patch, Devices: pool}, nodeapply.Options{PublishDevices: true})
		})
		if allocs != 0 {
			t.Errorf("basis %q: a steady ping with 64 devices allocates %v times, want 0", basis, allocs)
		}
		if res.NeedsDevices() || len(res.Changes) != 0 || len(res.DeviceChanges) != 0 || &res.Devices[0] != &pool[0] {
			t.Errorf("basis %q: a steady ping changed the pool: %v %v", basis, res.Changes, res.DeviceChanges)
		}
	}
}

// BenchmarkDevices measures Apply with 64 devices, 6 of them held (4 for
// pods the backend runs): on a steady pool, read as available and as a
// total, and when one device more is free. The nested module
// nodeapply/dra measures the changed list against a DeepCopy of the
// ResourceSlice it becomes.
//
//	go test ./nodeapply -run '^$' -bench Devices -count 10 > devices.txt
//	benchstat devices.txt
func BenchmarkDevices(b *testing.B) {
	for _, c := range []struct {
		name  string
		basis pingstatus.Basis
	}{{"steady", ""}, {"steady-total", pingstatus.BasisTotal}} {
		node, pool, patch := steadyDevices(b, c.basis)
		b.Run("case="+c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if res := nodeapply.Apply(node, nodeapply.Ping{Reply: patch, Devices: pool}, nodeapply.Options{PublishDevices: true}); res.NeedsDevices() {
					b.Fatal(res.DeviceChanges)
				}
			}
		})
	}
	node, pool, _ := steadyDevices(b, "")
	more := gpuGroups(29, 32)
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
	node, _, patch := steadyDevices(t, "")
	var res nodeapply.Result
	allocs := testing.AllocsPerRun(100, func() {
		res = nodeapply.Apply(node, nodeapply.Ping{Reply: patch}, nodeapply.Options{})
	})
	if allocs != 0 || res.NeedsDevices() || res.Devices != nil || len(res.Changes) != 0 {
		t.Errorf("devices off: %v allocations, pool %v, changes %v %v; want none", allocs, res.Devices, res.Changes, res.DeviceChanges)
	}
}
