package devicepool_test

import (
	"fmt"
	"slices"
	"strings"

	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/nodeapply/devicepool"
	"github.com/pingnode/pingnode/pingstatus"
)

// A plugin's GPUs as devices: the pool the provider publishes for its
// node, ping after ping, while a claim takes a device and its pod starts.
// Each device keeps its name; a held device stays published; the reply's
// count is of the free ones, and a device held for a pod the backend has
// not started yet is still among them, so it is not published twice.
// The provider calls nodeapply.Apply with the same ping for the node.
func ExampleApply() {
	a100 := func(free int) string {
		return fmt.Sprintf(`{"devices":[{"name":"a100","count":%d,"attributes":{"productName":{"string":"NVIDIA A100-SXM4-80GB"}},"capacity":{"memory":{"value":"80Gi"}}}]}`, free)
	}
	replies := []string{a100(3), a100(3), a100(2), `{"devices":[]}`}
	var opts pingstatus.Options  // the options the replies are parsed with
	var pool []devicepool.Device // as published; a provider reads it back with nodeapply/dra's Pool
	for i, body := range replies {
		switch i {
		case 1:
			pool[0].Held = true // a claim's allocation names a100-0; the backend has not started its pod
		case 2:
			pool[0].Running = true // the backend runs the pod: its free count falls to 2
		}
		patch, _ := pingstatus.Parse([]byte(body), opts)
		res := devicepool.Apply(pool, nodeapply.Ping{Reply: &patch}, opts)
		var names []string
		for _, d := range res.Devices {
			names = append(names, d.Name)
		}
		fmt.Printf("ping %d: publish %v: [%s]\n", i+1, len(res.Changes) > 0, strings.Join(names, " "))
		pool = slices.Clone(res.Devices) // Result.Devices is read-only
	}
	// Output:
	// ping 1: publish true: [a100-0 a100-1 a100-2]
	// ping 2: publish false: [a100-0 a100-1 a100-2]
	// ping 3: publish false: [a100-0 a100-1 a100-2]
	// ping 4: publish true: []
}
