package contracts

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// root is the module's root, from this package's folder.
const root = "../.."

// declared returns every rule name the contracts declare, to the file
// that declares it, and fails the test for a name declared twice.
func declared(t *testing.T) map[string]string {
	t.Helper()
	names := map[string]string{}
	for _, file := range Files {
		src, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			t.Fatal(err)
		}
		found := Names(src)
		if len(found) == 0 {
			t.Errorf("%s declares no rule", file)
		}
		for _, n := range found {
			if other, twice := names[n]; twice {
				t.Errorf("rule %s is declared by %s and by %s", n, other, file)
			}
			names[n] = file
		}
	}
	return names
}

// TestCitationsNameRules: every comment, doc, README and CHANGELOG of
// the repository, examples included, cites only rules that a contract
// declares, by name, never by number.
func TestCitationsNameRules(t *testing.T) {
	names := declared(t)
	cited := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if base := d.Name(); base == ".git" || base == "testdata" && path != root {
				return filepath.SkipDir
			}
			return nil
		}
		if filepath.Dir(path) == filepath.Join(root, "internal", "contracts") { // this package, whose tests cite for their own sake
			return nil
		}
		if ext := filepath.Ext(path); ext != ".go" && ext != ".md" {
			return nil
		}
		text, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		refs, byNumber := Citations(text)
		for _, r := range refs {
			cited[r.Name] = true
			if _, ok := names[r.Name]; !ok {
				t.Errorf("%s:%d cites rule %s, which no contract declares", path, line(text, r.Offset), r.Name)
			}
		}
		for _, at := range byNumber {
			t.Errorf("%s:%d cites a rule by number: %q", path, line(text, at), firstLine(text[at:]))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(cited) == 0 {
		t.Error("no citation found: the scan reads nothing")
	}
}

func line(text []byte, offset int) int { return bytes.Count(text[:offset], []byte("\n")) + 1 }

func firstLine(text []byte) string {
	s, _, _ := strings.Cut(string(text), "\n")
	return s
}

// TestCitations pins down what a citation is: a rule's name after "rule"
// or "rules", several joined by commas, "and" or "or", across a
// comment's line breaks; a word without a hyphen is prose.
func TestCitations(t *testing.T) {
	for _, c := range []struct {
		text     string
		names    []string
		byNumber int
	}{
		{"the rule is one (rule taint-unique).", []string{"taint-unique"}, 0},
		{"rules part-entries, part-fields and part-no-sum", []string{"part-entries", "part-fields", "part-no-sum"}, 0},
		{"// rules label-ownership and\n// label-foreign: the labels", []string{"label-ownership", "label-foreign"}, 0},
		{"by rule pool-order's words", []string{"pool-order"}, 0},
		{"a rule has a name; the rules pass once", nil, 0},
		{"rule 19 and rules 20 to 22", nil, 2},
		{"rule-of-thumb", nil, 0},
		{"(rules `condition-set` to `condition-others`)", []string{"condition-set", "condition-others"}, 0},
		{"(rule `merge-pure`).", []string{"merge-pure"}, 0},
		{"rule `nosuch-rule`", []string{"nosuch-rule"}, 0},
	} {
		refs, byNumber := Citations([]byte(c.text))
		var got []string
		for _, r := range refs {
			got = append(got, r.Name)
		}
		if diff := cmp.Diff(c.names, got); diff != "" || len(byNumber) != c.byNumber {
			t.Errorf("%q: names (-want +got):\n%s; %d by number, want %d", c.text, diff, len(byNumber), c.byNumber)
		}
	}
}

// TestNames: a contract's rule is a list item that starts with its name.
func TestNames(t *testing.T) {
	src := []byte("// Package x.\n//\n//   - taint-valid: a taint ...\n//     more of it.\n//   - not a rule\n//   - taint-unique: unique.\n")
	if diff := cmp.Diff([]string{"taint-valid", "taint-unique"}, Names(src)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if names := declared(t); !slices.Contains(slicesKeys(names), "part-gone") {
		t.Errorf("nodeapply's rule part-gone is not among the declared: %v", names)
	}
}

func slicesKeys(m map[string]string) []string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}
