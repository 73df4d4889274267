package pingstatus

import "github.com/pingnode/pingnode/internal/enum"

// Warning is a problem found in a reply (or, from nodeapply, in a ping or
// a node), and what was done about it. A caller that sorts or counts
// warnings asks [Warning.Subject] and [Warning.Action]; Path and Message
// are for people.
type Warning struct {
	// Path is the JSON path of what it is about, like "taints[2].effect";
	// empty for the reply as a whole.
	Path string `json:"path,omitempty"`
	// Message says what was wrong and what was done instead.
	Message string `json:"message"`
	// Subject is what part of the node the warning is about.
	Subject Subject `json:"subject"`
	// Action is what was done about it.
	Action Action `json:"action"`
	// Rule is the name of the rule that gave the warning, in the contract
	// of the package that gave it: "taint-valid" (this package's),
	// "label-foreign" (nodeapply's), "pool-judged" (devicepool's). A name
	// never changes when another rule is added.
	Rule string `json:"rule"`
	// Part is the name of the backend's part the warning is about, for a
	// reply that lists its parts (rule part-entries): a warning about a
	// part's name or fields, or one that repeats an earlier part of the
	// name. It is "" for the node as a whole, the reply's fields beside
	// its parts among them, and for the parts list or an entry of it
	// without a valid name, whose Subject is [SubjectPart].
	Part string `json:"part,omitempty"`
}

// AboutParts reports whether the warning is about the backend's parts: a
// part ([Warning.Part]), or the parts list and its entries
// ([SubjectPart]). A provider that serves no parts can tell these apart
// from the warnings about its node.
func (w Warning) AboutParts() bool { return w.Part != "" || w.Subject == SubjectPart }

// String returns "path: message", or the message alone for the whole reply.
func (w Warning) String() string {
	if w.Path == "" {
		return w.Message
	}
	return w.Path + ": " + w.Message
}

// Subject is what part of a node a [Warning], or a change that nodeapply
// makes, is about.
type Subject int

const (
	// SubjectReply is the reply or the ping as a whole, or a part of it
	// that touches no field of the node (its status text, its time).
	SubjectReply Subject = iota
	// SubjectResource is a quantity: status.capacity and
	// status.allocatable, or the reply's resources.
	SubjectResource
	// SubjectTaint is a taint: spec.taints, or the reply's taints.
	SubjectTaint
	// SubjectCondition is a node condition (status.conditions).
	SubjectCondition
	// SubjectAnnotation is an annotation of the node.
	SubjectAnnotation
	// SubjectLabel is a label: metadata.labels, or the reply's labels.
	SubjectLabel
	// SubjectDevice is a device: the reply's devices, or the devices a
	// provider publishes for the node (nodeapply's Result.Devices).
	SubjectDevice
	// SubjectPart is a part of the backend as a whole: the reply's parts
	// list ("nodes"), an entry of it, or its name.
	SubjectPart
)

var subjectNames = [...]string{"reply", "resource", "taint", "condition", "annotation", "label", "device", "part"}

// String returns "reply", "resource", "taint", "condition", "annotation",
// "label", "device" or "part".
func (s Subject) String() string { return enum.Name(subjectNames[:], int(s), "Subject") }

// MarshalText returns the subject as [Subject.String] writes it.
func (s Subject) MarshalText() ([]byte, error) {
	return enum.Marshal(s, s >= SubjectReply && s <= SubjectPart)
}

// UnmarshalText reads what MarshalText writes.
func (s *Subject) UnmarshalText(b []byte) error {
	return enum.Unmarshal(s, b, SubjectReply, SubjectPart)
}

// Action is what was done about what a [Warning] reports.
type Action int

const (
	// Refused: a value or an entry was not accepted; what the node has
	// for it stays as it is.
	Refused Action = iota
	// Repaired: a value was read or changed to the safe side and used,
	// like an unknown effect read as NoSchedule, UTF-16 text decoded, or
	// of a repeated key the last value taken.
	Repaired
	// Ignored: a whole value was passed over with no effect on the node,
	// like a reply that does not parse, a list over its limit, or the
	// reply of a failed ping.
	Ignored
)

var actionNames = [...]string{"refused", "repaired", "ignored"}

// String returns "refused", "repaired" or "ignored".
func (a Action) String() string { return enum.Name(actionNames[:], int(a), "Action") }

// MarshalText returns the action as [Action.String] writes it.
func (a Action) MarshalText() ([]byte, error) { return enum.Marshal(a, a >= Refused && a <= Ignored) }

// UnmarshalText reads what MarshalText writes.
func (a *Action) UnmarshalText(b []byte) error { return enum.Unmarshal(a, b, Refused, Ignored) }
