package nodeapply

import (
	"encoding/json"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// The Virtual Kubelet node controller sends only status, labels and
// annotations once a node is registered (it patches the status subresource,
// which drops spec), so taints that a provider sets on its node object never
// reach the API server. A [Result] gives the bytes a provider sends with
// its own client instead. Each patch is computed from the input and the
// output node alone; [Result.NeedsTaintsPatch] and
// [Result.NeedsStatusPatch] say the same without building it.

// TaintsPatch returns the patch that brings the node object from the
// input of Apply to r.Node in spec.taints and the ownership annotation, or
// nil when neither differs. Send it to the node itself (no subresource) as
// a strategic merge patch (types.StrategicMergePatchType); it is also a
// valid JSON merge patch.
//
// spec.taints is an atomic list, so the patch carries the whole new list.
// It also carries the input's metadata.resourceVersion, as Kubernetes' own
// PatchNodeTaints does: if anyone changed the node since it was read (an
// administrator's kubectl taint, say), the API server answers 409
// Conflict instead of overwriting their change. The provider then reads
// the node again, applies the ping again, and sends that result's patch.
// When the input has no resourceVersion, the patch has no precondition.
func (r Result) TaintsPatch() []byte {
	old, key := r.in, r.ownership
	oldValue, hadOld := old.Annotations[key]
	newValue, hasNew := r.Node.Annotations[key]
	if len(diffTaints(nil, old.Spec.Taints, r.Node.Spec.Taints)) == 0 && oldValue == newValue && hadOld == hasNew {
		return nil
	}
	var p struct {
		Metadata struct {
			ResourceVersion string             `json:"resourceVersion,omitempty"`
			Annotations     map[string]*string `json:"annotations"`
		} `json:"metadata"`
		Spec struct {
			Taints []corev1.Taint `json:"taints"`
		} `json:"spec"`
	}
	p.Metadata.ResourceVersion = old.ResourceVersion
	p.Metadata.Annotations = map[string]*string{key: nil} // null removes it
	if hasNew {
		p.Metadata.Annotations[key] = &newValue
	}
	p.Spec.Taints = r.Node.Spec.Taints
	if p.Spec.Taints == nil {
		p.Spec.Taints = []corev1.Taint{}
	}
	return mustMarshal(p)
}

// StatusPatch returns the patch that brings the node's status from the
// input of Apply to r.Node: status.capacity and status.allocatable, the
// conditions, and interLink's [PingResponseAnnotation]; nil when none
// differs. Send it to the node's status subresource as a strategic merge
// patch (types.StrategicMergePatchType). It names only what changed: a
// resource that changed, and each condition that changed, whole (conditions merge by type, so those that others write are
// left alone). A provider that runs the Virtual Kubelet node controller
// does not need it: it hands r.Node to the controller, which sends the
// status itself.
func (r Result) StatusPatch() []byte {
	old, new := r.in, r.Node
	capacity := resourcesPatch(old.Status.Capacity, new.Status.Capacity)
	allocatable := resourcesPatch(old.Status.Allocatable, new.Status.Allocatable)
	conditions := conditionsPatch(old.Status.Conditions, new.Status.Conditions)
	oldResponse, hadResponse := old.Annotations[PingResponseAnnotation]
	newResponse, hasResponse := new.Annotations[PingResponseAnnotation]
	_, responseChanged := compareAnnotation("", oldResponse, hadResponse, newResponse, hasResponse)
	if capacity == nil && allocatable == nil && conditions == nil && !responseChanged {
		return nil
	}
	var p struct {
		Metadata *struct {
			Annotations map[string]*string `json:"annotations"`
		} `json:"metadata,omitempty"`
		Status struct {
			Capacity    map[corev1.ResourceName]*resource.Quantity `json:"capacity,omitempty"`
			Allocatable map[corev1.ResourceName]*resource.Quantity `json:"allocatable,omitempty"`
			Conditions  []corev1.NodeCondition                     `json:"conditions,omitempty"`
		} `json:"status"`
	}
	if responseChanged {
		p.Metadata = &struct {
			Annotations map[string]*string `json:"annotations"`
		}{Annotations: map[string]*string{PingResponseAnnotation: nil}}
		if hasResponse {
			p.Metadata.Annotations[PingResponseAnnotation] = &newResponse
		}
	}
	p.Status.Capacity, p.Status.Allocatable, p.Status.Conditions = capacity, allocatable, conditions
	return mustMarshal(p)
}

// conditionsPatch returns the conditions of new that old lacks or has
// otherwise, in new's order; nil when there are none.
func conditionsPatch(old, new []corev1.NodeCondition) []corev1.NodeCondition {
	var p []corev1.NodeCondition
	for i := range new {
		j := findCondition(old, new[i].Type)
		if j < 0 || !sameCondition(&old[j], &new[i]) {
			p = append(p, new[i])
		}
	}
	return p
}

// resourcesPatch returns the entries of new that differ from old by value;
// nil when there are none. Apply never removes a resource, so new has
// every name old has.
func resourcesPatch(old, new corev1.ResourceList) map[corev1.ResourceName]*resource.Quantity {
	var p map[corev1.ResourceName]*resource.Quantity
	set := func(name corev1.ResourceName, q *resource.Quantity) {
		if p == nil {
			p = map[corev1.ResourceName]*resource.Quantity{}
		}
		p[name] = q
	}
	for name, q := range new {
		if !holds(old, name, q) {
			q := q.DeepCopy()
			set(name, &q)
		}
	}
	return p
}

// mustMarshal marshals values that hold only strings, maps, slices and
// quantities, which cannot fail.
func mustMarshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic("nodeapply: marshal of a patch failed: " + err.Error()) // unreachable
	}
	return b
}
