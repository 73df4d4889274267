package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/vnode"
	"github.com/pingnode/pingnode/nodeapply"
)

// A provider that adopts pingnode takes over the node interLink 0.6.2
// left, in whatever state. The node here is the one interLink
// leaves after a failed ping: Ready False, NetworkUnavailable True, and so
// tainted by the real node lifecycle controller.

// interLinkFailedPing is the node as interLink 0.6.2 leaves it after a
// failed ping.
const interLinkFailedPing = "../../testdata/nodes/interlink-failed-ping.json"

// interLinkTaint is interLink's own taint, the one its users' pods
// tolerate.
const interLinkTaint = "virtual-node.interlink/no-schedule=true:NoSchedule"

// interLinkNode returns the node of interLinkFailedPing, named name: its
// labels, annotations, providerID and status as interLink wrote them, the
// condition times now, as interLink writes them at each ping. Of its
// taints it keeps interLink's own: the node lifecycle controller's are
// the controller's to put back.
func interLinkNode(t *testing.T, name string) *corev1.Node {
	t.Helper()
	data, err := os.ReadFile(interLinkFailedPing)
	if err != nil {
		t.Fatal(err)
	}
	var node corev1.Node
	if err := json.Unmarshal(data, &node); err != nil {
		t.Fatalf("%s: %v", interLinkFailedPing, err)
	}
	node.Name, node.ResourceVersion = name, ""
	node.Labels[corev1.LabelHostname] = name
	node.Spec.ProviderID = "external:///" + name
	var taints []corev1.Taint
	for _, taint := range node.Spec.Taints {
		if !strings.HasPrefix(taint.Key, "node.kubernetes.io/") {
			taints = append(taints, taint)
		}
	}
	node.Spec.Taints = taints
	now := metav1.Now()
	for i := range node.Status.Conditions {
		node.Status.Conditions[i].LastHeartbeatTime = now
		node.Status.Conditions[i].LastTransitionTime = now
	}
	return &node
}

// createTestPod creates the pod in the default namespace, and deletes it
// and its events when the test ends.
func createTestPod(t *testing.T, pod *corev1.Pod) {
	t.Helper()
	pod.Namespace = metav1.NamespaceDefault
	deletePod(t, pod.Name) // left by a run that was killed
	deletePodEvents(t, pod.Name)
	if _, err := client.CoreV1().Pods(pod.Namespace).Create(t.Context(), pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("pod %s: %v", pod.Name, err)
	}
	t.Cleanup(func() {
		deletePod(t, pod.Name)
		deletePodEvents(t, pod.Name)
	})
}

// deletePodEvents deletes the events on the pod of this name in the
// default namespace: the scheduler's, the taint eviction controller's.
func deletePodEvents(t *testing.T, name string) {
	ctx := context.Background()
	events := client.CoreV1().Events(metav1.NamespaceDefault)
	list, err := events.List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.kind=Pod,involvedObject.name=" + name})
	if err != nil {
		t.Errorf("listing the events of pod %s: %v", name, err)
		return
	}
	for _, e := range list.Items {
		if err := events.Delete(ctx, e.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting event %s: %v", e.Name, err)
		}
	}
}

