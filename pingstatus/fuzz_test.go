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
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, opts := range []pingstatus.Options{
			{},
			{AllowZero: true, ProtectedKeys: []string{"vendor.io/maintenance"}, MaxAccelerators: 2, MaxTaints: 2, MaxBodyBytes: 512},
		} {
			patch, _ := pingstatus.Parse(body, opts)
			if err := checkPatch(patch, opts); err != nil {
				t.Fatalf("Parse(%q, %+v): %v", body, opts, err)
			}
		}
	})
}
