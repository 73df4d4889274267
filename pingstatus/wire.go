package pingstatus

import (
	"encoding/json"
)

// The doc comments of the wire types and of their fields are also the
// descriptions of the reply's JSON Schema, schema.json, which
// internal/schemagen generates from these types (go generate): the first
// paragraph of each, without its leading "Name is" or "Name are", is the
// description, and the generator fails on one that does not start so.
// Plugin authors read it in any language, so it speaks of the JSON
// (absent, null, [], a string); what only Go code needs (nil and empty
// values, the helpers that build a value, where Parse puts it) goes in a
// later paragraph, which the schema leaves out.

// PingResponse is the body a plugin returns to the provider's ping. Every
// field of the reply, and of its resources, is optional: omitted or null,
// it means no news. Its JSON form is the one interLink 0.6.2 uses, so
// existing plugins and providers need no change.
type PingResponse struct {
	// Status is free text for people, such as "ok" or "healthy"; the
	// provider acts on nothing in it.
	//
	// Parse keeps it in [NodePatch.Status].
	Status string `json:"status,omitempty"`
	// NodeResponse holds what the reply says of the node: its resources,
	// taints, labels and devices. Its fields stand in the reply itself,
	// beside "status": reply.Resources, reply.Taints and so on.
	NodeResponse
	// Nodes are the backend's parts, its machines or its partitions of
	// identical machines, each a node of its own that the scheduler can
	// fit a pod on, for a provider that serves parts. Absent or null: the
	// parts stay as they are. []: the backend has no parts. Names are
	// unique in the list. Beside it, resources and devices are absent or
	// null (the parts replace a sum), and taints and labels are every
	// part's, before its own.
	//
	// In Go, nil means "no news", and an empty, non-nil list no parts
	// (omitzero marshals it as [], and nil not at all); beside Nodes,
	// Resources and Devices must be nil.
	Nodes []PartResponse `json:"nodes,omitzero"`
}

// NodeResponse is what a reply says of a node: the fields of a reply
// (beside its status and its parts) and of each of its parts, with the
// same meaning and rules in both. Every field is optional; an omitted one
// means "no news". In a part, Taints are the part's own, after the
// reply's, and Labels its own, over the reply's.
type NodeResponse struct {
	// Resources are what the backend can take right now: idle cpus, free
	// memory and devices, room for more pods.
	Resources *ResourcesResponse `json:"resources,omitempty"`
	// Taints is the plugin's whole list of taints of the node. Absent or
	// null: the node's taints are left alone. []: every taint the plugin
	// set earlier is removed.
	//
	// In Go, nil means "no news", and an empty, non-nil list removes
	// every taint the plugin set earlier: it marshals as [], and nil not
	// at all.
	Taints []TaintResponse `json:"taints,omitzero"`
	// Labels is the plugin's whole set of node labels, key to value.
	// Absent or null: the node's labels are left alone. {}: every label
	// the plugin set earlier is removed. A key is a prefixed qualified
	// name in a namespace the provider allows: by default
	// feature.node.kubernetes.io and profile.node.kubernetes.io and their
	// subdomains; a provider may allow more, such as nvidia.com. No key is
	// unprefixed, nor in kubernetes.io, k8s.io or their subdomains but
	// those two. A value is a label value; null is empty.
	//
	// In Go, nil means "no news", and an empty, non-nil map removes every
	// label the plugin set earlier: it marshals as {}, and nil not at all.
	// A provider allows more namespaces with [Options.LabelNamespaces].
	Labels map[string]string `json:"labels,omitzero"`
	// Devices is the plugin's whole list of device groups: each a name,
	// how many identical devices, and what they are, in
	// resource.k8s.io/v1's own shape, so that a provider on Kubernetes
	// 1.34 or later publishes them as Dynamic Resource Allocation devices,
	// named after the group (a100-0, a100-1 and so on), that claims select
	// by their attributes. Absent or null: the published devices are left
	// alone. []: the backend has no devices. Names are unique in the
	// list, and the counts add up to at most 1024.
	//
	// In Go, nil means "no news", and an empty, non-nil list no devices:
	// it marshals as [], and nil not at all.
	Devices []DeviceResponse `json:"devices,omitzero"`
}

// PartResponse is one part of the backend, a machine or a partition of
// identical machines, that the provider serves as a node of its own: its
// name, and a reply's resources, taints, labels and devices, with their
// meaning and rules. Unknown fields are ignored.
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

// DeviceResponse is a group of identical devices of the backend, which the
// provider publishes as devices named after the group (a100-0, a100-1 and
// so on), each with the group's attributes, capacity and taints. Unknown
// fields are ignored. A device has at most 32 attributes and capacities
// together. A group with any mistake is refused whole: its published
// devices stay as they are.
type DeviceResponse struct {
	// Name is a DNS label (lowercase letters, digits and '-') of at most
	// 56 characters, unique in the reply: "a100", "t4". A device's name,
	// the group's with '-' and an index, is then a DNS label too.
	Name string `json:"name"`
	// Count is how many devices of the group the backend has free now
	// (with the resources' basis "total": how many it gives the node in
	// all, those its pods hold included), a whole number from 0 to 1024,
	// as a JSON integer or a string (8, "8", "1k"). 0 means none is free.
	Count int `json:"count"`
	// Attributes are what each device is, by attribute name, each with
	// exactly one value. A name is a C identifier ("productName"), which
	// Kubernetes reads as in the driver's domain, or a domain, '/' and a C
	// identifier ("gpu.nvidia.com/productName").
	Attributes map[string]DeviceAttribute `json:"attributes,omitempty"`
	// Capacity is how much of something each device has, by capacity
	// name, named as attributes are: "memory": {"value": "80Gi"}.
	Capacity map[string]DeviceCapacity `json:"capacity,omitempty"`
	// Taints are what is wrong with the group's devices, in the shape of
	// the node's taints, with the effects of a device's taint: None (it
	// says so, for people and dashboards, and does nothing), NoSchedule
	// (no new claim that does not tolerate it is given the device) or
	// NoExecute (the pods using it are evicted too); an empty or other
	// effect is refused, PreferNoSchedule too. At most 16, each on every
	// device of the group, in this order; a key and effect may repeat, as
	// the API server takes them. NVIDIA's driver uses gpu.nvidia.com/xid,
	// gpu.nvidia.com/gpu-lost and gpu.nvidia.com/unmonitored. Absent, null
	// or []: the devices are healthy. A group with a bad taint is refused
	// whole, and its published devices stay as they are.
	Taints []TaintResponse `json:"taints,omitempty"`
}

