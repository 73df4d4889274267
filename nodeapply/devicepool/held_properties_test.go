package devicepool_test

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	"pgregory.net/rapid"

	"github.com/pingnode/pingnode/internal/kuberules"
	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/nodeapply/devicepool"
	"github.com/pingnode/pingnode/pingstatus"
)

// TestPropertyHeldDevicesPublishedOnce: a device counts once, held or
// free, never both. A backend has some devices in each group;
// ping after ping, claims take published devices for pods the backend has
// not started, those pods start, and pods end with their claims gone.
// Whatever the replies say, each listed group publishes exactly
// max(held, running + count) devices when read as available, max(held,
// count) as a total (checkGroup, with the held ones kept and the free
// ones at the lowest indices). And when the reply says what the backend
// has (available: its devices less those its pods use; a total: all of
// them), the group publishes exactly its devices, group-0 to group-(n-1),
// and a pool that had them stays as it is, claims and pods
// notwithstanding: the scheduler is never offered a device twice.
func TestPropertyHeldDevicesPublishedOnce(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		basis := rapid.SampledFrom([]pingstatus.Basis{"", pingstatus.BasisAvailable, pingstatus.BasisTotal}).Draw(t, "basis")
		groups := []string{"a100", "t4"}
		size := map[string]int{}
		for _, name := range groups {
			size[name] = rapid.IntRange(0, 6).Draw(t, "devices of "+name)
		}
		var pool []devicepool.Device
		for step := range rapid.IntRange(1, 8).Draw(t, "steps") {
			next := slices.Clone(pool)
			for i := range next {
				d := &next[i]
				switch rapid.IntRange(0, 5).Draw(t, "event "+d.Name) {
				case 1: // a claim for a pod not started
					d.Held = true
				case 2: // its pod starts
					d.Running = d.Held
				case 3: // the pod ends, its claim goes
					d.Held, d.Running = false, false
				}
			}
			truthful := step == 0 || rapid.IntRange(0, 2).Draw(t, "truthful") > 0
			patch := &pingstatus.NodePatch{Kind: pingstatus.Structured, Basis: basis, ReplaceDevices: true}
			for _, name := range groups {
				count := rapid.IntRange(0, 8).Draw(t, "count "+name)
				if truthful {
					count = size[name]
					if basis != pingstatus.BasisTotal {
						count = max(count-runningCount(group(next, name)), 0)
					}
				}
				patch.Devices = append(patch.Devices, pingstatus.DeviceGroup{
					Name: name, Count: count,
					Attributes: map[string]pingstatus.DeviceAttribute{"productName": {StringValue: &name}},
					Capacity:   map[string]resource.Quantity{"memory": resource.MustParse("40Gi")},
				})
			}
			res := apply(next, patch)
			for i, name := range groups {
				before, after := group(next, name), group(res.Devices, name)
				checkGroup(t, patch.Devices[i], basis, before, after)
				if !truthful || slices.ContainsFunc(before, func(d devicepool.Device) bool { return d.Held && indexOf(d.Name) >= size[name] }) {
					continue // a claim holds a device the backend does not say it has
				}
				want := make([]string, size[name])
				for k := range want {
					want[k] = kuberules.DeviceName(name, k)
				}
				got := deviceNames(after)
				if !slices.Equal(want, got) {
					t.Fatalf("step %d: group %s of %d devices publishes %v (the pool was %v)", step, name, size[name], names(after), names(before))
				}
				if slices.Equal(want, deviceNames(before)) && slices.ContainsFunc(res.Changes, func(c nodeapply.Change) bool {
					g, _, _ := kuberules.SplitDeviceName(c.Path[len("devices[") : len(c.Path)-1])
					return g == name
				}) {
					t.Fatalf("step %d: group %s had its %d devices, and changed: %v", step, name, size[name], res.Changes)
				}
			}
			pool = slices.Clone(res.Devices)
		}
	})
}

// runningCount counts the devices of pool held for pods the backend runs.
func runningCount(pool []devicepool.Device) int {
	n := 0
	for _, d := range pool {
		if d.Held && d.Running {
			n++
		}
	}
	return n
}

func deviceNames(pool []devicepool.Device) []string {
	out := make([]string, len(pool))
	for i, d := range pool {
		out[i] = d.Name
	}
	return out
}

func indexOf(name string) int {
	_, index, _ := kuberules.SplitDeviceName(name)
	return index
}
