package pingstatus_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/pingnode/pingnode/internal/gen"
	"github.com/pingnode/pingnode/internal/golden"
	"github.com/pingnode/pingnode/pingstatus"
)

// subjectOf is what a warning's path says it is about; a near miss at
// the top of the reply, or a field at the wrong level, is about the
// field meant (rule key-near-miss).
func subjectOf(path, message string) pingstatus.Subject {
	if rest, ok := strings.CutPrefix(path, "nodes["); ok { // in a part
		_, inPart, _ := strings.Cut(rest, "].")
		if inPart == "" || inPart == "name" || strings.HasSuffix(message, `did you mean "name"? ignored`) && !strings.ContainsAny(inPart, ".[") {
			return pingstatus.SubjectPart
		}
		return subjectOf(inPart, message)
	}
	switch {
	case strings.Contains(message, `belongs in the part's entry`):
		meant, _, _ := strings.Cut(message[strings.Index(message, `"`)+1:], `"`)
		return subjectOf(meant, "")
	case strings.Contains(message, `belongs in "resources"`):
		return pingstatus.SubjectResource
	case strings.Contains(message, "belongs at the top level"),
		strings.HasPrefix(message, "unknown field; did you mean") && !strings.ContainsAny(path, ".["):
		meant, _, _ := strings.Cut(message[strings.Index(message, `"`)+1:], `"`)
		return subjectOf(meant, "")
	}
	switch {
	case strings.HasPrefix(path, "resources"):
		return pingstatus.SubjectResource
	case strings.HasPrefix(path, "taints"):
		return pingstatus.SubjectTaint
	case strings.HasPrefix(path, "labels"):
		return pingstatus.SubjectLabel
	case strings.HasPrefix(path, "devices"):
		return pingstatus.SubjectDevice
	case strings.HasPrefix(path, "nodes"):
		return pingstatus.SubjectPart
	}
	return pingstatus.SubjectReply // "" and "status"
}

// actionOf is what a warning's message says was done.
func actionOf(message string) pingstatus.Action {
	switch {
	case strings.HasSuffix(message, "; ignored"), strings.HasSuffix(message, "? ignored"), strings.Contains(message, "more than the limit"):
		return pingstatus.Ignored
	case strings.HasSuffix(message, "NoSchedule used"), strings.HasSuffix(message, "summed"),
		strings.HasSuffix(message, "the last one is kept"), strings.HasSuffix(message, "the last one is used"),
		strings.HasSuffix(message, "decoded and read"), strings.Contains(message, `read as "total"`):
		return pingstatus.Repaired
	}
	return pingstatus.Refused // "left unchanged", "entry dropped", "label kept", "devices kept"
}

// checkClasses fails unless every warning's Subject and Action agree with
// what its path and its message say.
func checkClasses(t interface{ Fatalf(string, ...any) }, warnings []pingstatus.Warning) {
	for _, w := range warnings {
		if s, a := subjectOf(w.Path, w.Message), actionOf(w.Message); w.Subject != s || w.Action != a {
			t.Fatalf("%q is %v/%v, its path and message say %v/%v", w, w.Subject, w.Action, s, a)
		}
	}
}

// TestPropertyWarningClasses: the subject and action of every warning, for every
// sample reply and for adversarial ones, agree with its path and message.
func TestPropertyWarningClasses(t *testing.T) {
	for _, in := range golden.Inputs(t, "../testdata/replies/*") {
		_, warnings := pingstatus.Parse(in.Data, pingstatus.Options{})
		checkClasses(t, warnings)
	}
	rapid.Check(t, func(t *rapid.T) {
		_, warnings := pingstatus.Parse(gen.ReplyBody().Draw(t, "body"), pingstatus.Options{MaxTaints: 4, MaxAccelerators: 4})
		checkClasses(t, warnings)
	})
}

// TestEnumsMarshalAsText: a NodePatch and a Warning marshal their kind,
// subject and action as words, and read them back.
func TestEnumsMarshalAsText(t *testing.T) {
	in := struct {
		Kind    pingstatus.Kind
		Warning pingstatus.Warning
	}{pingstatus.Structured, pingstatus.Warning{Path: "taints[0].effect", Message: "missing; NoSchedule used", Subject: pingstatus.SubjectTaint, Action: pingstatus.Repaired, Rule: "taint-valid"}}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"Kind":"structured","Warning":{"path":"taints[0].effect","message":"missing; NoSchedule used","subject":"taint","action":"repaired","rule":"taint-valid"}}`
	if diff := cmp.Diff(want, string(b)); diff != "" {
		t.Errorf("JSON (-want +got):\n%s", diff)
	}
	out := in
	out.Kind, out.Warning = 0, pingstatus.Warning{}
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(in, out); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	for _, v := range []interface{ MarshalText() ([]byte, error) }{pingstatus.Kind(7), pingstatus.Subject(-1), pingstatus.Action(3)} {
		if _, err := v.MarshalText(); err == nil {
			t.Errorf("%v marshals", v)
		}
	}
	var s pingstatus.Subject
	if err := s.UnmarshalText([]byte("node")); err == nil {
		t.Error(`"node" reads as a Subject`)
	}
}
