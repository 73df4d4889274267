package vnode

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/pingnode/pingnode/nodeapply/devicepool"
	"github.com/pingnode/pingnode/nodeapply/dra"
)

// The pods bound to the node and their devices, with a DRA driver. A
// kubelet hands a pod's devices to the driver when it admits the pod; a
// provider forwards them to its backend with the pod. This example says
// it, by an event on the pod, once per pod and outcome:
//
//   - Normal DevicesGiven, naming each device of the node's pool that
//     the pod's claims were given, and what it is (its productName and
//     memory, when it has them);
//   - Warning ClaimNotAllowed, with the reason, for a pod that may not
//     use its claims as they are (a claim missing, not allocated, made
//     from a template for another pod, or not reserved for it), as the
//     kubelet refuses such a pod.
//
// A pod's claims are read from the claim cache. The cache may not hold
// the scheduler's allocation yet when the pod is bound, so a refusal is
// said only once the claims as stored (a GET of each, as the kubelet
// reads them when it admits a pod) refuse it too. A pod refused may be
// allowed later (its claim reserved for it): that is said too. A pod with
// no device of the node's pool (its claims are of other drivers) is told
// nothing.
//
// A claim the scheduler made for a pod's extended resources
// (KEP-5004: a DeviceClass with spec.extendedResourceName serves a
// classic request such as example.com/t4: 1) is named in the pod's
// status.extendedResourceClaimStatus; it is read as one more claim of the
// pod, as the kubelet reads it.

// Event reasons of the pods' devices.
const (
	ReasonDevicesGiven    = "DevicesGiven"
	ReasonClaimNotAllowed = "ClaimNotAllowed"
)

// podsTold are the pods told of their devices, by UID, with what they
// were told; pods that are gone are forgotten.
type podsTold struct {
	pods  map[types.UID]podTold
	round uint64 // of the pings: a pod not seen at the last one is gone
	// lastReadError is the last failed read of a claim, logged when it
	// changes.
	lastReadError string
}

type podTold struct {
	outcome string // the event's reason and message
	// settled says the pod may use its claims (DevicesGiven, or no
	// device of the pool): nothing later changes it.
	settled bool
	round   uint64
}

// podDevices tells each pod bound to the node, once per outcome, which
// devices of pool, the node's pool after the ping, its claims were given.
func (p *Node) podDevices(ctx context.Context, pool []devicepool.Device) {
	d := p.devices
	if d == nil {
		return
	}
	t := &d.told
	t.round++
	for _, pod := range p.caches.BoundPods() {
		if !mayUseDevices(pod) {
			continue
		}
		was, seen := t.pods[pod.UID]
		if seen {
			was.round = t.round
			t.pods[pod.UID] = was
			if was.settled {
				continue
			}
		}
		cached := func(name string) *resourcev1.ResourceClaim { return p.caches.Claims.Get(pod.Namespace, name) }
		given, err := dra.PodDevices(pod, cached, pool, d.driver, d.pool)
		if err != nil && (!seen || was.outcome != refusedOutcome(err)) {
			// A refusal that would be news: the claims as stored decide.
			var readErr error
			given, err = dra.PodDevices(pod, p.storedClaim(ctx, pod.Namespace, &readErr), pool, d.driver, d.pool)
			if readErr != nil {
				if text := readErr.Error(); text != t.lastReadError {
					t.lastReadError = text
					p.log.Warn("reading a pod's claim; the next ping tries again", "pod", pod.Namespace+"/"+pod.Name, "error", readErr)
				}
				continue
			}
		}
		told := podTold{settled: err == nil, round: t.round}
		switch {
		case err != nil:
			told.outcome = refusedOutcome(err)
			if !seen || was.outcome != told.outcome {
				p.events.pod(pod, corev1.EventTypeWarning, ReasonClaimNotAllowed, err.Error())
			}
		case len(given) > 0:
			told.outcome = ReasonDevicesGiven
			p.events.pod(pod, corev1.EventTypeNormal, ReasonDevicesGiven, describeGiven(given, d.driver))
		}
		if t.pods == nil {
			t.pods = map[types.UID]podTold{}
		}
		t.pods[pod.UID] = told
	}
	for uid, told := range t.pods {
		if told.round != t.round {
			delete(t.pods, uid)
		}
	}
}

// mayUseDevices reports whether pod has claims and may still run: a pod
// being deleted, or that ended, is not admitted again.
func mayUseDevices(pod *corev1.Pod) bool {
	return (len(pod.Spec.ResourceClaims) > 0 || pod.Status.ExtendedResourceClaimStatus != nil) &&
		pod.DeletionTimestamp == nil && pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed
}

// storedClaim returns a function that reads a claim of namespace from the
// API server, nil when there is none; the first other failure is kept in
// failed.
func (p *Node) storedClaim(ctx context.Context, namespace string, failed *error) func(string) *resourcev1.ResourceClaim {
	return func(name string) *resourcev1.ResourceClaim {
		claim, err := p.client.ResourceV1().ResourceClaims(namespace).Get(ctx, name, metav1.GetOptions{})
		switch {
		case err == nil:
			return claim
		case !apierrors.IsNotFound(err) && *failed == nil:
			*failed = err
		}
		return nil
	}
}

// refusedOutcome is the outcome of a pod refused with err.
func refusedOutcome(err error) string {
	if errors.Is(err, dra.ErrNotAllowed) {
		return ReasonClaimNotAllowed + ": " + err.Error()
	}
	return err.Error()
}

// describeGiven names each device given and what it is: its productName
// and memory, as the driver's attributes or the short names say them.
func describeGiven(given []dra.PodDevice, driver string) string {
	parts := make([]string, 0, len(given))
	for _, g := range given {
		claim := "claim " + g.PodClaim
		if g.PodClaim == "" {
			claim = "its extended resources"
		}
		var what []string
		if a, ok := lookup(g.Device.Attributes, driver, "productName"); ok && a.StringValue != nil {
			what = append(what, fmt.Sprintf("productName %q", *a.StringValue))
		}
		if q, ok := lookup(g.Device.Capacity, driver, "memory"); ok {
			what = append(what, "memory "+q.String())
		}
		part := fmt.Sprintf("%s (%s, ResourceClaim %s, request %s)", g.Device.Name, claim, g.Claim, g.Request)
		if len(what) > 0 {
			part += ": " + strings.Join(what, ", ")
		}
		parts = append(parts, part)
	}
	return "given " + strings.Join(parts, "; ")
}

// lookup finds the attribute or capacity name, short or in the driver's
// domain.
func lookup[V any](m map[string]V, driver, name string) (V, bool) {
	if v, ok := m[name]; ok {
		return v, true
	}
	v, ok := m[driver+"/"+name]
	return v, ok
}
