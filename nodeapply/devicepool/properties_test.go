package devicepool_test

import (
	"slices"
	"strconv"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	"pgregory.net/rapid"

	"github.com/pingnode/pingnode/internal/kuberules"
	"github.com/pingnode/pingnode/nodeapply/devicepool"
	"github.com/pingnode/pingnode/pingstatus"
)

// deviceGroupNames are the groups a generated reply draws from: few, so
// that replies in a row list the same groups again, and one name that is
// another's with an index after it.
var deviceGroupNames = []string{"a100", "a100-1", "t4", "h100"}

// devicePatchGen draws a reply's devices as Parse gives them: groups
// sorted by name, unique, some kept for a refused entry, each with a
// count and a description that varies a little.
func devicePatchGen() *rapid.Generator[*pingstatus.NodePatch] {
	return rapid.Custom(func(t *rapid.T) *pingstatus.NodePatch {
		patch := &pingstatus.NodePatch{Kind: pingstatus.Structured}
		patch.ReplaceDevices = rapid.IntRange(0, 5).Draw(t, "replace") > 0
		patch.Basis = rapid.SampledFrom([]pingstatus.Basis{"", pingstatus.BasisAvailable, pingstatus.BasisTotal}).Draw(t, "basis")
		if !patch.ReplaceDevices {
			return patch
		}
		for _, name := range slices.Sorted(slices.Values(deviceGroupNames)) {
			switch rapid.IntRange(0, 4).Draw(t, "group "+name) {
			case 0: // not listed
			case 1:
				patch.KeptDeviceGroups = append(patch.KeptDeviceGroups, name)
			default:
				memory := rapid.SampledFrom([]string{"16Gi", "40Gi", "80Gi"}).Draw(t, "memory")
				product := rapid.SampledFrom([]string{"A", "B"}).Draw(t, "product")
				patch.Devices = append(patch.Devices, pingstatus.DeviceGroup{
					Name:       name,
					Count:      rapid.IntRange(0, 12).Draw(t, "count"),
					Attributes: map[string]pingstatus.DeviceAttribute{"productName": {StringValue: &product}},
					Capacity:   map[string]resource.Quantity{"memory": resource.MustParse(memory)},
				})
			}
		}
		return patch
	})
}

// holdSome marks some devices of pool held, as claims' allocations would,
// some of those for pods the backend runs, and adds a held device that
// left the pool: a claim still names it.
func holdSome(t *rapid.T, pool []devicepool.Device) []devicepool.Device {
	out := make([]devicepool.Device, len(pool))
	for i, d := range pool {
		d.Held = rapid.IntRange(0, 3).Draw(t, "held "+d.Name) == 0
		d.Running = d.Held && rapid.Bool().Draw(t, "running "+d.Name)
		out[i] = d
	}
	if rapid.IntRange(0, 5).Draw(t, "held outside") == 0 {
		name := kuberules.DeviceName(rapid.SampledFrom(deviceGroupNames).Draw(t, "group"), rapid.IntRange(0, 20).Draw(t, "index"))
		if !slices.ContainsFunc(out, func(d devicepool.Device) bool { return d.Name == name }) {
			out = append(out, devicepool.Device{Name: name, Held: true, Running: rapid.Bool().Draw(t, "running outside")})
			slices.SortFunc(out, func(a, b devicepool.Device) int { return compareDevices(a.Name, b.Name) })
		}
	}
	return out
}

func compareDevices(a, b string) int {
	ga, ia, _ := kuberules.SplitDeviceName(a)
	gb, ib, _ := kuberules.SplitDeviceName(b)
	if ga != gb {
		if ga < gb {
			return -1
		}
		return 1
	}
	return ia - ib
}

// group returns the devices of pool in group name.
func group(pool []devicepool.Device, name string) []devicepool.Device {
	var out []devicepool.Device
	for _, d := range pool {
		if g, _, _ := kuberules.SplitDeviceName(d.Name); g == name {
			out = append(out, d)
		}
	}
	return out
}

