package pingstatus_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/pingnode/pingnode/internal/kuberules"
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

// devicesBody returns a reply with two device groups of n/2 devices each,
// as a GPU backend describes them.
func devicesBody(n int) []byte {
	return fmt.Appendf(nil, `{"status":"ok","resources":{"cpu":"64","memory":"512Gi"},"devices":[`+
		`{"name":"a100","count":%d,"attributes":{"productName":{"string":"NVIDIA A100-SXM4-80GB"},"type":{"string":"gpu"},"cudaComputeCapability":{"version":"8.0.0"}},"capacity":{"memory":{"value":"80Gi"}}},`+
		`{"name":"t4","count":%d,"attributes":{"productName":{"string":"Tesla T4"},"type":{"string":"gpu"},"cudaComputeCapability":{"version":"7.5.0"}},"capacity":{"memory":{"value":"16Gi"}}}]}`,
		n/2, n-n/2)
}

// partsBody returns a reply of n parts, machine by machine, as a Slurm
// backend of n machines lists them: each its free cpus and memory and its
// partition's label, with a site label for all.
func partsBody(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"status":"ok","labels":{"feature.node.kubernetes.io/slurm-cluster":"hpc1"},"nodes":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"name":"cn%05d","resources":{"cpu":"%d","memory":"%dMi"},"labels":{"feature.node.kubernetes.io/slurm-partition":"cpu"}}`, i, 1+i%48, 4000*(1+i%48))
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
		{"devices64", devicesBody(64)},
		{"parts5000", partsBody(5000)},
		{"devices64-tainted", bytes.Replace(devicesBody(64), []byte(`"capacity":{"memory":{"value":"80Gi"}}`),
			[]byte(`"capacity":{"memory":{"value":"80Gi"}},"taints":[{"key":"gpu.nvidia.com/xid","value":"79","effect":"NoSchedule"}]`), 1)},
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

// repeatTo returns head, then unit (with %d standing for its index) as many
// times as fit, then tail, in at most size bytes.
func repeatTo(size int, head, unit, sep, tail string) []byte {
	var b strings.Builder
	b.WriteString(head)
	for i := 0; ; i++ {
		u := unit
		if strings.Contains(u, "%d") {
			u = fmt.Sprintf(unit, i)
		}
		extra := len(u)
		if i > 0 {
			extra += len(sep)
		}
		if b.Len()+extra+len(tail) > size {
			break
		}
		if i > 0 {
			b.WriteString(sep)
		}
		b.WriteString(u)
	}
	b.WriteString(tail)
	return []byte(b.String())
}

// entries returns n copies of entry (with %d standing for the index) in a
// JSON list, each padded with an unknown field so that the whole body,
// head and tail included, is at most size bytes.
func entries(size, n int, head, entry, tail string) []byte {
	each := (size-len(head)-len(tail))/n - 1 // with its comma
	var b strings.Builder
	b.WriteString(head)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		e := entry
		if strings.Contains(e, "%d") {
			e = fmt.Sprintf(entry, i)
		}
		pad := max(each-len(e)-len(`,"pad":""`), 0)
		b.WriteString(e[:len(e)-1] + `,"pad":"` + strings.Repeat("p", pad) + `"}`)
	}
	b.WriteString(tail)
	return []byte(b.String())
}

// worstCases are crafted bodies of at most [pingstatus.DefaultMaxBodyBytes],
// one for each path whose cost could grow faster than the body: long
// strings for the quantity parser and the name rules, huge exponents, many
// entries at and over the limits, many unknown fields, deep nesting, the
// field-by-field decode, repeated keys, non-finite numbers and UTF-16.
// strict is the same reply as strict UTF-8 JSON, for the bodies that are
// not (the bare decoder would stop at their first byte); nil means body.
func worstCases() []struct {
	name         string
	body, strict []byte
} {
	const size = pingstatus.DefaultMaxBodyBytes - 64
	digits := func(n int) string { return strings.Repeat("1", n) }
	deep := func(depth int) string { return strings.Repeat("[", depth) + strings.Repeat("]", depth) }
	// A 300-byte resource name (under the 317-byte guard) that fails the
	// name rules only at its last character, and a 60-digit quantity (under
	// the 64-byte guard) that parses and is too large: the most work an
	// entry can ask for within the guards.
	name := strings.Repeat("a", 63) + "." + strings.Repeat("b", 63) + "." + strings.Repeat("c", 63) + "." + strings.Repeat("d", 40) + "/" + strings.Repeat("e", 68)
	acc := `{"resourceType":"` + name + `","available":"` + digits(60) + `"}`
	// A valid 317-byte key and a 63-byte value that fails at its last byte.
	key := strings.Repeat("k", 63) + "." + strings.Repeat("l", 63) + "." + strings.Repeat("m", 63) + "." + strings.Repeat("n", 61) + "/" + strings.Repeat("o", 62) + "%d"
	taint := `{"key":"` + key[:len(key)-2] + `%d","value":"` + strings.Repeat("v", 62) + `!","effect":"Evict"}`
	taintsBody := string(taintsBody(200))
	utf16 := func(s string) []byte {
		b := []byte{0xFF, 0xFE}
		for _, c := range []byte(s) { // ASCII
			b = append(b, c, 0)
		}
		return b
	}
	nanBody := repeatTo(size, `{"resources":{"cpu":NaN,"memory":"1Gi"},"load":[`, "NaN", ",", "]}")
	// A device entry with 6 attributes, each the most work within the
	// guards (a 64-byte version that fails at its last byte, a 64-byte
	// string, a long name), and a capacity of 60 digits that parses.
	var attrs []string
	for i := range 5 {
		attrs = append(attrs, fmt.Sprintf(`"gpu.example.com/attribute_with_a_long_name_%02d":{"version":"1.0.0-%s!"}`, i, strings.Repeat("a", 57)))
	}
	device := `{"name":"g%d","count":1,"attributes":{` + strings.Join(attrs, ",") + `,"s":{"string":"` + strings.Repeat("s", 64) + `"}},"capacity":{"m":{"value":"` + digits(60) + `"}}}`
	// A device entry with 16 taints, each with a key that fails the name
	// rules at its last character, a value that fails at its last, and an
	// effect that is none.
	var taints []string
	for i := range kuberules.MaxDeviceTaints {
		taints = append(taints, fmt.Sprintf(`{"key":"gpu.example.com/t%02d!","value":"v-","effect":"Evict"}`, i))
	}
	taintedDevice := `{"name":"g%d","count":1,"taints":[` + strings.Join(taints, ",") + `]}`
	// The reply's MaxShared taints or labels beside parts, each part with one of
	// its own, so that each part's list is a merge of the two.
	var sharedTaints, sharedLabels []string
	for i := range pingstatus.MaxShared {
		sharedTaints = append(sharedTaints, fmt.Sprintf(`{"key":"site.example.com/t%03d","effect":"NoSchedule"}`, i))
		sharedLabels = append(sharedLabels, fmt.Sprintf(`"feature.node.kubernetes.io/site-%03d":"v"`, i))
	}
	return []struct {
		name         string
		body, strict []byte
	}{
		{"parts-5000", entries(size, pingstatus.DefaultMaxParts, `{"nodes":[`, `{"name":"cn%d","resources":{"cpu":"1","memory":"4000Mi"},"taints":[],"labels":{}}`, `]}`), nil},
		{"parts-5001", entries(size, pingstatus.DefaultMaxParts+1, `{"nodes":[`, `{"name":"cn%d","resources":{"cpu":"1"}}`, `]}`), nil},
		{"parts-one-name", entries(size, pingstatus.DefaultMaxParts, `{"nodes":[`, `{"name":"cn1","resources":{"cpu":"-1"}}`, `]}`), nil},
		{"parts-bad-names", entries(size, pingstatus.DefaultMaxParts, `{"nodes":[`, `{"name":"CN_%d"}`, `]}`), nil},
		{"parts-shared-taints", entries(size, pingstatus.DefaultMaxParts, `{"taints":[`+strings.Join(sharedTaints, ",")+`],"nodes":[`, `{"name":"cn%d","taints":[{"key":"a.io/x","effect":"NoSchedule"}]}`, "]}"), nil},
		{"parts-shared-labels", entries(size, pingstatus.DefaultMaxParts, `{"labels":{`+strings.Join(sharedLabels, ",")+`},"nodes":[`, `{"name":"cn%d","labels":{"feature.node.kubernetes.io/x":"y"}}`, "]}"), nil},
		{"cpu-digits", []byte(`{"resources":{"cpu":"` + digits(size-30) + `"}}`), nil},
		{"cpu-number", []byte(`{"resources":{"cpu":` + digits(size-30) + `}}`), nil},
		{"memory-suffix", []byte(`{"resources":{"memory":"` + digits(size-40) + `Gi"}}`), nil},
		{"exponents", []byte(`{"resources":{"cpu":"1e999999999","memory":"-1e-999999999","pods":"0e999999999","accelerators":[{"resourceType":"a.io/x","available":"1e-999999999"}]}}`), nil},
		{"resource-type", []byte(`{"resources":{"accelerators":[{"resourceType":"a.io/` + digits(size-80) + `","available":"1"}]}}`), nil},
		{"taint-key", []byte(`{"taints":[{"key":"a.io/` + digits(size-60) + `","effect":"NoSchedule"}]}`), nil},
		{"taint-value", []byte(`{"taints":[{"key":"a.io/x","value":"` + digits(size-70) + `","effect":"NoSchedule"}]}`), nil},
		{"accelerators-256", entries(size, 256, `{"resources":{"accelerators":[`, acc, `]}}`), nil},
		{"accelerators-257", entries(size, 257, `{"resources":{"accelerators":[`, acc, `]}}`), nil},
		{"accelerators-many", repeatTo(size, `{"resources":{"accelerators":[`, `{"resourceType":"a.io/x%d","available":"1"}`, ",", "]}}"), nil},
		{"taints-256", entries(size, 256, `{"taints":[`, taint, `]}`), nil},
		{"taints-257", entries(size, 257, `{"taints":[`, taint, `]}`), nil},
		{"taints-many", repeatTo(size, `{"taints":[`, `{"key":"a.io/t%d","effect":"NoSchedule"}`, ",", "]}"), nil},
		{"unknown-fields", repeatTo(size, `{"status":"ok",`, `"f%d":0`, ",", "}"), nil},
		{"unknown-fields-near-length", repeatTo(size, `{"status":"ok",`, `"labelz%d":0`, ",", "}"), nil},
		{"near-misses", repeatTo(size, `{"status":"ok",`, `"device":0`, ",", "}"), nil},
		{"near-misses-distinct", repeatTo(size, `{"resources":{`, `"memor%d":0`, ",", "}}"), nil},
		{"misplaced", repeatTo(size, `{"status":"ok",`, `"cpu":0`, ",", "}"), nil},
		{"near-misses-dropped", repeatTo(size, `{`, `"resources":{"cpus":0,"memroy":0}`, ",", "}"), nil},
		{"near-misses-over-limit", repeatTo(size, `{"devices":[`, `{"name":"g","count":0,"attribute":0}`, ",", "]}"), nil},
		{"deep-nesting", repeatTo(size, `{"status":"ok","x":[`, deep(9000), ",", "]}"), nil},
		{"fallback", entries(size, 256, `{"status":1,"taints":[`, `{"key":"vendor.example.com/t%d","value":"v","effect":"NoSchedule"}`, `]}`), nil},
		{"fallback-deep", repeatTo(size, `{"status":1,"resources":{"cpu":"8","x":[`, deep(9000), ",", "]}}"), nil},
		{"fallback-many", repeatTo(size, `{"status":1,"taints":[`, "1", ",", "]}"), nil},
		{"repeated-keys", repeatTo(size, `{"resources":{`, `"cpu":"1"`, ",", "}}"), nil},
		{"repeated-entries", repeatTo(size, `{"taints":[`, `{"key":"a.io/x","key":"a.io/x","effect":"NoSchedule"}`, ",", "]}"), nil},
		{"devices-1024", entries(size, 1024, `{"devices":[`, device, `]}`), nil},
		{"devices-1025", entries(size, 1025, `{"devices":[`, device, `]}`), nil},
		{"devices-one-name", entries(size, 1024, `{"devices":[`, strings.Replace(device, "%d", "", 1), `]}`), nil},
		{"devices-many", repeatTo(size, `{"devices":[`, `{"name":"g%d","count":0}`, ",", "]}"), nil},
		{"device-attributes-many", repeatTo(size, `{"devices":[{"name":"g","count":1,"attributes":{`, `"a%d":{"int":1}`, ",", "}}]}"), nil},
		{"device-int-digits", []byte(`{"devices":[{"name":"g","count":1,"attributes":{"x":{"int":1.` + strings.Repeat("0", size-80) + `}}}]}`), nil},
		{"devices-fallback", entries(size, 1024, `{"status":1,"devices":[`, device, `]}`), nil},
		{"device-taints-1024", entries(size, 1024, `{"devices":[`, taintedDevice, `]}`), nil},
		{"device-taints-many", repeatTo(size, `{"devices":[{"name":"g","count":1,"taints":[`, `{"key":"a.io/t%d","effect":"None"}`, ",", "]}]}"), nil},
		{"device-taint-key", []byte(`{"devices":[{"name":"g","count":1,"taints":[{"key":"a.io/` + digits(size-80) + `","effect":"None"}]}]}`), nil},
		{"nan", nanBody, bytes.ReplaceAll(nanBody, []byte("NaN"), []byte("null"))},
		{"utf16", utf16(taintsBody + strings.Repeat(" ", (size/2)-len(taintsBody))), []byte(taintsBody + strings.Repeat(" ", (size/2)-len(taintsBody)))},
	}
}

// BenchmarkParseWorstCase measures Parse over each crafted body beside a
// bare json.Unmarshal of the same body into an any, in the same run; no
// ratio may exceed 10. For the table:
//
//	go test ./pingstatus -run '^$' -bench ParseWorstCase -count 6 > worst.txt
//	benchstat -col /op worst.txt
func BenchmarkParseWorstCase(b *testing.B) {
	for _, c := range worstCases() {
		if len(c.body) > pingstatus.DefaultMaxBodyBytes {
			b.Fatalf("%s: %d bytes, over the body limit", c.name, len(c.body))
		}
		strict := c.strict
		if strict == nil {
			strict = c.body
		}
		b.Run("body="+c.name+"/op=parse", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(c.body)))
			for b.Loop() {
				patch, _ := pingstatus.Parse(c.body, pingstatus.Options{})
				if patch.Kind != pingstatus.Structured {
					b.Fatalf("%s: %v", c.name, patch.Kind)
				}
			}
		})
		b.Run("body="+c.name+"/op=unmarshal", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(c.body)))
			for b.Loop() {
				var v any
				if err := json.Unmarshal(strict, &v); err != nil {
					if _, syntax := errors.AsType[*json.SyntaxError](err); syntax {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
