package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/vnode"
	"github.com/pingnode/pingnode/nodeapply"
)

// These tests ask the real kube-scheduler where pods go, and watch the
// real node lifecycle controller, both run by the test environment.

// podSpec is what a test pod asks for.
type podSpec struct {
	cpu, memory string
	gpus        int
	tolerate    []corev1.Toleration
}

// createPod creates a pod for the virtual node name (a node selector keeps
// it off any other node), tolerating the provider's protected and static
// taints as interLink's pods do, and deletes it when the test ends.
func createPod(t *testing.T, node, name string, spec podSpec) *corev1.Pod {
	t.Helper()
	requests := corev1.ResourceList{}
	if spec.cpu != "" {
		requests[corev1.ResourceCPU] = resource.MustParse(spec.cpu)
	}
	if spec.memory != "" {
		requests[corev1.ResourceMemory] = resource.MustParse(spec.memory)
	}
	if spec.gpus > 0 {
		requests["nvidia.com/gpu"] = *resource.NewQuantity(int64(spec.gpus), resource.DecimalSI)
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: metav1.NamespaceDefault},
		Spec: corev1.PodSpec{
			NodeSelector: map[string]string{"kubernetes.io/hostname": node},
			Tolerations: append([]corev1.Toleration{
				{Key: nodeapply.DefaultProtectedKey, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
				{Key: vnode.StaticTaintKey, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
			}, spec.tolerate...),
			Containers:                    []corev1.Container{{Name: "job", Image: "example.com/job", Resources: corev1.ResourceRequirements{Requests: requests, Limits: limitsFor(requests)}}},
			TerminationGracePeriodSeconds: new(int64),
		},
	}
	created, err := client.CoreV1().Pods(pod.Namespace).Create(t.Context(), pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("pod %s: %v", name, err)
	}
	t.Cleanup(func() { deletePod(t, name) })
	return created
}

// limitsFor gives extended resources their limit, which the API server
// requires to equal the request.
func limitsFor(requests corev1.ResourceList) corev1.ResourceList {
	limits := corev1.ResourceList{}
	for name, q := range requests {
		if strings.Contains(string(name), "/") {
			limits[name] = q
		}
	}
	return limits
}

func deletePod(t *testing.T, name string) {
	zero := int64(0)
	err := client.CoreV1().Pods(metav1.NamespaceDefault).Delete(context.Background(), name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Errorf("deleting pod %s: %v", name, err)
	}
}

// placement is what the scheduler decided for a pod: the node it bound it
// to, or that it found no node ("" and the scheduler's message).
func placement(ctx context.Context, name string) (node string, unschedulable string, err error) {
	pod, err := client.CoreV1().Pods(metav1.NamespaceDefault).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return "", "", err
	}
	if pod.Spec.NodeName != "" {
		return pod.Spec.NodeName, "", nil
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			return "", c.Message, nil
		}
	}
	return "", "", nil
}

// boundTo waits until the scheduler binds the pod to node.
func boundTo(t *testing.T, pod, node string) {
	t.Helper()
	eventually(t, pod+" is bound to "+node, func(ctx context.Context) (bool, string) {
		got, why, err := placement(ctx, pod)
		if err != nil {
			return false, err.Error()
		}
		return got == node, fmt.Sprintf("on %q; unschedulable: %s", got, why)
	})
}

// pending waits until the scheduler has tried the pod and found no node
// for it (PodScheduled False, Unschedulable): it stays Pending by the
// scheduler's own decision, not by a timeout.
func pending(t *testing.T, pod string) string {
	t.Helper()
	var message string
	eventually(t, pod+" is unschedulable", func(ctx context.Context) (bool, string) {
		got, why, err := placement(ctx, pod)
		if err != nil {
			return false, err.Error()
		}
		if got != "" {
			t.Fatalf("%s was bound to %s", pod, got)
		}
		message = why
		return why != "", "not tried yet"
	})
	return message
}

