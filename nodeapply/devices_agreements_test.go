package nodeapply

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	"pgregory.net/rapid"

	"github.com/pingnode/pingnode/pingstatus"
)

// drawGroups draws a patch's devices as Parse and CheckDevices give them:
// groups sorted by name and unique, and kept groups sorted, none of them
// listed; names of which one is another's with an index after it, and
// descriptions that are equal by value but spelled otherwise.
func drawGroups(t *rapid.T) ([]pingstatus.DeviceGroup, []string) {
	var groups []pingstatus.DeviceGroup
	var kept []string
	for _, name := range []string{"a", "a-1", "b"} {
		switch rapid.IntRange(0, 4).Draw(t, "group "+name) {
		case 0:
		case 1:
			kept = append(kept, name)
		default:
			product := rapid.SampledFrom([]string{"x", "y"}).Draw(t, "product")
			g := pingstatus.DeviceGroup{
				Name: name, Count: rapid.IntRange(0, 5).Draw(t, "count"),
				Attributes: map[string]pingstatus.DeviceAttribute{"product": {StringValue: &product}},
				Capacity:   map[string]resource.Quantity{"memory": resource.MustParse(rapid.SampledFrom([]string{"1Gi", "1024Mi", "2Gi"}).Draw(t, "memory"))},
			}
			if rapid.Bool().Draw(t, "tainted") {
				g.Taints = []pingstatus.DeviceTaint{{Key: "gpu.nvidia.com/xid", Value: rapid.SampledFrom([]string{"", "79"}).Draw(t, "xid"), Effect: pingstatus.DeviceTaintNoSchedule}}
			}
			groups = append(groups, g)
		}
	}
	return groups, kept
}

// drawPool draws a pool as a provider might hand it over: in any order,
// with names of its groups and others, held or not, described or not,
// sometimes a name twice.
func drawPool(t *rapid.T) []Device {
	names := rapid.SliceOfN(rapid.SampledFrom([]string{
		"a-0", "a-1", "a-2", "a-3", "a-7", "a-1-0", "a-1-1", "b-0", "b-2", "c-0", "a-01", "a", "b-x",
	}), 0, 8).Draw(t, "pool")
	pool := make([]Device, len(names))
	for i, name := range names {
		pool[i] = Device{Name: name, Held: rapid.Bool().Draw(t, "held"), Running: rapid.Bool().Draw(t, "running")}
		if rapid.Bool().Draw(t, "described") {
			product := rapid.SampledFrom([]string{"x", "y"}).Draw(t, "product")
			pool[i].Attributes = map[string]pingstatus.DeviceAttribute{"product": {StringValue: &product}}
			pool[i].Capacity = map[string]resource.Quantity{"memory": resource.MustParse("1Gi")}
		}
	}
	if rapid.Bool().Draw(t, "sorted") {
		slices.SortFunc(pool, CompareDevices)
	}
	return pool
}

// TestPropertyDevicesCheckerAgrees: whenever the checker says the pool is
// as the ping asks, building the pool finds no change; and the pool built
// is one the checker finds unchanged when the same ping comes again.
func TestPropertyDevicesCheckerAgrees(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		patch := &pingstatus.NodePatch{Kind: pingstatus.Structured, ReplaceDevices: true}
		patch.Devices, patch.KeptDeviceGroups = drawGroups(t)
		patch.Basis = rapid.SampledFrom([]pingstatus.Basis{"", pingstatus.BasisTotal}).Draw(t, "basis")
		ping := Ping{Reply: patch, Devices: drawPool(t)}
		check := checkerFor(nil, ping, Options{PublishDevices: true})
		out, changes := check.publishDevices()
		if check.devicesUnchanged() && len(changes) != 0 {
			t.Fatalf("the checker says unchanged, building the pool changes %v", changes)
		}
		again := checkerFor(nil, Ping{Reply: patch, Devices: out}, Options{PublishDevices: true})
		if !again.devicesUnchanged() {
			_, changes := again.publishDevices()
			t.Fatalf("the pool built, %v, is not unchanged for the same ping (changes %v)", out, changes)
		}
	})
}
