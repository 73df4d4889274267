package confirm_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/pingnode/pingnode/nodeapply/dra/confirm"
)

const fuzzDriver = "backend.pingnode.io"

// fuzzClaim is a claim the scheduler allocated a share of vk-0's
// confirmation device to, reserved for its pod, with the share's entry in
// status.devices; its %s are the condition's type and status.
const fuzzClaim = `{
  "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
  "metadata": {"namespace": "hpc", "name": "job-1-extended-resources-x7k2p", "uid": "claim-uid"},
  "spec": {"devices": {"requests": [{"name": "container-0-request-0",
    "exactly": {"deviceClassName": "pingnode-confirmed", "allocationMode": "ExactCount", "count": 1}}]}},
  "status": {
    "allocation": {
      "devices": {"results": [{"request": "container-0-request-0", "driver": "backend.pingnode.io",
        "pool": "vk-0-confirm", "device": "confirm", "shareID": "4f0c7d2a-share",
        "bindingConditions": ["pingnode.io/BackendRuns"], "bindingFailureConditions": ["pingnode.io/BackendRefused"]}]},
      "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["vk-0"]}]}]},
      "allocationTimestamp": "2026-12-03T09:00:00Z"
    },
    "reservedFor": [{"resource": "pods", "name": "job-1", "uid": "pod-uid-1"}],
    "devices": [{"driver": "backend.pingnode.io", "pool": "vk-0-confirm", "device": "confirm", "shareID": "4f0c7d2a-share",
      "conditions": [{"type": "%s", "status": "%s", "reason": "R", "message": "", "lastTransitionTime": "2026-12-03T09:00:01Z"}]}]
  }
}`

func fuzzSeed(condition, status string) string {
	return strings.Replace(strings.Replace(fuzzClaim, "%s", condition, 1), "%s", status, 1)
}

func FuzzAllocations(f *testing.F) {
	pending := fuzzSeed(confirm.ConditionRuns, "False")
	for _, seed := range []string{
		pending,
		fuzzSeed(confirm.ConditionRuns, "True"),
		fuzzSeed(confirm.ConditionRefused, "True"),
		// A result of another driver, and one without the binding condition.
		strings.Replace(pending, `"results": [`, `"results": [{"request": "gpu", "driver": "gpu.example.com", "pool": "vk-0", "device": "gpu-0"},
		  {"request": "r", "driver": "backend.pingnode.io", "pool": "vk-0", "device": "plain"}, `, 1),
		// Node selectors that name no single node.
		strings.Replace(pending, `["vk-0"]`, `["vk-0", "vk-1"]`, 1),
		strings.Replace(pending, `"operator": "In"`, `"operator": "NotIn"`, 1),
		strings.Replace(pending, `"key": "metadata.name"`, `"key": "metadata.namespace"`, 1),
		strings.Replace(pending, `"nodeSelectorTerms": [`, `"nodeSelectorTerms": [{"matchFields": []}, `, 1),
		strings.Replace(pending, `{"matchFields"`, `{"matchExpressions": [{"key": "a", "operator": "Exists"}], "matchFields"`, 1),
		strings.Replace(pending, `"nodeSelector"`, `"ignored"`, 1),
		// No time, no pods, no share, no allocation.
		strings.Replace(pending, `"allocationTimestamp"`, `"ignored"`, 1),
		strings.Replace(pending, `"reservedFor"`, `"ignored"`, 1),
		strings.ReplaceAll(pending, `"shareID": "4f0c7d2a-share",`, ``),
		strings.Replace(pending, `"allocation"`, `"ignored"`, 1),
		// Malformed.
		pending[:len(pending)/2],
		strings.Replace(pending, `"results": [`, `"results": 5, "x": [`, 1),
		`{"status": {"allocation": null}}`,
		`null`,
		`[]`,
		``,
	} {
		f.Add([]byte(seed))
	}
	now := time.Date(2026, 12, 3, 9, 1, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, data []byte) {
		var c resourcev1.ResourceClaim
		if err := json.Unmarshal(data, &c); err != nil {
			t.Skip()
		}
		before := c.DeepCopy()
		allocations := confirm.Allocations([]*resourcev1.ResourceClaim{&c, nil}, fuzzDriver)
		if diff := cmp.Diff(before, &c); diff != "" {
			t.Fatalf("Allocations modified the claim (-before +after):\n%s", diff)
		}
		var results []resourcev1.DeviceRequestAllocationResult // of the confirmation devices
		if alloc := c.Status.Allocation; alloc != nil {
			for _, r := range alloc.Devices.Results {
				if r.Driver == fuzzDriver && slices.Contains(r.BindingConditions, confirm.ConditionRuns) {
					results = append(results, r)
				}
			}
		}
		if len(allocations) != len(results) {
			t.Fatalf("%d allocations, want one for each of the %d results of the driver with the condition:\n%v", len(allocations), len(results), allocations)
		}
		var jobs []confirm.Job
		for i, a := range allocations {
			fuzzCheck(t, &c, results[i], a)
			for _, p := range a.Pods {
				jobs = append(jobs, confirm.Job{Pod: p.UID, Namespace: a.Claim.Namespace, Name: p.Name, Node: a.Node, State: confirm.JobStarted})
			}
		}
		for _, d := range confirm.Step(allocations, jobs, nil, now, confirm.Options{}).Decisions {
			if d.Allocation.Node != "" && len(d.Allocation.Pods) > 0 && d.Verdict != confirm.Confirm {
				t.Errorf("%v: every pod runs on its node, got %v", d.Allocation, d)
			}
			patch := d.Patch(now)
			if d.Verdict == confirm.Wait {
				if patch != nil {
					t.Errorf("%v: patch %s, want nil", d, patch)
				}
				continue
			}
			var got resourcev1.ResourceClaim
			if err := json.Unmarshal(patch, &got); err != nil {
				t.Fatalf("%v: patch %q is not a claim: %v", d, patch, err)
			}
			if got.Name != c.Name || got.Namespace != c.Namespace || got.UID != c.UID || len(got.Status.Devices) != 1 {
				t.Errorf("%v: patch %s is not for the claim's share", d, patch)
			}
		}
	})
}

