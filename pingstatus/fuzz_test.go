package pingstatus_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/pingnode/pingnode/internal/contracts"
	"github.com/pingnode/pingnode/internal/golden"
	"github.com/pingnode/pingnode/pingstatus"
)

// FuzzParse: Parse never panics, and every entry of what it accepts is valid
// by the rules (a device group's taints among them), with the default
// options and with every toggle set; and the patch it gives is one that
// Check returns as it is, and takes without a warning, as it is, when
// it is decoded from JSON with no judgement; and no reply gets more than
// 16 near-miss warnings.
func FuzzParse(f *testing.F) {
	for _, in := range golden.Inputs(f, "../testdata/replies/*") {
		f.Add(in.Data)
	}
	// Serializer habits and crafted bodies the shared replies do not hold.
	for _, body := range []string{
		"{\x00\"\x00c\x00p\x00u\x00\"\x00:\x00\"\x008\x00\"\x00}\x00", // UTF-16 without a byte order mark
		"\x00\x00\xFE\xFF\x00\x00\x00{\x00\x00\x00}",                  // UTF-32 big-endian
		"\xFF\xFE{\x00\x00\xD8}\x00",                                  // an unpaired surrogate
		`{"resources":{"cpu":NaN,"memory":-Infinity,"pods":inf},"taints":[nan,-nan]}`,
		`{"resources":{"cpu":"1","CPU":"2","\u0063pu":"3"},"resources":{"pods":"1"}}`,
		`{"taints":[{"key":"a.io/x","key":"a.io/y"}],"taints":[{"value":NaN}]}`,
		`{"resources":{"cpu":"1e999999999","memory":"-1e-999999999","pods":"0e4294967296"}}`,
		`{"status":"a\"\\","taints":[[[[{"key":"\\\""}]]]]}`,
		`{"labels":{"nvidia.com/a":"1","nvidia.com/a":NaN,"n\u0076idia.com/a":"2"},"Labels":{"a.io/":null}}`,
		`{"labels":{"feature.node.kubernetes.io/x":{"a":"b"},"feature.node.kubernetes.io/y":[1],"":""}}`,
		`{"devices":[{"name":"a","count":NaN},{"name":"a","Name":"b","count":"1k","attributes":{"x":{"int":8e1},"x":{"String":"y","string":"z"}}}]}`,
		`{"devices":[{"name":"a","count":3,"attributes":{"x":{"int":1.5,"bool":true}},"capacity":{"m":{"value":"-1"},"n":{}}},7,null,{"name":"a","count":-Infinity}]}`,
		`{"devices":[{"name":"a","count":600},{"name":"b","count":"500"}],"Devices":[{"name":"c","count":1,"capacity":{"m":{"value":1e999999999}}}]}`,
		`{"devices":[{"name":"a","count":1,"taints":[{"key":"gpu.nvidia.com/xid","value":"79","effect":"NoSchedule","Effect":NaN},null,7,{"KEY":"a.io/x","effect":"PreferNoSchedule"}]},{"name":"b","count":1,"taints":{"key":"x"}}]}`,
		`{"devices":[{"name":"a","count":1,"taints":[` + strings.Repeat(`{"key":"a.io/x","effect":"None"},`, 16) + `{}]},{"name":"a","count":2,"taints":[{"key":"a.io/x","value":"1","effect":"None"},{"key":"a.io/x","value":"2","effect":"None"}]}]}`,
	} {
		f.Add([]byte(body))
	}
	rules := declaredRules(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, opts := range []pingstatus.Options{
			{},
			{AllowZero: true, ProtectedKeys: []string{"vendor.io/maintenance"}, MaxAccelerators: 2, MaxTaints: 2, MaxBodyBytes: 512,
				LabelNamespaces: []string{"nvidia.com"}, ProtectedLabels: []string{"nvidia.com/gpu.product"}, MaxLabels: 2, MaxDevices: 4},
		} {
			patch, warnings := pingstatus.Parse(body, opts)
			misses := 0
			for _, w := range warnings {
				if !rules[w.Rule] {
					t.Fatalf("Parse(%q, %+v): %q carries %q, a rule the package comment does not declare", body, opts, w, w.Rule)
				}
				if strings.Contains(w.Message, "did you mean") || strings.Contains(w.Message, "belongs") {
					misses++
				}
			}
			if misses > 16 { // rule key-near-miss: past 16, one warning counts the rest
				t.Fatalf("Parse(%q, %+v): %d near-miss warnings, more than 16", body, opts, misses)
			}
			if err := checkPatch(patch, opts); err != nil {
				t.Fatalf("Parse(%q, %+v): %v", body, opts, err)
			}
			if checked, warnings := opts.Check(&patch); checked != &patch || warnings != nil {
				t.Fatalf("Parse(%q, %+v): Check of its patch: %v", body, opts, warnings)
			}
			// The same patch, unjudged (as JSON decodes it), is one that
			// Check takes as it is: the rules are the same.
			unjudged := roundTrip(t, patch)
			again, warnings := opts.Check(&unjudged)
			if len(warnings) != 0 {
				t.Fatalf("Parse(%q, %+v): Check of its patch, unjudged: %v", body, opts, warnings)
			}
			if diff := cmp.Diff(patch, *again, equateQuantities, ignoreJudgement, cmpopts.EquateEmpty(), cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
				t.Fatalf("Parse(%q, %+v): Check of its patch, unjudged (-Parse +Check):\n%s", body, opts, diff)
			}
		}
	})
}

// ignoreJudgement compares patches by what they say, not by whether they
// were judged.
var ignoreJudgement = cmpopts.IgnoreUnexported(pingstatus.NodePatch{})

// roundTrip returns patch as JSON decodes it: the same, with no
// judgement.
func roundTrip(t interface {
	Helper()
	Fatal(...any)
}, patch pingstatus.NodePatch) pingstatus.NodePatch {
	t.Helper()
	b, err := json.Marshal(patch)
	if err != nil {
		t.Fatal(err)
	}
	var out pingstatus.NodePatch
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// declaredRules returns the names of the rules of the package comment.
func declaredRules(t testing.TB) map[string]bool {
	t.Helper()
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	rules := map[string]bool{}
	for _, name := range contracts.Names(doc) {
		rules[name] = true
	}
	return rules
}