// untolerated lists the taints of the node that keep the pod off it
// (NoSchedule and NoExecute) and that none of its tolerations, as stored
// (admission's among them), tolerates: those that the scheduler's
// TaintToleration filter finds, whose message no longer names them
// ("node(s) had untolerated taint(s)").
func untolerated(t *testing.T, pod, node string) []string {
	t.Helper()
	got, err := client.CoreV1().Pods(metav1.NamespaceDefault).Get(t.Context(), pod, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, taint := range stored(t.Context(), t, node).Spec.Taints {
		if taint.Effect == corev1.TaintEffectPreferNoSchedule {
			continue
		}
		if !slices.ContainsFunc(got.Spec.Tolerations, func(tol corev1.Toleration) bool { return tolerates(tol, taint) }) {
			out = append(out, taint.ToString())
		}
	}
	return out
}

// tolerates reports whether the toleration tolerates the taint, by the
// API's rules (without the comparison operators, which no pod here uses).
func tolerates(tol corev1.Toleration, taint corev1.Taint) bool {
	switch {
	case tol.Effect != "" && tol.Effect != taint.Effect:
		return false
	case tol.Key != "" && tol.Key != taint.Key:
		return false
	case tol.Operator == corev1.TolerationOpExists:
		return true
	default:
		return (tol.Operator == "" || tol.Operator == corev1.TolerationOpEqual) && tol.Value == taint.Value
	}
}

// forgetNodes has the test's cleanup delete, besides what deleteNode
// does, the last event on each node: the node lifecycle controller's
// RemovingNode, which it records at its first pass (each second) after
// the node's deletion, after deleteNode has deleted the events. Call it
// before startProvider, so that its cleanup runs after that of
// startProvider, which deletes the node. A node the controller never
// knew gets no such event: the wait for it is short.
func forgetNodes(t *testing.T, names ...string) {
	t.Cleanup(func() {
		for _, name := range names {
			deleteNode(t, name)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		for _, name := range names {
			for ctx.Err() == nil {
				list, err := client.CoreV1().Events(metav1.NamespaceAll).List(ctx, metav1.ListOptions{
					FieldSelector: "involvedObject.kind=Node,involvedObject.name=" + name + ",reason=RemovingNode",
				})
				if err == nil && len(list.Items) > 0 {
					break
				}
				select {
				case <-ctx.Done():
				case <-time.After(100 * time.Millisecond):
				}
			}
			if err := deleteNodeEvents(context.Background(), name); err != nil {
				t.Errorf("deleting the events of %s: %v", name, err)
			}
		}
	})
}

// podImage is the image of the test pods: never pulled, no kubelet runs
// them.
const podImage = "registry.k8s.io/pause:3.10"

// TestTakeoverFromInterLink: a node exactly as interLink 0.6.2 leaves it
// after a failed ping, tainted by the node lifecycle controller not-ready
// and network-unavailable, is taken over by the provider, whose plugin
// answers; a pod that tolerates interLink's own taint and nothing else is
// bound to it within 30 s of the provider's start. NetworkUnavailable
// turns False (VirtualNode), so the controller lifts its taint; OutOfDisk,
// a type nothing reads, stays as interLink left it; interLink's taint,
// labels and annotations stay, and so do they after the plugin's reply
// brings its own resources and taint.
func TestTakeoverFromInterLink(t *testing.T) {
	needsControlPlane(t)
	const name, podName = "vk-takeover", "takeover-interlink-pod"
	deleteNode(t, name) // left by a run that was killed
	// Before startProvider: what the provider left is gone whether it
	// started or not.
	forgetNodes(t, name)

	// Registered by interLink's node controller, then its status as
	// interLink's failed ping writes it.
	want := interLinkNode(t, name)
	created, err := client.CoreV1().Nodes().Create(t.Context(), want.DeepCopy(), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// interLink's Virtual Kubelet renews the node's Lease, as a kubelet
	// does; it was last renewed a few seconds ago.
	holder, seconds := name, int32(40)
	renewed := metav1.NewMicroTime(time.Now().Add(-5 * time.Second))
	if _, err := client.CoordinationV1().Leases(corev1.NamespaceNodeLease).Create(t.Context(), &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{
			Name:            name,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: name, UID: created.UID}},
		},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &seconds, RenewTime: &renewed},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		node := stored(t.Context(), t, name)
		node.Status = *want.Status.DeepCopy()
		_, err := client.CoreV1().Nodes().UpdateStatus(t.Context(), node, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "the node lifecycle controller taints interLink's node not-ready and network-unavailable", func(ctx context.Context) (bool, string) {
		taints := allTaints(stored(ctx, t, name))
		return taints[interLinkTaint] && taints[corev1.TaintNodeNotReady+":NoSchedule"] && taints[corev1.TaintNodeNetworkUnavailable+":NoSchedule"],
			"taints " + strings.Join(keys(taints), ", ")
	})
	before := stored(t.Context(), t, name)
	if got, want := conditionsBrief(before), conditionsBrief(want); len(got) != 6 || !maps.Equal(got, want) {
		t.Fatalf("interLink's conditions as stored: %v, want %v", got, want)
	}
	outOfDisk := *vnode.ConditionNamed(before, "OutOfDisk")
	t.Logf("as interLink left it: taints %v, conditions %v", keys(allTaints(before)), conditionsBrief(before))

	// A pod of interLink's users: it tolerates interLink's taint, and
	// nothing else (not even the DefaultTolerationSeconds that admission
	// adds matter here: they are NoExecute tolerations, for eviction).
	createTestPod(t, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: podName},
		Spec: corev1.PodSpec{
			NodeSelector: map[string]string{corev1.LabelHostname: name},
			Tolerations: []corev1.Toleration{
				{Key: "virtual-node.interlink/no-schedule", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
			},
			Containers: []corev1.Container{{Name: "job", Image: podImage}},
		},
	})
	why := pending(t, podName)
	keptOff := untolerated(t, podName, name)
	if len(keptOff) == 0 || !strings.Contains(why, "untolerated taint") {
		t.Errorf("unschedulable for %q; untolerated taints %v", why, keptOff)
	}
	for _, taint := range keptOff {
		if !strings.HasPrefix(taint, "node.kubernetes.io/") {
			t.Errorf("the pod does not tolerate %s, not a taint of the controller's", taint)
		}
	}
	t.Logf("before the takeover: %s; untolerated: %v", why, keptOff)

	start := time.Now()
	p, plugin := startProvider(t, name, time.Hour)
	within(t, 30*time.Second-time.Since(start), podName+" is bound to the node taken over", func(ctx context.Context) (bool, string) {
		got, why, err := placement(ctx, podName)
		if err != nil {
			return false, err.Error()
		}
		return got == name, "unschedulable: " + why + "; taints " + strings.Join(keys(allTaints(stored(ctx, t, name))), ", ")
	})
	t.Logf("bound %s after the provider's start", time.Since(start).Round(time.Millisecond))
	// The pod tolerates not-ready:NoExecute (admission's 300 s), which
	// the controller lifts on its own pass, maybe after the pod landed.
	schedulable(t, name)

	node := stored(t.Context(), t, name)
	for _, c := range []struct {
		typ    corev1.NodeConditionType
		status corev1.ConditionStatus
		reason string
	}{
		{corev1.NodeReady, corev1.ConditionTrue, nodeapply.ReasonPluginReachable},
		{nodeapply.DefaultConnectivityCondition, corev1.ConditionTrue, nodeapply.ReasonPingSuccessful},
		{corev1.NodeNetworkUnavailable, corev1.ConditionFalse, nodeapply.ReasonVirtualNode},
		{corev1.NodeMemoryPressure, corev1.ConditionFalse, nodeapply.ReasonVirtualNode},
		{corev1.NodeDiskPressure, corev1.ConditionFalse, nodeapply.ReasonVirtualNode},
		{corev1.NodePIDPressure, corev1.ConditionFalse, nodeapply.ReasonVirtualNode},
	} {
		got := vnode.ConditionNamed(node, c.typ)
		if got == nil || got.Status != c.status || got.Reason != c.reason {
			t.Errorf("%s = %+v, want %s (%s)", c.typ, got, c.status, c.reason)
		}
	}
	// Left as it was: the node controller refreshes every condition's
	// heartbeat as it writes, but nothing else of it changes.
	if got := vnode.ConditionNamed(node, "OutOfDisk"); got == nil || got.Status != outOfDisk.Status || got.Reason != outOfDisk.Reason ||
		got.Message != outOfDisk.Message || !got.LastTransitionTime.Equal(&outOfDisk.LastTransitionTime) {
		t.Errorf("OutOfDisk = %+v, want it as interLink left it: %+v", got, outOfDisk)
	}
	// The provider's static taints are not put on a node it takes over
	// (it registers none: the node exists), which is why interLink's
	// users' pods land.
	if got := allTaints(node); !got[interLinkTaint] {
		t.Errorf("taints %v, want interLink's kept", keys(got))
	} else {
		t.Logf("taken over: taints %v", keys(got))
	}
	eventually(t, "the provider renews interLink's Lease", func(ctx context.Context) (bool, string) {
		lease, err := nodeLease(ctx, name)
		if err != nil {
			return false, err.Error()
		}
		if owners := lease.OwnerReferences; len(owners) != 1 || owners[0].UID != created.UID {
			return false, fmt.Sprintf("owners %+v", owners)
		}
		return lease.Spec.RenewTime != nil && lease.Spec.RenewTime.After(renewed.Time), fmt.Sprintf("renewed at %v", lease.Spec.RenewTime)
	})

	// The plugin's reply comes on top: its resources and taint, and
	// interLink's taint is not the plugin's to remove.
	plugin.reply(http.StatusOK, goodReply, 0)
	eventually(t, "nothing of interLink's lost, the plugin's reply stored", func(ctx context.Context) (bool, string) {
		return interLinkKept(ctx, t, name, want)
	})
	if got, _, _ := placement(t.Context(), podName); got != name {
		t.Errorf("%s is on %q, want it still on %s", podName, got, name)
	}
	noWriteErrors(t, p)
}

