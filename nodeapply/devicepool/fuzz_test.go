package devicepool_test

import (
	"reflect"
	"slices"
	"testing"

	"github.com/pingnode/pingnode/internal/golden"
	"github.com/pingnode/pingnode/internal/kuberules"
	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/nodeapply/devicepool"
	"github.com/pingnode/pingnode/pingstatus"
)

// FuzzApply: bytes to Parse to Apply, on an empty pool and then on the
// pool it gave with some devices held (each bit of held holds a device,
// of running runs its pod), read as the reply says or as a total, never
// panics, never modifies the pool, and yields a pool sorted by Compare,
// each name once and valid, that the same ping again leaves as it is: no
// change, the same list back.
func FuzzApply(f *testing.F) {
	for _, in := range golden.Inputs(f, "../../testdata/replies/*") {
		f.Add(in.Data, uint64(0), uint64(0), false)
	}
	f.Add([]byte(`{"devices":[{"name":"a100","count":3},{"name":"t4","count":2}]}`), uint64(0b101), uint64(0b1), false)
	f.Add([]byte(`{"basis":"total","devices":[{"name":"gpu","count":1}]}`), uint64(0b11), uint64(0b10), true)
	f.Fuzz(func(t *testing.T, body []byte, held, running uint64, total bool) {
		var opts pingstatus.Options
		patch, _ := pingstatus.Parse(body, opts)
		if total {
			patch.Basis = pingstatus.BasisTotal
		}
		ping := nodeapply.Ping{Reply: &patch}
		first := devicepool.Apply(nil, ping, opts)
		pool := slices.Clone(first.Devices)
		for i := range pool {
			pool[i].Held = held>>(i%64)&1 == 1
			pool[i].Running = pool[i].Held && running>>(i%64)&1 == 1
		}
		before := slices.Clone(pool)
		res := devicepool.Apply(pool, ping, opts)
		if !reflect.DeepEqual(before, pool) {
			t.Fatalf("%q: Apply modified the pool", body)
		}
		for i, d := range res.Devices {
			if _, _, ok := kuberules.SplitDeviceName(d.Name); !ok || i > 0 && devicepool.Compare(res.Devices[i-1], d) >= 0 {
				t.Fatalf("%q: pool after not sorted, each name once and valid: %s", body, poolText(res.Devices))
			}
		}
		for _, r := range []devicepool.Result{first, res} {
			again := devicepool.Apply(r.Devices, ping, opts)
			if len(again.Changes) != 0 {
				t.Fatalf("%q: the same ping again changes %v", body, again.Changes)
			}
			if len(again.Devices) != len(r.Devices) || len(r.Devices) > 0 && &again.Devices[0] != &r.Devices[0] {
				t.Fatalf("%q: the same ping again did not give the pool back", body)
			}
		}
	})
}
