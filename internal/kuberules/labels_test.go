package kuberules

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLabelCheck(t *testing.T) {
	check := LabelCheck{Namespaces: []string{"nvidia.com", "kubernetes.io", ""}, Protected: []string{"site.example.com/queue"}}
	tests := []struct {
		key, value string
		want       LabelProblems
	}{
		{"feature.node.kubernetes.io/cpu-model.vendor_id", "AMD", LabelProblems{}},
		{"gpu.feature.node.kubernetes.io/x", "", LabelProblems{}},
		{"profile.node.kubernetes.io/stack", "el9", LabelProblems{}},
		{"nvidia.com/gpu.product", "NVIDIA-A100-SXM4-80GB", LabelProblems{}},
		{"gpu.nvidia.com/x", "1", LabelProblems{}},
		{"notnvidia.com/x", "1", LabelProblems{NotAllowed: true}},
		{"example.org/x", "1", LabelProblems{NotAllowed: true}},
		{"site.example.com/queue", "gpu", LabelProblems{NotAllowed: true, Protected: true}},
		{"dedicated", "gpu", LabelProblems{Forbidden: forbiddenUnprefixed, NotAllowed: true}},
		{"kubernetes.io/hostname", "x", LabelProblems{Forbidden: forbiddenKubernetes}}, // allowed by the options, never a plugin's
		{"node.kubernetes.io/instance-type", "x", LabelProblems{Forbidden: forbiddenKubernetes}},
		{"node-restriction.kubernetes.io/dedicated", "x", LabelProblems{Forbidden: forbiddenNodeRestriction}},
		{"a.node-restriction.kubernetes.io/dedicated", "x", LabelProblems{Forbidden: forbiddenNodeRestriction}},
		{"k8s.io/x", "x", LabelProblems{Forbidden: forbiddenKubernetes, NotAllowed: true}},
		{"cloud.k8s.io/x", "x", LabelProblems{Forbidden: forbiddenKubernetes, NotAllowed: true}},
		{"feature.node.kubernetes.io/x", "has spaces", LabelProblems{Value: problemValueChars}},
		{"Upper.io/x", "x", LabelProblems{Key: problemPrefix}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, check.Check(tt.key, tt.value)); diff != "" {
			t.Errorf("Check(%q, %q) (-want +got):\n%s", tt.key, tt.value, diff)
		}
	}
}

func TestNamespaceProblem(t *testing.T) {
	for ns, ok := range map[string]bool{
		"nvidia.com": true, "gpu.example.org": true, "feature.node.kubernetes.io": true,
		"kubernetes.io": false, "k8s.io": false, "node-restriction.kubernetes.io": false, "topology.kubernetes.io": false,
		"Not_A_Domain": false, "": false, "example.com/": false,
	} {
		if got := NamespaceProblem(ns); (got == "") != ok {
			t.Errorf("NamespaceProblem(%q) = %q, want ok %v", ns, got, ok)
		}
	}
}

func TestLabelCheckDoesNotAllocate(t *testing.T) {
	check := LabelCheck{Namespaces: []string{"nvidia.com"}, Protected: []string{"site.example.com/queue"}}
	allocs := testing.AllocsPerRun(100, func() {
		_ = check.Check("nvidia.com/gpu.product", "NVIDIA-A100-SXM4-80GB")
		_ = check.Check("kubernetes.io/hostname", "x")
	})
	if allocs != 0 {
		t.Errorf("Check allocates %v times, want 0", allocs)
	}
}