// interLinkKept reports whether the node keeps what interLink left that
// pingnode does not own (its labels, its annotations, its taint, its
// providerID), and has the good reply's resources and the plugin's taint,
// listed alone in the ownership annotation.
func interLinkKept(ctx context.Context, t *testing.T, name string, interLink *corev1.Node) (bool, string) {
	t.Helper()
	node := stored(ctx, t, name)
	if ok, why := hasResources(node, goodResources); !ok {
		return false, why
	}
	for k, v := range interLink.Labels {
		if node.Labels[k] != v {
			return false, "label " + k + " = " + node.Labels[k] + ", want " + v
		}
	}
	for k, v := range interLink.Annotations {
		if got, ok := node.Annotations[k]; !ok || got != v {
			return false, "annotation " + k + " = " + got + ", want " + v
		}
	}
	if node.Spec.ProviderID != interLink.Spec.ProviderID {
		return false, "providerID " + node.Spec.ProviderID
	}
	if got := allTaints(node); !got[interLinkTaint] || !got[pluginTaint] {
		return false, "taints " + strings.Join(keys(got), ", ")
	}
	if got := node.Annotations[nodeapply.DefaultOwnershipAnnotation]; got != "vendor.example.com/maintenance:NoSchedule" {
		return false, "ownership annotation " + got
	}
	return true, ""
}
