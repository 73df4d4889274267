package pingstatus_test

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/pingnode/pingnode/pingstatus"
)

// taintsBody returns a reply with n distinct, valid taints.
func taintsBody(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"status":"ok","resources":{"cpu":"64","memory":"250000Mi"},"taints":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"key":"vendor.example.com/t%d","value":"v%d","effect":"NoSchedule"}`, i, i)
	}
	b.WriteString("]}")
	return []byte(b.String())
}

// BenchmarkParse measures Parse beside a bare json.Unmarshal of the same
// body into the wire types, in the same run. For the ratios:
//
//	go test ./pingstatus -run '^$' -bench Parse -count 10 > parse.txt
//	benchstat -col /op parse.txt
func BenchmarkParse(b *testing.B) {
	example, err := os.ReadFile("../testdata/replies/spec-example.json")
	if err != nil {
		b.Fatal(err)
	}
	bodies := []struct {
		name string
		body []byte
	}{
		{"legacy", []byte("ok")},
		{"example", example},
		{"taints100", taintsBody(100)},
		{"taints1000", taintsBody(1000)},
	}
	opts := pingstatus.Options{MaxTaints: 1000}
	for _, bb := range bodies {
		b.Run("body="+bb.name+"/op=parse", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(bb.body)))
			for b.Loop() {
				patch, warnings := pingstatus.Parse(bb.body, opts)
				if len(warnings) != 0 || (bb.name != "legacy" && patch.Kind != pingstatus.Structured) {
					b.Fatalf("unexpected result: %v %v", patch.Kind, warnings)
				}
			}
		})
		b.Run("body="+bb.name+"/op=unmarshal", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(bb.body)))
			for b.Loop() {
				var r pingstatus.PingResponse
				_ = json.Unmarshal(bb.body, &r) // "ok" is not JSON: the bare decoder fails fast, as it would in a provider
			}
		})
	}
}
