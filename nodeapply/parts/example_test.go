package parts_test

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/nodeapply/parts"
	"github.com/pingnode/pingnode/pingstatus"
)

// A provider serving a cluster's partitions, one node each, at one ping
// of its plugin: cpu is still listed; gpu, gone for two minutes, is
// back; bigmem has been gone for two minutes and its last pod ended;
// debug has just left, with a pod on it; and the reply lists a new
// partition, a100. The provider merges each decision's ping into its node
// with nodeapply.Apply, registers a100 as a new node, and deletes
// bigmem's.
func ExampleStep() {
	now := time.Date(2025, 3, 1, 10, 2, 0, 0, time.UTC)
	gone := func(since time.Time) []corev1.Taint {
		added := metav1.NewTime(since)
		return []corev1.Taint{{Key: nodeapply.PartGoneTaintKey, Effect: corev1.TaintEffectNoSchedule, TimeAdded: &added}}
	}
	node := func(name string, taints []corev1.Taint) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "hpc-" + name}, Spec: corev1.NodeSpec{Taints: taints}}
	}
	nodes := []parts.Node{ // as the provider serves them, with their pods that are not terminal
		{Part: "bigmem", Node: node("bigmem", gone(now.Add(-2*time.Minute))), Pods: 0},
		{Part: "cpu", Node: node("cpu", nil), Pods: 12},
		{Part: "debug", Node: node("debug", nil), Pods: 1},
		{Part: "gpu", Node: node("gpu", gone(now.Add(-2*time.Minute))), Pods: 3},
	}
	reply := &pingstatus.NodePatch{ // as pingstatus.Parse gives a reply with "nodes"
		Kind: pingstatus.Structured, ReplaceParts: true,
		Parts: []pingstatus.Part{{Name: "a100"}, {Name: "cpu"}, {Name: "gpu"}},
	}
	ping := nodeapply.Ping{Reply: reply, At: now}
	var opts nodeapply.Options
	for _, d := range parts.Step(ping, nodes, opts) {
		fmt.Println(d)
		switch d.Action {
		case parts.Register: // a new node named after the part, then merged
			_ = nodeapply.Apply(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "hpc-" + d.Part}}, d.NodePing(ping), opts)
		case parts.Ping, parts.Leave:
			_ = nodeapply.Apply(d.Node, d.NodePing(ping), opts)
		case parts.Delete: // the node goes; PodGC deletes its terminal pods
		}
	}
	// Output:
	// a100: Register, with the part's patch
	// bigmem: Delete node hpc-bigmem
	// cpu: Ping node hpc-cpu, with the part's patch
	// debug: Leave node hpc-debug
	// gpu: Ping node hpc-gpu, with the part's patch
}
