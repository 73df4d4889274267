package nodeapply_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/pingnode/pingnode/internal/golden"
	"github.com/pingnode/pingnode/internal/kuberules"
	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/pingstatus"
)

// t0 is the time of the first ping of every sequence.
var t0 = time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)

// step is one ping of a sequence.
type step struct {
	at      time.Duration // after t0
	failure string        // "" when the plugin answered
	reply   string        // file in ../testdata/replies; "" for a reply with no news
	body    string        // the body itself, when reply is ""
	restart bool          // the node is read back from JSON first, as a restarted provider reads it from the API server
	held    corev1.ResourceList
	// unlisted: the plugin's reply lists parts, not this node's
	// (Ping.Unlisted); with no reply file, the ping has no reply.
	unlisted bool
}

// held builds a ResourceList from name=value pairs.
func held(pairs ...string) corev1.ResourceList {
	list := corev1.ResourceList{}
	for i := 0; i+1 < len(pairs); i += 2 {
		list[corev1.ResourceName(pairs[i])] = resource.MustParse(pairs[i+1])
	}
	return list
}

func ok(at time.Duration) step               { return step{at: at, body: "ok"} }
func fail(at time.Duration, why string) step { return step{at: at, failure: why} }

// sequenceCases are pings in order on one node; each has a golden file in
// testdata/sequences showing, after each ping, the changes, the warnings,
// the conditions, the ping-response annotation and the status patch.
var sequenceCases = []sequenceCase{
	{"first-ping-after-registration", "interlink-node.json", nodeapply.Options{}, []step{{at: 0, reply: "slurm.json"}}},
	{"success-after-success", "interlink-node.json", nodeapply.Options{}, []step{ok(0), ok(30 * time.Second), ok(time.Hour)}},
	{"first-failure", "interlink-node.json", nodeapply.Options{}, []step{ok(0), fail(30*time.Second, "timeout after 3s")}},
	{"failures-past-grace", "interlink-node.json", nodeapply.Options{}, []step{
		ok(0), fail(30*time.Second, "HTTP 500"), fail(60*time.Second, "HTTP 500"),
		fail(79*time.Second, "HTTP 500"), fail(80*time.Second, "HTTP 500"), fail(110*time.Second, "HTTP 500"),
	}},
	{"recovery", "interlink-node.json", nodeapply.Options{}, []step{
		ok(0), fail(30*time.Second, "connection refused"), fail(60*time.Second, "connection refused"),
		fail(90*time.Second, "connection refused"), ok(120 * time.Second), ok(150 * time.Second),
	}},
	{"one-lost-ping", "interlink-node.json", nodeapply.Options{}, []step{
		ok(0), fail(30*time.Second, "timeout after 3s"), ok(60 * time.Second),
	}},
	{"restart-in-the-middle", "interlink-node.json", nodeapply.Options{}, []step{
		ok(0), fail(30*time.Second, "HTTP 503"), {at: 60 * time.Second, failure: "HTTP 503", restart: true},
		{at: 90 * time.Second, failure: "HTTP 503", restart: true},
	}},
	{"failure-changes-kind", "interlink-node.json", nodeapply.Options{}, []step{
		ok(0), fail(30*time.Second, "timeout after 3s"), fail(60*time.Second, "connection refused"),
		fail(90*time.Second, "connection refused"), fail(120*time.Second, "timeout after 3s"),
	}},
	{"failed-ping-changes-nothing-else", "node-with-plugin-taints.json", nodeapply.Options{}, []step{
		{at: 0, reply: "slurm-taints.json"},
		{at: 30 * time.Second, failure: "HTTP 502", reply: "spec-example.json"},
		fail(90*time.Second, "HTTP 502"),
	}},
	{"no-conditions-success", "bare-node.json", nodeapply.Options{}, []step{ok(0)}},
	{"no-conditions-failure", "bare-node.json", nodeapply.Options{}, []step{
		fail(0, "connection refused"), fail(30*time.Second, "connection refused"), fail(60*time.Second, "connection refused"), ok(90 * time.Second),
	}},
	{"clock-goes-back", "interlink-node.json", nodeapply.Options{}, []step{
		ok(0), fail(100*time.Second, "HTTP 500"), fail(40*time.Second, "HTTP 500"),
		fail(149*time.Second, "HTTP 500"), fail(150*time.Second, "HTTP 500"), ok(20 * time.Second),
	}},
	{"no-grace", "interlink-node.json", nodeapply.Options{NoGrace: true}, []step{ok(0), fail(30*time.Second, "HTTP 500")}},
	{"custom-type-and-grace", "interlink-node.json", nodeapply.Options{ConnectivityCondition: "example.com/PluginConnectivity", Grace: 10 * time.Second}, []step{
		ok(0), fail(5*time.Second, "HTTP 500"), fail(15*time.Second, "HTTP 500"),
	}},
	{"heartbeat-interval", "interlink-node.json", nodeapply.Options{HeartbeatInterval: time.Minute}, []step{
		ok(0), ok(30 * time.Second), ok(60 * time.Second), fail(90*time.Second, "HTTP 500"), fail(100*time.Second, "HTTP 500"),
	}},
	{"sub-second-times", "interlink-node.json", nodeapply.Options{}, []step{
		ok(0), fail(30*time.Second+999*time.Millisecond, "HTTP 500"), fail(80*time.Second+500*time.Millisecond, "HTTP 500"),
		fail(81*time.Second, "HTTP 500"),
	}},
	{"unsafe-failure-text", "interlink-node.json", nodeapply.Options{}, []step{
		fail(0, "HTTP 500: <html>\n\t<body>\x00\xff"+strings.Repeat("é", 100)+"</body>"),
	}},
	{"compat-annotation", "interlink-node.json", nodeapply.Options{KeepPingResponse: true}, []step{
		{at: 0, body: `{"status":"ok"}`}, {at: 30 * time.Second, body: `{"status":"ok"}`},
		fail(60*time.Second, "HTTP 500"), {at: 90 * time.Second, body: "ok"},
	}},
	{"compat-annotation-oversized", "interlink-node.json", nodeapply.Options{KeepPingResponse: true}, []step{
		{at: 0, body: `{"status":"ok","message":"` + strings.Repeat("ü", 400) + `"}`},
	}},
	// A 64-cpu backend whose pods for this node hold 32 cpus reports 32
	// available: the node says 64, and the scheduler, subtracting the 32
	// requested by the pods bound to it, sees the 32 that are free.
	{"held-by-own-pods", "interlink-node.json", nodeapply.Options{}, []step{
		{at: 0, body: `{"resources":{"cpu":"32","memory":"100Gi","pods":"90","accelerators":[{"resourceType":"nvidia.com/gpu","available":"2"}]}}`,
			held: held("cpu", "32", "memory", "28Gi", "pods", "10", "nvidia.com/gpu", "2", "xilinx.com/fpga", "1")},
		{at: 30 * time.Second, body: `{"resources":{"cpu":"32","memory":"100Gi","pods":"90","accelerators":[{"resourceType":"nvidia.com/gpu","available":"2"}]}}`,
			held: held("cpu", "32", "memory", "28Gi", "pods", "10", "nvidia.com/gpu", "2", "xilinx.com/fpga", "1")},
		// A pod of 16 cpus ended: the backend has 48 free, the pods hold 16.
		{at: 60 * time.Second, body: `{"resources":{"cpu":"48"}}`, held: held("cpu", "16", "memory", "20Gi")},
		// No held: the reply's figures as they are, interLink's rule.
		{at: 90 * time.Second, body: `{"resources":{"cpu":"48"}}`},
		// A plugin that reports the total: nothing is added.
		{at: 100 * time.Second, body: `{"resources":{"basis":"total","cpu":"56"}}`, held: held("cpu", "16")},
		// A failed ping ignores held as it ignores the reply.
		{at: 120 * time.Second, failure: "HTTP 500", held: held("cpu", "8")},
	}},
	{"held-refused", "interlink-node.json", nodeapply.Options{}, []step{
		{at: 0, body: `{"resources":{"cpu":"32","pods":"90","memory":"7Ei"}}`,
			held: held("cpu", "-4", "pods", "1500m", "memory", "1Ei")},
	}},
	// With VirtualNodeConditions, the first ping on a node with no conditions
	// adds the three pressure conditions after Ready and the connectivity
	// condition.
	{"pressure-first-ping", "bare-node.json", nodeapply.Options{VirtualNodeConditions: true}, []step{ok(0)}},
	// A failed ping sets them too; the kubelet's reasons give way to
	// VirtualNode, and their transition times stay, as they were False.
	{"pressure-failed-ping", "interlink-node.json", nodeapply.Options{VirtualNodeConditions: true}, []step{
		fail(0, "connection refused"), fail(30*time.Second, "connection refused"),
	}},
	// The provider was gone past the node monitor grace: the node lifecycle
	// controller set Ready and the pressure conditions Unknown. The next
	// ping sets them False, with a new transition time.
	{"pressure-after-lifecycle-unknown", "lifecycle-unknown-node.json", nodeapply.Options{VirtualNodeConditions: true}, []step{
		ok(0), ok(30 * time.Second),
	}},
	{"pressure-steady", "interlink-node.json", nodeapply.Options{VirtualNodeConditions: true}, []step{
		ok(0), ok(30 * time.Second), ok(time.Hour), fail(time.Hour+30*time.Second, "HTTP 500"),
	}},
	{"pressure-heartbeat-interval", "interlink-node.json", nodeapply.Options{VirtualNodeConditions: true, HeartbeatInterval: time.Minute}, []step{
		ok(0), ok(30 * time.Second), ok(60 * time.Second),
	}},
	// Without the option the pressure conditions are left as the node
	// lifecycle controller set them.
	{"pressure-option-off", "lifecycle-unknown-node.json", nodeapply.Options{}, []step{ok(0)}},
	{"compat-annotation-not-utf8", "interlink-node.json", nodeapply.Options{KeepPingResponse: true}, []step{
		{at: 0, body: "{\"status\":\"ok\",\n\"message\":\"caf\xe9 \x1b[31mred\x1b[0m\"}\r\n"},
	}},
}

