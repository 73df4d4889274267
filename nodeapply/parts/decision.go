package parts

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/pingnode/pingnode/internal/enum"
	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/pingstatus"
)

// Action is what the provider does with a part's node after a ping.
// The zero value is [Ping], the one that never creates, leaves or
// deletes anything.
type Action int

const (
	// Ping merges the ping into the part's node: with the part's patch
	// when the reply lists it, with no news otherwise.
	Ping Action = iota
	// Register makes a new node for a part the reply lists and no node
	// serves, with the part's patch merged into it.
	Register
	// Leave pings the part's node as gone ([nodeapply.Ping.Unlisted]):
	// its part is not in the reply, or it was gone and the reply brings no
	// news of it.
	Leave
	// Delete deletes the part's node: its part has been gone for the
	// part grace, and no pod holds it.
	Delete
)

var actionNames = [...]string{"Ping", "Register", "Leave", "Delete"}

// String returns "Ping", "Register", "Leave" or "Delete".
func (a Action) String() string { return enum.Name(actionNames[:], int(a), "Action") }

// MarshalText returns the action as [Action.String] writes it.
func (a Action) MarshalText() ([]byte, error) { return enum.Marshal(a, a >= Ping && a <= Delete) }

// UnmarshalText reads what MarshalText writes.
func (a *Action) UnmarshalText(b []byte) error { return enum.Unmarshal(a, b, Ping, Delete) }

// Decision is what the provider does with one part's node after a ping.
type Decision struct {
	// Part is the part's name.
	Part string
	// Action is what becomes of the part's node.
	Action Action
	// Node is the part's node, the one given to [Step] (not a copy), or
	// nil for [Register].
	Node *corev1.Node
	// Patch is, for Register and Ping, the part's own patch in the reply
	// (pointing into its Parts, not a copy: read-only), or nil for no
	// news. It is nil for Leave and Delete.
	Patch *pingstatus.NodePatch
}

// NodePing returns the ping the provider merges into the part's node
// with [nodeapply.Apply], from ping, the ping of the plugin that d comes
// from: for Register and Ping, the part's patch (or none), the ping's
// failure and its time; for Leave, [nodeapply.Ping.Unlisted] at the
// ping's time. Held and Body are the node's own, for the provider to set.
// Delete has nothing to merge: the node goes, and NodePing returns the
// zero Ping.
func (d Decision) NodePing(ping nodeapply.Ping) nodeapply.Ping {
	switch d.Action {
	case Ping, Register:
		return nodeapply.Ping{Reply: d.Patch, Failure: ping.Failure, At: ping.At}
	case Leave:
		return nodeapply.Ping{Unlisted: true, At: ping.At}
	}
	return nodeapply.Ping{}
}

// String returns the decision as one log line, such as
// "cn001: Ping node vk-cn001, with the part's patch".
func (d Decision) String() string {
	s := d.Part + ": " + d.Action.String()
	if d.Node != nil {
		s += " node " + d.Node.Name
	}
	switch {
	case d.Action != Ping && d.Action != Register:
	case d.Patch != nil:
		s += ", with the part's patch"
	default:
		s += ", no news"
	}
	return s
}
