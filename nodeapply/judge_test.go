package nodeapply_test

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"

	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/pingstatus"
)

// TestJudge: the gate parses the body of an answered ping without a
// reply, judges a hand-built reply once, returns a judged one as it is
// without an allocation, and leaves a failed ping alone; Apply given the
// body alone does what it does with the reply Parse gives.
func TestJudge(t *testing.T) {
	body := []byte(`{"resources":{"cpu":"8","memory":"bad"},"taints":[]}`)
	parsed, parseWarnings := pingstatus.Parse(body, pingstatus.Options{})

	got, warnings := nodeapply.Judge(nodeapply.Ping{Body: body}, pingstatus.Options{})
	if diff := cmp.Diff(parsed, *got.Reply, cmpopts.IgnoreUnexported(pingstatus.NodePatch{})); diff != "" || len(warnings) != len(parseWarnings) {
		t.Errorf("the body judged (-Parse +Judge):\n%s\nwarnings %v, want %v", diff, warnings, parseWarnings)
	}
	allocs := testing.AllocsPerRun(100, func() {
		again, w := nodeapply.Judge(got, pingstatus.Options{})
		if again.Reply != got.Reply || w != nil {
			t.Fatalf("a judged reply judged again: %p (want %p), %v", again.Reply, got.Reply, w)
		}
	})
	if allocs != 0 {
		t.Errorf("judging a judged reply allocates %v times, want 0", allocs)
	}

	hand := &pingstatus.NodePatch{Kind: pingstatus.Structured, ReplaceTaints: true, Taints: []corev1.Taint{{Key: "node.kubernetes.io/unreachable", Effect: corev1.TaintEffectNoExecute}}}
	judged, warnings := nodeapply.Judge(nodeapply.Ping{Reply: hand}, pingstatus.Options{})
	if judged.Reply == hand || len(judged.Reply.Taints) != 0 || len(warnings) != 1 {
		t.Errorf("a hand-built reply: taints %v, warnings %v; want the reserved taint refused, with one warning", judged.Reply.Taints, warnings)
	}

	failed := nodeapply.Ping{Failure: "HTTP 503", Body: body}
	if got, w := nodeapply.Judge(failed, pingstatus.Options{}); got.Reply != nil || w != nil {
		t.Errorf("a failed ping judged: %v, %v; want it as it is", got.Reply, w)
	}

	node := readNode(t, "node-with-plugin-taints.json")
	fromBody := nodeapply.Apply(node, nodeapply.Ping{Body: body}, nodeapply.Options{})
	fromReply := nodeapply.Apply(node, nodeapply.Ping{Reply: &parsed, Body: body}, nodeapply.Options{})
	if diff := cmp.Diff(fromReply.Node, fromBody.Node); diff != "" {
		t.Errorf("Apply of the body alone (-the reply +the body):\n%s", diff)
	}
	if len(fromBody.Warnings) != len(parseWarnings) || len(fromReply.Warnings) != 0 {
		t.Errorf("Apply's warnings: %v of the body (want Parse's %v), %v of the reply (want none)", fromBody.Warnings, parseWarnings, fromReply.Warnings)
	}
}

// ExampleJudge is a provider's ping: the plugin's bytes through the
// gate once, the warnings logged, and the judged ping handed on.
func ExampleJudge() {
	ping := nodeapply.Ping{Body: []byte(`{"resources":{"cpu":"64","memory":"-1Gi"}}`)}
	ping, warnings := nodeapply.Judge(ping, pingstatus.Options{})
	for _, w := range warnings {
		fmt.Println("warning:", w)
	}
	res := nodeapply.Apply(&corev1.Node{}, ping, nodeapply.Options{})
	fmt.Println("cpu", res.Node.Status.Capacity.Cpu(), "warnings again:", len(res.Warnings))
	// Output:
	// warning: resources.memory: -1Gi must not be negative; memory left unchanged
	// cpu 64 warnings again: 0
}
