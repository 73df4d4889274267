package changelog

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// A migration is one `old` → `new` of a row's migration cell.
type migration struct{ old, new string }

// span is a code span of CHANGELOG's Markdown.
var span = regexp.MustCompile("`([^`]+)`")

// migrations returns the migrations of every "Changed (breaks callers)"
// table of changelog: in each row's last cell, each part between
// semicolons that holds "→" pairs the code spans before it with those
// after it, one to one, or, with several arrows, the span before each
// arrow with the span after it. A part whose two sides have not as many spans
// (words between them, such as "with" and "and") is returned as the
// migration of its first span to "", which a caller migrates by hand.
func migrations(changelog string) []migration {
	var all []migration
	for _, table := range strings.Split(changelog, "### Changed (breaks callers)")[1:] {
		table, _, _ = strings.Cut(table, "\n#")
		for _, row := range strings.Split(table, "\n") {
			cells := strings.Split(strings.Trim(row, "| "), " | ")
			if !strings.HasPrefix(row, "| ") || len(cells) < 2 {
				continue
			}
			for _, part := range parts(cells[len(cells)-1]) {
				if strings.Count(part, "→") > 1 { // `a` → `b`, `c` → `d`: each arrow pairs the spans beside it
					sides := strings.Split(part, "→")
					for i := 1; i < len(sides); i++ {
						olds, news := span.FindAllStringSubmatch(sides[i-1], -1), span.FindAllStringSubmatch(sides[i], -1)
						if len(olds) > 0 && len(news) > 0 {
							all = append(all, migration{olds[len(olds)-1][1], news[0][1]})
						}
					}
					continue
				}
				before, after, ok := strings.Cut(part, "→")
				if !ok {
					continue
				}
				olds, news := span.FindAllStringSubmatch(before, -1), span.FindAllStringSubmatch(after, -1)
				if len(olds) == 0 {
					continue
				}
				if len(olds) == 1 && len(news) > 1 {
					news = news[:1] // the spans after the first are notes: `x{}` for none
				}
				if len(olds) != len(news) {
					all = append(all, migration{olds[0][1], ""})
					continue
				}
				for i := range olds {
					all = append(all, migration{olds[i][1], news[i][1]})
				}
			}
		}
	}
	return all
}

// parts splits a migration cell at its semicolons, but those in code
// spans.
func parts(cell string) []string {
	var all []string
	inSpan, start := false, 0
	for i := 0; i < len(cell); i++ {
		switch {
		case cell[i] == '`':
			inSpan = !inSpan
		case !inSpan && strings.HasPrefix(cell[i:], "; "):
			all = append(all, cell[start:i])
			start = i + 2
		}
	}
	return append(all, cell[start:])
}

// A caller is a file of testdata/migrations: Go source written against
// the API before a row's change, whose first lines say what it is.
type caller struct {
	name string
	// migrates is the old side of the migration it is a caller of.
	migrates string
	// stillCompiles says why the old form still compiles: the row
	// changed what it does, not what it is called. "": it must not.
	stillCompiles string
	src           []byte
	// byHand is the caller as migrated by hand (name.new.go), for a
	// migration said in words; nil when the row's spans migrate it.
	byHand []byte
}

func callers(t *testing.T) []caller {
	files, err := filepath.Glob("testdata/migrations/*.go")
	if err != nil {
		t.Fatal(err)
	}
	var all []caller
	for _, file := range files {
		if strings.HasSuffix(file, ".new.go") {
			continue
		}
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		c := caller{name: strings.TrimSuffix(filepath.Base(file), ".go"), src: src}
		for _, line := range strings.Split(string(src), "\n") {
			if !strings.HasPrefix(line, "// ") {
				break
			}
			key, value, _ := strings.Cut(strings.TrimPrefix(line, "// "), ": ")
			switch key {
			case "migrates":
				c.migrates = value
			case "still compiles":
				c.stillCompiles = value
			case "by hand":
				if c.byHand, err = os.ReadFile(strings.TrimSuffix(file, ".go") + ".new.go"); err != nil {
					t.Fatal(err)
				}
			}
		}
		if c.migrates == "" {
			t.Errorf("%s: no first line // migrates: `old`", file)
		}
		all = append(all, c)
	}
	return all
}

