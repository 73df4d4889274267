package devicepool

import (
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/pingnode/pingnode/internal/kuberules"
	"github.com/pingnode/pingnode/pingstatus"
)

// Device is one device of a node's pool, the devices a provider publishes
// for its node (as Dynamic Resource Allocation devices in ResourceSlices,
// by the nested module nodeapply/dra). Its name is its group's and an
// index, group-index (see [pingstatus.DeviceGroup]).
type Device struct {
	// Name is the device's name in its pool: "a100-3".
	Name string `json:"name"`
	// Held reports whether a claim's allocation names the device: a pod
	// was given it, or will be.
	Held bool `json:"held,omitempty"`
	// Running reports, for a held device, whether the backend already
	// runs a pod that the claim is reserved for
	// ([nodeapply.RunsOnBackend]): the backend's free count then no
	// longer includes the device. A held device of a pod the backend has
	// not started yet is still in the free count of a reply read as
	// available, and comes out of it (rule pool-held). Running without Held
	// means nothing.
	Running bool `json:"running,omitempty"`
	// Attributes and Capacity are what the device is, as its group says.
	// Read-only: the devices of a group share the group's maps.
	Attributes map[string]pingstatus.DeviceAttribute `json:"attributes,omitempty"`
	Capacity   map[string]resource.Quantity          `json:"capacity,omitempty"`
	// Taints are the device's taints, as its group says, in its order.
	// Read-only, as Attributes.
	Taints []pingstatus.DeviceTaint `json:"taints,omitempty"`
}

// Compare orders devices as [Result.Devices] keeps them: by group, then
// index; it returns a negative number, zero or a positive number as a
// comes before b, with b, or after it. A provider that reads its pool back
// from the API server sorts it so (slices.SortFunc(pool, Compare)), for a
// steady ping to find it as it left it and allocate nothing.
func Compare(a, b Device) int {
	ga, ia, _ := kuberules.SplitDeviceName(a.Name)
	gb, ib, _ := kuberules.SplitDeviceName(b.Name)
	if c := strings.Compare(ga, gb); c != 0 {
		return c
	}
	if ia != ib {
		return ia - ib
	}
	return strings.Compare(a.Name, b.Name)
}

// Equal reports whether two pools list the same devices in the same
// order, each described the same (attributes, capacity by value, and
// taints in order); whether a claim holds one, or its pod runs, is not
// published, and does not count.
func Equal(a, b []Device) bool {
	return slices.EqualFunc(a, b, func(x, y Device) bool { return same(&x, &y) })
}

// same reports whether two devices are published the same: the same
// name, attributes, capacity by value, and taints in the same order.
func same(a, b *Device) bool { return a.Name == b.Name && sameDescription(a, b) }

// sameDescription reports whether two devices are described the same:
// the same attributes, capacity by value, and taints in the same order.
func sameDescription(a, b *Device) bool {
	return maps.EqualFunc(a.Attributes, b.Attributes, sameAttribute) &&
		maps.EqualFunc(a.Capacity, b.Capacity, func(x, y resource.Quantity) bool { return x.Cmp(y) == 0 }) &&
		slices.Equal(a.Taints, b.Taints)
}

// A description is what a device shares with the other devices of its
// group: the group's maps and taints, one of each for all of them.
// Two descriptions are one when they are at the same places.
type description struct {
	attributes, capacity uintptr // where the maps are
	taints               *pingstatus.DeviceTaint
	ntaints              int
}

func describe(d *Device) description {
	desc := description{
		attributes: reflect.ValueOf(d.Attributes).Pointer(),
		capacity:   reflect.ValueOf(d.Capacity).Pointer(),
		ntaints:    len(d.Taints),
	}
	if len(d.Taints) > 0 {
		desc.taints = &d.Taints[0]
	}
	return desc
}

func sameAttribute(x, y pingstatus.DeviceAttribute) bool {
	return samePointer(x.IntValue, y.IntValue) && samePointer(x.BoolValue, y.BoolValue) &&
		samePointer(x.StringValue, y.StringValue) && samePointer(x.VersionValue, y.VersionValue)
}

func samePointer[T comparable](x, y *T) bool {
	return x == nil && y == nil || x != nil && y != nil && *x == *y
}

// Description says what the device is, as its change does: its
// attributes and capacity, each sorted by name, as name=value, a string
// quoted and a version after a v, then its taints in order, as kubectl
// writes a node's (key=value:Effect):
// cudaComputeCapability=v8.0.0, productName="NVIDIA A100-SXM4-80GB", memory=80Gi, taints gpu.nvidia.com/xid=79:NoSchedule.
func (d *Device) Description() string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(d.Attributes)) {
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		b.WriteString(k + "=" + attributeText(d.Attributes[k]))
	}
	for _, k := range slices.Sorted(maps.Keys(d.Capacity)) {
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		q := d.Capacity[k]
		b.WriteString(k + "=" + q.String())
	}
	for i, t := range d.Taints {
		switch {
		case i > 0:
			b.WriteString(", ")
		case b.Len() > 0:
			b.WriteString(", taints ")
		default:
			b.WriteString("taints ")
		}
		b.WriteString(t.Key)
		if t.Value != "" {
			b.WriteString("=" + t.Value)
		}
		b.WriteString(":" + string(t.Effect))
	}
	if b.Len() == 0 {
		return "a device"
	}
	return b.String()
}

// attributeText is an attribute's value as text: a string quoted, a
// version with a v.
func attributeText(v pingstatus.DeviceAttribute) string {
	switch {
	case v.IntValue != nil:
		return strconv.FormatInt(*v.IntValue, 10)
	case v.BoolValue != nil:
		return strconv.FormatBool(*v.BoolValue)
	case v.StringValue != nil:
		return strconv.Quote(*v.StringValue)
	case v.VersionValue != nil:
		return "v" + *v.VersionValue
	}
	return "?"
}
