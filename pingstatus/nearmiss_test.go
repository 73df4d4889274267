package pingstatus_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/pingnode/pingnode/pingstatus"
)

// TestNearMisses pins down rule key-near-miss: which unknown keys are warned, with
// the field meant and its subject, and which stay silent.
func TestNearMisses(t *testing.T) {
	device := func(fields string) string { return `{"devices":[{"name":"a","count":1,` + fields + `}]}` }
	tests := []struct {
		name     string
		body     string
		warnings []string
		subjects []pingstatus.Subject
	}{
		{name: "devices in the singular", body: `{"device":[{"name":"a","count":1}]}`,
			warnings: []string{`device: unknown field; did you mean "devices"? ignored`}, subjects: []pingstatus.Subject{pingstatus.SubjectDevice}},
		{name: "attributes in the singular", body: device(`"attribute":{}`),
			warnings: []string{`devices[0].attribute: unknown field; did you mean "attributes"? ignored`}, subjects: []pingstatus.Subject{pingstatus.SubjectDevice}},
		{name: "capacity in the plural", body: device(`"capacities":{}`),
			warnings: []string{`devices[0].capacities: unknown field; did you mean "capacity"? ignored`}, subjects: []pingstatus.Subject{pingstatus.SubjectDevice}},
		{name: "one edit: swapped, missing, extra, wrong letter", body: `{"resources":{"memroy":"1Gi","ephemeralStorag":"1","hugepagess":{},"accelerator":[]},"lables":{},"taint":[]}`,
			warnings: []string{
				`resources.memroy: unknown field; did you mean "memory"? ignored`,
				`resources.ephemeralStorag: unknown field; did you mean "ephemeralStorage"? ignored`,
				`resources.hugepagess: unknown field; did you mean "hugepages"? ignored`,
				`resources.accelerator: unknown field; did you mean "accelerators"? ignored`,
				`lables: unknown field; did you mean "labels"? ignored`,
				`taint: unknown field; did you mean "taints"? ignored`,
			},
			subjects: []pingstatus.Subject{pingstatus.SubjectResource, pingstatus.SubjectResource, pingstatus.SubjectResource, pingstatus.SubjectResource, pingstatus.SubjectLabel, pingstatus.SubjectTaint}},
		{name: "plurals of short fields", body: `{"resources":{"cpus":"1","pod":"1"},"taints":[{"key":"a.io/x","keys":"b","effect":"NoSchedule"}]}`,
			warnings: []string{
				`resources.cpus: unknown field; did you mean "cpu"? ignored`,
				`resources.pod: unknown field; did you mean "pods"? ignored`,
				`taints[0].keys: unknown field; did you mean "key"? ignored`,
			},
			subjects: []pingstatus.Subject{pingstatus.SubjectResource, pingstatus.SubjectResource, pingstatus.SubjectTaint}},
		{name: "deeper levels", body: device(`"attributes":{"x":{"int":1,"strings":"y"}},"capacity":{"m":{"value":"1","valeu":"2"}},"taints":[{"key":"a.io/x","effect":"None","efect":"x"}]`),
			warnings: []string{
				`devices[0].attributes[x].strings: unknown field; did you mean "string"? ignored`,
				`devices[0].capacity[m].valeu: unknown field; did you mean "value"? ignored`,
				`devices[0].taints[0].efect: unknown field; did you mean "effect"? ignored`,
			},
			subjects: []pingstatus.Subject{pingstatus.SubjectDevice, pingstatus.SubjectDevice, pingstatus.SubjectDevice}},
		{name: "the reply's fields under resources and in a device group", body: `{"resources":{"devices":[],"Labels":{}},"devices":[{"name":"a","count":1,"resources":{}}]}`,
			warnings: []string{
				`resources.devices: "devices" belongs at the top level of the reply; ignored`,
				`resources.Labels: "labels" belongs at the top level of the reply; ignored`,
				`devices[0].resources: "resources" belongs at the top level of the reply; ignored`,
			},
			subjects: []pingstatus.Subject{pingstatus.SubjectDevice, pingstatus.SubjectLabel, pingstatus.SubjectResource}},
		{name: "resources' fields at the top", body: `{"cpu":"8","Memory":"1Gi","basis":"total"}`,
			warnings: []string{
				`cpu: "cpu" belongs in "resources"; ignored`,
				`Memory: "memory" belongs in "resources"; ignored`,
				`basis: "basis" belongs in "resources"; ignored`,
			},
			subjects: []pingstatus.Subject{pingstatus.SubjectResource, pingstatus.SubjectResource, pingstatus.SubjectResource}},
		{name: "a key with characters a path cannot hold is quoted", body: `{"resources":{"memor\u00e9":"1"}}`,
			warnings: []string{`resources."memoré": unknown field; did you mean "memory"? ignored`}, subjects: []pingstatus.Subject{pingstatus.SubjectResource}},
		{name: "known fields in any letter case are read, not warned", body: `{"Devices":[{"NAME":"a","Count":1,"ATTRIBUTES":{}}],"RESOURCES":{"CPU":"1","ephemeralstorage":"1"}}`},
		{name: "unrelated keys stay silent", body: `{"status":"ok","message":"m","timestamp":1,"state":"s","stats":{},"error":"e","time":1,"name":"n","version":"1",` +
			`"resources":{"gpus":4,"disk":"1Ti","pids":"1"},"taints":[{"key":"a.io/x","effect":"NoSchedule","timeAdded":"t"}],` +
			`"devices":[{"name":"a","count":1,"driver":"d","amount":1,"attributes":{"x":{"int":1,"list":[]}},"capacity":{"m":{"value":"1","requestPolicy":{}}}}]}`},
		{name: "the earlier value of a repeated key is passed over, its misses too", body: `{"resources":{"cpus":"1"},"resources":{"cpu":"1"}}`,
			warnings: []string{`resources: given 2 times; the last one is used`}, subjects: []pingstatus.Subject{pingstatus.SubjectResource}},
		{name: "a device's attribute given twice", body: device(`"attributes":{"x":{"int":1,"strings":"a"},"x":{"int":2}}`),
			warnings: []string{`devices[0].attributes[x]: given 2 times; the last one is used`}, subjects: []pingstatus.Subject{pingstatus.SubjectDevice}},
		{name: "past 16, one warning counts the rest", body: `{"resources":{` + strings.Repeat(`"cpus":"1",`, 20) + `"cpu":"1"}}`,
			warnings: append(repeat(`resources.cpus: unknown field; did you mean "cpu"? ignored`, 16),
				"4 more unknown fields look like misspelled or misplaced known fields; ignored"),
			subjects: append(repeatSubject(pingstatus.SubjectResource, 16), pingstatus.SubjectReply)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, warnings := pingstatus.Parse([]byte(tt.body), pingstatus.Options{})
			var texts []string
			var subjects []pingstatus.Subject
			for _, w := range warnings {
				texts, subjects = append(texts, w.String()), append(subjects, w.Subject)
				if w.Action != pingstatus.Ignored && !strings.Contains(w.Message, "given") {
					t.Errorf("%q is %v, want ignored", w, w.Action)
				}
			}
			if diff := cmp.Diff(tt.warnings, texts); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.subjects, subjects); diff != "" {
				t.Errorf("subjects (-want +got):\n%s", diff)
			}
		})
	}
}

