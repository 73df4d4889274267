package nodeapply_test

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/nodeapply/devicepool"
	"github.com/pingnode/pingnode/pingstatus"
)

// TestWarningsNameTheirRule pins down that a warning says which rule gave
// it: one of Apply's own rules for each kind of thing Apply refuses or
// repairs, pingstatus's for a patch built by hand that it judges, and the
// device pool's step gives pingstatus's for a hand-built group.
func TestWarningsNameTheirRule(t *testing.T) {
	parsed := func(body string) *pingstatus.NodePatch {
		p, _ := pingstatus.Parse([]byte(body), pingstatus.Options{})
		return &p
	}
	at := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	foreign := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "vk", Labels: map[string]string{"feature.node.kubernetes.io/x": "a"}}}
	broken := &corev1.Node{Status: corev1.NodeStatus{Capacity: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("-1")}}}
	for _, c := range []struct {
		name string
		node *corev1.Node
		ping nodeapply.Ping
		path string
		rule string
	}{
		{"a label someone else set", foreign, nodeapply.Ping{Reply: parsed(`{"labels":{"feature.node.kubernetes.io/x":"b"}}`)}, "metadata.labels[feature.node.kubernetes.io/x]", "label-foreign"},
		{"a node the API server would refuse", broken, nodeapply.Ping{}, "status.capacity[cpu]", "node-valid"},
		{"the reply of a failed ping", &corev1.Node{}, nodeapply.Ping{At: at, Failure: "timeout", Reply: parsed(`{"resources":{"cpu":"8"}}`)}, "ping.reply", "failure-keeps"},
		{"a negative held amount", &corev1.Node{}, nodeapply.Ping{Reply: parsed(`{"resources":{"cpu":"8"}}`), Held: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("-2")}}, "ping.held[cpu]", "resource-written"},
		{"a hand-built patch's controller key", &corev1.Node{}, nodeapply.Ping{Reply: &pingstatus.NodePatch{ReplaceTaints: true, Taints: []corev1.Taint{{Key: "node.kubernetes.io/x", Effect: corev1.TaintEffectNoSchedule}}}}, "patch.taints[0].key", "taint-reserved"},
	} {
		res := nodeapply.Apply(c.node, c.ping, nodeapply.Options{})
		if len(res.Warnings) != 1 || res.Warnings[0].Path != c.path || res.Warnings[0].Rule != c.rule {
			t.Errorf("%s: warnings %+v, want one at %s of rule %s", c.name, res.Warnings, c.path, c.rule)
		}
	}
	hand := &pingstatus.NodePatch{ReplaceDevices: true, Devices: []pingstatus.DeviceGroup{{Name: "a100", Count: -1}}}
	pool := devicepool.Apply(nil, nodeapply.Ping{Reply: hand}, pingstatus.Options{})
	if len(pool.Warnings) != 1 || pool.Warnings[0].Rule != "device-fields" {
		t.Errorf("the pool's warnings %+v, want one of rule device-fields", pool.Warnings)
	}
}
