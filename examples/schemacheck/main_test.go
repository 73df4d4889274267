package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"pgregory.net/rapid"

	"github.com/pingnode/pingnode/internal/golden"
	"github.com/pingnode/pingnode/pingstatus"
)

// TestGolden runs schemacheck on shared sample replies and compares its
// output and exit status with goldens.
func TestGolden(t *testing.T) {
	tests := []struct {
		name  string
		args  []string
		stdin string
	}{
		{"clean", []string{"../../testdata/replies/slurm.json", "../../testdata/replies/dotnet-pascal-case.json"}, ""},
		{"pascal-case-bad-values", []string{"../../testdata/replies/pascal-case-bad-values.json"}, ""},
		{"issue-20", []string{"-"}, `{"Resources":{"Cpu":"-1"}}`},
		{"byte-order-mark", []string{"-"}, "\uFEFF" + `{"status":"ok"}`},
		{"not-json", []string{"../../testdata/replies/malformed.json", "../../testdata/replies/legacy-ok.txt"}, ""},
		{"some-bad", []string{"../../testdata/replies/slurm.json", "../../testdata/replies/zero.json"}, ""},
		{"missing-file", []string{"no-such-reply.json", "../../testdata/replies/zero.json"}, ""},
		{"no-file", nil, ""},
		{"bad-flag", []string{"-x", "../../testdata/replies/slurm.json"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(tt.args, strings.NewReader(tt.stdin), &stdout, &stderr)
			got := fmt.Sprintf("$ schemacheck %s\nexit %d\n--- stdout\n%s--- stderr\n%s", strings.Join(tt.args, " "), code, stdout.String(), stderr.String())
			golden.Check(t, filepath.Join("testdata", tt.name+".golden"), []byte(got))
		})
	}
}

// A verdict is what pingstatus's TestSchemaAgreesOnSamples found for a
// sample reply: whether the schema accepts it, whether Parse is clean,
// and, where the two differ, the item of JSONSchema's doc comment that
// says why.
type verdict struct {
	schemaAccepts, parseClean bool
	why                       string
}

// verdictsFile holds the verdicts. pingstatus's test names the samples
// for each item of JSONSchema's doc comment, in one place, and writes this
// file; this test holds a real validator to it.
const verdictsFile = "../../pingstatus/testdata/schema-verdicts.golden"

var verdictLine = regexp.MustCompile(`^(\S+): the schema (accepts|rejects), Parse (is clean|warns)(?:: (.+))?$`)

func readVerdicts(t *testing.T) map[string]verdict {
	t.Helper()
	b, err := os.ReadFile(verdictsFile)
	if err != nil {
		t.Fatal(err)
	}
	verdicts := make(map[string]verdict)
	lines := bufio.NewScanner(bytes.NewReader(b))
	for lines.Scan() {
		line := lines.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		m := verdictLine.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("%s: cannot read %q", verdictsFile, line)
		}
		verdicts[m[1]] = verdict{schemaAccepts: m[2] == "accepts", parseClean: m[3] == "is clean", why: m[4]}
	}
	if len(verdicts) == 0 {
		t.Fatalf("%s has no verdicts", verdictsFile)
	}
	return verdicts
}

// TestSamplesAgree runs every shared sample reply that is a JSON object
// through the real validator and through pingstatus.Parse: the validator
// accepts it exactly when Parse has no warning, but where JSONSchema's
// doc comment says they differ, and it agrees on every sample with the
// verdict of pingstatus's own test, whose schema checker knows only the
// keywords the schema uses.
func TestSamplesAgree(t *testing.T) {
	s, err := compile()
	if err != nil {
		t.Fatal(err)
	}
	verdicts := readVerdicts(t)
	for _, in := range golden.Inputs(t, "../../testdata/replies/*.json") {
		patch, warnings := pingstatus.Parse(in.Data, pingstatus.Options{})
		want, listed := verdicts[in.Name]
		delete(verdicts, in.Name)
		if patch.Kind != pingstatus.Structured {
			if listed {
				t.Errorf("%s: a %v reply, listed in %s", in.Name, patch.Kind, verdictsFile)
			}
			continue
		}
		t.Run(in.Name, func(t *testing.T) {
			if !listed {
				t.Fatalf("not in %s (run pingstatus's tests with -update)", verdictsFile)
			}
			problems := s.check(in.Data)
			got := verdict{schemaAccepts: len(problems) == 0, parseClean: len(warnings) == 0, why: want.why}
			if got != want {
				t.Errorf("the validator accepts it: %v, Parse is clean: %v; %s says %v, %v\nvalidator: %v\nParse: %v",
					got.schemaAccepts, got.parseClean, verdictsFile, want.schemaAccepts, want.parseClean, problems, warnings)
			}
			if want.why == "" && got.schemaAccepts != got.parseClean {
				t.Errorf("the validator and Parse disagree, for no reason JSONSchema's doc comment gives\nvalidator: %v\nParse: %v", problems, warnings)
			}
		})
	}
	for name := range verdicts {
		t.Errorf("%s lists %s, which is not a sample reply", verdictsFile, name)
	}
}