// DeviceAttribute is one attribute's value, in resource.k8s.io/v1's form:
// exactly one of "string", "int", "bool" and "version" that is not null,
// as in {"string": "NVIDIA A100"}, {"int": 80}, {"bool": true} or
// {"version": "8.0.0"}. Unknown fields are ignored.
//
// In Go, exactly one of its fields is set.
type DeviceAttribute struct {
	// IntValue is a whole number in an int64.
	IntValue *int64 `json:"int,omitempty"`
	// BoolValue is true or false.
	BoolValue *bool `json:"bool,omitempty"`
	// StringValue is text of at most 64 bytes in UTF-8.
	StringValue *string `json:"string,omitempty"`
	// VersionValue is a semantic version 2.0.0 ("8.0.0", "12.4.1-rc.1") of
	// at most 64 characters.
	VersionValue *string `json:"version,omitempty"`
}

// DeviceCapacity is one capacity of each device of a group:
// {"value": "80Gi"}. Unknown fields are ignored.
type DeviceCapacity struct {
	// Value is a Kubernetes quantity, not negative.
	Value string `json:"value"`
}

// ResourcesResponse is the backend's resources, as Kubernetes quantities:
// strings such as "64", "250000Mi" or "500m", or JSON numbers. The
// figures are what is free now (basis "available", the default), and a
// provider that counts its own pods adds what they hold on the backend,
// since the scheduler subtracts their requests from the node itself. A
// plugin that reports instead the total its backend gives the node, its
// pods' share included, says basis "total", and nothing is added.
//
// In Go, an empty string means "no news": it is left out of the JSON.
type ResourcesResponse struct {
	// CPU is the cpus, such as "128" or "500m"; not zero.
	CPU string `json:"cpu,omitempty"`
	// Memory is the memory, such as "512Gi"; not zero.
	Memory string `json:"memory,omitempty"`
	// Pods is how many more pods the backend takes, a whole number; not
	// zero.
	Pods string `json:"pods,omitempty"`
	// Accelerators are the devices that pods request as extended
	// resources, one entry for each kind.
	Accelerators []AcceleratorResponse `json:"accelerators,omitempty"`
	// Basis is what the figures are: "available", what the backend can
	// take now (the default), or "total", all it gives this node, what
	// this node's pods use included.
	//
	// In Go, an empty Basis is "available".
	Basis string `json:"basis,omitempty"`
	// EphemeralStorage is the scratch space the backend gives pods
	// (Kubernetes' ephemeral-storage: Slurm's TmpDisk, an HTCondor
	// slot's Disk), for pods that request it. Not zero: a provider
	// refuses 0, which would keep every pod that asks for scratch space
	// off the node.
	EphemeralStorage string `json:"ephemeralStorage,omitempty"`
	// Hugepages are the huge pages the backend has, by page size as the
	// kubelet names them ("2Mi", "1Gi": a power of two below 1024 with a
	// binary suffix) to the amount of memory in pages of that size
	// ("4Gi"); they become the resources hugepages-2Mi, hugepages-1Gi.
	// "0" means the pages are gone.
	Hugepages map[string]string `json:"hugepages,omitempty"`
}

// AcceleratorResponse is one kind of device the backend offers, by its
// extended resource name ("nvidia.com/gpu", "xilinx.com/fpga"), and how
// many of them.
type AcceleratorResponse struct {
	// ResourceType is an extended resource name: domain-prefixed, outside
	// kubernetes.io, not starting with "requests.". The prefix has at most
	// 244 characters, so that the name with "requests." before it, as
	// resource quotas write it, is still a qualified name.
	ResourceType string `json:"resourceType"`
	// Available is a whole number of devices available now; "0" means the
	// devices are gone.
	Available string `json:"available"`
}

// TaintResponse is a taint the plugin wants on the node, or, in a device
// group's taints, on each device of the group. Unknown fields are
// ignored.
//
// It is a [PingResponse.Taints] entry, or a [DeviceResponse.Taints] one.
type TaintResponse struct {
	// Key is a qualified name (a prefix, if any, of at most 253
	// characters), such as gpu.nvidia.com/xid; on the node, not one that
	// Kubernetes controllers or the provider own.
	Key string `json:"key"`
	// Value is a label value: empty, or at most 63 characters; null is
	// empty.
	Value string `json:"value,omitempty"`
	// Effect is NoSchedule, PreferNoSchedule or NoExecute on the node;
	// None, NoSchedule or NoExecute on a device (a node's PreferNoSchedule
	// is none of a device's).
	Effect string `json:"effect"`
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
