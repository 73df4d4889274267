package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestTemplateCopyBuilds: the template, copied out of the repository
// into a module of its own (as a provider author starts), builds, vets
// and passes its unit tests (-short: its end-to-end test needs the
// control plane): it imports no internal package of this repository.
// The copy reaches the library through a replace, as it would through a
// release.
func TestTemplateCopyBuilds(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	files, err := os.ReadDir(filepath.Join("..", "template"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if f.IsDir() {
			continue
		}
		content, err := os.ReadFile(filepath.Join("..", "template", f.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if f.Name() == "go.mod" {
			mod := strings.Replace(string(content), "module github.com/pingnode/pingnode/examples/template", "module example.com/myprovider", 1)
			content = []byte(strings.Replace(mod, "=> ../..", "=> "+root, 1))
		}
		if err := os.WriteFile(filepath.Join(dir, f.Name()), content, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"build", "./..."}, {"vet", "./..."}, {"test", "-short", "./..."}} {
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=readonly -race", "GOWORK=off") // -race: the build of the tests here, reused
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("go %s in a copy of the template: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// TestTemplateNamesReferenceFiles: every file and package of the
// reference provider that the template's README table "What the
// reference provider adds" names is here, so that the table follows the
// provider's rooms when they move.
func TestTemplateNamesReferenceFiles(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "template", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(readme), "## What the reference provider adds")
	if !ok {
		t.Fatal(`the template's README has no section "What the reference provider adds"`)
	}
	_, rows, ok := strings.Cut(table, "|---|---|\n")
	if !ok {
		t.Fatal("the template's README: the section has no table")
	}
	named := 0
	for _, line := range strings.Split(rows, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 3 {
			break // the table's end
		}
		where := cells[len(cells)-2] // the last cell: where in examples/virtualkubelet
		for i, part := range strings.Split(where, "`") {
			path := i%2 == 1 && !strings.ContainsAny(part, " ,(") // a name in backquotes
			if !path || (!strings.HasSuffix(part, ".go") && !strings.Contains(part, "/") && part != "Dockerfile") {
				continue
			}
			named++
			if _, err := os.Stat(part); err != nil {
				t.Errorf("the template's README names %s of the reference provider: %v", part, err)
			}
		}
	}
	if named < 10 {
		t.Errorf("%d files named in the table, want its rows' files", named)
	}
}
