package nodeapply

import (
	"encoding/json"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// The Virtual Kubelet node controller sends only status, labels and
// annotations once a node is registered (it patches the status subresource,
// which drops spec), so taints that a provider sets on its node object never
// reach the API server; and it keeps labels by a three-way merge against
// its own record of what it applied, which a label written by another
// path is not in. A [Result] gives the bytes a provider sends with its own
// client instead. Each patch is computed from the input and the output
// node alone; [Result.NeedsObjectPatch] and [Result.NeedsStatusPatch] say
// the same without building it.

// ObjectPatch returns the patch that brings the node object from the
// input of Apply to r.Node in what the plugin owns: spec.taints, the
// labels, and the two ownership annotations; nil when none differs. Send
// it to the node itself (no subresource) as a strategic merge patch
// (types.StrategicMergePatchType); it is also a valid JSON merge patch.
//
// spec.taints is an atomic list, so when the taints or their ownership
// annotation changed the patch carries the whole new list; labels and
// annotations merge by key, so it carries only the labels that changed
// (null for a removed one). It also carries the input's
// metadata.resourceVersion, as Kubernetes' own PatchNodeTaints does: if
// anyone changed the node since it was read (an administrator's kubectl
// taint or kubectl label, say), the API server answers 409 Conflict
// instead of overwriting their change. The provider then reads the node
// again, applies the ping again, and sends that result's patch. When the
// input has no resourceVersion, the patch has no precondition.
func (r Result) ObjectPatch() []byte {
	old, new := r.in, r.Node
	var p struct {
		Metadata struct {
			ResourceVersion string             `json:"resourceVersion,omitempty"`
			Labels          map[string]*string `json:"labels,omitempty"`
			Annotations     map[string]*string `json:"annotations,omitempty"`
		} `json:"metadata"`
		Spec *struct {
			Taints []corev1.Taint `json:"taints"`
		} `json:"spec,omitempty"`
	}
	annotations := map[string]*string{}
	if annotationChanged(r.ownership, old.Annotations, new.Annotations) || len(diffTaints(nil, old.Spec.Taints, new.Spec.Taints)) != 0 {
		annotations[r.ownership] = annotationValue(new.Annotations, r.ownership) // always with the taints
		p.Spec = &struct {
			Taints []corev1.Taint `json:"taints"`
		}{Taints: new.Spec.Taints}
		if p.Spec.Taints == nil {
			p.Spec.Taints = []corev1.Taint{}
		}
	}
	labels := labelsPatch(old.Labels, new.Labels)
	if annotationChanged(r.labelOwnership, old.Annotations, new.Annotations) || labels != nil {
		annotations[r.labelOwnership] = annotationValue(new.Annotations, r.labelOwnership)
	}
	if p.Spec == nil && labels == nil && len(annotations) == 0 {
		return nil
	}
	p.Metadata.ResourceVersion = old.ResourceVersion
	p.Metadata.Labels, p.Metadata.Annotations = labels, annotations
	return mustMarshal(p)
}

// annotationChanged reports whether the annotation key differs between
// old and new.
func annotationChanged(key string, old, new map[string]string) bool {
	o, hadOld := old[key]
	n, hasNew := new[key]
	return hadOld != hasNew || o != n
}

// annotationValue returns the value of the entry key of a map in a
// patch: null, which removes it, when m lacks it.
func annotationValue(m map[string]string, key string) *string {
	if v, ok := m[key]; ok {
		return &v
	}
	return nil
}

// labelsPatch returns the labels of new that old lacks or has otherwise,
// and null for those new lacks; nil when there are none.
func labelsPatch(old, new map[string]string) map[string]*string {
	var p map[string]*string
	set := func(key string, value *string) {
		if p == nil {
			p = map[string]*string{}
		}
		p[key] = value
	}
	for k, v := range new {
		if o, ok := old[k]; !ok || o != v {
			set(k, &v)
		}
	}
	for k := range old {
		if _, ok := new[k]; !ok {
			set(k, nil)
		}
	}
	return p
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
	responseChanged := annotationChanged(PingResponseAnnotation, old.Annotations, new.Annotations)
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
		}{Annotations: map[string]*string{PingResponseAnnotation: annotationValue(new.Annotations, PingResponseAnnotation)}}
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
