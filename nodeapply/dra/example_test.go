package dra_test

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/nodeapply/devicepool"
	"github.com/pingnode/pingnode/nodeapply/dra"
	"github.com/pingnode/pingnode/pingstatus"
)

// One ping of a provider that publishes its node's devices: the pool read
// back from the node's ResourceSlices, the claims and the node's pods,
// Apply, and the devices of the ResourceSlices to write when the pool
// changed.
func ExampleDevices() {
	published := []*resourcev1.ResourceSlice{} // the node's slices, from an informer
	claims := []*resourcev1.ResourceClaim{}    // the claims, from an informer
	pods := []*corev1.Pod{}                    // the pods bound to the node, from an informer
	at := time.Now()                           // when the ping was made
	pool := dra.Pool(published, claims, pods, at, "gpu.nvidia.com", "vk-0")

	body := `{"devices":[{"name":"a100","count":2,"attributes":{"type":{"string":"gpu"}},"capacity":{"memory":{"value":"80Gi"}}}]}`
	patch, _ := pingstatus.Parse([]byte(body), pingstatus.Options{})
	res := devicepool.Apply(pool, nodeapply.Ping{Reply: &patch, At: at}, pingstatus.Options{})
	if len(res.Changes) > 0 {
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

// A claim's device, read back while the backend has not started the pod
// the claim is reserved for, then once it runs the pod: held, then held
// and running. The plugin's free count includes the device until the pod
// runs (2, then 1), and the node's two GPUs stay two devices throughout.
func ExamplePool() {
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC) // when the ping was made
	published := []*resourcev1.ResourceSlice{{Spec: resourcev1.ResourceSliceSpec{
		Driver: "gpu.nvidia.com", NodeName: ptr.To("vk-0"),
		Pool:    resourcev1.ResourcePool{Name: "vk-0", Generation: 1, ResourceSliceCount: 1},
		Devices: []resourcev1.Device{{Name: "a100-0"}, {Name: "a100-1"}},
	}}}
	claim := &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: "train-gpu", Namespace: "default"}}
	claim.Status.Allocation = &resourcev1.AllocationResult{Devices: resourcev1.DeviceAllocationResult{Results: []resourcev1.DeviceRequestAllocationResult{
		{Request: "gpu", Driver: "gpu.nvidia.com", Pool: "vk-0", Device: "a100-0"},
	}}}
	claim.Status.ReservedFor = []resourcev1.ResourceClaimConsumerReference{{Resource: "pods", Name: "train", UID: "u1"}}
	train := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "train", Namespace: "default", UID: "u1"}}

	for _, free := range []int{2, 1} {
		if free == 1 { // the backend started the pod a minute before the ping
			train.Status.Phase, train.Status.StartTime = corev1.PodRunning, &metav1.Time{Time: at.Add(-time.Minute)}
		} else {
			train.Status.Phase = corev1.PodPending
		}
		pool := dra.Pool(published, []*resourcev1.ResourceClaim{claim}, []*corev1.Pod{train}, at, "gpu.nvidia.com", "vk-0")
		reply := &pingstatus.NodePatch{ReplaceDevices: true, Devices: []pingstatus.DeviceGroup{{Name: "a100", Count: free}}}
		res := devicepool.Apply(pool, nodeapply.Ping{Reply: reply, At: at}, pingstatus.Options{})
		fmt.Printf("pod %s: a100-0 held %v, running %v; %d free: %d devices published\n",
			train.Status.Phase, pool[0].Held, pool[0].Running, free, len(res.Devices))
	}
	// Output:
	// pod Pending: a100-0 held true, running false; 2 free: 2 devices published
	// pod Running: a100-0 held true, running true; 1 free: 2 devices published
}
