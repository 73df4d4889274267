package dra

import (
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/pingstatus"
)

// Devices returns pool as resource.k8s.io/v1 devices, in its order. Each
// device has maps of its own: nothing of the result shares memory with
// pool.
func Devices(pool []nodeapply.Device) []resourcev1.Device {
	out := make([]resourcev1.Device, len(pool))
	for i := range pool {
		d := &pool[i]
		out[i] = resourcev1.Device{Name: d.Name}
		if len(d.Attributes) > 0 {
			out[i].Attributes = make(map[resourcev1.QualifiedName]resourcev1.DeviceAttribute, len(d.Attributes))
			for name, a := range d.Attributes {
				out[i].Attributes[resourcev1.QualifiedName(name)] = resourcev1.DeviceAttribute{
					IntValue: clone(a.IntValue), BoolValue: clone(a.BoolValue),
					StringValue: clone(a.StringValue), VersionValue: clone(a.VersionValue),
				}
			}
		}
		if len(d.Capacity) > 0 {
			out[i].Capacity = make(map[resourcev1.QualifiedName]resourcev1.DeviceCapacity, len(d.Capacity))
			for name, q := range d.Capacity {
				out[i].Capacity[resourcev1.QualifiedName(name)] = resourcev1.DeviceCapacity{Value: q.DeepCopy()}
			}
		}
	}
	return out
}

func clone[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// Pool returns the node's pool as published, for [nodeapply.Ping.Devices]:
// the devices of the pool named pool of driver in published, from the slices
// of the pool's highest generation (as the scheduler reads a pool), each
// marked held when an allocation of one of claims names it. A device that
// an allocation names but the slices no longer list is in the pool too,
// held, with nothing said of it: the claim still holds it. The result is
// sorted as Apply keeps a pool ([nodeapply.CompareDevices]). Slices of
// other drivers, pools and generations, and results of other drivers and
// pools, are passed over; nil entries too.
//
// pods are the pods bound to the node and at is the time of the ping: a
// held device is [nodeapply.Device.Running] when a pod its claim is
// reserved for is among pods and runs on the backend
// ([nodeapply.RunsOnBackend](pod, at)).
func Pool(published []*resourcev1.ResourceSlice, claims []*resourcev1.ResourceClaim, pods []*corev1.Pod, at time.Time, driver, pool string) []nodeapply.Device {
	generation := int64(-1)
	for _, s := range published {
		if ours(s, driver, pool) {
			generation = max(generation, s.Spec.Pool.Generation)
		}
	}
	var out []nodeapply.Device
	index := map[string]int{}
	for _, s := range published {
		if !ours(s, driver, pool) || s.Spec.Pool.Generation != generation {
			continue
		}
		for _, d := range s.Spec.Devices {
			if _, seen := index[d.Name]; seen {
				continue
			}
			index[d.Name] = len(out)
			out = append(out, device(&d))
		}
	}
	for _, c := range claims {
		if c == nil || c.Status.Allocation == nil {
			continue
		}
		for _, r := range c.Status.Allocation.Devices.Results {
			if r.Driver != driver || r.Pool != pool {
				continue
			}
			if i, ok := index[r.Device]; ok {
				out[i].Held = true
				continue
			}
			index[r.Device] = len(out)
			out = append(out, nodeapply.Device{Name: r.Device, Held: true})
		}
	}
	slices.SortFunc(out, nodeapply.CompareDevices)
	return out
}

func ours(s *resourcev1.ResourceSlice, driver, pool string) bool {
	return s != nil && s.Spec.Driver == driver && s.Spec.Pool.Name == pool
}

// device returns a published device in the library's terms.
func device(d *resourcev1.Device) nodeapply.Device {
	out := nodeapply.Device{Name: d.Name}
	if len(d.Attributes) > 0 {
		out.Attributes = make(map[string]pingstatus.DeviceAttribute, len(d.Attributes))
		for name, a := range d.Attributes {
			out.Attributes[string(name)] = pingstatus.DeviceAttribute{
				IntValue: clone(a.IntValue), BoolValue: clone(a.BoolValue),
				StringValue: clone(a.StringValue), VersionValue: clone(a.VersionValue),
			}
		}
	}
	if len(d.Capacity) > 0 {
		out.Capacity = make(map[string]resource.Quantity, len(d.Capacity))
		for name, c := range d.Capacity {
			out.Capacity[string(name)] = c.Value.DeepCopy()
		}
	}
	return out
}