// spelling draws a spelling of the field name that Parse reads as the
// field, as encoding/json matches names: each letter in any rune of its
// Unicode simple folding orbit (for s the long s, for k the Kelvin sign).
func spelling(t *rapid.T, name string) string {
	var b strings.Builder
	for i, c := range name {
		orbit := []rune{c}
		for r := unicode.SimpleFold(c); r != c; r = unicode.SimpleFold(r) {
			orbit = append(orbit, r)
		}
		b.WriteRune(rapid.SampledFrom(orbit).Draw(t, name+"["+strconv.Itoa(i)+"]"))
	}
	return b.String()
}

// key draws the quoted JSON key of a field: a spelling of its name, some
// times written with \u escapes.
func key(t *rapid.T, name string) string {
	s := spelling(t, name)
	if !rapid.Bool().Draw(t, name+" escaped") {
		return strconv.Quote(s)
	}
	var b strings.Builder
	for _, r := range s {
		fmt.Fprintf(&b, `\u%04x`, r)
	}
	return `"` + b.String() + `"`
}

// value draws a JSON value for a field: one that Parse takes without a
// warning or one it warns about, each also a value the schema accepts or
// rejects, and none of what the doc comment of JSONSchema says the two
// judge apart (no repeated key, no repeated accelerator type or taint, no
// quantity beyond an int64 or longer than 64 characters, whole numbers in
// their plain spellings only).
func value(t *rapid.T, label string, good, bad []string) string {
	if len(bad) > 0 && rapid.IntRange(0, 3).Draw(t, label+" bad") == 0 {
		return rapid.SampledFrom(bad).Draw(t, label)
	}
	return rapid.SampledFrom(good).Draw(t, label)
}

// object draws a JSON object holding some of fields, each at most once
// under a spelling of its name, with maybe an unknown field too.
func object(t *rapid.T, label string, fields []string, draw func(t *rapid.T, field string) string) string {
	var members []string
	for _, f := range fields {
		if rapid.IntRange(0, 3).Draw(t, label+"."+f+" omitted") == 0 {
			continue
		}
		members = append(members, key(t, f)+":"+draw(t, f))
	}
	if rapid.IntRange(0, 4).Draw(t, label+" unknown field") == 0 {
		// Unknown names that Parse ignores without a word (no near miss
		// of a field: pingstatus rule key-near-miss), with a value it would refuse
		// in a field: the schema ignores them too.
		unknown := rapid.SampledFrom([]string{`"cores"`, `"Cpu "`, `"\u0131d"`, `"no\u0074e"`, `"extra"`}).Draw(t, label+" unknown")
		members = append(members, unknown+`:"-1"`)
	}
	shuffled := rapid.Permutation(members).Draw(t, label+" order")
	return "{" + strings.Join(shuffled, ",") + "}"
}

var (
	quantities    = []string{`"8"`, `"500m"`, `"32Gi"`, `16`, `0.5`, `"1e3"`, `"+2"`, `null`}
	badQuantities = []string{`"-1"`, `"0"`, `0`, `-2`, `"abc"`, `""`, `true`, `"1.5.0"`, `[]`}
	wholes        = []string{`"110"`, `110`, `110.0`, `"1e2"`, `"2k"`, `null`}
	badWholes     = []string{`"1.5"`, `1.5`, `"0"`, `-1`, `"x"`, `""`, `{}`}
)

