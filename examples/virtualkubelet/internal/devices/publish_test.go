package devices

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	resourcev1 "k8s.io/api/resource/v1"
)

// TestDriverResourcesSplit: the pool handed to the ResourceSlice
// controller is one pool, named after the node, split into slices the API
// server takes: at most 128 devices a slice, at most 64 in a pool with a
// tainted device (resource.k8s.io's ResourceSliceMaxDevicesWithAdvancedFeatures:
// the API server refuses a slice of 65 with a taint), in the pool's order;
// a pool with no device is one empty slice.
func TestDriverResourcesSplit(t *testing.T) {
	taint := []resourcev1.DeviceTaint{{Key: "gpu.nvidia.com/xid", Value: "79", Effect: resourcev1.DeviceTaintEffectNoSchedule}}
	devices := func(n int, tainted ...int) []resourcev1.Device {
		out := make([]resourcev1.Device, n)
		for i := range out {
			out[i].Name = fmt.Sprintf("gpu-%d", i)
		}
		for _, i := range tainted {
			out[i].Taints = taint
		}
		return out
	}
	tests := []struct {
		name    string
		devices []resourcev1.Device
		want    []int // devices in each slice
	}{
		{"no device", nil, []int{0}},
		{"one", devices(1), []int{1}},
		{"128, untainted", devices(128), []int{128}},
		{"129, untainted", devices(129), []int{128, 1}},
		{"300, untainted", devices(300), []int{128, 128, 44}},
		{"one, tainted", devices(1, 0), []int{1}},
		{"64, one tainted", devices(64, 63), []int{64}},
		{"65, one tainted", devices(65, 0), []int{64, 1}},
		{"128, the last tainted", devices(128, 127), []int{64, 64}},
		{"200, one tainted", devices(200, 100), []int{64, 64, 64, 8}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := DriverResources("vk-node", tt.devices)
			if len(got.Pools) != 1 {
				t.Fatalf("pools %v, want vk-node alone", got.Pools)
			}
			pool, ok := got.Pools["vk-node"]
			if !ok {
				t.Fatalf("pools %v, want vk-node", got.Pools)
			}
			sizes := make([]int, len(pool.Slices))
			var names []string
			for i, s := range pool.Slices {
				sizes[i] = len(s.Devices)
				for _, d := range s.Devices {
					names = append(names, d.Name)
				}
			}
			if diff := cmp.Diff(tt.want, sizes); diff != "" {
				t.Errorf("devices a slice (-want +got):\n%s", diff)
			}
			var want []string
			for _, d := range tt.devices {
				want = append(want, d.Name)
			}
			if diff := cmp.Diff(want, names); diff != "" {
				t.Errorf("the devices, in order (-want +got):\n%s", diff)
			}
		})
	}
}
