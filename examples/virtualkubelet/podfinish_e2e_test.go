package main

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/logcount"
	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/pods"
)

// The end of a pod deleted on the node (internal/pods), against the real
// API server: a graceful delete, as kubectl delete pod sends it, marks
// the pod, and only its node ends it.

// longGrace is the termination grace period of the pods these tests
// delete: far longer than any test waits, so that a pod gone was deleted
// by the provider, not by its grace running out (nothing in testenv
// deletes a pod whose grace ran out, either: that is the kubelet's job).
const longGrace = int64(3600)

// finishedLine is what the provider logs when it has deleted a pod.
const finishedLine = "a pod being deleted on the node is deleted"

// terminatingPod is a pod bound to node at once (no scheduler), tolerating
// the provider's taints and the good reply's, with a long grace period.
func terminatingPod(name, node string) *corev1.Pod {
	grace := longGrace
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{
			NodeName: node,
			Tolerations: append(providerTolerations(),
				corev1.Toleration{Key: "vendor.example.com/maintenance", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}),
			Containers:                    []corev1.Container{{Name: "job", Image: podImage}},
			TerminationGracePeriodSeconds: &grace,
		},
	}
}

// deleteGracefully deletes the pod of this name as kubectl delete pod
// does (no grace period given: the pod's own), and returns its UID.
func deleteGracefully(t *testing.T, name string) types.UID {
	t.Helper()
	pods := client.CoreV1().Pods(metav1.NamespaceDefault)
	pod, err := pods.Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := pods.Delete(t.Context(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("deleting %s: %v", name, err)
	}
	return pod.UID
}

// terminating reports whether the pod is there and being deleted, with a
// grace period left.
func terminating(ctx context.Context, name string) (bool, string) {
	pod, err := client.CoreV1().Pods(metav1.NamespaceDefault).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return false, err.Error()
	}
	if !pods.BeingDeleted(pod) {
		return false, fmt.Sprintf("deletionTimestamp %v, grace %v", pod.DeletionTimestamp, pod.DeletionGracePeriodSeconds)
	}
	return true, ""
}

// gone reports whether the pod of this name and UID is gone.
func gone(ctx context.Context, name string, uid types.UID) (bool, string) {
	pod, err := client.CoreV1().Pods(metav1.NamespaceDefault).Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return true, ""
	case err != nil:
		return false, err.Error()
	case pod.UID != uid:
		return true, "" // another pod of the name
	}
	return false, fmt.Sprintf("still there: deletionTimestamp %v, grace %v", pod.DeletionTimestamp, pod.DeletionGracePeriodSeconds)
}

// TestPodDeleteFinished: a pod bound to the node, with a grace period of
// an hour, deleted as kubectl delete pod deletes it, is gone within
// moments: the provider deletes it with grace period 0 and its UID as a
// precondition, as a kubelet does once the pod has stopped, and says so
// once. While the plugin does not answer, a pod deleted stays Terminating
// over many failed pings, as on a real node that cannot be reached; the
// first answer ends it. The node keeps its resources and taints
// throughout.
func TestPodDeleteFinished(t *testing.T) {
	needsControlPlane(t)
	const name = "vk-finish"
	log := logcount.New(t.Output(), finishedLine)
	p, plugin := startProviderLogging(t, name, time.Hour, log)
	plugin.reply(http.StatusOK, goodReply, 0)
	eventually(t, "the good reply is stored", func(ctx context.Context) (bool, string) { return nothingLost(ctx, t, name, false) })

	const first = "vk-finish-1"
	createTestPod(t, terminatingPod(first, name))
	uid := deleteGracefully(t, first)
	eventually(t, first+" is deleted", func(ctx context.Context) (bool, string) { return gone(ctx, first, uid) })
	eventually(t, "the delete logged", func(context.Context) (bool, string) {
		return log.Count() >= 1, fmt.Sprintf("%q logged %d times", finishedLine, log.Count())
	})
	morePings(t, p, 3)
	if n := log.Count(); n != 1 {
		t.Errorf("%q logged %d times, want once", finishedLine, n)
	}

	// The plugin down: nothing says the backend has stopped the pod.
	plugin.reply(http.StatusServiceUnavailable, "upstream connect error", 0)
	failures := p.Count.Failures.Load()
	eventually(t, "a failed ping", func(context.Context) (bool, string) { return p.Count.Failures.Load() > failures, "no failure yet" })
	const second = "vk-finish-2"
	createTestPod(t, terminatingPod(second, name))
	uid = deleteGracefully(t, second)
	failures = p.Count.Failures.Load()
	eventually(t, "ten more failed pings", func(context.Context) (bool, string) { return p.Count.Failures.Load() >= failures+10, "pings" })
	if ok, why := terminating(t.Context(), second); !ok {
		t.Fatalf("during the outage: %s, want %s Terminating", why, second)
	}
	plugin.reply(http.StatusOK, goodReply, 0)
	eventually(t, second+" is deleted once the plugin answers", func(ctx context.Context) (bool, string) { return gone(ctx, second, uid) })
	// The provider logs the delete after the API server has done it: the
	// line may come a moment after the pod is gone, and once.
	eventually(t, "the second delete logged", func(context.Context) (bool, string) {
		return log.Count() >= 2, fmt.Sprintf("%q logged %d times", finishedLine, log.Count())
	})
	morePings(t, p, 3)
	if n := log.Count(); n != 2 {
		t.Errorf("%q logged %d times, want twice", finishedLine, n)
	}
	eventually(t, "nothing lost", func(ctx context.Context) (bool, string) { return nothingLost(ctx, t, name, false) })
}
