package pingstatus

import (
	"encoding/json"
)

// PingResponse is the body a plugin returns to the provider's ping. Every
// field is optional; an omitted field means "no news". Its JSON form is the
// one interLink 0.6.2 uses, so existing plugins and providers need no change.
type PingResponse struct {
	// Status is free text for people ("ok", "healthy"); pingnode keeps it in
	// [NodePatch.Status] and acts on nothing in it.
	Status string `json:"status,omitempty"`
	// NodeResponse holds what the reply says of the node: its resources,
	// taints, labels and devices. Its fields stand in the reply itself,
	// beside "status": reply.Resources, reply.Taints and so on.
	NodeResponse
	// Nodes lists the backend's parts (its machines, or its partitions of
	// identical machines), each a node of its own that the scheduler can
	// fit a pod on, for a provider that serves parts. nil means "no
	// news": the parts stay as they are. A pointer to an empty list means
	// the backend has no parts. Beside Nodes, Resources and Devices must
	// be nil (a sum is what the parts replace), and Taints and Labels are
	// every part's, before its own. Build it with [PartList].
	Nodes *[]PartResponse `json:"nodes,omitempty"`
}

// NodeResponse is what a reply says of a node: the fields of a reply
// (beside its status and its parts) and of each of its parts, with the
// same meaning and rules in both. Every field is optional; an omitted one
// means "no news". In a part, Taints are the part's own, after the
// reply's, and Labels its own, over the reply's.
type NodeResponse struct {
	// Resources are what the backend can take right now.
	Resources *ResourcesResponse `json:"resources,omitempty"`
	// Taints is the plugin's whole list of taints. nil means "no news": the
	// node's taints are left alone. A pointer to an empty list removes every
	// taint the plugin set earlier. Build it with [TaintList], which never
	// yields a nil slice (a pointer to a nil slice would marshal as null).
	Taints *[]TaintResponse `json:"taints,omitempty"`
	// Labels is the plugin's whole set of node labels, key to value, in
	// the namespaces the provider allows (by default
	// feature.node.kubernetes.io and profile.node.kubernetes.io; see
	// [Options.LabelNamespaces]). nil means "no news": the node's labels
	// are left alone. An empty, non-nil map removes every label the
	// plugin set earlier; it marshals as {}, and nil not at all.
	Labels map[string]string `json:"labels,omitzero"`
	// Devices is the plugin's whole list of device groups: each a name,
	// how many identical devices, and what they are, in
	// resource.k8s.io/v1's own shape, so that a provider on Kubernetes
	// 1.34 or later publishes them as Dynamic Resource Allocation devices
	// that claims select by their attributes. nil means "no news": the
	// published devices are left alone. A pointer to an empty list
	// means the backend has no devices. Build it with [DeviceList].
	Devices *[]DeviceResponse `json:"devices,omitempty"`
}

// PartResponse is one part of the backend: a machine, or a partition of
// identical machines, that the provider serves as a node of its own.
type PartResponse struct {
	// Name is a DNS label (lowercase letters, digits and '-') of at most
	// 63 characters, unique in the reply: "cn001", "gpu-a100". The
	// provider names the part's node after it, and labels the node with
	// it.
	Name string `json:"name"`
	// NodeResponse holds what the reply says of the part's node, as a
	// reply says it of its own.
	NodeResponse
}

// PartList returns a value for [PingResponse.Nodes] holding parts: the
// backend's whole list, which marshals as a JSON array even when it is
// empty.
func PartList(parts ...PartResponse) *[]PartResponse {
	list := make([]PartResponse, len(parts))
	copy(list, parts)
	return &list
}

// DeviceResponse is a group of identical devices of the backend. The
// provider publishes them as devices named Name-0, Name-1 and so on, each
// with the group's attributes and capacity.
type DeviceResponse struct {
	// Name is a DNS label (lowercase letters, digits and '-') of at most
	// 56 characters, unique in the reply: "a100", "t4".
	Name string `json:"name"`
	// Count is how many devices of the group the backend has free now
	// (with the resources' basis "total": how many it gives the node in
	// all). 0 means none is free.
	Count int `json:"count"`
	// Attributes say what each device is, by a C identifier ("productName")
	// in the driver's domain, or by a domain, '/' and a C identifier
	// ("gpu.nvidia.com/productName"); exactly one value each.
	Attributes map[string]DeviceAttribute `json:"attributes,omitempty"`
	// Capacity says how much of something each device has
	// ("memory": {"value": "80Gi"}), by names as Attributes.
	Capacity map[string]DeviceCapacity `json:"capacity,omitempty"`
	// Taints say what is wrong with the group's devices, in the shape of
	// the node's taints, with the effects of a device's taint: None (for
	// people and dashboards), NoSchedule (no new claim is given the
	// device) or NoExecute (the pods using it are evicted); an empty or
	// other effect is refused, PreferNoSchedule too. At most 16, each on
	// every device of the group, in this order; a key and effect may
	// repeat. NVIDIA's driver uses gpu.nvidia.com/xid,
	// gpu.nvidia.com/gpu-lost and gpu.nvidia.com/unmonitored. A group
	// without taints has healthy devices; one with a bad taint is refused
	// whole, and its published devices stay as they are.
	Taints []TaintResponse `json:"taints,omitempty"`
}