type sequenceCase struct {
	name  string
	node  string
	opts  nodeapply.Options
	steps []step
}

// takeoverCases are the nodes interLink 0.6.2 leaves, after a failed ping
// and after an answered one (their conditions written 30 s before t0),
// taken over with an answered ping, a failed ping, and failed pings past
// the grace, under each policy for an unreachable plugin, with the
// virtual node's conditions as the adoption guide says; and a long outage
// under UnreachableNoSchedule with NotReadyAfter.
func takeoverCases() []sequenceCase {
	cases := []sequenceCase{{
		"noschedule-then-not-ready-after", "interlink-node.json",
		nodeapply.Options{Unreachable: nodeapply.UnreachableNoSchedule, NotReadyAfter: 2 * time.Minute}, []step{
			ok(0), fail(30*time.Second, "connection refused"), fail(60*time.Second, "connection refused"),
			fail(80*time.Second, "connection refused"), fail(149*time.Second, "timeout"), fail(150*time.Second, "timeout"),
			ok(180 * time.Second),
		},
	}}
	for _, node := range []string{"interlink-failed-ping", "interlink-answered-ping"} {
		for _, policy := range []nodeapply.Unreachable{nodeapply.UnreachableNotReady, nodeapply.UnreachableNoSchedule} {
			opts := nodeapply.Options{VirtualNodeConditions: true, Unreachable: policy}
			for _, run := range []struct {
				name  string
				steps []step
			}{
				{"answered", []step{{at: 0, reply: "slurm.json"}}},
				{"failed", []step{fail(0, "HTTP 503")}},
				{"past-grace", []step{fail(0, "HTTP 503"), fail(30*time.Second, "HTTP 503"), fail(60*time.Second, "HTTP 503"), {at: 90 * time.Second, reply: "slurm.json"}}},
			} {
				cases = append(cases, sequenceCase{
					name: node + "-then-" + run.name + "-" + strings.ToLower(policy.String()), node: node + ".json",
					opts: opts, steps: run.steps,
				})
			}
		}
	}
	return cases
}