// TestPropertyDevices: over any run of replies and claims, the pool
// Apply publishes keeps every held device while its group is listed,
// has exactly the reply's count of free devices less the held ones that
// the count includes (read as available, those whose pod the backend does
// not run yet; as a total, all), never below zero, those with the lowest
// indices;
// keeps a kept group's devices as they are; is sorted by group and index
// with unique, valid names, each device described by its group; and the
// same ping again on the pool it gave changes nothing and allocates
// nothing.
func TestPropertyDevices(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var pool []devicepool.Device
		for step := range rapid.IntRange(1, 6).Draw(t, "steps") {
			pool = holdSome(t, pool)
			patch := devicePatchGen().Draw(t, "patch "+strconv.Itoa(step))
			poolBefore := slices.Clone(pool)
			res := apply(pool, patch)
			out := res.Devices
			if !slices.EqualFunc(poolBefore, pool, func(a, b devicepool.Device) bool { return a.Name == b.Name && a.Held == b.Held }) {
				t.Fatalf("Apply modified the pool it was given: %v, was %v", names(pool), names(poolBefore))
			}

			if !patch.ReplaceDevices {
				if len(res.Changes) != 0 || len(res.Warnings) != 0 {
					t.Fatalf("no devices in the reply, but the pool changed: %v %v", res.Changes, res.Warnings)
				}
				if len(pool) > 0 && &res.Devices[0] != &pool[0] {
					t.Fatal("no devices in the reply, but the pool is not the one given")
				}
				continue
			}
			if !slices.IsSortedFunc(out, func(a, b devicepool.Device) int { return compareDevices(a.Name, b.Name) }) {
				t.Fatalf("pool not sorted: %v", names(out))
			}
			for i, d := range out {
				if kuberules.LengthProblem(d.Name, kuberules.MaxDeviceNameBytes) != "" {
					t.Fatalf("device name %q too long", d.Name)
				}
				if i > 0 && out[i-1].Name == d.Name {
					t.Fatalf("device %s twice", d.Name)
				}
			}
			for _, name := range deviceGroupNames {
				before, after := group(pool, name), group(out, name)
				i, listed := slices.BinarySearchFunc(patch.Devices, name, func(g pingstatus.DeviceGroup, n string) int {
					return compareNames(g.Name, n)
				})
				switch {
				case slices.Contains(patch.KeptDeviceGroups, name):
					if !slices.EqualFunc(before, after, func(a, b devicepool.Device) bool { return a.Name == b.Name }) {
						t.Fatalf("kept group %s changed: %v -> %v", name, names(before), names(after))
					}
				case !listed:
					if len(after) != 0 {
						t.Fatalf("group %s not listed, but published: %v", name, names(after))
					}
				default:
					g := patch.Devices[i]
					checkGroup(t, g, patch.Basis, before, after)
				}
			}

			// The same ping on the pool it gave: nothing changes, and
			// nothing allocates for a patch judged already.
			judged, _ := pingstatus.Options{}.Check(patch)
			var again devicepool.Result
			if allocs := testing.AllocsPerRun(1, func() { again = apply(out, judged) }); allocs != 0 {
				t.Fatalf("the same ping again allocates %v times", allocs)
			}
			if len(again.Changes) != 0 {
				t.Fatalf("the same ping again changed the pool: %v", again.Changes)
			}
			if len(out) > 0 && &again.Devices[0] != &out[0] {
				t.Fatal("the same ping again did not return the pool it was given")
			}
			pool = out
		}
	})
}

func compareNames(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// checkGroup checks the devices of one listed group after a ping.
func checkGroup(t *rapid.T, g pingstatus.DeviceGroup, basis pingstatus.Basis, before, after []devicepool.Device) {
	held, running := 0, 0
	for _, d := range before {
		if !d.Held {
			continue
		}
		held++
		if d.Running {
			running++
		}
		if !slices.ContainsFunc(after, func(a devicepool.Device) bool { return a.Name == d.Name && a.Held }) {
			t.Fatalf("held device %s dropped while group %s is listed", d.Name, g.Name)
		}
	}
	want := max(held, running+g.Count) - held // the free devices of max(held, running + count) published
	if basis == pingstatus.BasisTotal {
		want = max(held, g.Count) - held
	}
	var free []int
	for _, d := range after {
		_, index, _ := kuberules.SplitDeviceName(d.Name)
		if !d.Held {
			free = append(free, index)
		}
		memory := d.Capacity["memory"]
		if *d.Attributes["productName"].StringValue != *g.Attributes["productName"].StringValue || memory.Cmp(g.Capacity["memory"]) != 0 {
			t.Fatalf("device %s is not as its group says", d.Name)
		}
	}
	if len(free) != want {
		t.Fatalf("group %s: %d free devices published, want %d (count %d, %d held, %d of them running, basis %q)", g.Name, len(free), want, g.Count, held, running, basis)
	}
	// The free ones are the lowest indices no claim holds.
	next := 0
	for _, index := range free {
		for ; next < index; next++ {
			if !slices.ContainsFunc(before, func(d devicepool.Device) bool { return d.Held && d.Name == kuberules.DeviceName(g.Name, next) }) {
				t.Fatalf("group %s: free index %d published, but %d is free and not", g.Name, index, next)
			}
		}
		next = index + 1
	}
}

func names(pool []devicepool.Device) []string {
	out := make([]string, len(pool))
	for i, d := range pool {
		out[i] = d.Name
		switch {
		case d.Held && d.Running:
			out[i] += "(held, running)"
		case d.Held:
			out[i] += "(held)"
		}
	}
	return out
}

// TestPropertyDeviceNamesStable: a device keeps its name from one reply to
// the next. While claims take devices and the plugin's counts do not fall
// (the reply says as many free devices as before, or more), every device
// published stays published under its name, the held ones and the free
// ones alike, with either basis: a claim never finds its device renamed,
// and the free devices do not move to other names under it.
func TestPropertyDeviceNamesStable(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		patch := devicePatchGen().Draw(t, "first")
		patch.ReplaceDevices = true
		pool := apply(holdSome(t, nil), patch).Devices
		for range rapid.IntRange(1, 5).Draw(t, "steps") {
			taken := slices.Clone(pool)
			for i := range taken {
				taken[i].Held = taken[i].Held || rapid.IntRange(0, 3).Draw(t, "claim "+taken[i].Name) == 0
			}
			next := *patch
			next.Devices = slices.Clone(patch.Devices)
			for i := range next.Devices {
				next.Devices[i].Count += rapid.IntRange(0, 3).Draw(t, "more "+next.Devices[i].Name)
			}
			out := apply(taken, &next).Devices
			for _, d := range taken {
				g, _, _ := kuberules.SplitDeviceName(d.Name)
				if slices.Contains(next.KeptDeviceGroups, g) || slices.ContainsFunc(next.Devices, func(x pingstatus.DeviceGroup) bool { return x.Name == g }) {
					if !slices.ContainsFunc(out, func(a devicepool.Device) bool { return a.Name == d.Name }) {
						t.Fatalf("%s was published and its group's count did not fall, but it is gone: %v -> %v", d.Name, names(taken), names(out))
					}
				}
			}
			pool, patch = out, &next
		}
	})
}
