package wireschema

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestWholeUpTo: the pattern of the whole numbers up to a limit is, for
// 1024, the one the schema had when it was written by hand, and for any
// limit it matches the spellings a quantity parser reads, with leading
// zeros, exponents and suffixes, of exactly the numbers from 0 to the
// limit.
func TestWholeUpTo(t *testing.T) {
	const handWritten = `^\+?(0*([0-9]{1,3}|10[01][0-9]|102[0-4])([eE]\+?0+)?|0*([0-9]{1,2}|10[0-2])[eE]\+?0*1|0*([0-9]|10)[eE]\+?0*2|0*1([eE]\+?0*3|k|Ki)|0+([kMGTPE]|[KMGTPE]i|[eE]\+?[0-9]+))$`
	if got := wholeUpTo(1024); got != handWritten {
		t.Errorf("wholeUpTo(1024) = %s\nwant %s", got, handWritten)
	}
	suffixes := map[string]int64{
		"": 1, "e0": 1, "E+00": 1, "e1": 10, "e+01": 10, "E2": 100, "e3": 1000, "e4": 10000,
		"k": 1000, "M": 1e6, "Ki": 1024, "Mi": 1 << 20, "Gi": 1 << 30,
	}
	for _, limit := range []int64{1, 5, 9, 10, 11, 99, 100, 101, 999, 1000, 1023, 1024, 1025, 2047, 5000} {
		re := regexp.MustCompile(wholeUpTo(limit))
		for m := int64(0); m <= limit+20; m++ {
			for suffix, mult := range suffixes {
				for _, lead := range []string{"", "+", "00"} {
					s := lead + strconv.FormatInt(m, 10) + suffix
					if want := m*mult <= limit; re.MatchString(s) != want {
						t.Fatalf("limit %d: %q matches %v, want %v (%s)", limit, s, !want, want, re)
					}
				}
			}
		}
		for _, s := range []string{"", "-0", "-1", "1.0", "0.5", "1000m", "1e-0", "0x1", " 1", "1 "} {
			if re.MatchString(s) {
				t.Errorf("limit %d: %q matches", limit, s)
			}
		}
	}
}

func TestFoldPattern(t *testing.T) {
	for name, want := range map[string]string{
		"cpu":    "^[Cc][Pp][Uu]$",
		"status": "^[Ss\u017F][Tt][Aa][Tt][Uu][Ss\u017F]$",
		"key":    "^[Kk\u212A][Ee][Yy]$",
	} {
		if got := foldPattern(name); got != want {
			t.Errorf("foldPattern(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestAlternations(t *testing.T) {
	if got, want := prefixed("pingnode.io/plugin-unreachable", "pingnode.io/part-gone"), `pingnode\.io/(plugin-unreachable|part-gone)`; got != want {
		t.Errorf("prefixed = %s, want %s", got, want)
	}
	if got, want := prefixed("a.io/x", "b.io/y"), `(a\.io/x|b\.io/y)`; got != want {
		t.Errorf("prefixed = %s, want %s", got, want)
	}
	if got, want := suffixed("feature.node.kubernetes.io", "profile.node.kubernetes.io"), `(feature|profile)\.node\.kubernetes\.io`; got != want {
		t.Errorf("suffixed = %s, want %s", got, want)
	}
	if got, want := suffixed("a.io", "b.org"), `(a\.io|b\.org)`; got != want {
		t.Errorf("suffixed = %s, want %s", got, want)
	}
}

// TestDescription: a description is the first paragraph of a doc
// comment, its doc links as plain text, without its leading "Name is";
// a comment that does not start so, or none, is an error.
func TestDescription(t *testing.T) {
	const src = `package p

// T is a thing.
type T struct{}
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	pkg, err := doc.NewFromFiles(fset, []*ast.File{f}, "example.com/p")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, text, want, err string }{
		{"Taints", "Taints is the plugin's whole list,\nbuilt with [T].\n\nIn Go, nil.\n", "The plugin's whole list, built with T.", ""},
		{"Nodes", "Nodes are \"parts\".\n", `"parts".`, ""},
		{"Nodes", "Nodes lists the parts.\n", "", `not "Nodes is" or "Nodes are"`},
		{"CPU", "", "", "no doc comment"},
	} {
		got, err := description(pkg.Parser(), c.name, c.text)
		if got != c.want || (err == nil) != (c.err == "") || err != nil && !strings.Contains(err.Error(), c.err) {
			t.Errorf("description(%q, %q) = %q, %v; want %q, an error with %q", c.name, c.text, got, err, c.want, c.err)
		}
	}
}

// TestFormat: the layout of the file.
func TestFormat(t *testing.T) {
	s := &Schema{
		Description: "ſ <&>",
		Type:        Types{"object"},
		Properties: Members{
			{"a", &Schema{Ref: "#/$defs/x"}},
			{"b", &Schema{AllOf: []*Schema{{Ref: "#/$defs/x"}, {Ref: "#/$defs/y"}}}},
		},
		PatternProperties: Members{{"^[Aa]$", &Schema{Ref: "#/properties/a"}}},
		Not:               &Schema{PropertyNames: &Schema{Not: &Schema{Pattern: "^a$"}}},
	}
	got, err := Format(s)
	if err != nil {
		t.Fatal(err)
	}
	want := `{
  "description": "\u017F <&>",
  "type": "object",
  "properties": {
    "a": { "$ref": "#/$defs/x" },
    "b": {
      "allOf": [ { "$ref": "#/$defs/x" }, { "$ref": "#/$defs/y" } ]
    }
  },
  "patternProperties": {
    "^[Aa]$": { "$ref": "#/properties/a" }
  },
  "not": { "propertyNames": { "not": { "pattern": "^a$" } } }
}
`
	if string(got) != want {
		t.Errorf("Format:\n%s\nwant:\n%s", got, want)
	}
}
