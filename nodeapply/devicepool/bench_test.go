package devicepool_test

import (
	"testing"

	"github.com/pingnode/pingnode/nodeapply/devicepool"
	"github.com/pingnode/pingnode/pingstatus"
)

// steadyDevices returns the pool on which a reply of 64 devices is
// applied already, and that reply: 32 A100s, 4 of them held for pods the
// backend runs and 2 for pods it has not started, and 32 T4s. Read as
// available, the reply says 28 A100s free (the 2 not started among them:
// 4 + 28 are published); as a total, 32.
func steadyDevices(t testing.TB, basis pingstatus.Basis) (pool []devicepool.Device, patch *pingstatus.NodePatch) {
	t.Helper()
	patch = gpuGroups(28, 32)
	if basis == pingstatus.BasisTotal {
		patch = gpuGroups(32, 32)
	}
	patch.Basis = basis
	first := apply(nil, gpuGroups(32, 32))
	pool = append([]devicepool.Device(nil), first.Devices...)
	for i := range 6 {
		pool[i].Held, pool[i].Running = true, i < 4
	}
	patch, _ = pingstatus.Options{}.Check(patch) // judged once, as Parse's reply is
	res := apply(pool, patch)
	if len(res.Devices) != 64 || len(res.Changes) > 0 {
		t.Fatalf("%d devices, changes %v; want the 64 as they were", len(res.Devices), res.Changes)
	}
	return res.Devices, patch
}

// TestSteadyDevicesDoNotAllocate pins down the contract for a steady
// backend with devices, some held for pods the backend runs and some for
// pods it has not started, with either basis: the pool given back as it
// was, no change, no allocation (rule pool-engine).
func TestSteadyDevicesDoNotAllocate(t *testing.T) {
	for _, basis := range []pingstatus.Basis{"", pingstatus.BasisTotal} {
		pool, patch := steadyDevices(t, basis)
		var res devicepool.Result
		allocs := testing.AllocsPerRun(100, func() {
			res = apply(pool, patch)
		})
		if allocs != 0 {
			t.Errorf("basis %q: a steady ping with 64 devices allocates %v times, want 0", basis, allocs)
		}
		if len(res.Changes) != 0 || len(res.Warnings) != 0 || len(res.Devices) != len(pool) || &res.Devices[0] != &pool[0] {
			t.Errorf("basis %q: a steady ping changed the pool: %v %v", basis, res.Changes, res.Warnings)
		}
	}
}

// BenchmarkDevices measures Apply with 64 devices, 6 of them held (4 for
// pods the backend runs): on a steady pool, read as available and as a
// total, and when one device more is free. The nested module
// nodeapply/dra measures the changed list against a DeepCopy of the
// ResourceSlice it becomes.
//
//	go test ./nodeapply/devicepool -run '^$' -bench Devices -count 10 > devices.txt
//	benchstat devices.txt
func BenchmarkDevices(b *testing.B) {
	for _, c := range []struct {
		name  string
		basis pingstatus.Basis
	}{{"steady", ""}, {"steady-total", pingstatus.BasisTotal}} {
		pool, patch := steadyDevices(b, c.basis)
		b.Run("case="+c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if res := apply(pool, patch); len(res.Changes) > 0 {
					b.Fatal(res.Changes)
				}
			}
		})
	}
	pool, _ := steadyDevices(b, "")
	more := gpuGroups(29, 32)
	b.Run("case=one-more", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if res := apply(pool, more); len(res.Changes) == 0 {
				b.Fatal("no change")
			}
		}
	})
}
