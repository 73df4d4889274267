package nodeapply_test

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"pgregory.net/rapid"

	"github.com/pingnode/pingnode/internal/gen"
	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/pingstatus"
)

// pluginLabelKeys returns the keys the label ownership annotation lists.
func pluginLabelKeys(node *corev1.Node) []string {
	v := node.Annotations[nodeapply.DefaultLabelOwnershipAnnotation]
	if v == "" {
		return nil
	}
	return strings.Split(v, ",")
}

// foreignLabels returns the node's labels that the annotation does not
// list: the labels the plugin did not set.
func foreignLabels(node *corev1.Node) map[string]string {
	foreign := maps.Clone(node.Labels)
	for _, k := range pluginLabelKeys(node) {
		delete(foreign, k)
	}
	return foreign
}

// TestPropertyForeignLabelsSurvive: a label the plugin did not set is
// never changed or removed, whatever the ping (a parsed adversarial reply,
// a hand-built patch, a failed ping).
func TestPropertyForeignLabelsSurvive(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		opts := optionsGen(true).Draw(t, "opts")
		node := withPluginHistory(t, opts)
		foreign := foreignLabels(node)
		ping := nodeapply.Ping{Reply: patchGen().Draw(t, "patch")}
		if rapid.IntRange(0, 4).Draw(t, "failed") == 0 {
			ping.Failure = "timeout after 3s"
		}
		res := nodeapply.Apply(node, ping, opts)
		for k, v := range foreign {
			if got, ok := res.Node.Labels[k]; !ok || got != v {
				t.Fatalf("foreign label %s=%s is now %q (present %v); changes %v", k, v, got, ok, res.Changes)
			}
		}
		for _, k := range pluginLabelKeys(res.Node) {
			if _, ok := res.Node.Labels[k]; !ok {
				t.Fatalf("the annotation lists %s, which the node does not have", k)
			}
		}
		if ping.Failure != "" && !cmp.Equal(node.Labels, res.Node.Labels) {
			t.Fatalf("a failed ping changed the labels: %v", cmp.Diff(node.Labels, res.Node.Labels))
		}
	})
}

// TestPropertyPluginLabelsAreTheLastList: after any sequence of pings
// (replies with labels, without, failed ones, and provider restarts that
// read the node back from its JSON), the plugin's labels on the node are
// exactly the last accepted set, but for the keys an administrator holds,
// and with those it had whose new entry was refused for its value; the
// administrator's labels keep their values throughout.
func TestPropertyPluginLabelsAreTheLastList(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		opts := nodeapply.Options{Reply: pingstatus.Options{LabelNamespaces: gen.LabelNamespaces}}
		node := gen.Node().Draw(t, "node")
		admin := maps.Clone(node.Labels) // all foreign at the start
		plugin := map[string]string{}    // what the plugin's labels must be
		for step := range rapid.IntRange(1, 8).Draw(t, "steps") {
			ping := nodeapply.Ping{}
			switch rapid.IntRange(0, 4).Draw(t, "ping") {
			case 0:
				ping.Failure = "HTTP 503"
				ping.Reply = validPatch(t)
			case 1:
				p, _ := pingstatus.Parse(gen.ReplyBody().Draw(t, "body"), opts.Reply)
				ping.Reply = &p
			default:
				ping.Reply = validPatch(t)
			}
			if rapid.Bool().Draw(t, "restart") {
				node = roundTrip(t, node)
			}
			node = nodeapply.Apply(node, ping, opts).Node
			if ping.Failure == "" && ping.Reply.ReplaceLabels {
				next := map[string]string{}
				for k, v := range ping.Reply.Labels {
					if _, held := admin[k]; !held {
						next[k] = v
					}
				}
				for _, k := range ping.Reply.KeptLabelKeys {
					if v, had := plugin[k]; had {
						if _, listed := ping.Reply.Labels[k]; !listed {
							next[k] = v
						}
					}
				}
				plugin = next
			}
			for k, v := range admin {
				if got, ok := node.Labels[k]; !ok || got != v {
					t.Fatalf("step %d: the administrator's %s=%s is now %q (present %v)", step, k, v, got, ok)
				}
			}
			for k, v := range plugin {
				if got := node.Labels[k]; got != v {
					t.Fatalf("step %d: the plugin's %s is %q, want %q", step, k, got, v)
				}
			}
			if diff := cmp.Diff(slices.Sorted(maps.Keys(plugin)), pluginLabelKeys(node), cmpopts.EquateEmpty()); diff != "" {
				t.Fatalf("step %d: the plugin's labels (-want +annotation):\n%s", step, diff)
			}
		}
	})
}

// TestSteadyLabelsMakeNoCopy: a ping whose labels are on the node
// already, the plugin's and an administrator's equal one, costs no copy,
// and no allocation but the labels' merge's own few.
func TestSteadyLabelsMakeNoCopy(t *testing.T) {
	opts := nodeapply.Options{Reply: pingstatus.Options{LabelNamespaces: []string{"nvidia.com"}}}
	node := readNode(t, "node-with-admin-labels.json")
	patch, _ := pingstatus.Parse(readReply(t, "labels-gpu.json"), opts.Reply)
	node = nodeapply.Apply(node, nodeapply.Ping{Reply: &patch}, opts).Node
	delete(patch.Labels, "nvidia.com/gpu.product") // the administrator holds it with another value: a warning at each ping, not steady
	judged, _ := opts.Reply.Check(&patch)          // a patch changed after its judgement is judged afresh
	var res nodeapply.Result
	allocs := testing.AllocsPerRun(100, func() { res = nodeapply.Apply(node, nodeapply.Ping{Reply: judged}, opts) })
	if allocs > maxMergeAllocs {
		t.Errorf("a steady ping with labels allocates %v times, want at most %v", allocs, maxMergeAllocs)
	}
	if res.Node != node || len(res.Changes) != 0 {
		t.Errorf("a steady ping with labels returned a new node or changes: %v", res.Changes)
	}
}
