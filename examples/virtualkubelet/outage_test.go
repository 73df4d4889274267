package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/vnode"
	"github.com/pingnode/pingnode/nodeapply"
)

// An outage of the plugin longer than a running pod's toleration of the
// NoExecute taints, under each unreachable policy, against the
// real node lifecycle controller, taint eviction controller and scheduler.

// outageToleration is how long the running pod of TestOutage tolerates
// the NoExecute taints not-ready and unreachable: far less than the
// outage lasts.
const outageToleration = 5 * time.Second

// keptWindow is how long after the plugin's first failed ping TestOutage
// watches, under UnreachableNoSchedule, that the running pod stays: the
// grace, then the toleration, and a margin for what would come between
// had Ready turned False (the provider's status write, the node lifecycle
// controller's pass each second and its NoExecute taint, the taint
// eviction controller's deletion) on a loaded machine of 2 cores under
// -race. Under UnreachableNotReady, the same outage evicts the pod well
// within it (the test says so when it does not), so a pod still there at
// its end is one the policy kept.
const keptWindow = testGrace + outageToleration + 10*time.Second

// startOutage readies an outage of the plugin of the node name: a
// provider for it, its plugin giving the good reply, with the grace
// testGrace and the unreachable policy; the administrator's taint; and a
// pod bound to it that tolerates the NoExecute taints not-ready and
// unreachable for outageToleration. The node has a zone of its own, with
// a neighbour whose plugin keeps answering: when every node of a zone is
// not Ready, the node lifecycle controller takes it for a fault of the
// zone (full disruption) and stops NoExecute tainting, and no pod would
// be evicted whatever the policy.
func startOutage(t *testing.T, name, pod string, policy nodeapply.Unreachable) (*vnode.Node, *fakePlugin) {
	t.Helper()
	neighbour := name + "-neighbour"
	for _, n := range []string{name, neighbour} {
		deleteNode(t, n) // left by a run that was killed
	}
	forgetNodes(t, name, neighbour)
	inZone := func(c *vnode.Config) { c.Static.Labels[corev1.LabelTopologyZone] = name }
	startProvider(t, neighbour, time.Hour, inZone)
	p, plugin := startGood(t, name, inZone, func(c *vnode.Config) { c.Grace, c.Unreachable = testGrace, policy })
	schedulable(t, neighbour)
	schedulable(t, name)
	addAdminTaint(t.Context(), t, name)
	eventually(t, "the administrator's taint is stored", func(ctx context.Context) (bool, string) { return nothingLost(ctx, t, name, true) })

	seconds := int64(outageToleration / time.Second)
	createTestPod(t, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: pod},
		Spec: corev1.PodSpec{
			NodeName: name, // bound at once, without the scheduler
			Tolerations: append(providerTolerations(),
				corev1.Toleration{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &seconds},
				corev1.Toleration{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &seconds},
				// The administrator's taint of these tests is NoExecute:
				// the pod tolerates it for good, so that only the
				// outage's taints could evict it.
				corev1.Toleration{Key: "admin.example.org/hold", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute},
			),
			Containers: []corev1.Container{{Name: "job", Image: podImage}},
		},
	})
	return p, plugin
}

// providerTolerations tolerate the provider's protected and static
// taints, as interLink's pods do.
func providerTolerations() []corev1.Toleration {
	return []corev1.Toleration{
		{Key: nodeapply.DefaultProtectedKey, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
		{Key: vnode.StaticTaintKey, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
	}
}

// untouched reports whether the pod is there, and not being deleted.
func untouched(ctx context.Context, name string) (bool, string) {
	pod, err := client.CoreV1().Pods(metav1.NamespaceDefault).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return false, err.Error()
	}
	if pod.DeletionTimestamp != nil {
		return false, fmt.Sprintf("%s is being deleted: conditions %v", name, pod.Status.Conditions)
	}
	return true, ""
}

// evicted reports whether the pod is being deleted by the taint eviction
// controller.
func evicted(ctx context.Context, name string) (bool, string) {
	pod, err := client.CoreV1().Pods(metav1.NamespaceDefault).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return false, err.Error()
	}
	if pod.DeletionTimestamp == nil {
		return false, "not being deleted"
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.DisruptionTarget && c.Reason == "DeletionByTaintManager" {
			return true, c.Message
		}
	}
	return false, fmt.Sprintf("deleted, but not by the taint eviction controller: conditions %v", pod.Status.Conditions)
}

