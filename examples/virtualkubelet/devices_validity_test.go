package main

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/devices"
	"github.com/pingnode/pingnode/internal/gen"
	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/nodeapply/devicepool"
	"github.com/pingnode/pingnode/nodeapply/dra"
	"github.com/pingnode/pingnode/pingstatus"
)

// TestDevicesValidity: every pool that Parse and Apply make of a reply is
// taken by the real API server. It draws 400 replies (fixed seeds): half
// adversarial (gen.ReplyBody: device lists with every kind of mistake,
// among the other fields' mistakes), half lists of valid groups
// (gen.DeviceGroups: names and attribute names up to the longest, 32
// attributes and capacities, counts up to the limit); parses each, applies
// the pool's step (devicepool.Apply), turns the pool into resource.k8s.io/v1 devices
// (dra.Devices), splits them as the provider does (devices.DriverResources),
// and creates each slice with dryRun=All, as the administrator. None may be
// refused.
func TestDevicesValidity(t *testing.T) {
	needsControlPlane(t)
	const replies, driver, node = 400, "valid.gpu.pingnode.example.com", "vk-dra-valid"
	var opts pingstatus.Options
	var pools, sent, sentDevices, refused atomic.Int64
	start := time.Now()
	seeds := make(chan int)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for seed := range seeds {
				body := gen.ReplyBody().Example(seed)
				if seed%2 == 1 {
					b, err := json.Marshal(map[string]any{"devices": gen.DeviceGroups(6).Example(seed)})
					if err != nil {
						t.Error(err)
						continue
					}
					body = b
				}
				patch, _ := pingstatus.Parse(body, opts)
				if !patch.ReplaceDevices {
					continue // no devices to publish
				}
				pools.Add(1)
				res := devicepool.Apply(nil, nodeapply.Ping{Reply: &patch}, opts)
				resources := devices.DriverResources(node, dra.Devices(res.Devices))
				slices := resources.Pools[node].Slices
				for _, s := range slices {
					slice := &resourcev1.ResourceSlice{
						ObjectMeta: metav1.ObjectMeta{GenerateName: node + "-"},
						Spec: resourcev1.ResourceSliceSpec{
							Driver: driver, NodeName: new(node),
							Pool:    resourcev1.ResourcePool{Name: node, Generation: 1, ResourceSliceCount: int64(len(slices))},
							Devices: s.Devices,
						},
					}
					sent.Add(1)
					sentDevices.Add(int64(len(s.Devices)))
					_, err := client.ResourceV1().ResourceSlices().Create(context.Background(), slice, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
					if err != nil && refused.Add(1) <= 5 {
						t.Errorf("seed %d: %s: a slice of %d devices refused: %v", seed, body, len(s.Devices), err)
					}
				}
			}
		})
	}
	for seed := range replies {
		seeds <- seed
	}
	close(seeds)
	wg.Wait()
	t.Logf("%d replies, %d with devices: %d slices of %d devices created with dryRun=All in %s, %d refused",
		replies, pools.Load(), sent.Load(), sentDevices.Load(), time.Since(start).Round(time.Millisecond), refused.Load())
	if refused.Load() != 0 {
		t.Errorf("the API server refused %d of %d slices", refused.Load(), sent.Load())
	}
	if pools.Load() < replies/2 || sentDevices.Load() < replies {
		t.Errorf("only %d replies with devices, %d devices: the test proves little", pools.Load(), sentDevices.Load())
	}
}
