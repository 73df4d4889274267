package confirm_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/pingnode/pingnode/nodeapply/dra/confirm"
)

const driver = "backend.pingnode.io"

// claim is the claim the scheduler writes for a pod that asks for
// confirmation by its extended resource, as allocated and reserved at
// PreBind: a share of vk-0's confirmation device, the binding conditions
// copied from the device, the node selector of a device that binds to
// its node, and what status.devices holds of the share (conditions).
func claim(conditions ...metav1.Condition) *resourcev1.ResourceClaim {
	c := &resourcev1.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: "hpc", Name: "job-1-extended-resources-x7k2p", UID: "claim-uid"},
		Status: resourcev1.ResourceClaimStatus{
			Allocation: &resourcev1.AllocationResult{
				Devices: resourcev1.DeviceAllocationResult{Results: []resourcev1.DeviceRequestAllocationResult{
					{Request: "container-0-request-0", Driver: "gpu.example.com", Pool: "vk-0", Device: "gpu-0"},
					{
						Request: "container-0-request-1", Driver: driver, Pool: "vk-0-confirm", Device: "confirm",
						ShareID:                  ptr.To(types.UID("6d2b5c1e")),
						BindingConditions:        []string{confirm.ConditionRuns},
						BindingFailureConditions: []string{confirm.ConditionRefused},
					},
				}},
				NodeSelector: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
					MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"vk-0"}}},
				}}},
				AllocationTimestamp: ptr.To(metav1.NewTime(seconds(0))),
			},
			ReservedFor: []resourcev1.ResourceClaimConsumerReference{{Resource: "pods", Name: "job-1", UID: "pod-uid"}},
		},
	}
	if len(conditions) > 0 {
		c.Status.Devices = []resourcev1.AllocatedDeviceStatus{
			{Driver: "gpu.example.com", Pool: "vk-0", Device: "gpu-0", Conditions: []metav1.Condition{{Type: confirm.ConditionRuns, Status: metav1.ConditionTrue}}},
			{Driver: driver, Pool: "vk-0-confirm", Device: "confirm", ShareID: ptr.To("6d2b5c1e"), Conditions: conditions},
		}
	}
	return c
}

func condition(kind string, status metav1.ConditionStatus) metav1.Condition {
	return metav1.Condition{Type: kind, Status: status, Reason: "Any", LastTransitionTime: metav1.NewTime(seconds(1))}
}

