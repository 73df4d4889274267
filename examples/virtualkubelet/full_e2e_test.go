package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/pingnode/pingnode/examples/internal/pingclient"
	"github.com/pingnode/pingnode/examples/internal/podapi"
	"github.com/pingnode/pingnode/nodeapply"
)

// toleratesTaint reports whether a toleration of tolerations tolerates
// taint.
func toleratesTaint(tolerations []corev1.Toleration, taint corev1.Taint) bool {
	for _, tol := range tolerations {
		if tol.ToleratesTaint(klog.Background(), &taint, false) {
			return true
		}
	}
	return false
}

// TestFullBackend: every setting at its default, against the sample
// plugin as interLink's Slurm plugin (-slurm), which sends free figures,
// "0" when its cluster is full: a shared backend of 2 machines of 2 cpus,
// some of them taken from the start, whose free cpus jobs of its own
// users (made on the plugin, not through Kubernetes) then take, 1 cpu
// each and no memory limit (1 MiB, as the Slurm plugin sizes a job
// without one). The node then takes no new pod and says why (the taint
// pingnode.io/backend-full, "cpu": its memory is free), where it kept its last free
// cpu and took the pod; its capacity stays as it was. Once a job ends,
// the taint goes and the pod binds.
func TestFullBackend(t *testing.T) {
	needsControlPlane(t)
	url := samplePlugin(t, "-slurm", "-parts-generate", "2", "-parts-cpus", "2", "-parts-churn", "0")
	cfg := configOfArgs(t, "-plugin", url, "-node", "vk-full")
	name := cfg.Static.Name
	runConfig(t, cfg)
	var free resource.Quantity
	eventually(t, "the node is Ready with the backend's free cpus", func(ctx context.Context) (bool, string) {
		node := stored(ctx, t, name)
		free = node.Status.Allocatable[corev1.ResourceCPU]
		ready, why := conditionIs(node, corev1.NodeReady, corev1.ConditionTrue)
		return ready && free.Value() > 0, why + " " + free.String()
	})
	schedulable(t, name)

	c, err := pingclient.New(pingclient.Config{URL: url, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	native := make([]corev1.Pod, free.Value()) // the backend's own users' jobs, 1 cpu each
	for i := range native {
		native[i] = corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "slurm-users", Name: fmt.Sprintf("native-%d", i), UID: types.UID(fmt.Sprintf("native-uid-%d", i))},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "job", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
			}}}},
		}
		if _, _, err := c.Create(t.Context(), podapi.NewCreateRequest(&native[i])); err != nil {
			t.Fatal(err)
		}
	}
	full := nodeapply.BackendFullTaintKey + "=cpu:NoSchedule"
	eventually(t, "the node says the backend is full", func(ctx context.Context) (bool, string) {
		node := stored(ctx, t, name)
		return taintSet(node)[full], fmt.Sprint(node.Spec.Taints)
	})
	if cpu := stored(t.Context(), t, name).Status.Capacity[corev1.ResourceCPU]; cpu.Cmp(free) != 0 {
		t.Errorf("capacity cpu %s once full, want its last figure, %s: nothing drained", cpu.String(), free.String())
	}

	pod := partPod("full-backend-pod", "", nil, "1")
	pod.Spec.NodeSelector = map[string]string{"kubernetes.io/hostname": name}
	createTestPod(t, pod)
	within(t, time.Minute, "the pod is kept off the full backend, by a taint", func(ctx context.Context) (bool, string) {
		node, unschedulable, err := placement(ctx, pod.Name)
		if node != "" {
			t.Fatalf("the pod was bound to %s, whose backend is full", node)
		}
		return err == nil && strings.Contains(unschedulable, "untolerated taint"), unschedulable
	})
	for _, taint := range stored(t.Context(), t, name).Spec.Taints { // the scheduler names none: the one the pod does not tolerate is the backend's
		if !toleratesTaint(pod.Spec.Tolerations, taint) && taint.Key != nodeapply.BackendFullTaintKey {
			t.Errorf("the node has the taint %s, which the pod does not tolerate, beside the backend's", taint.ToString())
		}
	}

	if err := c.Delete(t.Context(), &native[0]); err != nil { // a job ends: a cpu is free
		t.Fatal(err)
	}
	eventually(t, "the taint goes once the backend has room", func(ctx context.Context) (bool, string) {
		node := stored(ctx, t, name)
		for _, taint := range node.Spec.Taints {
			if taint.Key == nodeapply.BackendFullTaintKey {
				return false, taint.ToString()
			}
		}
		return true, ""
	})
	boundTo(t, pod.Name, name)
}