// schedulable waits until the node carries neither the not-ready taint
// that the API server's admission adds at registration (the node
// lifecycle controller lifts it once the node is Ready) nor any other
// node.kubernetes.io taint.
func schedulable(t *testing.T, name string) {
	t.Helper()
	eventually(t, name+" has no controller taint", func(ctx context.Context) (bool, string) {
		node := stored(ctx, t, name)
		for _, taint := range node.Spec.Taints {
			if strings.HasPrefix(taint.Key, "node.kubernetes.io/") {
				return false, "taint " + taint.ToString()
			}
		}
		return true, ""
	})
}

// TestSchedulerGPUs: a pod asking for 2 GPUs stays Pending while the plugin
// reports none, and is bound once it reports 4; a pod asking for 5 stays
// Pending.
func TestSchedulerGPUs(t *testing.T) {
	needsControlPlane(t)
	const name = "vk-sched-gpus"
	_, plugin := startProvider(t, name, time.Hour)
	plugin.reply(http.StatusOK, `{"resources":{"cpu":"64","memory":"256Gi"}}`, 0)
	schedulable(t, name)
	createPod(t, name, "two-gpus", podSpec{cpu: "1", gpus: 2})
	t.Logf("no GPUs reported: %s", pending(t, "two-gpus"))

	plugin.reply(http.StatusOK, `{"resources":{"cpu":"64","memory":"256Gi","accelerators":[{"resourceType":"nvidia.com/gpu","available":"4"}]}}`, 0)
	boundTo(t, "two-gpus", name)
	createPod(t, name, "five-gpus", podSpec{cpu: "1", gpus: 5})
	t.Logf("4 GPUs reported: %s", pending(t, "five-gpus"))
}

// TestSchedulerPluginTaint: the plugin's NoSchedule taint keeps a pod
// without a toleration off the node; a pod with the toleration lands.
func TestSchedulerPluginTaint(t *testing.T) {
	needsControlPlane(t)
	const name = "vk-sched-taint"
	_, plugin := startProvider(t, name, time.Hour)
	plugin.reply(http.StatusOK, `{"resources":{"cpu":"64"},"taints":[{"key":"vendor.example.com/maintenance","value":"true","effect":"NoSchedule"}]}`, 0)
	schedulable(t, name)
	eventually(t, "the plugin's taint is stored", func(ctx context.Context) (bool, string) {
		return taintSet(stored(ctx, t, name))["vendor.example.com/maintenance=true:NoSchedule"], "not yet"
	})
	createPod(t, name, "intolerant", podSpec{cpu: "1"})
	t.Logf("without the toleration: %s", pending(t, "intolerant"))
	createPod(t, name, "tolerant", podSpec{cpu: "1", tolerate: []corev1.Toleration{
		{Key: "vendor.example.com/maintenance", Operator: corev1.TolerationOpEqual, Value: "true", Effect: corev1.TaintEffectNoSchedule},
	}})
	boundTo(t, "tolerant", name)
}

// TestSchedulerResources: the cpu and memory the plugin reports bound what
// lands: a pod larger than either stays Pending, one that fits lands.
func TestSchedulerResources(t *testing.T) {
	needsControlPlane(t)
	const name = "vk-sched-resources"
	_, plugin := startProvider(t, name, time.Hour)
	plugin.reply(http.StatusOK, `{"resources":{"cpu":"8","memory":"16Gi"}}`, 0)
	schedulable(t, name)
	eventually(t, "the reply is stored", func(ctx context.Context) (bool, string) {
		return hasResources(stored(ctx, t, name), map[string]string{"cpu": "8", "memory": "16Gi"})
	})
	createPod(t, name, "too-much-cpu", podSpec{cpu: "9", memory: "1Gi"})
	createPod(t, name, "too-much-memory", podSpec{cpu: "1", memory: "17Gi"})
	t.Logf("9 cpus: %s", pending(t, "too-much-cpu"))
	t.Logf("17Gi: %s", pending(t, "too-much-memory"))
	createPod(t, name, "fits", podSpec{cpu: "8", memory: "16Gi"})
	boundTo(t, "fits", name)
}
