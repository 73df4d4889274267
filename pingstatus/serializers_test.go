package pingstatus

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

// inUTF16 returns s in UTF-16, little-endian unless big, after bom.
func inUTF16(s, bom string, big bool) string {
	b := []byte(bom)
	for _, u := range utf16Units(s) {
		if big {
			b = append(b, byte(u>>8), byte(u))
		} else {
			b = append(b, byte(u), byte(u>>8))
		}
	}
	return string(b)
}

func utf16Units(s string) []uint16 {
	var units []uint16
	for _, r := range s {
		if r >= 0x10000 {
			r -= 0x10000
			units = append(units, uint16(0xD800+(r>>10)), uint16(0xDC00+(r&0x3FF)))
			continue
		}
		units = append(units, uint16(r))
	}
	return units
}

// inUTF32 returns s in UTF-32, little-endian unless big, after bom.
func inUTF32(s, bom string, big bool) string {
	b := []byte(bom)
	for _, r := range s {
		if big {
			b = append(b, byte(r>>24), byte(r>>16), byte(r>>8), byte(r))
		} else {
			b = append(b, byte(r), byte(r>>8), byte(r>>16), byte(r>>24))
		}
	}
	return string(b)
}

// TestSerializerHabits pins what Parse does with the habits of the
// serializers plugins are written with (Python, Node, .NET, Java, shell):
// the kind of reply, the patch, and every warning word for word.
func TestSerializerHabits(t *testing.T) {
	const cpu8 = `{"resources":{"cpu":"8"}}`
	const notQuantity = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
	tests := []struct {
		name      string
		body      string
		opts      Options
		kind      Kind
		resources corev1.ResourceList
		replace   bool
		taints    []corev1.Taint
		warnings  []string
	}{
		// Text encodings.
		{name: "a UTF-8 byte order mark is ignored", body: "\xEF\xBB\xBF" + cpu8, kind: Structured, resources: quantities("cpu", "8")},
		{name: "a byte order mark before plain text is still legacy", body: "\xEF\xBB\xBFok", kind: Legacy},
		{name: "a byte order mark alone is legacy", body: "\xEF\xBB\xBF", kind: Legacy},
		{name: "spaces, CRLF and trailing newlines are JSON's whitespace", body: "\r\n \t" + cpu8 + "\r\n\r\n", kind: Structured, resources: quantities("cpu", "8")},
		{name: "UTF-16 little-endian with a byte order mark", body: inUTF16(cpu8, "\xFF\xFE", false), kind: Structured, resources: quantities("cpu", "8"),
			warnings: []string{"reply is UTF-16 (little-endian) text, not UTF-8 as JSON must be; decoded and read"}},
		{name: "UTF-16 little-endian without a byte order mark", body: inUTF16(cpu8, "", false), kind: Structured, resources: quantities("cpu", "8"),
			warnings: []string{"reply is UTF-16 (little-endian) text, not UTF-8 as JSON must be; decoded and read"}},
		{name: "UTF-16 big-endian with a byte order mark", body: inUTF16(cpu8, "\xFE\xFF", true), kind: Structured, resources: quantities("cpu", "8"),
			warnings: []string{"reply is UTF-16 (big-endian) text, not UTF-8 as JSON must be; decoded and read"}},
		{name: "UTF-16 big-endian without a byte order mark", body: inUTF16(cpu8, "", true), kind: Structured, resources: quantities("cpu", "8"),
			warnings: []string{"reply is UTF-16 (big-endian) text, not UTF-8 as JSON must be; decoded and read"}},
		{name: "UTF-32 little-endian with a byte order mark", body: inUTF32(cpu8, "\xFF\xFE\x00\x00", false), kind: Structured, resources: quantities("cpu", "8"),
			warnings: []string{"reply is UTF-32 (little-endian) text, not UTF-8 as JSON must be; decoded and read"}},
		{name: "UTF-32 big-endian without a byte order mark", body: inUTF32(cpu8, "", true), kind: Structured, resources: quantities("cpu", "8"),
			warnings: []string{"reply is UTF-32 (big-endian) text, not UTF-8 as JSON must be; decoded and read"}},
		{name: "UTF-16 text that is not an object is legacy, without a warning", body: inUTF16("ok", "\xFF\xFE", false), kind: Legacy},
		{name: "UTF-16 keeps characters outside the BMP and replaces unpaired surrogates", body: inUTF16(`{"status":"🚀`, "\xFF\xFE", false) + "\x00\xD8" + inUTF16(`","resources":{"cpu":"8"}}`, "", false),
			kind: Structured, resources: quantities("cpu", "8"),
			warnings: []string{"reply is UTF-16 (little-endian) text, not UTF-8 as JSON must be; decoded and read"}},
		{name: "UTF-16 with an odd last byte does not parse", body: inUTF16(cpu8, "\xFF\xFE", false) + "\x00", kind: Unusable,
			warnings: []string{
				"reply is UTF-16 (little-endian) text, not UTF-8 as JSON must be; decoded and read",
				"reply looks like a JSON object but does not parse (something follows the object, which ends at byte 25); ignored",
			}},

		// Numbers that JSON does not have.
		{name: "Python's NaN refuses its field and keeps the others", body: `{"resources":{"cpu":NaN,"memory":"1Gi"}}`, kind: Structured, resources: quantities("memory", "1Gi"),
			warnings: []string{"resources.cpu: must be a string or a number, got NaN, a number JSON does not have; cpu left unchanged"}},
		{name: "Python's infinities", body: `{"resources":{"pods":Infinity,"accelerators":[{"resourceType":"a.io/x","available":-Infinity}]}}`, kind: Structured,
			warnings: []string{
				"resources.pods: must be a string or a number, got Infinity, a number JSON does not have; pods left unchanged",
				"resources.accelerators[0].available: must be a string or a number, got -Infinity, a number JSON does not have; entry dropped",
			}},
		{name: "C's printf spellings", body: `{"resources":{"cpu":nan,"memory":-inf,"pods":inf},"status":-nan}`, kind: Structured,
			warnings: []string{
				"status: must be a string, got -nan, a number JSON does not have; ignored",
				"resources.cpu: must be a string or a number, got nan, a number JSON does not have; cpu left unchanged",
				"resources.memory: must be a string or a number, got -inf, a number JSON does not have; memory left unchanged",
				"resources.pods: must be a string or a number, got inf, a number JSON does not have; pods left unchanged",
			}},
		{name: "NaN in place of the taints list leaves the taints alone", body: `{"taints":NaN,"resources":{"cpu":"8"}}`, kind: Structured, resources: quantities("cpu", "8"),
			warnings: []string{"taints: must be an array, got NaN, a number JSON does not have; taints left unchanged"}},
		{name: "NaN in place of resources or an entry", body: `{"resources":NaN,"taints":[NaN,{"key":"a.io/x","effect":"NoSchedule"}]}`, kind: Structured,
			replace: true, taints: []corev1.Taint{{Key: "a.io/x", Effect: corev1.TaintEffectNoSchedule}},
			warnings: []string{
				"resources: must be an object, got NaN, a number JSON does not have; resources left unchanged",
				"taints[0]: must be an object, got NaN, a number JSON does not have; entry dropped",
			}},
		{name: "NaN in an unknown field is ignored with it", body: `{"load":[NaN,Infinity],"resources":{"cpu":"8"}}`, kind: Structured, resources: quantities("cpu", "8")},
		{name: "NaN in a string is text", body: `{"status":"NaN","resources":{"cpu":"NaN"}}`, kind: Structured,
			warnings: []string{`resources.cpu: "NaN" is not a quantity (` + notQuantity + `); cpu left unchanged`}},
		{name: "a real false keeps its own description", body: `{"resources":{"cpu":false,"memory":NaN}}`, kind: Structured,
			warnings: []string{
				"resources.cpu: must be a string or a number, got a boolean false; cpu left unchanged",
				"resources.memory: must be a string or a number, got NaN, a number JSON does not have; memory left unchanged",
			}},
		{name: "NaN does not mend a broken object", body: `{"resources":{"cpu":NaN}`, kind: Unusable,
			warnings: []string{"reply looks like a JSON object but does not parse (it ends before the object does); ignored"}},
		{name: "NaN with letters after it is not NaN", body: `{"resources":{"cpu":NaNa}}`, kind: Unusable,
			warnings: []string{"reply looks like a JSON object but does not parse (it is not valid JSON); ignored"}},

		// Numbers written the way floats print.
		{name: "whole numbers written as floats are whole", body: `{"resources":{"pods":110.0,"cpu":64.0,"accelerators":[{"resourceType":"a.io/x","available":4.0}]}}`,
			kind: Structured, resources: quantities("pods", "110", "cpu", "64", "a.io/x", "4")},
		{name: "exponents as Java and JavaScript print them", body: `{"resources":{"pods":1e3,"memory":2.68435456E11,"cpu":1.5e+1}}`,
			kind: Structured, resources: quantities("pods", "1000", "memory", "268435456000", "cpu", "15")},
		{name: "integers beyond 2^53 are exact", body: `{"resources":{"memory":9007199254740993}}`, kind: Structured, resources: quantities("memory", "9007199254740993")},
		{name: "integers beyond int64 are too large", body: `{"resources":{"memory":18446744073709551616}}`, kind: Structured,
			warnings: []string{"resources.memory: 18446744073709551616 is too large: it must be less than 8Ei; memory left unchanged"}},

		// Repeated keys: the last value counts, as in Python, JavaScript and jq.
		{name: "a repeated key: the last value counts", body: `{"resources":{"cpu":"1","cpu":"2"}}`, kind: Structured, resources: quantities("cpu", "2"),
			warnings: []string{"resources.cpu: given 2 times; the last one is used"}},
		{name: "keys match without regard to case, as encoding/json matches them", body: `{"Resources":{"cpu":"1","CPU":"2","Memory":"1Gi"}}`, kind: Structured,
			resources: quantities("cpu", "2", "memory", "1Gi"),
			warnings:  []string{"resources.cpu: given 2 times; the last one is used"}},
		{name: "escaped keys are unescaped", body: `{"resources":{"cpu":"1","\u0063pu":"2"}}`, kind: Structured, resources: quantities("cpu", "2"),
			warnings: []string{"resources.cpu: given 2 times; the last one is used"}},
		{name: "a key given three times", body: `{"status":"a","status":"b","status":"ok"}`, kind: Structured,
			warnings: []string{"status: given 3 times; the last one is used"}},
		{name: "repeated objects are not merged", body: `{"resources":{"cpu":"1"},"resources":{"memory":"2Gi"}}`, kind: Structured, resources: quantities("memory", "2Gi"),
			warnings: []string{"resources: given 2 times; the last one is used"}},
		{name: "repeated lists: the last one counts", body: `{"taints":[{"key":"a.io/x","value":"1","value":"2"}],"taints":[]}`, kind: Structured,
			replace: true, taints: []corev1.Taint{},
			warnings: []string{"taints: given 2 times; the last one is used"}},
		{name: "a repeated key inside an entry", body: `{"taints":[{"key":"a.io/x","effect":"NoSchedule","effect":"NoExecute"}]}`, kind: Structured,
			replace: true, taints: []corev1.Taint{{Key: "a.io/x", Effect: corev1.TaintEffectNoExecute}},
			warnings: []string{"taints[0].effect: given 2 times; the last one is used"}},
		{name: "a NaN overwritten by a later value is forgotten", body: `{"resources":{"cpu":NaN,"cpu":true}}`, kind: Structured,
			warnings: []string{
				"resources.cpu: given 2 times; the last one is used",
				"resources.cpu: must be a string or a number, got a boolean true; cpu left unchanged",
			}},
		{name: "repeated unknown keys are not news", body: `{"message":"a","message":"b","resources":{"cpu":"8"}}`, kind: Structured, resources: quantities("cpu", "8")},
		{name: "repeated keys inside a list over its limit are not reported", body: `{"taints":[{"key":"a.io/x","key":"a.io/y"},{"key":"b.io/x"}]}`,
			opts: Options{MaxTaints: 1}, kind: Structured,
			warnings: []string{"taints: 2 entries, more than the limit of 1; taints left unchanged"}},

		// Strings.
		{name: "a NUL in a quantity is shown escaped", body: `{"resources":{"cpu":"8\u0000"}}`, kind: Structured,
			warnings: []string{`resources.cpu: "8\x00" is not a quantity (` + notQuantity + `); cpu left unchanged`}},
		{name: "a control character in an effect is shown escaped", body: `{"taints":[{"key":"a.io/x","effect":"No\u001bSchedule"}]}`, kind: Structured,
			replace: true, taints: []corev1.Taint{{Key: "a.io/x", Effect: corev1.TaintEffectNoSchedule}},
			warnings: []string{`taints[0].effect: "No\x1bSchedule" is not NoSchedule, PreferNoSchedule or NoExecute; NoSchedule used`}},
		{name: "a wrong type is described with its value quoted", body: `{"resources":{"accelerators":["a\u0000b"]}}`, kind: Structured,
			warnings: []string{`resources.accelerators[0]: must be an object, got a string "a\x00b"; entry dropped`}},
		{name: "an invalid key with a wrong-typed value keeps no taints", body: `{"taints":[{"key":"not a key","value":1}]}`, kind: Structured,
			replace: true, taints: []corev1.Taint{},
			warnings: []string{"taints[0].value: must be a string, got a number 1; entry dropped"}},

		// More than one value.
		{name: "a second object after the first", body: cpu8 + "\n" + cpu8, kind: Unusable,
			warnings: []string{"reply looks like a JSON object but does not parse (something follows the object, which ends at byte 25); ignored"}},
		{name: "garbage after the object", body: cpu8 + "garbage", kind: Unusable,
			warnings: []string{"reply looks like a JSON object but does not parse (something follows the object, which ends at byte 25); ignored"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			patch, warnings := Parse([]byte(tt.body), tt.opts)
			if patch.Kind != tt.kind {
				t.Errorf("Kind = %v, want %v", patch.Kind, tt.kind)
			}
			checkParts(t, &patch, tt.resources, tt.replace, tt.taints)
			if diff := cmp.Diff(tt.warnings, warningTexts(warnings)); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
		})
	}
}
