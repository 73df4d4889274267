package pingstatus

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/pingnode/pingnode/internal/enum"
)

// Kind says what sort of reply a body was.
type Kind int

const (
	// Legacy is a body that is not a JSON object: plain text, an array,
	// null, a number, a string, or nothing. It carries no news.
	Legacy Kind = iota
	// Structured is a JSON object; its fields were judged one by one.
	Structured
	// Unusable is a body that looked like a JSON object but did not parse,
	// or was larger than the limit. It carries no news; a warning says why.
	Unusable
)

var kindNames = [...]string{"legacy", "structured", "unusable"}

// String returns "legacy", "structured" or "unusable".
func (k Kind) String() string { return enum.Name(kindNames[:], int(k), "Kind") }

// MarshalText returns the kind as [Kind.String] writes it, so that a
// [NodePatch] marshals as JSON with "structured" rather than 1.
func (k Kind) MarshalText() ([]byte, error) { return enum.Marshal(k, k >= Legacy && k <= Unusable) }

// UnmarshalText reads what MarshalText writes.
func (k *Kind) UnmarshalText(b []byte) error { return enum.Unmarshal(k, b, Legacy, Unusable) }

// NodePatch is what a reply asks of the node, with every entry already
// valid by Kubernetes' rules. The zero NodePatch changes nothing. Its JSON
// form names its fields as the reply does, in lowerCamelCase.
//
// A patch that [Parse] or [Options.Check] gives remembers that it was
// judged, with which options, and a fingerprint of what it said, so
// that Check, which nodeapply and its steps run on every patch they are
// given, returns it without judging it again. One built by hand, or
// decoded from JSON, carries no judgement and is judged by Check; so is
// a judged patch, or a copy of one, that was changed after (its parts
// put in another order, a name repeated, a taint appended): what Check
// gives for it is what it gives for the same patch built by hand.
type NodePatch struct {
	// Kind says what sort of reply this came from.
	Kind Kind `json:"kind"`
	// Status is the reply's status text, for logs.
	Status string `json:"status,omitempty"`
	// Resources holds the accepted quantities: cpu, memory, pods and
	// extended resources. A resource that is absent is no news.
	Resources corev1.ResourceList `json:"resources,omitempty"`
	// Full are the resources the backend has none of free now, of cpu
	// and memory, sorted (cpu before memory); nil when none. A reply says
	// so with a zero cpu or memory among figures of what the backend has
	// available (rule resource-full): the figure is not written, so the
	// node keeps its capacity, and nodeapply keeps new pods off the node
	// until a reply gives more. It is not a field of the reply: Parse
	// derives it, and [Options.Check] takes it from a hand-built patch.
	Full []corev1.ResourceName `json:"full,omitempty"`
	// ReplaceTaints reports whether the reply carried a taints list. When
	// true, Taints (possibly empty) is the plugin's whole list; when false,
	// the node's taints are left alone.
	ReplaceTaints bool `json:"replaceTaints"`
	// Taints is the plugin's list, unique by key and effect, with valid
	// keys, values and effects, and no reserved or protected keys.
	Taints []corev1.Taint `json:"taints,omitempty"`
	// KeptTaintKeys are keys of taint entries refused for a bad value. The
	// plugin still means a taint with that key, so nodeapply keeps the
	// plugin's current taints with these keys instead of removing them.
	KeptTaintKeys []string `json:"keptTaintKeys,omitempty"`
	// ReplaceLabels reports whether the reply carried labels. When true,
	// Labels (possibly empty) is the plugin's whole set; when false, the
	// node's labels are left alone.
	ReplaceLabels bool `json:"replaceLabels"`
	// Labels are the plugin's labels, key to value, with valid keys and
	// values, each in a namespace the options allow and none the
	// provider's own.
	Labels map[string]string `json:"labels,omitempty"`
	// KeptLabelKeys are keys of label entries refused for a bad value,
	// sorted. The plugin still means a label with that key, so nodeapply
	// keeps the plugin's current label with it instead of removing it.
	KeptLabelKeys []string `json:"keptLabelKeys,omitempty"`
	// Basis is what the resources' figures are, as the reply says: what
	// the backend has available now, or the total it gives the node. ""
	// when the reply does not say.
	Basis Basis `json:"basis,omitempty"`
	// ReplaceDevices reports whether the reply carried a devices list.
	// When true, Devices (possibly empty) is the plugin's whole list;
	// when false, the published devices are left alone.
	ReplaceDevices bool `json:"replaceDevices"`
	// Devices are the plugin's device groups, sorted by name, each with a
	// valid name, count, attributes, capacity and taints.
	Devices []DeviceGroup `json:"devices,omitempty"`
	// KeptDeviceGroups are the names of groups whose entry was refused
	// (a bad count, attribute, capacity or taint), sorted. The plugin still
	// means that group, so nodeapply keeps its published devices as they
	// are instead of removing them.
	KeptDeviceGroups []string `json:"keptDeviceGroups,omitempty"`
	// ReplaceParts reports whether the reply listed its parts ("nodes").
	// When true, Parts (possibly empty) are the backend's parts, and
	// everything the reply says of resources, taints, labels and devices
	// is in them: this patch's own fields of those are empty.
	ReplaceParts bool `json:"replaceParts"`
	// Parts are the backend's parts, sorted by name, each the patch of
	// its own node.
	Parts []Part `json:"parts,omitempty"`
	// PartsIncomplete reports that an entry of the parts list was refused
	// before its name could be read (no object, no valid name), so that a
	// part served now and missing from Parts may still be there: no part
	// leaves with this reply.
	PartsIncomplete bool `json:"partsIncomplete,omitempty"`

	// judged is the judgement the patch passed, nil for one built by hand,
	// and sum the fingerprint of what it said then.
	judged *judgement
	sum    fingerprint
}