// holds checks, every 200 ms until the time given, that check holds, and
// fails the test at once when it does not.
func holds(t *testing.T, until time.Time, what string, check func(ctx context.Context) (bool, string)) {
	t.Helper()
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		ok, why := check(ctx)
		cancel()
		if !ok {
			t.Fatalf("%s: no longer: %s", what, why)
		}
		if time.Now().After(until) {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestOutage: the plugin stops answering for longer than the grace and a
// running pod's toleration of the NoExecute taints not-ready and
// unreachable.
//
// Under UnreachableNotReady (the default) Ready turns False, the node
// lifecycle controller taints the node not-ready:NoExecute, and the taint
// eviction controller evicts the pod once its toleration is over. While
// the plugin does not answer, nothing confirms the pod's end: it stays
// Terminating, as on a real node that cannot be reached; the provider
// deletes it once the plugin answers again (internal/vnode's podfinish.go).
//
// Under UnreachableNoSchedule Ready stays True, pingnode's own taint
// pingnode.io/plugin-unreachable:NoSchedule keeps a new pod Pending, no
// controller taint comes, and the running pod stays well past its
// toleration; the first answered ping removes the taint, and the new pod
// lands.
//
// Either way the plugin's resources and taint, and an administrator's
// taint, stay through the outage and after it.
func TestOutage(t *testing.T) {
	needsControlPlane(t)
	t.Run("NotReady", func(t *testing.T) {
		const name, running = "vk-outage-notready", "outage-running-notready"
		p, plugin := startOutage(t, name, running, nodeapply.UnreachableNotReady)

		outage := time.Now()
		plugin.reply(http.StatusServiceUnavailable, "upstream connect error", 0)
		within(t, keptWindow+30*time.Second, running+" is evicted", func(ctx context.Context) (bool, string) {
			ok, why := evicted(ctx, running)
			return ok, why + "; node " + noExecuteTaints(ctx, name)
		})
		took := time.Since(outage)
		t.Logf("evicted %s after the first failed ping", took.Round(time.Millisecond))
		if took > keptWindow {
			t.Errorf("evicted %s after the first failed ping, later than the %s the NoSchedule case waits: that wait must grow", took, keptWindow)
		}

		node := stored(t.Context(), t, name)
		if ok, why := conditionIs(node, corev1.NodeReady, corev1.ConditionFalse); !ok || vnode.ConditionNamed(node, corev1.NodeReady).Reason != nodeapply.ReasonPluginUnreachable {
			t.Errorf("Ready: %s, want False (%s)", why, nodeapply.ReasonPluginUnreachable)
		}
		// The toleration ran its course from the controller's taint on:
		// the times are to the second.
		var tainted *metav1.Time
		for _, taint := range node.Spec.Taints {
			if taint.Key == corev1.TaintNodeNotReady && taint.Effect == corev1.TaintEffectNoExecute {
				tainted = taint.TimeAdded
			}
		}
		pod, err := client.CoreV1().Pods(metav1.NamespaceDefault).Get(t.Context(), running, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range pod.Status.Conditions {
			if c.Type != corev1.DisruptionTarget {
				continue
			}
			switch {
			case tainted == nil:
				t.Errorf("evicted, but the node has no not-ready:NoExecute taint: %s", noExecuteTaints(t.Context(), name))
			case c.LastTransitionTime.Sub(tainted.Time) < outageToleration-time.Second:
				t.Errorf("evicted at %s, the not-ready:NoExecute taint added at %s: before the toleration of %s ended", c.LastTransitionTime, tainted, outageToleration)
			}
		}
		eventually(t, "nothing lost during the outage", func(ctx context.Context) (bool, string) { return nothingLost(ctx, t, name, true) })

		if ok, why := terminating(t.Context(), running); !ok {
			t.Errorf("during the outage: %s, want %s Terminating", why, running)
		}

		plugin.reply(http.StatusOK, goodReply, 0)
		schedulable(t, name)
		eventually(t, "Ready again, nothing lost", func(ctx context.Context) (bool, string) {
			if ok, why := conditionIs(stored(ctx, t, name), corev1.NodeReady, corev1.ConditionTrue); !ok {
				return false, why
			}
			return nothingLost(ctx, t, name, true)
		})
		eventually(t, running+" is deleted once the plugin answers", func(ctx context.Context) (bool, string) { return gone(ctx, running, pod.UID) })
		noWriteErrors(t, p)
	})

	t.Run("NoSchedule", func(t *testing.T) {
		const name, running, newPod = "vk-outage-noschedule", "outage-running-noschedule", "outage-new-noschedule"
		p, plugin := startOutage(t, name, running, nodeapply.UnreachableNoSchedule)
		readySince := vnode.ConditionNamed(stored(t.Context(), t, name), corev1.NodeReady).LastTransitionTime
		unreachable := nodeapply.UnreachableTaintKey + ":NoSchedule"

		outage := time.Now()
		plugin.reply(http.StatusServiceUnavailable, "upstream connect error", 0)
		eventually(t, "the unreachable taint, Ready True", func(ctx context.Context) (bool, string) {
			node := stored(ctx, t, name)
			if ok, why := conditionIs(node, nodeapply.DefaultConnectivityCondition, corev1.ConditionFalse); !ok {
				return false, why
			}
			if ok, why := conditionIs(node, corev1.NodeReady, corev1.ConditionTrue); !ok || vnode.ConditionNamed(node, corev1.NodeReady).Reason != nodeapply.ReasonPluginUnreachableKeepingPods {
				return false, why
			}
			taints := allTaints(node)
			return taints[unreachable], "taints " + strings.Join(keys(taints), ", ")
		})
		t.Logf("tainted %s after the first failed ping", time.Since(outage).Round(time.Millisecond))

		// A new pod that tolerates every taint of the node but the
		// unreachable one.
		createTestPod(t, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: newPod},
			Spec: corev1.PodSpec{
				NodeSelector: map[string]string{corev1.LabelHostname: name},
				Tolerations: append(providerTolerations(),
					corev1.Toleration{Key: "vendor.example.com/maintenance", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
					corev1.Toleration{Key: "admin.example.org/hold", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute},
				),
				Containers: []corev1.Container{{Name: "job", Image: podImage}},
			},
		})
		why := pending(t, newPod)
		if keptOff := untolerated(t, newPod, name); !strings.Contains(why, "untolerated taint") || len(keptOff) != 1 || keptOff[0] != unreachable {
			t.Errorf("%s is unschedulable for %q; untolerated taints %v, want the unreachable one alone", newPod, why, keptOff)
		}
		t.Logf("during the outage: %s", why)

		// The one fixed wait: that something does not happen (an
		// eviction, a controller's taint) is seen only by waiting past
		// when it would have happened. keptWindow says how long.
		holds(t, outage.Add(keptWindow), "the outage keeps the running pod and only the unreachable taint", func(ctx context.Context) (bool, string) {
			if ok, why := untouched(ctx, running); !ok {
				return false, why
			}
			node, err := client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			if ok, why := conditionIs(node, corev1.NodeReady, corev1.ConditionTrue); !ok {
				return false, why
			}
			taints := allTaints(node)
			for taint := range taints {
				if strings.HasPrefix(taint, "node.kubernetes.io/") {
					return false, "the controller's taint " + taint
				}
			}
			if !taints[unreachable] {
				return false, "no unreachable taint: " + strings.Join(keys(taints), ", ")
			}
			if got, _, err := placement(ctx, newPod); err != nil || got != "" {
				return false, fmt.Sprintf("%s bound to %q (%v)", newPod, got, err)
			}
			return nothingLost(ctx, t, name, true)
		})
		node := stored(t.Context(), t, name)
		if got := vnode.ConditionNamed(node, corev1.NodeReady).LastTransitionTime; !got.Equal(&readySince) {
			t.Errorf("Ready's transition time moved from %s to %s: it left True", readySince, got)
		}
		t.Logf("kept %s after the first failed ping: %d failed pings, Ready %s",
			time.Since(outage).Round(time.Millisecond), p.Count.Failures.Load(), vnode.ConditionNamed(node, corev1.NodeReady).Message)

		plugin.reply(http.StatusOK, goodReply, 0)
		answered := time.Now()
		within(t, 5*time.Second, "the first answered ping removes the unreachable taint", func(ctx context.Context) (bool, string) {
			taints := allTaints(stored(ctx, t, name))
			return !taints[unreachable], "taints " + strings.Join(keys(taints), ", ")
		})
		t.Logf("the unreachable taint removed %s after the plugin answered again", time.Since(answered).Round(time.Millisecond))
		boundTo(t, newPod, name)
		eventually(t, "Ready, reachable, nothing lost", func(ctx context.Context) (bool, string) {
			node := stored(ctx, t, name)
			if ok, why := conditionIs(node, nodeapply.DefaultConnectivityCondition, corev1.ConditionTrue); !ok {
				return false, why
			}
			if ready := vnode.ConditionNamed(node, corev1.NodeReady); ready.Reason != nodeapply.ReasonPluginReachable {
				return false, "Ready " + ready.Reason
			}
			return nothingLost(ctx, t, name, true)
		})
		if ok, why := untouched(t.Context(), running); !ok {
			t.Errorf("after the outage: %s", why)
		}
		noWriteErrors(t, p)
	})
}
