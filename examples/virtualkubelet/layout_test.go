package main

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLayout holds the provider to the sizes it was given: its README,
// which is for running it, at most 400 lines (how it works is the
// packages' documentation); and each file of code of the examples, this
// provider's internal/ and each doc.go included, at most 350, one concern
// a file: a package whose documentation outgrows it is a package that
// holds two concerns.
func TestLayout(t *testing.T) {
	lines := func(path string) int {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return bytes.Count(data, []byte("\n"))
	}
	if n := lines("README.md"); n > 400 {
		t.Errorf("README.md: %d lines, want at most 400: move how it works to the packages' doc.go", n)
	}
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && (d.Name() == "testdata" || d.Name() == "deploy" || d.Name() == "node_modules"):
			return filepath.SkipDir
		case d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go"):
			return nil
		}
		if n := lines(path); n > 350 {
			t.Errorf("%s: %d lines, want at most 350", path, n)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