// DeviceAttribute is one attribute's value: exactly one of its fields is
// set. Its JSON form is resource.k8s.io/v1's: {"string": "NVIDIA A100"},
// {"int": 80}, {"bool": true}, {"version": "8.0.0"}.
type DeviceAttribute struct {
	// IntValue is a whole number in an int64.
	IntValue *int64 `json:"int,omitempty"`
	// BoolValue is true or false.
	BoolValue *bool `json:"bool,omitempty"`
	// StringValue is text of at most 64 bytes.
	StringValue *string `json:"string,omitempty"`
	// VersionValue is a semantic version 2.0.0 ("8.0.0", "12.4.1") of at
	// most 64 bytes.
	VersionValue *string `json:"version,omitempty"`
}

// DeviceCapacity is one capacity of a device: {"value": "80Gi"}.
type DeviceCapacity struct {
	// Value is a Kubernetes quantity, not negative.
	Value string `json:"value"`
}

// DeviceList returns a value for [PingResponse.Devices] holding groups:
// the plugin's whole list, which marshals as a JSON array even when it is
// empty.
func DeviceList(groups ...DeviceResponse) *[]DeviceResponse {
	list := make([]DeviceResponse, len(groups))
	copy(list, groups)
	return &list
}

// ResourcesResponse holds the backend's resources as Kubernetes quantity
// strings ("64", "250000Mi", "500m"). An empty string means "no news".
//
// The figures are what the backend can take right now (Basis "available",
// the default): idle cpus, free memory, free GPUs, room for more pods. A
// provider that counts its own pods adds what they hold on the backend,
// since the scheduler subtracts their requests from the node itself. A
// plugin that reports instead the total its backend gives the node, its
// pods' share included, says Basis "total", and nothing is added.
type ResourcesResponse struct {
	CPU          string                `json:"cpu,omitempty"`
	Memory       string                `json:"memory,omitempty"`
	Pods         string                `json:"pods,omitempty"`
	Accelerators []AcceleratorResponse `json:"accelerators,omitempty"`
	// Basis is "available" (the default when empty) or "total".
	Basis string `json:"basis,omitempty"`
	// EphemeralStorage is the scratch space the backend gives pods
	// (Kubernetes' ephemeral-storage: Slurm's TmpDisk, an HTCondor
	// slot's Disk), for pods that request it.
	EphemeralStorage string `json:"ephemeralStorage,omitempty"`
	// Hugepages are the huge pages the backend has, by page size as the
	// kubelet names them ("2Mi", "1Gi": a power of two below 1024 with a
	// binary suffix) to the amount of memory in pages of that size
	// ("4Gi"); they become the resources hugepages-2Mi, hugepages-1Gi.
	// "0" means the pages are gone.
	Hugepages map[string]string `json:"hugepages,omitempty"`
}

// AcceleratorResponse is one kind of device the backend offers, by its
// extended resource name ("nvidia.com/gpu", "xilinx.com/fpga").
type AcceleratorResponse struct {
	ResourceType string `json:"resourceType"`
	// Available is a whole number of devices; "0" means the devices are gone.
	Available string `json:"available"`
}

// TaintResponse is a taint the plugin wants on the node, or, in
// [DeviceResponse.Taints], on each device of a group. Effect is one of
// NoSchedule, PreferNoSchedule or NoExecute for the node; None,
// NoSchedule or NoExecute for a device.
type TaintResponse struct {
	Key    string `json:"key"`
	Value  string `json:"value,omitempty"`
	Effect string `json:"effect"`
}

// TaintList returns a value for [PingResponse.Taints] holding taints: the
// plugin's whole list, which marshals as a JSON array even when it is empty.
func TaintList(taints ...TaintResponse) *[]TaintResponse {
	list := make([]TaintResponse, len(taints))
	copy(list, taints)
	return &list
}

// Validate reports every problem a provider would find in r, exactly as
// [Parse] would report it with opts (use the zero Options for the defaults).
// A plugin can call it before serving a reply; nil means the reply is clean.
func (r PingResponse) Validate(opts Options) []Warning {
	body, err := json.Marshal(r)
	if err != nil { // unreachable: the wire types hold only strings, slices and pointers
		return []Warning{{Message: "reply does not marshal: " + err.Error()}}
	}
	_, warnings := Parse(body, opts)
	return warnings
}