// lifecycleTaints are the NoSchedule taints that the node lifecycle
// controller keeps on a node for its conditions (TaintNodesByCondition,
// Kubernetes 1.37): Ready False or Unknown, and MemoryPressure,
// DiskPressure, PIDPressure or NetworkUnavailable True. With Ready False
// or Unknown it also adds the same key with NoExecute, which evicts pods.
func lifecycleTaints(conditions []corev1.NodeCondition) []string {
	byStatus := map[corev1.NodeConditionType]map[corev1.ConditionStatus]string{
		corev1.NodeReady:              {corev1.ConditionFalse: corev1.TaintNodeNotReady, corev1.ConditionUnknown: corev1.TaintNodeUnreachable},
		corev1.NodeMemoryPressure:     {corev1.ConditionTrue: corev1.TaintNodeMemoryPressure},
		corev1.NodeDiskPressure:       {corev1.ConditionTrue: corev1.TaintNodeDiskPressure},
		corev1.NodePIDPressure:        {corev1.ConditionTrue: corev1.TaintNodePIDPressure},
		corev1.NodeNetworkUnavailable: {corev1.ConditionTrue: corev1.TaintNodeNetworkUnavailable},
	}
	var taints []string
	for _, c := range conditions {
		if key, ok := byStatus[c.Type][c.Status]; ok {
			taints = append(taints, key+":NoSchedule")
			if c.Type == corev1.NodeReady {
				taints = append(taints, key+":NoExecute")
			}
		}
	}
	return taints
}

