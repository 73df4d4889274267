package nodeapply_test

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/pingnode/pingnode/nodeapply"
)

// A part's node whose part the plugin's reply stops listing: the
// part-gone taint keeps new pods away at once, and says when the part
// left; Ready stays True through the grace (Options.PartGrace, 50 s by
// default) and then turns False, so that the node lifecycle controller
// evicts the pods. Listed again, the node is back at once.
func ExampleApply_partGone() {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "hpc-cn001"}}
	start := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	pings := []nodeapply.Ping{
		{At: start},
		{At: start.Add(30 * time.Second), Unlisted: true},
		{At: start.Add(60 * time.Second), Unlisted: true},
		{At: start.Add(90 * time.Second), Unlisted: true},
		{At: start.Add(120 * time.Second)},
	}
	for _, ping := range pings {
		res := nodeapply.Apply(node, ping, nodeapply.Options{})
		node = res.Node
		listed := "listed"
		if ping.Unlisted {
			listed = "unlisted"
		}
		fmt.Printf("%s %-8s %d changes  Ready=%s", ping.At.Format(time.TimeOnly), listed, len(res.Changes), readyText(node))
		for _, t := range node.Spec.Taints {
			if t.Key == nodeapply.PartGoneTaintKey {
				fmt.Printf("  %s added %s", t.ToString(), t.TimeAdded.Format(time.TimeOnly))
			}
		}
		fmt.Println()
	}
	// Output:
	// 12:00:00 listed   2 changes  Ready=True PluginReachable
	// 12:00:30 unlisted 1 changes  Ready=True PluginReachable  pingnode.io/part-gone:NoSchedule added 12:00:30
	// 12:01:00 unlisted 0 changes  Ready=True PluginReachable  pingnode.io/part-gone:NoSchedule added 12:00:30
	// 12:01:30 unlisted 5 changes  Ready=False PartGone: the plugin's reply has not listed this part since 2026-11-30T12:00:30Z  pingnode.io/part-gone:NoSchedule added 12:00:30
	// 12:02:00 listed   6 changes  Ready=True PluginReachable
}

// readyText is the node's Ready as status and reason, and the message
// when it is not True.
func readyText(node *corev1.Node) string {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
			return string(c.Status) + " " + c.Reason
		}
		if c.Type == corev1.NodeReady {
			return string(c.Status) + " " + c.Reason + ": " + c.Message
		}
	}
	return "absent"
}
