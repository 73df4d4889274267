package nodeapply_test

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/pingstatus"
)

// TestFiguresOnly: a ping that changes the backend's free figures alone
// may be held back; one that changes a taint, a label or a condition
// too, or nothing, may not.
func TestFiguresOnly(t *testing.T) {
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "vk", ResourceVersion: "1"},
		Status: corev1.NodeStatus{
			Capacity:    corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("24")},
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("24")},
		},
	}
	cpu := func(n string) corev1.ResourceList {
		return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(n)}
	}
	at := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name  string
		ping  nodeapply.Ping
		wants bool
	}{
		{"the free cpus", nodeapply.Ping{Reply: &pingstatus.NodePatch{Resources: cpu("12")}}, true},
		{"nothing", nodeapply.Ping{Reply: &pingstatus.NodePatch{Resources: cpu("24")}}, false},
		{"the free cpus and a taint", nodeapply.Ping{Reply: &pingstatus.NodePatch{Resources: cpu("12"), ReplaceTaints: true,
			Taints: []corev1.Taint{{Key: "slurm.io/drain", Effect: corev1.TaintEffectNoSchedule}}}}, false},
		{"the free cpus and a label", nodeapply.Ping{Reply: &pingstatus.NodePatch{Resources: cpu("12"), ReplaceLabels: true,
			Labels: map[string]string{"feature.node.kubernetes.io/x": "y"}}}, false},
		{"the free cpus and Ready", nodeapply.Ping{At: at, Reply: &pingstatus.NodePatch{Resources: cpu("12")}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := nodeapply.Apply(node, tc.ping, nodeapply.Options{})
			if got := res.FiguresOnly(); got != tc.wants {
				t.Errorf("FiguresOnly() = %v, want %v; changes %v", got, tc.wants, res.Changes)
			}
		})
	}
}
