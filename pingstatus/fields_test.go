package pingstatus

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// jsonNames returns the JSON names of the fields of v's type that
// encoding/json reads, sorted.
func jsonNames(v any) []string {
	var names []string
	for f := range reflect.TypeOf(v).Fields() {
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" {
			name = f.Name
		}
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// schemaNames returns the sorted property names of a schema object.
func schemaNames(t *testing.T, schema map[string]any) []string {
	t.Helper()
	props, ok := schema["properties"].(map[string]any)
	if !ok {
		t.Fatalf("schema object %v has no properties", schema)
	}
	var names []string
	for name := range props {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// TestFieldTableAgrees holds the table of the reply's field names, which
// the walker and the warnings use, to the JSON names of the wire types, of
// the two decode mirrors and of the JSON Schema, level by level.
func TestFieldTableAgrees(t *testing.T) {
	var schema map[string]any
	if err := json.Unmarshal([]byte(JSONSchema()), &schema); err != nil {
		t.Fatal(err)
	}
	defs := schema["$defs"].(map[string]any)
	levels := []struct {
		level        level
		wire, mirror any
		raw          any
		schema       map[string]any
	}{
		{replyLevel, PingResponse{}, reply{}, rawReply{}, schema},
		{resourcesLevel, ResourcesResponse{}, resources{}, rawResources{}, schema["properties"].(map[string]any)["resources"].(map[string]any)},
		{acceleratorLevel, AcceleratorResponse{}, accelerator{}, rawAccelerator{}, defs["accelerator"].(map[string]any)},
		{taintLevel, TaintResponse{}, taint{}, rawTaint{}, defs["taint"].(map[string]any)},
	}
	if len(levels) != len(levelFields) {
		t.Fatalf("the test knows %d levels, the table has %d", len(levels), len(levelFields))
	}
	longest := 0
	for _, lv := range levels {
		want := slices.Sorted(slices.Values(levelFields[lv.level]))
		for _, got := range []struct {
			what  string
			names []string
		}{
			{reflect.TypeOf(lv.wire).Name(), jsonNames(lv.wire)},
			{reflect.TypeOf(lv.mirror).Name(), jsonNames(lv.mirror)},
			{reflect.TypeOf(lv.raw).Name(), jsonNames(lv.raw)},
			{"the schema", schemaNames(t, lv.schema)},
		} {
			if diff := cmp.Diff(want, got.names); diff != "" {
				t.Errorf("level %d: the names of %s (-table +got):\n%s", lv.level, got.what, diff)
			}
		}
		if n := len(levelFields[lv.level]); n > maxLevelFields {
			t.Errorf("level %d has %d fields, more than maxLevelFields %d", lv.level, n, maxLevelFields)
		}
		for _, name := range levelFields[lv.level] {
			longest = max(longest, len(name))
		}
	}
	if want := 2 + 6*longest; maxKeyBytes != want {
		t.Errorf("maxKeyBytes is %d; the longest name escaped and quoted takes %d", maxKeyBytes, want)
	}
}

// TestFieldPaths pins the paths that warnings name.
func TestFieldPaths(t *testing.T) {
	got := []string{
		fieldPath(replyLevel, statusField), fieldPath(replyLevel, resourcesField), fieldPath(replyLevel, taintsField),
		fieldPath(resourcesLevel, cpuField), fieldPath(resourcesLevel, acceleratorsField), fieldPath(resourcesLevel, basisField),
		fieldPath(acceleratorLevel, resourceTypeField), fieldPath(taintLevel, effectField),
	}
	want := []string{"status", "resources", "taints", "resources.cpu", "resources.accelerators", "resources.basis", ".resourceType", ".effect"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("paths (-want +got):\n%s", diff)
	}
}
