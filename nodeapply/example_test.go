package nodeapply_test

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/pingstatus"
)

// A provider's ping loop: parse the reply, apply it, and write the node
// only when something changed.
func ExampleApply() {
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "interlink-slurm"},
		Spec: corev1.NodeSpec{Taints: []corev1.Taint{
			{Key: nodeapply.DefaultProtectedKey, Value: "true", Effect: corev1.TaintEffectNoSchedule},
		}},
		Status: corev1.NodeStatus{
			Capacity:    corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100"), corev1.ResourceMemory: resource.MustParse("128Gi")},
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100"), corev1.ResourceMemory: resource.MustParse("128Gi")},
		},
	}
	replies := []string{
		`{"status":"ok","resources":{"cpu":"64","memory":"131072Mi"},"taints":[{"key":"slurm.example.com/drain","value":"maintenance","effect":"NoSchedule"}]}`,
		`{"status":"ok","resources":{"cpu":"64","memory":"128Gi"},"taints":[{"key":"slurm.example.com/drain","value":"maintenance","effect":"NoSchedule"}]}`,
		`ok`,
	}
	for i, body := range replies {
		patch, warnings := pingstatus.Parse([]byte(body), pingstatus.Options{})
		res := nodeapply.Apply(node, nodeapply.Ping{Reply: &patch}, nodeapply.Options{})
		fmt.Printf("ping %d: %d warnings, %d changes\n", i+1, len(warnings)+len(res.Warnings), len(res.Changes))
		for _, c := range res.Changes {
			fmt.Println("  ", c)
		}
		if len(res.Changes) > 0 {
			node = res.Node // and send res.ObjectPatch() and res.StatusPatch()
		}
	}
	// Output:
	// ping 1: 0 warnings, 4 changes
	//    metadata.annotations[pingnode.io/plugin-taints]: added slurm.example.com/drain:NoSchedule
	//    spec.taints[slurm.example.com/drain:NoSchedule]: added slurm.example.com/drain=maintenance:NoSchedule
	//    status.allocatable[cpu]: 100 -> 64
	//    status.capacity[cpu]: 100 -> 64
	// ping 2: 0 warnings, 0 changes
	// ping 3: 0 warnings, 0 changes
}

// "taints": [] removes the taints the plugin set, and only those: an
// administrator's taint and the provider's protected one stay.
func ExampleApply_taintsEmpty() {
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{
			nodeapply.DefaultOwnershipAnnotation: "vendor.io/maintenance:NoSchedule",
		}},
		Spec: corev1.NodeSpec{Taints: []corev1.Taint{
			{Key: nodeapply.DefaultProtectedKey, Value: "true", Effect: corev1.TaintEffectNoSchedule},
			{Key: "vendor.io/maintenance", Value: "true", Effect: corev1.TaintEffectNoSchedule},
			{Key: "admin.example.org/hold", Effect: corev1.TaintEffectNoExecute},
		}},
	}
	patch, _ := pingstatus.Parse([]byte(`{"taints":[]}`), pingstatus.Options{})
	res := nodeapply.Apply(node, nodeapply.Ping{Reply: &patch}, nodeapply.Options{})
	for _, c := range res.Changes {
		fmt.Println(c)
	}
	for _, t := range res.Node.Spec.Taints {
		fmt.Println("kept:", t.ToString())
	}
	// Output:
	// metadata.annotations[pingnode.io/plugin-taints]: removed vendor.io/maintenance:NoSchedule
	// spec.taints[vendor.io/maintenance:NoSchedule]: removed vendor.io/maintenance=true:NoSchedule
	// kept: virtual-node.interlink/no-schedule=true:NoSchedule
	// kept: admin.example.org/hold:NoExecute
}

// The outcome of each ping sets Ready and the connectivity condition. One
// failed ping turns only the connectivity condition False; Ready turns
// False once the failures have lasted the grace period (50 s by default),
// and one answered ping restores both.
func ExampleApply_unreachable() {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "interlink-slurm"}}
	start := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	pings := []nodeapply.Ping{
		{At: start},
		{At: start.Add(30 * time.Second), Failure: "timeout after 10s"},
		{At: start.Add(60 * time.Second), Failure: "timeout after 10s"},
		{At: start.Add(90 * time.Second), Failure: "connection refused"},
		{At: start.Add(120 * time.Second)},
	}
	for _, ping := range pings {
		res := nodeapply.Apply(node, ping, nodeapply.Options{})
		node = res.Node
		fmt.Printf("%s %-20q Ready=%s %s=%s\n", ping.At.Format(time.TimeOnly), ping.Failure,
			status(node, corev1.NodeReady), nodeapply.DefaultConnectivityCondition, status(node, nodeapply.DefaultConnectivityCondition))
	}
	// Output:
	// 12:00:00 ""                   Ready=True InterlinkConnectivity=True
	// 12:00:30 "timeout after 10s"  Ready=True InterlinkConnectivity=False
	// 12:01:00 "timeout after 10s"  Ready=True InterlinkConnectivity=False
	// 12:01:30 "connection refused" Ready=False InterlinkConnectivity=False
	// 12:02:00 ""                   Ready=True InterlinkConnectivity=True
}

func status(node *corev1.Node, t corev1.NodeConditionType) corev1.ConditionStatus {
	for _, c := range node.Status.Conditions {
		if c.Type == t {
			return c.Status
		}
	}
	return "absent"
}
