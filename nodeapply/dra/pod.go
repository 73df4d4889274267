package dra

import (
	"errors"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/pingnode/pingnode/nodeapply/devicepool"
)

// PodDevice is a device of the node's pool that one of a pod's claims was
// given.
type PodDevice struct {
	// PodClaim is the pod's name for the claim
	// (pod.spec.resourceClaims[].name), empty for the claim the scheduler
	// made for the pod's extended resources; Claim is the
	// ResourceClaim's name.
	PodClaim, Claim string
	// Request is the claim's request that the device serves.
	Request string
	// Device is the device as published: its name, attributes and
	// capacity; only the name when the pool no longer lists it.
	Device devicepool.Device
}

// ErrNotAllowed is wrapped by the error of [PodDevices] for a pod that
// may not run with its claims as they are: a claim that does not exist,
// is not allocated, was made from a template for another pod, or is not
// reserved for the pod. The kubelet does not run such a pod either; the
// scheduler or the resource claim controller may still be at work, so a
// provider tries again later.
var ErrNotAllowed = errors.New("not allowed to use its ResourceClaim")

// PodDevices returns the devices of the pool named pool of driver that
// pod's claims were given, claim by claim in the pod's order, then of the
// claim the scheduler made for the pod's extended resources through a
// DeviceClass's extendedResourceName (pod.status.extendedResourceClaimStatus,
// which the kubelet reads as one more claim of the pod), each with
// what pool (the pool as published, [Pool]) says of it. claim returns the
// ResourceClaim of the pod's namespace by name, or nil; a provider reads
// it from an informer. The devices of other drivers and pools are not
// this provider's and are left out.
//
// As the kubelet, it refuses (an error wrapping [ErrNotAllowed]) a pod
// whose claim does not exist, is not allocated, was made from a
// ResourceClaimTemplate but is not owned by the pod, or whose
// status.reservedFor does not name the pod. A claim the resource claim
// controller decided not to make (a template's claim with no name in the
// pod's status) gives no device.
func PodDevices(pod *corev1.Pod, claim func(name string) *resourcev1.ResourceClaim, pool []devicepool.Device, driver, poolName string) ([]PodDevice, error) {
	published := make(map[string]*devicepool.Device, len(pool))
	for i := range pool {
		published[pool[i].Name] = &pool[i]
	}
	claims := pod.Spec.ResourceClaims
	if s := pod.Status.ExtendedResourceClaimStatus; s != nil {
		claims = append(slices.Clip(claims), corev1.PodResourceClaim{ResourceClaimName: &s.ResourceClaimName})
	}
	var out []PodDevice
	for _, pc := range claims {
		name, fromTemplate, err := claimName(pod, &pc)
		if err != nil {
			return nil, err
		}
		if name == nil {
			continue
		}
		c := claim(*name)
		if err := allowed(pod, c, *name, fromTemplate); err != nil {
			return nil, err
		}
		for _, r := range c.Status.Allocation.Devices.Results {
			if r.Driver != driver || r.Pool != poolName {
				continue
			}
			d := devicepool.Device{Name: r.Device, Held: true}
			if p, ok := published[r.Device]; ok {
				d = *p
			}
			out = append(out, PodDevice{PodClaim: pc.Name, Claim: *name, Request: r.Request, Device: d})
		}
	}
	return out, nil
}

// claimName returns the name of the ResourceClaim behind a pod's claim,
// nil when none is to be made, and whether it was made from a template.
func claimName(pod *corev1.Pod, pc *corev1.PodResourceClaim) (*string, bool, error) {
	switch {
	case pc.ResourceClaimName != nil:
		return pc.ResourceClaimName, false, nil
	case pc.ResourceClaimTemplateName != nil:
		for _, s := range pod.Status.ResourceClaimStatuses {
			if s.Name == pc.Name {
				return s.ResourceClaimName, true, nil
			}
		}
		return nil, true, fmt.Errorf("pod %s/%s %w: the claim %q from template %s is not made yet", pod.Namespace, pod.Name, ErrNotAllowed, pc.Name, *pc.ResourceClaimTemplateName)
	}
	return nil, false, fmt.Errorf("pod %s/%s %w: the claim %q names neither a claim nor a template", pod.Namespace, pod.Name, ErrNotAllowed, pc.Name)
}

// allowed returns why pod may not use the claim c, named name, or nil.
func allowed(pod *corev1.Pod, c *resourcev1.ResourceClaim, name string, fromTemplate bool) error {
	refuse := func(why string) error {
		return fmt.Errorf("pod %s/%s %w %s: %s", pod.Namespace, pod.Name, ErrNotAllowed, name, why)
	}
	switch {
	case c == nil:
		return refuse("it does not exist")
	case c.Namespace != pod.Namespace:
		return refuse("it is in another namespace")
	case fromTemplate && !metav1.IsControlledBy(c, pod):
		return refuse("it was made from a template for another pod")
	case c.Status.Allocation == nil:
		return refuse("it is not allocated")
	}
	for _, r := range c.Status.ReservedFor {
		if r.UID == pod.UID {
			return nil
		}
	}
	return refuse("it is not reserved for the pod")
}
