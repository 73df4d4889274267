package dra

import (
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"

	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/nodeapply/devicepool"
	"github.com/pingnode/pingnode/pingstatus"
)

// Devices returns pool as resource.k8s.io/v1 devices, in its order, with
// their attributes, capacity and taints. A taint has no TimeAdded: the
// API server sets it when the slice is written, and the resourceslice
// controller keeps the stored one while the taint stays the same. Each
// device has maps and taints of its own: nothing of the result shares
// memory with pool.
func Devices(pool []devicepool.Device) []resourcev1.Device {
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
		if len(d.Taints) > 0 {
			out[i].Taints = make([]resourcev1.DeviceTaint, len(d.Taints))
			for k, t := range d.Taints {
				out[i].Taints[k] = resourcev1.DeviceTaint{Key: t.Key, Value: t.Value, Effect: resourcev1.DeviceTaintEffect(t.Effect)}
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

// Pool returns the node's pool as published, for [devicepool.Apply]:
// the devices of the pool named pool of driver in published, from the slices
// of the pool's highest generation (as the scheduler reads a pool), with
// their attributes, capacity and taints (the time a taint was added, which
// the API server sets, left out), each marked held when an allocation of
// one of claims names it. A device that an allocation names but the slices
// no longer list is in the pool too, held, with nothing said of it: the
// claim still holds it. The result is sorted as Apply keeps a pool
// ([devicepool.Compare]). Slices of other drivers, pools and
// generations, and results of other drivers and pools, are passed over;
// nil entries too.
//
// pods are the pods bound to the node and at is the time of the ping: a
// held device is [devicepool.Device.Running] when its claim's
// status.reservedFor names, by UID, a pod (resource "pods") of pods that
// runs on the backend ([nodeapply.RunsOnBackend](pod, at)). Until then the
// plugin's free count still includes the device, and Apply takes it out
// of a count read as available (devicepool's rule pool-held). A provider passes
// the same pods and time as those it sums [nodeapply.Ping.Held] from.
func Pool(published []*resourcev1.ResourceSlice, claims []*resourcev1.ResourceClaim, pods []*corev1.Pod, at time.Time, driver, pool string) []devicepool.Device {
	generation := int64(-1)
	for _, s := range published {
		if ours(s, driver, pool) {
			generation = max(generation, s.Spec.Pool.Generation)
		}
	}
	var out []devicepool.Device
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
	runs := map[types.UID]bool{}
	for _, p := range pods {
		if nodeapply.RunsOnBackend(p, at) {
			runs[p.UID] = true
		}
	}
	for _, c := range claims {
		if c == nil || c.Status.Allocation == nil {
			continue
		}
		running := slices.ContainsFunc(c.Status.ReservedFor, func(r resourcev1.ResourceClaimConsumerReference) bool {
			return r.APIGroup == "" && r.Resource == "pods" && runs[r.UID]
		})
		for _, r := range c.Status.Allocation.Devices.Results {
			if r.Driver != driver || r.Pool != pool {
				continue
			}
			i, ok := index[r.Device]
			if !ok {
				i = len(out)
				index[r.Device] = i
				out = append(out, devicepool.Device{Name: r.Device})
			}
			out[i].Held = true
			out[i].Running = out[i].Running || running
		}
	}
	slices.SortFunc(out, devicepool.Compare)
	return out
}

func ours(s *resourcev1.ResourceSlice, driver, pool string) bool {
	return s != nil && s.Spec.Driver == driver && s.Spec.Pool.Name == pool
}

// device returns a published device in the library's terms.
func device(d *resourcev1.Device) devicepool.Device {
	out := devicepool.Device{Name: d.Name}
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
	if len(d.Taints) > 0 {
		out.Taints = make([]pingstatus.DeviceTaint, len(d.Taints))
		for k, t := range d.Taints {
			out.Taints[k] = pingstatus.DeviceTaint{Key: t.Key, Value: t.Value, Effect: pingstatus.DeviceTaintEffect(t.Effect)}
		}
	}
	return out
}
