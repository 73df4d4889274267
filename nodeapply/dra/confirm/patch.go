package confirm

import (
	"encoding/json"
	"time"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Patch returns the patch that writes d's outcome to its claim: the
// claim's status.devices entry for the share, with one condition,
// ConditionRuns True for Confirm and ConditionRefused True for Refuse,
// made at now; nil for Wait. Send it to the claim's status subresource as
// a server-side apply patch (types.ApplyPatchType) with the provider's
// field manager: the entry is a list-map item keyed by driver, pool,
// device and share, so the patch touches that entry alone, and leaves
// the scheduler's allocation and any other driver's entries as they are.
// The patch carries the claim's UID, so that a claim deleted and made
// again under the same name is not written.
func (d Decision) Patch(now time.Time) []byte {
	var condition string
	switch d.Verdict {
	case Confirm:
		condition = ConditionRuns
	case Refuse:
		condition = ConditionRefused
	default:
		return nil
	}
	a := d.Allocation
	entry := resourcev1.AllocatedDeviceStatus{
		Driver: a.Driver, Pool: a.Pool, Device: a.Device,
		Conditions: []metav1.Condition{{
			Type: condition, Status: metav1.ConditionTrue,
			Reason: d.Reason, Message: d.Message,
			LastTransitionTime: metav1.NewTime(now.UTC().Truncate(time.Second)),
		}},
	}
	if a.Share != "" {
		share := a.Share
		entry.ShareID = &share
	}
	type meta struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
		UID       string `json:"uid,omitempty"`
	}
	p := struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   meta   `json:"metadata"`
		Status     struct {
			Devices []resourcev1.AllocatedDeviceStatus `json:"devices"`
		} `json:"status"`
	}{APIVersion: "resource.k8s.io/v1", Kind: "ResourceClaim", Metadata: meta{a.Claim.Name, a.Claim.Namespace, string(a.ClaimUID)}}
	p.Status.Devices = []resourcev1.AllocatedDeviceStatus{entry}
	b, _ := json.Marshal(p) // the types marshal without error
	return b
}
