package confirm

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The names a provider publishes under, unless it has its own: the
// driver of the confirmation devices, the class that selects them, and
// the extended resource a pod asks with ("pingnode.io/confirmed: 1" in
// its limits).
const (
	DefaultDriver   = "confirm.pingnode.io"
	DefaultClass    = "pingnode-confirmed"
	DefaultResource = "pingnode.io/confirmed"
	// DeviceName is the name of the device in [Slice].
	DeviceName = "confirm"
)

// The binding conditions of a confirmation device (rule confirm-device):
// the scheduler binds a pod when ConditionRuns is True in its claim's
// status for the share, and deallocates the claim when ConditionRefused
// is.
const (
	ConditionRuns    = "pingnode.io/BackendRuns"
	ConditionRefused = "pingnode.io/BackendRefused"
)

// Attribute is the attribute that marks a confirmation device, a bool
// that is true (rule confirm-device). It has a domain of its own, so that
// a driver's own attribute of the same name is not it.
const (
	AttributeDomain = "pingnode.io"
	AttributeName   = "confirmation"
	Attribute       = AttributeDomain + "/" + AttributeName
)

// Device returns a node's confirmation device, named name (rule
// confirm-device). Each call returns a device of its own.
func Device(name string) resourcev1.Device {
	yes := true
	return resourcev1.Device{
		Name: name,
		Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{
			Attribute: {BoolValue: &yes},
		},
		BindsToNode:              &yes,
		BindingConditions:        []string{ConditionRuns},
		BindingFailureConditions: []string{ConditionRefused},
		AllowMultipleAllocations: &yes,
	}
}

// Slice returns the ResourceSlice that publishes node's confirmation
// device ([Device] named [DeviceName]) for driver: on the node, in a pool
// named after it, owned by the node so that it goes when the node does.
// Its name is generated from the node's.
func Slice(node *corev1.Node, driver string) *resourcev1.ResourceSlice {
	yes, name := true, node.Name
	return &resourcev1.ResourceSlice{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: name + "-",
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "v1", Kind: "Node", Name: name, UID: node.UID, Controller: &yes,
			}},
		},
		Spec: resourcev1.ResourceSliceSpec{
			Driver:   driver,
			NodeName: &name,
			Pool:     resourcev1.ResourcePool{Name: name, ResourceSliceCount: 1},
			Devices:  []resourcev1.Device{Device(DeviceName)},
		},
	}
}

// Class returns the DeviceClass named name that selects the confirmation
// devices of driver and serves them as the extended resource
// extendedResource (rule confirm-class): a pod that requests 1 of it is
// given a share of a node's confirmation device, and binds once the
// backend runs it.
func Class(name, driver, extendedResource string) *resourcev1.DeviceClass {
	return &resourcev1.DeviceClass{
		TypeMeta:   metav1.TypeMeta{APIVersion: "resource.k8s.io/v1", Kind: "DeviceClass"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: resourcev1.DeviceClassSpec{
			Selectors: []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{
				Expression: Selector(driver),
			}}},
			ExtendedResourceName: &extendedResource,
		},
	}
}

// Selector returns the CEL expression that selects the confirmation
// devices of driver, for a claim or a class of a provider's own. An
// unknown attribute domain reads as an empty map, so the test of the
// attribute's presence never fails on another device.
func Selector(driver string) string {
	return "device.driver == " + strconv.Quote(driver) +
		" && " + strconv.Quote(AttributeName) + " in device.attributes[" + strconv.Quote(AttributeDomain) + "]" +
		" && device.attributes[" + strconv.Quote(AttributeDomain) + "]." + AttributeName
}
