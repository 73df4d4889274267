package main

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/metrics"
	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/vnode"
)

// TestPartsTemplate: a template makes a valid node name of every valid
// part name, or says why not: {part} exactly once, at most 190 characters
// around it, and valid names with the shortest and the longest part.
func TestPartsTemplate(t *testing.T) {
	for _, tt := range []struct {
		template, problem string // "" for none
	}{
		{"slurm-{part}", ""},
		{"{part}", ""},
		{"{part}.hpc.example.org", ""},
		{"vk-{part}-east", ""},
		{strings.Repeat("a", 95) + "{part}" + strings.Repeat("b", 95), ""},
		{strings.Repeat("a", 96) + "{part}" + strings.Repeat("b", 95), "191 characters around {part}, want at most 190"},
		{"slurm", "must hold {part} exactly once"},
		{"{part}-{part}", "must hold {part} exactly once"},
		{"Slurm-{part}", `with the part "a" it names the node "Slurm-a", which is no node name`},
		{"-{part}", "which is no node name"},
		{"{part}.", "which is no node name"},
		{"vk_{part}", "which is no node name"},
		{"vk.-{part}", "which is no node name"},
	} {
		got := vnode.TemplateProblem(tt.template)
		if tt.problem == "" && got != "" || !strings.Contains(got, tt.problem) {
			t.Errorf("templateProblem(%q) = %q, want %q", tt.template, got, tt.problem)
		}
		if got != "" {
			continue
		}
		p := &vnode.Parts{Template: tt.template, Owner: "o"}
		for _, part := range []string{"a", "cn001", "gpu-a100", strings.Repeat("z", 63), "9-" + strings.Repeat("0", 61)} {
			if problems := validation.IsDNS1123Subdomain(p.NodeName(part)); len(problems) > 0 {
				t.Errorf("%q with the part %q: %v", tt.template, part, problems)
			}
		}
	}
}

// TestPartsOwnership: a part's node carries its part and the provider's
// ownership label, and only such a node, whose name is the part's, is the
// provider's; a node of a name too long for a label value has no
// hostname label.
func TestPartsOwnership(t *testing.T) {
	base := testConfig("", "http://127.0.0.1:1/status")
	base.Static, base.Parts = nil, &vnode.Parts{Template: "vk-{part}", Owner: "vk-part"}
	cfg := base.ForPart("cn001")
	node := cfg.Static
	want := map[string]string{"type": "virtual-kubelet", "kubernetes.io/role": "agent", corev1.LabelHostname: "vk-cn001", vnode.PartLabel: "cn001", vnode.OwnerLabel: "vk-part"}
	if node.Name != "vk-cn001" || len(node.Labels) != len(want) || cfg.Part != "cn001" {
		t.Fatalf("the part's node %s, labels %v, part %q", node.Name, node.Labels, cfg.Part)
	}
	for k, v := range want {
		if node.Labels[k] != v {
			t.Errorf("label %s = %q, want %q", k, node.Labels[k], v)
		}
	}
	if err := cfg.Check(); err != nil {
		t.Errorf("the part's configuration: %v", err)
	}
	if !base.Parts.Owns(node) {
		t.Error("the provider does not own its own part's node")
	}
	for name, change := range map[string]func(*corev1.Node){
		"without the ownership label":  func(n *corev1.Node) { delete(n.Labels, vnode.OwnerLabel) },
		"of another owner":             func(n *corev1.Node) { n.Labels[vnode.OwnerLabel] = "other" },
		"without the part's label":     func(n *corev1.Node) { delete(n.Labels, vnode.PartLabel) },
		"whose part is another node's": func(n *corev1.Node) { n.Labels[vnode.PartLabel] = "cn002" },
		"whose part is no part's name": func(n *corev1.Node) { n.Name, n.Labels[vnode.PartLabel] = "vk-CN1", "CN1" },
	} {
		n := node.DeepCopy()
		change(n)
		if base.Parts.Owns(n) {
			t.Errorf("a node %s is the provider's", name)
		}
	}
	if base.Parts.Owns(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "vk-cn001"}}) {
		t.Error("a node of the part's name without labels is the provider's")
	}

	long := (&vnode.Config{Parts: &vnode.Parts{Template: "{part}." + strings.Repeat("x", 40), Owner: "o"}}).ForPart(strings.Repeat("p", 30))
	if _, ok := long.Static.Labels[corev1.LabelHostname]; ok {
		t.Errorf("a node named %s (%d characters) has a hostname label", long.Static.Name, len(long.Static.Name))
	}
	if keys := long.StaticLabelKeys(); !strings.Contains(strings.Join(keys, ","), corev1.LabelHostname) {
		t.Errorf("protected labels %v, want the hostname among them though the node has none", keys)
	}
}

// TestPartsIgnoredWithoutParts: a provider that serves no parts (no
// -parts), whose plugin's reply lists parts, leaves its node as it is,
// and says so once when such a reply appears (and again when it comes
// back after one without), not at every ping; the warnings about the
// parts list's entries are not said at all. The metric counts the
// warning at every ping.
func TestPartsIgnoredWithoutParts(t *testing.T) {
	const name = "vk-unit-no-parts"
	client := fake.NewClientset()
	plugin := &fakePlugin{}
	withParts := `{"status":"ok","nodes":[{"name":"cn001","resources":{"cpu":"4"}},{"name":"Not_A_Part"}]}`
	plugin.reply(http.StatusOK, withParts, 0)
	server := httptest.NewServer(plugin)
	t.Cleanup(server.Close)
	cfg := testConfig(name, server.URL+"/status")
	reg, all := metrics.NewRegistry()
	cfg.Metrics = all
	log := newWarningLog(t)
	p := vnode.New(cfg, client, slog.New(log))
	runProvider(t, p, nil)
	step := stepPings(t, p)
	ignored := func() float64 {
		n, _ := gather(t, reg).value("pingnode_warnings_total", "node", name, "subject", "part", "action", "ignored")
		return n
	}
	step(3)
	if got := log.take(); !slices.Equal(got, []string{"nodes"}) {
		t.Errorf("warnings logged over three replies with parts: %v, want one, at nodes", got)
	}
	if n := ignored(); n != 3 {
		t.Errorf("pingnode_warnings_total counted %g replies with parts, want 3", n)
	}
	if node := fakeNode(t.Context(), t, client, name); !hasCPU(node, "100") {
		t.Errorf("allocatable %v, want the static node's: the parts are not its", node.Status.Allocatable)
	}
	plugin.reply(http.StatusOK, `{"status":"ok","resources":{"cpu":"8"}}`, 0)
	step(1)
	plugin.reply(http.StatusOK, withParts, 0)
	step(2)
	if got := log.take(); !slices.Equal(got, []string{"nodes"}) {
		t.Errorf("warnings logged once parts came back: %v, want one, at nodes", got)
	}
}