func taintsLine(taints []corev1.Taint) string {
	var parts []string
	for _, t := range taints {
		parts = append(parts, t.ToString())
	}
	return orNone(strings.Join(parts, ", "))
}

// conditionLine shows a condition on one line.
func conditionLine(c *corev1.NodeCondition) string {
	return fmt.Sprintf("%s=%s reason=%s message=%q transition=%s heartbeat=%s", c.Type, c.Status, c.Reason, c.Message,
		c.LastTransitionTime.UTC().Format(time.RFC3339), c.LastHeartbeatTime.UTC().Format(time.RFC3339))
}

// TestSequences runs the sequence cases against their goldens in
// testdata/sequences.
func TestSequences(t *testing.T) {
	for _, tc := range sequenceCases {
		t.Run(tc.name, func(t *testing.T) { runSequence(t, tc, "sequences", false) })
	}
}

// TestTakeover runs the takeover cases against their goldens in
// testdata/takeover, which also show the node's taints after each ping,
// and those the node lifecycle controller keeps for its conditions.
func TestTakeover(t *testing.T) {
	for _, tc := range takeoverCases() {
		t.Run(tc.name, func(t *testing.T) { runSequence(t, tc, "takeover", true) })
	}
}

// runSequence runs a sequence case against its golden in testdata/dir,
// checking at each step that the input was not modified, that no changes
// means the input node back, that the node is valid, and that the same
// ping again changes nothing.
func runSequence(t *testing.T, tc sequenceCase, dir string, taints bool) {
	t.Helper()
	node := readNode(t, tc.node)
	var b strings.Builder
	fmt.Fprintf(&b, "node %s, options %+v\n", tc.node, tc.opts)
	for i, s := range tc.steps {
		if s.restart {
			node = roundTrip(t, node)
		}
		ping := nodeapply.Ping{At: t0.Add(s.at), Failure: s.failure, Body: []byte(s.body), Held: s.held, Unlisted: s.unlisted}
		if s.reply != "" {
			ping.Body = readReply(t, s.reply)
		}
		if s.reply != "" || s.failure == "" && !s.unlisted {
			patch, _ := pingstatus.Parse(ping.Body, tc.opts.Reply)
			ping.Reply = &patch
		}
		before := node.DeepCopy()
		res := nodeapply.Apply(node, ping, tc.opts)

		fmt.Fprintf(&b, "\nstep %d: +%s", i+1, s.at)
		if s.restart {
			b.WriteString(", after a restart")
		}
		switch {
		case s.failure != "":
			fmt.Fprintf(&b, ", failed: %q", s.failure)
		case s.unlisted && ping.Reply == nil:
			b.WriteString(", answered")
		default:
			fmt.Fprintf(&b, ", answered %q", limit(string(ping.Body), 60))
		}
		if s.unlisted {
			b.WriteString(" (Unlisted)")
		}
		b.WriteString("\n")
		if s.held != nil {
			fmt.Fprintf(&b, "held: %s\n", listText(s.held))
		}
		golden.Section(&b, "changes", res.Changes)
		golden.Section(&b, "warnings", res.Warnings)
		b.WriteString("conditions:\n")
		for j := range res.Node.Status.Conditions {
			fmt.Fprintf(&b, "  %s\n", conditionLine(&res.Node.Status.Conditions[j]))
		}
		if taints {
			fmt.Fprintf(&b, "taints: %s\n", taintsLine(res.Node.Spec.Taints))
			fmt.Fprintf(&b, "the node lifecycle controller's taints for these conditions: %s\n", orNone(strings.Join(lifecycleTaints(res.Node.Status.Conditions), ", ")))
			fmt.Fprintf(&b, "object patch: %s\n", orNone(res.ObjectPatch()))
		}
		if v, ok := res.Node.Annotations[nodeapply.PingResponseAnnotation]; ok {
			fmt.Fprintf(&b, "ping-response annotation (%d bytes): %q\n", len(v), v)
		}
		if s.held != nil || strings.Contains(s.body, "resources") {
			fmt.Fprintf(&b, "capacity: %s\nallocatable: %s\n", listText(res.Node.Status.Capacity), listText(res.Node.Status.Allocatable))
		}
		statusPatch := res.StatusPatch()
		fmt.Fprintf(&b, "status patch: %s\n", orNone(statusPatch))
		// Conditions merge by type; where a new one lands is the
		// merge's business.
		if diff := cmp.Diff(byType(res.Node.Status.Conditions), byType(applyPatch(t, node, statusPatch).Status.Conditions)); diff != "" {
			t.Errorf("step %d: conditions after the status patch (-want +got):\n%s", i+1, diff)
		}

		if diff := nodeDiff(before, node); diff != "" {
			t.Fatalf("step %d: Apply modified its input (-before +after):\n%s", i+1, diff)
		}
		if (len(res.Changes) == 0) != (res.Node == node) {
			t.Errorf("step %d: %d changes, but returns the input node: %v", i+1, len(res.Changes), res.Node == node)
		}
		if p := kuberules.NodeProblems(res.Node); p != nil {
			t.Errorf("step %d: the node after is invalid: %v", i+1, p)
		}
		if again := nodeapply.Apply(res.Node, ping, tc.opts); len(again.Changes) != 0 {
			t.Errorf("step %d: the same ping again changes %v", i+1, again.Changes)
		}
		node = res.Node
	}
	golden.Check(t, filepath.Join("testdata", dir, tc.name+".golden"), []byte(b.String()))
}

// byType returns the conditions sorted by type.
func byType(conditions []corev1.NodeCondition) []corev1.NodeCondition {
	return slices.SortedFunc(slices.Values(conditions), func(a, b corev1.NodeCondition) int { return strings.Compare(string(a.Type), string(b.Type)) })
}

// listText shows a resource list sorted by name.
func listText(list corev1.ResourceList) string {
	var parts []string
	for name, q := range list {
		parts = append(parts, string(name)+"="+q.String())
	}
	slices.Sort(parts)
	return strings.Join(parts, " ")
}

func limit(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
