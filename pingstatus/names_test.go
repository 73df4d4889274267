package pingstatus_test

import (
	"strings"
	"testing"

	"github.com/pingnode/pingnode/pingstatus"
)

// TestNameProblems: a part's name is a DNS label of at most 63 bytes,
// as Parse judges it; a label namespace may be allowed unless it is no
// DNS subdomain or Kubernetes' own, as Parse judges a label's key.
func TestNameProblems(t *testing.T) {
	for name, ok := range map[string]bool{
		"cn001": true, strings.Repeat("a", pingstatus.MaxPartNameBytes): true,
		strings.Repeat("a", pingstatus.MaxPartNameBytes+1): false, "CN001": false, "": false, "cn_1": false,
	} {
		if got := pingstatus.PartNameProblem(name) == ""; got != ok {
			t.Errorf("PartNameProblem(%q) = %q; want a problem: %v", name, pingstatus.PartNameProblem(name), !ok)
		}
		body := `{"nodes":[{"name":"` + name + `"}]}`
		_, warnings := pingstatus.Parse([]byte(body), pingstatus.Options{})
		if parsed := len(warnings) == 0; parsed != ok {
			t.Errorf("Parse of a part named %q: warnings %v; PartNameProblem says it may name a part: %v", name, warnings, ok)
		}
	}
	for ns, ok := range map[string]bool{
		"nvidia.com": true, "example.org": true, "kubernetes.io": false, "node.k8s.io": false, "not a name": false,
		"feature.node.kubernetes.io": true,
	} {
		if got := pingstatus.LabelNamespaceProblem(ns) == ""; got != ok {
			t.Errorf("LabelNamespaceProblem(%q) = %q; want a problem: %v", ns, pingstatus.LabelNamespaceProblem(ns), !ok)
		}
	}
}