// fuzzCheck checks allocation a, read from claim c's result r.
func fuzzCheck(t *testing.T, c *resourcev1.ResourceClaim, r resourcev1.DeviceRequestAllocationResult, a confirm.Allocation) {
	t.Helper()
	share := ""
	if r.ShareID != nil {
		share = string(*r.ShareID)
	}
	if a.Driver != fuzzDriver || a.Pool != r.Pool || a.Device != r.Device || a.Share != share {
		t.Errorf("allocation %v, want the share %s/%s/%s/%s", a, r.Driver, r.Pool, r.Device, share)
	}
	if a.Claim.Namespace != c.Namespace || a.Claim.Name != c.Name || a.ClaimUID != c.UID {
		t.Errorf("allocation %v of claim %s/%s (%s)", a, c.Namespace, c.Name, c.UID)
	}
	alloc := c.Status.Allocation
	if a.Node != "" {
		s := alloc.NodeSelector
		if s == nil || len(s.NodeSelectorTerms) != 1 || len(s.NodeSelectorTerms[0].MatchFields) != 1 {
			t.Errorf("allocation on %q, but the node selector has not one term with one field: %v", a.Node, s)
		} else if f := s.NodeSelectorTerms[0].MatchFields[0]; f.Key != "metadata.name" || f.Operator != corev1.NodeSelectorOpIn || !slices.Equal(f.Values, []string{a.Node}) {
			t.Errorf("allocation on %q, but the node selector's field is %v", a.Node, f)
		}
	}
	var allocated time.Time
	if alloc.AllocationTimestamp != nil {
		allocated = alloc.AllocationTimestamp.Time
	}
	if !a.Allocated.Equal(allocated) {
		t.Errorf("allocation at %v, want the claim's time %v", a.Allocated, allocated)
	}
	var pods []confirm.Pod
	for _, ref := range c.Status.ReservedFor {
		if ref.APIGroup == "" && ref.Resource == "pods" {
			pods = append(pods, confirm.Pod{Name: ref.Name, UID: ref.UID})
		}
	}
	if diff := cmp.Diff(pods, a.Pods); diff != "" {
		t.Errorf("pods of %v (-want +got):\n%s", a, diff)
	}
	if a.Status == confirm.Pending {
		return
	}
	condition := map[confirm.Status]string{confirm.Confirmed: confirm.ConditionRuns, confirm.Refused: confirm.ConditionRefused}[a.Status]
	for _, d := range c.Status.Devices {
		if d.Driver == a.Driver && d.Pool == a.Pool && d.Device == a.Device && (d.ShareID == nil && a.Share == "" || d.ShareID != nil && *d.ShareID == a.Share) &&
			slices.ContainsFunc(d.Conditions, func(c metav1.Condition) bool { return c.Type == condition && c.Status == metav1.ConditionTrue }) {
			return
		}
	}
	t.Errorf("allocation %v, but no status.devices entry of the share has %s True: %v", a, condition, c.Status.Devices)
}