// migrate applies m to src, then each later migration of what m's new
// side names: a row whose new form a later row renamed migrates a caller
// in two steps, each its row's alone.
func migrate(src []byte, m migration, all []migration) []byte {
	out := bytes.ReplaceAll(src, []byte(m.old), []byte(m.new))
	for changed := true; changed; {
		changed = false
		for _, later := range all {
			if later.new != "" && later.old != m.old && bytes.Contains([]byte(m.new), []byte(later.old)) && bytes.Contains(out, []byte(later.old)) {
				out = bytes.ReplaceAll(out, []byte(later.old), []byte(later.new))
				m.new = strings.ReplaceAll(m.new, later.old, later.new)
				changed = true
			}
		}
	}
	return out
}

// TestMigrations: for every migration of CHANGELOG.md, a caller written
// against the API before its row's change, in testdata/migrations,
// does not compile against today's modules (unless it says why it
// still does: its row changed what the code does), and does once the
// migration is applied to it as text, alone, or by hand where the row
// says it in words. Every migration has a caller, and every caller a
// migration.
func TestMigrations(t *testing.T) {
	changelog, err := os.ReadFile("../../CHANGELOG.md")
	if err != nil {
		t.Fatal(err)
	}
	all := migrations(string(changelog))
	if len(all) < 10 {
		t.Fatalf("%d migrations in CHANGELOG.md, want the rows' migrations", len(all))
	}
	cs := callers(t)
	byOld := map[string]migration{}
	for _, m := range all {
		byOld[m.old] = m
		if !slices.ContainsFunc(cs, func(c caller) bool { return c.migrates == m.old }) {
			t.Errorf("CHANGELOG.md migrates `%s` → `%s`: no caller of it in testdata/migrations", m.old, m.new)
		}
	}

	dir := t.TempDir()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	write := func(pkg string, src []byte) {
		if err := os.MkdirAll(filepath.Join(dir, pkg), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, pkg, "caller.go"), src, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var built []caller
	for _, c := range cs {
		m, ok := byOld[c.migrates]
		if !ok {
			t.Errorf("%s migrates `%s`, which no row of CHANGELOG.md migrates", c.name, c.migrates)
			continue
		}
		if !bytes.Contains(c.src, []byte(c.migrates)) {
			t.Errorf("%s does not hold `%s`, the form it migrates", c.name, c.migrates)
		}
		migrated := c.byHand
		switch {
		case m.new == "" && migrated == nil:
			t.Errorf("%s: CHANGELOG.md says its migration in words; want %s.new.go and // by hand: why", c.name, c.name)
			continue
		case migrated == nil:
			migrated = migrate(c.src, m, all)
		}
		write("old/"+c.name, c.src)
		write("new/"+c.name, migrated)
		built = append(built, c)
	}
	gosum := func(dir string) []byte {
		data, err := os.ReadFile(filepath.Join(root, dir, "go.sum"))
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	files := map[string][]byte{
		"go.mod": fmt.Appendf(nil, `module caller

go 1.26

require (
	github.com/pingnode/pingnode v0.1.0
	github.com/pingnode/pingnode/nodeapply/dra v0.1.0
)

replace github.com/pingnode/pingnode => %s

replace github.com/pingnode/pingnode/nodeapply/dra => %s
`, root, filepath.Join(root, "nodeapply/dra")),
		"go.sum": append(gosum("."), gosum("nodeapply/dra")...),
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// One build of every caller, old and migrated: it reports each
	// package that does not compile, and goes on with the others.
	cmd := exec.Command("go", "build", "-mod=mod", "./...")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=", "GOWORK=off", "GOSUMDB=off", "GOTOOLCHAIN=local")
	out, _ := cmd.CombinedOutput()
	failed := map[string]bool{}
	for _, line := range strings.Split(string(out), "\n") {
		if pkg, ok := strings.CutPrefix(line, "# caller/"); ok {
			failed[pkg] = true
		}
	}
	if !strings.Contains(string(out), "# caller/") && len(out) > 0 {
		t.Fatalf("go build of the callers: %s", out)
	}
	for _, c := range built {
		switch old := !failed["old/"+c.name]; {
		case old && c.stillCompiles == "":
			t.Errorf("%s, written before its row's change, compiles today: its row breaks no caller like it, or the caller does not use what changed", c.name)
		case !old && c.stillCompiles != "":
			t.Errorf("%s says it still compiles (%s), and does not", c.name, c.stillCompiles)
		}
		if failed["new/"+c.name] {
			t.Errorf("%s, migrated, does not compile: CHANGELOG.md's migration of `%s` does not migrate it", c.name, c.migrates)
		}
	}
	if t.Failed() {
		t.Logf("go build:\n%s", out)
	}
}
