package nodeapply_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/pingstatus"
)

// TestChangesMarshalAsJSON: a change marshals with lowerCamelCase names
// and its op and subject as words, and reads back the same; an op that is
// none of the three does not marshal.
func TestChangesMarshalAsJSON(t *testing.T) {
	changes := []nodeapply.Change{
		{Op: nodeapply.Added, Subject: pingstatus.SubjectTaint, Path: "spec.taints[a.io/x:NoSchedule]", New: "a.io/x:NoSchedule"},
		{Op: nodeapply.Removed, Subject: pingstatus.SubjectAnnotation, Path: "metadata.annotations[pingnode.io/plugin-taints]", Old: "a.io/x:NoSchedule"},
		{Op: nodeapply.Modified, Subject: pingstatus.SubjectResource, Path: "status.capacity[cpu]", Old: "64", New: "128"},
	}
	b, err := json.Marshal(changes)
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"op":"added","subject":"taint","path":"spec.taints[a.io/x:NoSchedule]","new":"a.io/x:NoSchedule"},` +
		`{"op":"removed","subject":"annotation","path":"metadata.annotations[pingnode.io/plugin-taints]","old":"a.io/x:NoSchedule"},` +
		`{"op":"modified","subject":"resource","path":"status.capacity[cpu]","old":"64","new":"128"}]`
	if diff := cmp.Diff(want, string(b)); diff != "" {
		t.Errorf("JSON (-want +got):\n%s", diff)
	}
	var back []nodeapply.Change
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(changes, back); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	if _, err := nodeapply.Op(3).MarshalText(); err == nil {
		t.Error("Op(3) marshals")
	}
	if got := nodeapply.Op(-1).String(); got != "Op(?)" {
		t.Errorf("Op(-1) = %q, want Op(?)", got)
	}
	var op nodeapply.Op
	if err := op.UnmarshalText([]byte("changed")); err == nil {
		t.Error(`"changed" reads as an Op`)
	}
}