// Part is one part of the backend, as a reply lists it: its name and what
// the reply asks of its node.
type Part struct {
	// Name is a DNS label of at most 63 characters.
	Name string `json:"name"`
	// Patch is what the reply asks of the part's node: its Kind is
	// Structured, and it lists no parts of its own.
	Patch NodePatch `json:"patch"`
}

// DeviceGroup is a group of identical devices that a reply describes,
// valid by the API server's rules for a ResourceSlice's devices.
type DeviceGroup struct {
	// Name is a DNS label of at most 56 characters; the group's devices
	// are named Name-0, Name-1, and so on.
	Name string `json:"name"`
	// Count is how many devices the reply says: free now, or, with
	// [BasisTotal], in all.
	Count int `json:"count"`
	// Attributes, each with exactly one valid value. Read-only: nodeapply
	// hands the same map to every device of the group.
	Attributes map[string]DeviceAttribute `json:"attributes,omitempty"`
	// Capacity, each not negative. Read-only, as Attributes.
	Capacity map[string]resource.Quantity `json:"capacity,omitempty"`
	// Taints are on every device of the group, in the reply's order, at
	// most 16, each with a valid key, value and effect; a key and effect
	// may repeat, as the API server allows. Read-only, as Attributes.
	Taints []DeviceTaint `json:"taints,omitempty"`
}

// DeviceTaint is a taint of a device, as resource.k8s.io/v1's DeviceTaint
// without the time it was added (the API server sets it).
type DeviceTaint struct {
	// Key is a qualified name: "gpu.nvidia.com/xid".
	Key string `json:"key"`
	// Value is a label value, possibly empty: "79".
	Value string `json:"value,omitempty"`
	// Effect is what the taint does to claims that do not tolerate it.
	Effect DeviceTaintEffect `json:"effect"`
}

// DeviceTaintEffect is the effect of a [DeviceTaint], as resource.k8s.io/v1
// spells it.
type DeviceTaintEffect string

const (
	// DeviceTaintNone says something of the device and does nothing.
	DeviceTaintNone DeviceTaintEffect = "None"
	// DeviceTaintNoSchedule keeps the device from new claims that do not
	// tolerate it.
	DeviceTaintNoSchedule DeviceTaintEffect = "NoSchedule"
	// DeviceTaintNoExecute also evicts the pods that use the device
	// (kube-controller-manager's device-taint-eviction-controller).
	DeviceTaintNoExecute DeviceTaintEffect = "NoExecute"
)

// Basis says what a reply's resource figures are.
type Basis string

const (
	// BasisAvailable figures are what the backend can take now: what this
	// node's pods already use on the backend is not in them. It is what a
	// reply that does not say is taken to mean.
	BasisAvailable Basis = "available"
	// BasisTotal figures are all the backend gives this node, what this
	// node's pods use included: nothing is added to them.
	BasisTotal Basis = "total"
)

// IsEmpty reports whether p asks for no change at all.
func (p *NodePatch) IsEmpty() bool {
	return len(p.Resources) == 0 && len(p.Full) == 0 && !p.ReplaceTaints && !p.ReplaceLabels && !p.ReplaceDevices && !p.ReplaceParts
}
