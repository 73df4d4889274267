package dra_test

import (
	"testing"

	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/nodeapply/devicepool"
	"github.com/pingnode/pingnode/nodeapply/dra"
	"github.com/pingnode/pingnode/pingstatus"
)

// BenchmarkChangedDevices measures what a changed device list costs a
// provider, 64 devices of which one more is free: Apply, and Apply with
// the conversion to resource.k8s.io/v1 devices, beside a DeepCopy of the
// ResourceSlice that holds them, in the same run. For the ratios:
//
//	go test -run '^$' -bench ChangedDevices -count 10 > changed.txt
//	benchstat -col /op changed.txt
func BenchmarkChangedDevices(b *testing.B) {
	pool := devicepool.Apply(nil, nodeapply.Ping{Reply: gpus(32, 32)}, pingstatus.Options{}).Devices
	more := gpus(33, 32)
	s := slice(1, dra.Devices(pool))
	b.Run("op=apply", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if len(devicepool.Apply(pool, nodeapply.Ping{Reply: more}, pingstatus.Options{}).Changes) == 0 {
				b.Fatal("no change")
			}
		}
	})
	b.Run("op=apply+convert", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			res := devicepool.Apply(pool, nodeapply.Ping{Reply: more}, pingstatus.Options{})
			if len(dra.Devices(res.Devices)) != 65 {
				b.Fatal("not 65 devices")
			}
		}
	})
	b.Run("op=deepcopy", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if len(s.DeepCopy().Spec.Devices) != 64 {
				b.Fatal("not 64 devices")
			}
		}
	})
}