func TestAllocations(t *testing.T) {
	want := func(s confirm.Status) []confirm.Allocation {
		return []confirm.Allocation{{
			Claim: types.NamespacedName{Namespace: "hpc", Name: "job-1-extended-resources-x7k2p"}, ClaimUID: "claim-uid",
			Driver: driver, Pool: "vk-0-confirm", Device: "confirm", Share: "6d2b5c1e",
			Node: "vk-0", Allocated: seconds(0),
			Pods:   []confirm.Pod{{Name: "job-1", UID: "pod-uid"}},
			Status: s,
		}}
	}
	unallocated := claim()
	unallocated.Status = resourcev1.ResourceClaimStatus{}
	twoNodes := claim()
	twoNodes.Status.Allocation.NodeSelector.NodeSelectorTerms[0].MatchFields[0].Values = []string{"vk-0", "vk-1"}
	tests := []struct {
		name   string
		claims []*resourcev1.ResourceClaim
		driver string
		want   []confirm.Allocation
	}{
		{"pending", []*resourcev1.ResourceClaim{nil, claim(), unallocated}, driver, want(confirm.Pending)},
		{"conditions not true are pending", []*resourcev1.ResourceClaim{claim(condition(confirm.ConditionRuns, metav1.ConditionFalse), condition(confirm.ConditionRefused, metav1.ConditionUnknown))}, driver, want(confirm.Pending)},
		{"confirmed", []*resourcev1.ResourceClaim{claim(condition(confirm.ConditionRuns, metav1.ConditionTrue))}, driver, want(confirm.Confirmed)},
		{"refused before runs", []*resourcev1.ResourceClaim{claim(condition(confirm.ConditionRuns, metav1.ConditionTrue), condition(confirm.ConditionRefused, metav1.ConditionTrue))}, driver, want(confirm.Refused)},
		{"another driver's", []*resourcev1.ResourceClaim{claim()}, "gpu.example.com", nil},
		{"no single node", []*resourcev1.ResourceClaim{twoNodes}, driver, func() []confirm.Allocation {
			a := want(confirm.Pending)
			a[0].Node = ""
			return a
		}()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, confirm.Allocations(tc.claims, tc.driver)); diff != "" {
				t.Errorf("Allocations (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPatch: a confirmation is the claim's status.devices entry for the
// share, with one condition, as a server-side apply patch that names the
// claim by its UID; the time is to the second, as the API server keeps it.
func TestPatch(t *testing.T) {
	a := confirm.Allocations([]*resourcev1.ResourceClaim{claim()}, driver)
	res := confirm.Step(a, []confirm.Job{{Pod: "pod-uid", Namespace: "hpc", Name: "job-1", Node: "vk-0", State: confirm.JobStarted}}, nil, seconds(12), confirm.Options{})
	if len(res.Decisions) != 1 || res.Decisions[0].Verdict != confirm.Confirm {
		t.Fatalf("Step: %v, want one confirmation", res.Decisions)
	}
	want := `{"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim",
	 "metadata":{"name":"job-1-extended-resources-x7k2p","namespace":"hpc","uid":"claim-uid"},
	 "status":{"devices":[{"driver":"backend.pingnode.io","pool":"vk-0-confirm","device":"confirm","shareID":"6d2b5c1e",
	   "conditions":[{"type":"pingnode.io/BackendRuns","status":"True","lastTransitionTime":"2026-12-03T09:00:12Z",
	     "reason":"BackendRuns","message":"the backend runs the pod"}]}]}}`
	if diff := cmp.Diff(decode(t, []byte(want)), decode(t, res.Decisions[0].Patch(seconds(12.7)))); diff != "" {
		t.Errorf("Patch (-want +got):\n%s", diff)
	}
	if p := (confirm.Decision{Allocation: a[0]}).Patch(seconds(12)); p != nil {
		t.Errorf("Patch of a wait = %s, want nil", p)
	}
}

func decode(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return v
}

// TestPublished: the device is in the shape the scheduler holds a pod
// for, and the class selects it by its attribute and serves the
// extended resource.
func TestPublished(t *testing.T) {
	d := confirm.Device("confirm")
	want := resourcev1.Device{
		Name:                     "confirm",
		Attributes:               map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{"pingnode.io/confirmation": {BoolValue: ptr.To(true)}},
		BindsToNode:              ptr.To(true),
		BindingConditions:        []string{"pingnode.io/BackendRuns"},
		BindingFailureConditions: []string{"pingnode.io/BackendRefused"},
		AllowMultipleAllocations: ptr.To(true),
	}
	if diff := cmp.Diff(want, d); diff != "" {
		t.Errorf("Device (-want +got):\n%s", diff)
	}
	c := confirm.Class("pingnode-confirmed", driver, "pingnode.io/confirmed")
	if got, want := c.Spec.Selectors[0].CEL.Expression,
		`device.driver == "backend.pingnode.io" && "confirmation" in device.attributes["pingnode.io"] && device.attributes["pingnode.io"].confirmation`; got != want {
		t.Errorf("Class selector = %s, want %s", got, want)
	}
	if got := ptr.Deref(c.Spec.ExtendedResourceName, ""); got != "pingnode.io/confirmed" {
		t.Errorf("Class extended resource = %q", got)
	}
	// Each device is its own: changing one leaves the next as it was.
	*d.BindsToNode = false
	d.BindingConditions[0] = "x"
	if diff := cmp.Diff(want, confirm.Device("confirm")); diff != "" {
		t.Errorf("Device after a change of another (-want +got):\n%s", diff)
	}
}

// TestSlice: the slice is on the node, in a pool named after it, owned
// by it, and shares nothing with it.
func TestSlice(t *testing.T) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "vk-0", UID: "node-uid"}}
	s := confirm.Slice(node, confirm.DefaultDriver)
	want := &resourcev1.ResourceSlice{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName:    "vk-0-",
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: "vk-0", UID: "node-uid", Controller: ptr.To(true)}},
		},
		Spec: resourcev1.ResourceSliceSpec{
			Driver: "confirm.pingnode.io", NodeName: ptr.To("vk-0"),
			Pool:    resourcev1.ResourcePool{Name: "vk-0", ResourceSliceCount: 1},
			Devices: []resourcev1.Device{confirm.Device("confirm")},
		},
	}
	if diff := cmp.Diff(want, s); diff != "" {
		t.Errorf("Slice (-want +got):\n%s", diff)
	}
	*s.Spec.NodeName = "other"
	if node.Name != "vk-0" {
		t.Errorf("the slice shares the node's name: %q", node.Name)
	}
}