// reply draws a reply body with field names in any spelling, some values
// good and some bad.
func reply(t *rapid.T) []byte {
	return []byte(object(t, "reply", []string{"status", "resources", "taints"}, func(t *rapid.T, f string) string {
		switch f {
		case "status":
			return value(t, f, []string{`"ok"`, `""`, `null`}, []string{`42`, `true`, `{}`})
		case "resources":
			if rapid.IntRange(0, 5).Draw(t, "resources shape") == 0 {
				return value(t, f, []string{`null`}, []string{`"128 cores"`, `[]`})
			}
			return resources(t)
		default:
			if rapid.IntRange(0, 5).Draw(t, "taints shape") == 0 {
				return value(t, f, []string{`null`}, []string{`"none"`, `{}`})
			}
			return list(t, "taints", taints, taint)
		}
	}))
}

func resources(t *rapid.T) string {
	return object(t, "resources", []string{"cpu", "memory", "pods", "accelerators", "basis"}, func(t *rapid.T, f string) string {
		switch f {
		case "cpu", "memory":
			return value(t, f, quantities, badQuantities)
		case "pods":
			return value(t, f, wholes, badWholes)
		case "basis":
			return value(t, f, []string{`"available"`, `"total"`, `null`}, []string{`"Total"`, `""`, `1`})
		default:
			if rapid.IntRange(0, 5).Draw(t, "accelerators shape") == 0 {
				return value(t, f, []string{`null`}, []string{`"gpu"`, `{}`})
			}
			return list(t, "accelerators", resourceTypes, accelerator)
		}
	})
}

var (
	// Each entry of a list takes another of these, so that no accelerator
	// type and no taint key comes twice.
	resourceTypes = []string{`"nvidia.com/gpu"`, `"xilinx.com/fpga"`, `"amd.com/gpu"`, `"gpu"`, `"kubernetes.io/gpu"`, `"requests.example.com/gpu"`, `"Example.COM/gpu"`, `""`, `7`}
	taints        = []string{`"vendor.io/a"`, `"b"`, `"vendor.io/c-d"`, `""`, `"not a key"`, `"node.kubernetes.io/x"`, `"virtual-node.interlink/no-schedule"`, `3`}
)

// list draws a list of up to 3 entries, each an object made by entry with
// its own name from names, or sometimes a value that is no object.
func list(t *rapid.T, label string, names []string, entry func(t *rapid.T, name string) string) string {
	names = rapid.Permutation(names).Draw(t, label+" names")
	var entries []string
	for i := range rapid.IntRange(0, 3).Draw(t, label+" length") {
		if rapid.IntRange(0, 9).Draw(t, label+" no object") == 0 {
			entries = append(entries, rapid.SampledFrom([]string{`null`, `"x"`, `[]`}).Draw(t, label+" entry"))
			continue
		}
		entries = append(entries, entry(t, names[i]))
	}
	return "[" + strings.Join(entries, ",") + "]"
}

func accelerator(t *rapid.T, name string) string {
	return object(t, "accelerator", []string{"resourceType", "available"}, func(t *rapid.T, f string) string {
		if f == "resourceType" {
			return name
		}
		return value(t, f, []string{`"4"`, `2`, `"0"`, `"1k"`}, []string{`"-1"`, `"1.5"`, `"x"`, `null`, `true`})
	})
}

func taint(t *rapid.T, name string) string {
	return object(t, "taint", []string{"key", "value", "effect"}, func(t *rapid.T, f string) string {
		switch f {
		case "key":
			return name
		case "value":
			return value(t, f, []string{`"true"`, `""`, `null`, `"v1"`}, []string{`"two words"`, `1`, `"` + strings.Repeat("x", 64) + `"`})
		default:
			return value(t, f, []string{`"NoSchedule"`, `"PreferNoSchedule"`, `"NoExecute"`}, []string{`"Drain"`, `"noschedule"`, `""`, `null`, `5`})
		}
	})
}

// TestPropertyFieldNamesInAnyCase: for replies with field names in any spelling
// that Parse reads, and good and bad values, the real validator accepts
// the reply exactly when Parse takes it without a warning.
func TestPropertyFieldNamesInAnyCase(t *testing.T) {
	s, err := compile()
	if err != nil {
		t.Fatal(err)
	}
	rapid.Check(t, func(t *rapid.T) {
		body := reply(t)
		_, warnings := pingstatus.Parse(body, pingstatus.Options{})
		problems := s.check(body)
		if (len(problems) == 0) != (len(warnings) == 0) {
			t.Fatalf("%s\nvalidator: %v\nParse: %v", body, problems, warnings)
		}
	})
}
