package confirm_test

import (
	"fmt"
	"testing"

	resourcev1 "k8s.io/api/resource/v1"

	"github.com/pingnode/pingnode/nodeapply/dra/confirm"
)

// BenchmarkNothingPending is a provider's step at 5,000 parts with
// confirmation on and no pod waiting: the allocations read from 5,000
// claims of the plugin's devices, none a confirmation, and a step with no
// allocation and no job. It allocates nothing.
func BenchmarkNothingPending(b *testing.B) {
	claims := make([]*resourcev1.ResourceClaim, 5000)
	for i := range claims {
		claims[i] = &resourcev1.ResourceClaim{Status: resourcev1.ResourceClaimStatus{Allocation: &resourcev1.AllocationResult{
			Devices: resourcev1.DeviceAllocationResult{Results: []resourcev1.DeviceRequestAllocationResult{
				{Driver: driver, Pool: fmt.Sprintf("cn%04d", i), Device: "gpu-0"},
			}},
		}}}
	}
	b.ReportAllocs()
	for b.Loop() {
		a := confirm.Allocations(claims, driver)
		res := confirm.Step(a, nil, nil, seconds(0), confirm.Options{})
		if len(res.Decisions)+len(res.Start)+len(res.Remove) != 0 {
			b.Fatal(res)
		}
	}
}
