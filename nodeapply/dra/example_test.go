package dra_test

import (
	"time"

	"fmt"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/nodeapply/dra"
	"github.com/pingnode/pingnode/pingstatus"
)

// One ping of a provider that publishes its node's devices: the pool read
// back from the node's ResourceSlices and the claims, Apply, and the
// devices of the ResourceSlices to write when the pool changed.
func ExampleDevices() {
	published := []*resourcev1.ResourceSlice{} // the node's slices, from an informer
	claims := []*resourcev1.ResourceClaim{}    // the claims, from an informer
	pool := dra.Pool(published, claims, nil, time.Time{}, "gpu.nvidia.com", "vk-0")

	body := `{"devices":[{"name":"a100","count":2,"attributes":{"type":{"string":"gpu"}},"capacity":{"memory":{"value":"80Gi"}}}]}`
	patch, _ := pingstatus.Parse([]byte(body), pingstatus.Options{})
	res := nodeapply.Apply(nil, nodeapply.Ping{Reply: &patch, Devices: pool}, nodeapply.Options{PublishDevices: true})
	if res.NeedsDevices() {
		slice := resourcev1.ResourceSlice{
			ObjectMeta: metav1.ObjectMeta{GenerateName: "vk-0-gpu.nvidia.com-"},
			Spec: resourcev1.ResourceSliceSpec{
				Driver: "gpu.nvidia.com", NodeName: ptr.To("vk-0"),
				Pool:    resourcev1.ResourcePool{Name: "vk-0", ResourceSliceCount: 1},
				Devices: dra.Devices(res.Devices),
			},
		}
		for _, d := range slice.Spec.Devices {
			memory := d.Capacity["memory"].Value
			fmt.Println(d.Name, *d.Attributes["type"].StringValue, memory.String())
		}
	}
	// Output:
	// a100-0 gpu 80Gi
	// a100-1 gpu 80Gi
}
