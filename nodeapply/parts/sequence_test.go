package parts_test

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/pingnode/pingnode/internal/golden"
	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/nodeapply/parts"
	"github.com/pingnode/pingnode/pingstatus"
)

// TestSequenceWithApply is a provider serving a cluster's parts over
// eight pings, with the default part grace of 50 s, its nodes kept by
// merging each decision's ping with nodeapply.Apply (into a new bare
// node for Register), as a provider does. cn001 is listed throughout,
// its patch changing at 100 s. cn002 leaves at 30 s, keeps its pod past
// the grace (Ready False at 100 s) and loses it; it is not deleted by
// the failed ping at 130 s nor by the incomplete list at 140 s, but at
// 160 s. cn003 leaves at 60 s and comes back at 100 s, within the grace,
// on the same node. cn004 is registered at 160 s, and the ping at 190 s
// has no reply.
func TestSequenceWithApply(t *testing.T) {
	cn := func(n int, cpu string) pingstatus.Part { return part(fmt.Sprintf("cn%03d", n), cpu) }
	steps := []struct {
		at    float64
		ping  nodeapply.Ping // At set from at
		pods  map[string]int // pods bound to each node at the ping, not terminal
		about string
	}{
		{0, nodeapply.Ping{Reply: listing(cn(1, "64"), cn(2, "32"), cn(3, "128"))}, nil, "lists cn001 cn002 cn003"},
		{30, nodeapply.Ping{Reply: listing(cn(1, "64"), cn(3, "128"))}, map[string]int{"cn002": 1}, "lists cn001 cn003"},
		{60, nodeapply.Ping{Reply: listing(cn(1, "64"))}, map[string]int{"cn002": 1}, "lists cn001"},
		{100, nodeapply.Ping{Reply: listing(cn(1, "48"), cn(3, "128"))}, map[string]int{"cn002": 1}, "lists cn001 cn003"},
		{130, nodeapply.Ping{Failure: "HTTP 503"}, nil, "fails"},
		{140, nodeapply.Ping{Reply: incomplete(cn(1, "48"))}, nil, "lists cn001, an entry refused"},
		{160, nodeapply.Ping{Reply: listing(cn(1, "48"), cn(3, "128"), cn(4, "16"))}, nil, "lists cn001 cn003 cn004"},
		{190, nodeapply.Ping{}, nil, "has no reply"},
	}
	var opts nodeapply.Options
	cluster := map[string]*corev1.Node{} // by part
	var b strings.Builder
	for i, step := range steps {
		ping := step.ping
		ping.At = at(step.at)
		var nodes []parts.Node
		for _, name := range slices.Sorted(maps.Keys(cluster)) {
			nodes = append(nodes, parts.Node{Part: name, Node: cluster[name], Pods: step.pods[name]})
		}
		got := parts.Step(ping, nodes, opts)
		checkLaws(t, ping, nodes, opts, got)
		fmt.Fprintf(&b, "== ping %d at +%vs: the plugin %s\n", i+1, step.at, step.about)
		golden.Section(&b, "decisions", got)
		for _, d := range got {
			switch d.Action {
			case parts.Register:
				node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "vk-" + d.Part}}
				cluster[d.Part] = nodeapply.Apply(node, d.NodePing(ping), opts).Node
			case parts.Ping, parts.Leave:
				cluster[d.Part] = nodeapply.Apply(d.Node, d.NodePing(ping), opts).Node
			case parts.Delete:
				delete(cluster, d.Part)
			}
		}
		b.WriteString("nodes after:\n")
		for _, name := range slices.Sorted(maps.Keys(cluster)) {
			fmt.Fprintf(&b, "  %s\n", nodeSummary(cluster[name], step.pods[name]))
		}
		b.WriteString("\n")
	}
	golden.Check(t, filepath.Join("testdata", "sequence.golden"), []byte(b.String()))
}

// nodeSummary is one line of what the sequence is about in a node: its
// pods, Ready, the connectivity condition, cpu and taints, with the time each was added as seconds
// from t0.
func nodeSummary(n *corev1.Node, pods int) string {
	ready, connected := "none", "none"
	for _, c := range n.Status.Conditions {
		switch c.Type {
		case corev1.NodeReady:
			ready = string(c.Status) + " " + c.Reason
		case nodeapply.DefaultConnectivityCondition:
			connected = string(c.Status)
		}
	}
	var taints []string
	for _, t := range n.Spec.Taints {
		s := t.Key + ":" + string(t.Effect)
		if t.TimeAdded != nil {
			s += fmt.Sprintf(" added +%vs", t.TimeAdded.Sub(t0).Seconds())
		}
		taints = append(taints, s)
	}
	if len(taints) == 0 {
		taints = []string{"none"}
	}
	return fmt.Sprintf("%s: pods %d, Ready %s, connected %s, cpu %s, taints %s",
		n.Name, pods, ready, connected, n.Status.Capacity.Cpu(), strings.Join(taints, ", "))
}
