package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/pingnode/pingnode/nodeapply/devicepool"
	"github.com/pingnode/pingnode/pingstatus"
)

// TestDeviceLines: the devices section's lines for pools a provider may
// hand a ping (devices held by claims beside free ones, taints), in the
// names CEL reads, with what the ping changed; independent of what Parse
// accepts.
func TestDeviceLines(t *testing.T) {
	product := "NVIDIA A100-SXM4-80GB"
	a100 := map[string]pingstatus.DeviceAttribute{"productName": {StringValue: &product}}
	memory := map[string]resource.Quantity{"memory": resource.MustParse("80Gi")}
	xid := []pingstatus.DeviceTaint{
		{Key: "gpu.nvidia.com/xid", Value: "79", Effect: pingstatus.DeviceTaintNoExecute},
		{Key: "gpu.nvidia.com/unmonitored", Effect: pingstatus.DeviceTaintNone},
	}
	lost := []pingstatus.DeviceTaint{{Key: "gpu.nvidia.com/gpu-lost", Effect: pingstatus.DeviceTaintNoSchedule}}
	device := func(name string, taints []pingstatus.DeviceTaint) devicepool.Device {
		return devicepool.Device{Name: name, Attributes: a100, Capacity: memory, Taints: taints}
	}
	tests := []struct {
		name          string
		patch         pingstatus.NodePatch
		before, after []devicepool.Device
		want          []string
	}{
		{
			name:  "taints, each with what it does",
			patch: pingstatus.NodePatch{ReplaceDevices: true, Devices: []pingstatus.DeviceGroup{{Name: "a100", Count: 2}, {Name: "bad", Count: 1}}},
			after: []devicepool.Device{device("a100-0", nil), device("a100-1", nil), device("bad-0", xid)},
			want: []string{
				"  a100-0, a100-1: 2 devices, all added",
				"    device.attributes['gpu.nvidia.com'].productName = \"NVIDIA A100-SXM4-80GB\"",
				"    device.capacity['gpu.nvidia.com'].memory = 80Gi",
				"  bad-0: 1 device, added",
				"    device.attributes['gpu.nvidia.com'].productName = \"NVIDIA A100-SXM4-80GB\"",
				"    device.capacity['gpu.nvidia.com'].memory = 80Gi",
				"    taint gpu.nvidia.com/xid=79:NoExecute (not given to a claim that does not tolerate it, and the pods using them are evicted unless their claims tolerate it)",
				"    taint gpu.nvidia.com/unmonitored:None (for people and dashboards: changes nothing)",
			},
		},
		{
			name:   "held devices kept beside the free ones, a taint added to some",
			patch:  pingstatus.NodePatch{ReplaceDevices: true, Devices: []pingstatus.DeviceGroup{{Name: "a100", Count: 1}}},
			before: []devicepool.Device{device("a100-0", nil), device("a100-1", nil), device("a100-5", nil), device("a100-6", nil)},
			after:  []devicepool.Device{device("a100-0", nil), device("a100-1", nil), device("a100-5", lost)},
			want: []string{
				"  a100-0, a100-1: 2 devices",
				"    device.attributes['gpu.nvidia.com'].productName = \"NVIDIA A100-SXM4-80GB\"",
				"    device.capacity['gpu.nvidia.com'].memory = 80Gi",
				"  a100-5: 1 device, changed, removed a100-6",
				"    device.attributes['gpu.nvidia.com'].productName = \"NVIDIA A100-SXM4-80GB\"",
				"    device.capacity['gpu.nvidia.com'].memory = 80Gi",
				"    taint gpu.nvidia.com/gpu-lost:NoSchedule (not given to a claim that does not tolerate it)",
			},
		},
		{
			name:   "refused, its devices kept; refused with none; a total of none",
			patch:  pingstatus.NodePatch{ReplaceDevices: true, Basis: pingstatus.BasisTotal, Devices: []pingstatus.DeviceGroup{{Name: "l4"}}, KeptDeviceGroups: []string{"a100", "h100"}},
			before: []devicepool.Device{device("a100-0", nil)},
			after:  []devicepool.Device{device("a100-0", nil)},
			want: []string{
				"  a100-0: 1 device, kept as published before: the reply's a100 was refused (see warnings)",
				"    device.attributes['gpu.nvidia.com'].productName = \"NVIDIA A100-SXM4-80GB\"",
				"    device.capacity['gpu.nvidia.com'].memory = 80Gi",
				"  h100: refused (see warnings); nothing published for it before, so no h100 devices",
				"  l4: no devices (count 0: the backend gives the node none)",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := deviceLines(&tt.patch, tt.before, tt.after, "gpu.nvidia.com")
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("deviceLines (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCELName: a short name is read in the driver's domain, a name with
// a domain in its own.
func TestCELName(t *testing.T) {
	for _, tt := range []struct{ field, driver, name, want string }{
		{"attributes", "gpu.nvidia.com", "productName", "device.attributes['gpu.nvidia.com'].productName"},
		{"attributes", "gpu.nvidia.com", "example.com/x", "device.attributes['example.com'].x"},
		{"capacity", driverPlaceholder, "memory", "device.capacity['<driver>'].memory"},
		{"capacity", driverPlaceholder, "gpu.nvidia.com/memory", "device.capacity['gpu.nvidia.com'].memory"},
	} {
		if got := celName(tt.field, tt.driver, tt.name); got != tt.want {
			t.Errorf("celName(%q, %q, %q) = %s, want %s", tt.field, tt.driver, tt.name, got, tt.want)
		}
	}
}
