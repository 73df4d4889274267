package nodeapply_test

import (
	"fmt"
	"slices"
	"strings"

	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/pingstatus"
)

// A plugin's GPUs as devices: the pool the provider publishes for its
// node, ping after ping, while claims take devices. Each device keeps its
// name; a held device stays published; the reply's count is of the free
// ones.
func ExampleApply_devices() {
	replies := []string{
		`{"devices":[{"name":"a100","count":3,"attributes":{"productName":{"string":"NVIDIA A100-SXM4-80GB"}},"capacity":{"memory":{"value":"80Gi"}}}]}`,
		`{"devices":[{"name":"a100","count":2,"attributes":{"productName":{"string":"NVIDIA A100-SXM4-80GB"}},"capacity":{"memory":{"value":"80Gi"}}}]}`,
		`{"devices":[]}`,
	}
	var pool []nodeapply.Device // as published; a provider reads it back with nodeapply/dra's Pool
	for i, body := range replies {
		if i == 1 {
			pool[0].Held = true // a claim's allocation names a100-0, and the backend runs its pod
		}
		patch, _ := pingstatus.Parse([]byte(body), pingstatus.Options{})
		res := nodeapply.Apply(nil, nodeapply.Ping{Reply: &patch, Devices: pool}, nodeapply.Options{PublishDevices: true})
		var names []string
		for _, d := range res.Devices {
			names = append(names, d.Name)
		}
		fmt.Printf("ping %d: publish %v: [%s]\n", i+1, res.NeedsDevices(), strings.Join(names, " "))
		pool = slices.Clone(res.Devices) // Result.Devices is read-only
	}
	// Output:
	// ping 1: publish true: [a100-0 a100-1 a100-2]
	// ping 2: publish false: [a100-0 a100-1 a100-2]
	// ping 3: publish true: []
}
