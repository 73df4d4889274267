package pingstatus_test

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pingnode/pingnode/pingstatus"
	"github.com/pingnode/pingnode/pingstatus/internal/schemagen/wireschema"
)

// TestSchemaIsGenerated: schema.json, which JSONSchema returns, is what
// the generator builds now from the wire types, their doc comments and
// the rules table, so that a change to any of them without go generate
// fails here, without the CI step.
func TestSchemaIsGenerated(t *testing.T) {
	want, err := wireschema.Build(".")
	if err != nil {
		t.Fatalf("the generator fails: %v", err)
	}
	got, err := os.ReadFile("schema.json")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("schema.json is not what the generator writes now: run go generate ./pingstatus (-file +generator):\n%s",
			cmp.Diff(strings.Split(string(got), "\n"), strings.Split(string(want), "\n")))
	}
	if pingstatus.JSONSchema() != string(got) {
		t.Error("JSONSchema() is not schema.json")
	}
}

// TestSchemaTableCheck: the generator refuses a wire type with a field
// that the rules table has no entry for, and an entry for a field that
// the type does not have.
func TestSchemaTableCheck(t *testing.T) {
	type part struct {
		Name  string `json:"name"`
		Cores string `json:"cores,omitempty"`
	}
	type reply struct {
		Status string  `json:"status,omitempty"`
		Parts  []part  `json:"parts,omitempty"`
		Memory *string `json:"memory,omitempty"`
	}
	complete := func() []wireschema.Entry {
		return []wireschema.Entry{
			{Type: reflect.TypeFor[reply](), Fields: map[string]wireschema.Field{"Status": {}, "Parts": {}, "Memory": {}}},
			{Def: "part", Type: reflect.TypeFor[part](), Fields: map[string]wireschema.Field{"Name": {}, "Cores": {}}},
		}
	}
	if err := wireschema.Check(reflect.TypeFor[reply](), complete()); err != nil {
		t.Fatalf("a complete table: %v", err)
	}
	if err := wireschema.Check(reflect.TypeFor[pingstatus.PingResponse](), wireschema.Table(wireschema.Consts{})); err != nil {
		t.Errorf("the generator's table: %v", err)
	}
	for _, c := range []struct {
		what   string
		change func([]wireschema.Entry) []wireschema.Entry
		want   string
	}{
		{"a field without an entry", func(table []wireschema.Entry) []wireschema.Entry {
			delete(table[1].Fields, "Cores")
			return table
		}, `field part.Cores (JSON "cores") has no entry in the table`},
		{"an entry for no field", func(table []wireschema.Entry) []wireschema.Entry {
			table[0].Fields["Memroy"] = wireschema.Field{}
			return table
		}, "the table has an entry for reply.Memroy, a field that reply does not have"},
		{"a type without an entry", func(table []wireschema.Entry) []wireschema.Entry {
			return table[:1]
		}, "has no entry in the table"},
	} {
		err := wireschema.Check(reflect.TypeFor[reply](), c.change(complete()))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Check says %v, want an error with %q", c.what, err, c.want)
		}
	}
}
