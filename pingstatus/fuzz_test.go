package pingstatus_test

import (
	"testing"

	"github.com/pingnode/pingnode/internal/golden"
	"github.com/pingnode/pingnode/pingstatus"
)

// FuzzParse: Parse never panics, and every entry of what it accepts is valid
// by the rules, with the default options and with every toggle set.
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
	} {
		f.Add([]byte(body))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, opts := range []pingstatus.Options{
			{},
			{AllowZero: true, ProtectedKeys: []string{"vendor.io/maintenance"}, MaxAccelerators: 2, MaxTaints: 2, MaxBodyBytes: 512,
				LabelNamespaces: []string{"nvidia.com"}, ProtectedLabels: []string{"nvidia.com/gpu.product"}, MaxLabels: 2},
		} {
			patch, _ := pingstatus.Parse(body, opts)
			if err := checkPatch(patch, opts); err != nil {
				t.Fatalf("Parse(%q, %+v): %v", body, opts, err)
			}
		}
	})
}
