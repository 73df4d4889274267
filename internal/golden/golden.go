// Package golden compares test output with .golden files, and rewrites them
// when the tests run with -update. Only goldens are ever written; inputs are
// read-only.
package golden

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite .golden files with the current output")

// Check compares got with the file at path, or writes got there under
// -update. path must end in ".golden".
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if !strings.HasSuffix(path, ".golden") {
		t.Fatalf("golden.Check(%s): refusing to write a file that is not a .golden", path)
	}
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the tests with -update to create it)", err)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("%s differs (-want +got):\n%s", path, cmp.Diff(string(want), string(got)))
	}
}

// Name returns the golden file name for an input file: its base name with
// the extension replaced by ".golden", in dir.
func Name(dir, input string) string {
	base := filepath.Base(input)
	return filepath.Join(dir, strings.TrimSuffix(base, filepath.Ext(base))+".golden")
}

// Input is one input file of a test.
type Input struct {
	Name string // the file's base name
	Data []byte
}

// Inputs reads the files that pattern matches, such as
// "../testdata/replies/*", and fails the test if there are none.
func Inputs(t testing.TB, pattern string) []Input {
	t.Helper()
	paths, err := filepath.Glob(pattern)
	if err != nil || len(paths) == 0 {
		t.Fatalf("no input files match %s: %v", pattern, err)
	}
	inputs := make([]Input, len(paths))
	for i, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		inputs[i] = Input{Name: filepath.Base(path), Data: data}
	}
	return inputs
}

// Section writes a list of a golden: its title, then each item on a line
// of its own, or "none".
func Section[T fmt.Stringer](b *strings.Builder, title string, items []T) {
	fmt.Fprintf(b, "%s:", title)
	if len(items) == 0 {
		b.WriteString(" none\n")
		return
	}
	b.WriteByte('\n')
	for _, it := range items {
		fmt.Fprintf(b, "  %s\n", it)
	}
}
