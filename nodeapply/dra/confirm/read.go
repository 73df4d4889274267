package confirm

import (
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Status is what a claim's status says of its share of a confirmation
// device.
type Status int

const (
	// Pending: neither condition is True; the pod waits at PreBind.
	Pending Status = iota
	// Confirmed: ConditionRuns is True; the pod binds, or has bound.
	Confirmed
	// Refused: ConditionRefused is True; the scheduler deallocates the
	// claim.
	Refused
)

func (s Status) String() string {
	switch s {
	case Pending:
		return "pending"
	case Confirmed:
		return "confirmed"
	case Refused:
		return "refused"
	}
	return fmt.Sprintf("Status(%d)", int(s))
}

// Allocation is one share of a confirmation device that a claim was
// given.
type Allocation struct {
	// Claim is the claim's namespace and name, ClaimUID its UID.
	Claim    types.NamespacedName
	ClaimUID types.UID
	// Driver, Pool, Device and Share name the share, as the claim's
	// allocation result and status.devices entry do; Share is empty for
	// an allocation without a share.
	Driver, Pool, Device, Share string
	// Node is the node the allocation selects; empty when its node
	// selector names none, or more than one.
	Node string
	// Allocated is when the claim was allocated; zero when the claim does
	// not say.
	Allocated time.Time
	// Pods are the pods the claim is reserved for, by UID, in the claim's
	// namespace.
	Pods []Pod
	// Status is what the claim's status says of the share.
	Status Status
}

// Pod is a pod a claim is reserved for.
type Pod struct {
	Name string
	UID  types.UID
}

func (p Pod) String() string { return fmt.Sprintf("%s (%s)", p.Name, p.UID) }

func (a Allocation) String() string {
	share := a.Device
	if a.Share != "" {
		share += "/" + a.Share
	}
	return fmt.Sprintf("%s %s on %q for %v: %v", a.Claim, share, a.Node, a.Pods, a.Status)
}

// Allocations returns the allocations of driver's confirmation devices in
// claims (rule confirm-read), claim by claim in the order given, and in a
// claim in the order of its results.
func Allocations(claims []*resourcev1.ResourceClaim, driver string) []Allocation {
	var out []Allocation
	for _, c := range claims {
		if c == nil || c.Status.Allocation == nil {
			continue
		}
		alloc := c.Status.Allocation
		for _, r := range alloc.Devices.Results {
			if r.Driver != driver || !slices.Contains(r.BindingConditions, ConditionRuns) {
				continue
			}
			a := Allocation{
				Claim:    types.NamespacedName{Namespace: c.Namespace, Name: c.Name},
				ClaimUID: c.UID,
				Driver:   r.Driver, Pool: r.Pool, Device: r.Device,
				Node: node(alloc.NodeSelector),
			}
			if r.ShareID != nil {
				a.Share = string(*r.ShareID)
			}
			if alloc.AllocationTimestamp != nil {
				a.Allocated = alloc.AllocationTimestamp.Time
			}
			for _, ref := range c.Status.ReservedFor {
				if ref.APIGroup == "" && ref.Resource == "pods" {
					a.Pods = append(a.Pods, Pod{Name: ref.Name, UID: ref.UID})
				}
			}
			a.Status = status(c.Status.Devices, &a)
			out = append(out, a)
		}
	}
	return out
}

// node returns the one node that selector selects by name, as the
// scheduler writes an allocation of a device that binds to its node.
func node(selector *corev1.NodeSelector) string {
	if selector == nil || len(selector.NodeSelectorTerms) != 1 {
		return ""
	}
	term := selector.NodeSelectorTerms[0]
	if len(term.MatchExpressions) != 0 || len(term.MatchFields) != 1 {
		return ""
	}
	f := term.MatchFields[0]
	if f.Key != "metadata.name" || f.Operator != corev1.NodeSelectorOpIn || len(f.Values) != 1 {
		return ""
	}
	return f.Values[0]
}

// status returns what devices, a claim's status.devices, say of a's share.
func status(devices []resourcev1.AllocatedDeviceStatus, a *Allocation) Status {
	for _, d := range devices {
		if d.Driver != a.Driver || d.Pool != a.Pool || d.Device != a.Device || deref(d.ShareID) != a.Share {
			continue
		}
		runs := Pending
		for _, c := range d.Conditions {
			if c.Status != metav1.ConditionTrue {
				continue
			}
			switch c.Type {
			case ConditionRefused:
				return Refused
			case ConditionRuns:
				runs = Confirmed
			}
		}
		return runs
	}
	return Pending
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
