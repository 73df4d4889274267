package nodeapply

import (
	"os"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/pingnode/pingnode/internal/contracts"
	"github.com/pingnode/pingnode/internal/gen"
	"github.com/pingnode/pingnode/pingstatus"
)

// subjectOfPath is what the path of a change or an Apply warning says it
// is about. No path of Apply's is of a device: the devices are
// devicepool's, whose own test holds its changes and warnings to
// SubjectDevice.
func subjectOfPath(path string) pingstatus.Subject {
	for _, p := range []struct {
		prefix  string
		subject pingstatus.Subject
	}{
		{"status.capacity", pingstatus.SubjectResource}, {"status.allocatable", pingstatus.SubjectResource},
		{"patch.resources", pingstatus.SubjectResource}, {"ping.held", pingstatus.SubjectResource},
		{"spec.taints", pingstatus.SubjectTaint}, {"patch.taints", pingstatus.SubjectTaint},
		{"status.conditions", pingstatus.SubjectCondition}, {"ping.at", pingstatus.SubjectCondition},
		{"metadata.annotations", pingstatus.SubjectAnnotation},
		{"metadata.labels", pingstatus.SubjectLabel}, {"patch.labels", pingstatus.SubjectLabel},
	} {
		if strings.HasPrefix(path, p.prefix) {
			return p.subject
		}
	}
	return pingstatus.SubjectReply
}

// TestPropertySubjects: every change and every warning of Apply is about
// what its path names, and every warning carries a rule that a contract
// declares: this package's, or pingstatus's for the judgement of a patch
// built by hand.
func TestPropertySubjects(t *testing.T) {
	rules := map[string]bool{}
	for _, file := range []string{"doc.go", "../pingstatus/doc.go"} {
		doc, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range contracts.Names(doc) {
			rules[name] = true
		}
	}
	rapid.Check(t, func(t *rapid.T) {
		opts := agreementOptions(t)
		node := agreementNode(t, opts)
		ping := agreementPing(t, node)
		if rapid.IntRange(0, 3).Draw(t, "by hand") == 0 {
			ping.Reply = gen.HandBuiltPatch().Draw(t, "hand-built patch")
		}
		res := Apply(node, ping, opts)
		for _, c := range res.Changes {
			if want := subjectOfPath(c.Path); c.Subject != want || want == pingstatus.SubjectReply {
				t.Fatalf("change %q is about %v, its path says %v", c, c.Subject, want)
			}
		}
		for _, w := range res.Warnings {
			if want := subjectOfPath(w.Path); w.Subject != want && !strings.HasPrefix(w.Path, "patch.") {
				t.Fatalf("warning %q is about %v, its path says %v", w, w.Subject, want)
			}
			if !rules[w.Rule] {
				t.Fatalf("warning %q carries the rule %q, which no contract declares", w, w.Rule)
			}
		}
	})
}