func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

func repeatSubject(s pingstatus.Subject, n int) []pingstatus.Subject {
	out := make([]pingstatus.Subject, n)
	for i := range out {
		out[i] = s
	}
	return out
}

// allFields are the field names of every level of the reply.
var allFields = []string{
	"status", "resources", "taints", "labels", "devices", "nodes",
	"cpu", "memory", "pods", "accelerators", "basis", "ephemeralStorage", "hugepages",
	"resourceType", "available", "key", "value", "effect",
	"name", "count", "attributes", "capacity", "int", "bool", "string", "version",
}

// distance is the optimal string alignment distance of a and b, without
// regard to case: insertions, deletions, substitutions and swaps of two
// adjacent characters.
func distance(a, b string) int {
	x, y := []rune(strings.ToLower(a)), []rune(strings.ToLower(b))
	d := make([][]int, len(x)+1)
	for i := range d {
		d[i] = make([]int, len(y)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(x); i++ {
		for j := 1; j <= len(y); j++ {
			cost := 1
			if x[i-1] == y[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && x[i-1] == y[j-2] && x[i-2] == y[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(x)][len(y)]
}

// farKey generates a key at least 2 edits away from every field of every
// level, and no plural or singular of one ("es" added or taken away, or a
// final "y" as "ies").
func farKey() *rapid.Generator[string] {
	return rapid.StringMatching(`[a-zA-Z]{1,12}`).Filter(func(k string) bool {
		for _, f := range allFields {
			lk, lf := strings.ToLower(k), strings.ToLower(f)
			if distance(k, f) < 2 || strings.TrimSuffix(lk, "ies")+"y" == lf || strings.TrimSuffix(lf, "ies")+"y" == lk ||
				lk+"es" == lf || lf+"es" == lk { // "nod" and "nodes": es taken away (rule key-near-miss)
				return false
			}
		}
		return true
	})
}

// TestPropertyFarKeysAreSilent: a reply whose keys are known fields, or
// keys at least 2 edits from every known field, at every level, has no
// warning at all.
func TestPropertyFarKeysAreSilent(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		k := func(label string) string {
			b, _ := json.Marshal(farKey().Draw(t, label))
			return string(b) + ":0"
		}
		body := `{"status":"ok",` + k("reply") + `,"resources":{"cpu":"1",` + k("resources") +
			`,"accelerators":[{"resourceType":"a.io/x","available":"0",` + k("accelerator") + `}]},` +
			`"taints":[{"key":"a.io/x","effect":"NoSchedule",` + k("taint") + `}],` +
			`"devices":[{"name":"a","count":1,` + k("device") + `,"attributes":{"x":{"int":1,` + k("attribute") + `}},` +
			`"capacity":{"m":{"value":"1",` + k("capacity") + `}},"taints":[{"key":"a.io/x","effect":"None",` + k("deviceTaint") + `}]}]}`
		if _, warnings := pingstatus.Parse([]byte(body), pingstatus.Options{}); len(warnings) > 0 {
			t.Fatalf("Parse(%s): %v", body, warnings)
		}
	})
}
