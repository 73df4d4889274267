// Package golden compares test output with .golden files, and rewrites them
// when the tests run with -update. Only goldens are ever written; inputs are
// read-only.
package golden

import (
	"bytes"
	"flag"
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
