package pingstatus

import (
	"bytes"
	"encoding/json"
	"flag"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// The wire's promise: a reply body is read by every later release as the
// release it was frozen at read it, unless CHANGELOG says otherwise. The
// corpus of ../testdata/wire/RELEASE holds the bodies (bodies/, byte for
// byte) and what each was read as (read.json): the patch, and each
// warning's path, subject, action and rule (its words may change).

// wireRelease is the release the corpus was frozen at.
const wireRelease = "v0.1.0"

// wireFreeze freezes the corpus anew: at a release, never in CI.
var wireFreeze = flag.Bool("wire.freeze", false, "freeze the wire corpus of "+wireRelease+" from today's bodies and reading")

// wireSources are where the corpus's bodies come from when it is frozen:
// the shared reply bodies, the bodies of the full-backend goldens, the
// sample plugin's and pingcheck's replies, and the fixtures of interLink's
// plugin API that answer at the ping's endpoint (GET /status).
var wireSources = []string{
	"../testdata/replies/*",
	"testdata/full/*.json",
	"../examples/plugin/testdata/*.json",
	"../examples/pingcheck/testdata/*.json",
	"../examples/pingcheck/testdata/watch-devices/*.json",
	"../examples/internal/podapi/testdata/status.answer.json",
}

// wireRead is what a body was read as.
type wireRead struct {
	Patch    NodePatch     `json:"patch"`
	Warnings []wireWarning `json:"warnings"`
}

// wireWarning is a warning without its words.
type wireWarning struct {
	Path    string  `json:"path,omitempty"`
	Subject Subject `json:"subject"`
	Action  Action  `json:"action"`
	Rule    string  `json:"rule,omitempty"`
}

// readWire reads body with the default options, through JSON, as the
// corpus holds it.
func readWire(t *testing.T, body []byte) wireRead {
	t.Helper()
	patch, warnings := Parse(body, Options{})
	r := wireRead{Patch: patch, Warnings: []wireWarning{}}
	for _, w := range warnings {
		r.Warnings = append(r.Warnings, wireWarning{Path: w.Path, Subject: w.Subject, Action: w.Action, Rule: w.Rule})
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var out wireRead
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestWireCompat reads every body of the corpus and compares it with what
// it was read as at the corpus's release. A body read otherwise fails the
// test unless CHANGELOG's Unreleased section names it (its file name in
// the corpus), as the row that says what changed for plugins.
func TestWireCompat(t *testing.T) {
	dir := filepath.Join("..", "testdata", "wire", wireRelease)
	if *wireFreeze {
		freezeWire(t, dir)
	}
	frozen, err := os.ReadFile(filepath.Join(dir, "read.json"))
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]wireRead
	if err := json.Unmarshal(frozen, &want); err != nil {
		t.Fatal(err)
	}
	bodies, err := os.ReadDir(filepath.Join(dir, "bodies"))
	if err != nil {
		t.Fatal(err)
	}
	if len(bodies) != len(want) || len(bodies) < 100 {
		t.Errorf("%d bodies, %d readings frozen: want one reading a body, and the whole corpus", len(bodies), len(want))
	}
	listed := unreleased(t)
	for _, e := range bodies {
		name := e.Name()
		body, err := os.ReadFile(filepath.Join(dir, "bodies", name))
		if err != nil {
			t.Fatal(err)
		}
		was, ok := want[name]
		if !ok {
			t.Errorf("%s: no reading frozen", name)
			continue
		}
		diff := cmp.Diff(was, readWire(t, body), cmpopts.IgnoreUnexported(NodePatch{}))
		switch {
		case diff == "":
		case strings.Contains(listed, name):
			t.Logf("%s is read otherwise than at %s, as CHANGELOG says:\n%s", name, wireRelease, diff)
		default:
			t.Errorf("%s is read otherwise than at %s, and CHANGELOG's Unreleased section does not name it (-%s +today):\n%s", name, wireRelease, wireRelease, diff)
		}
	}
}

// unreleased returns CHANGELOG's Unreleased section.
func unreleased(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../CHANGELOG.md")
	if err != nil {
		t.Fatal(err)
	}
	_, s, ok := strings.Cut(string(b), "\n## Unreleased\n")
	if !ok {
		t.Fatal("CHANGELOG.md has no Unreleased section")
	}
	s, _, _ = strings.Cut(s, "\n## ")
	return s
}

// freezeWire writes the corpus of dir from the bodies of wireSources,
// each named after its path, and what each is read as today.
func freezeWire(t *testing.T, dir string) {
	t.Helper()
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "bodies"), 0o755); err != nil {
		t.Fatal(err)
	}
	read := map[string]wireRead{}
	for _, pattern := range wireSources {
		paths, err := filepath.Glob(pattern)
		if err != nil || len(paths) == 0 {
			t.Fatalf("%s: no body (%v)", pattern, err)
		}
		for _, path := range paths {
			body, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			name := wireName(path)
			if _, dup := read[name]; dup {
				t.Fatalf("two bodies named %s", name)
			}
			if err := os.WriteFile(filepath.Join(dir, "bodies", name), body, 0o644); err != nil {
				t.Fatal(err)
			}
			read[name] = readWire(t, body)
		}
	}
	var b bytes.Buffer
	b.WriteString("{\n")
	for i, name := range slices.Sorted(maps.Keys(read)) {
		v, err := json.Marshal(read[name])
		if err != nil {
			t.Fatal(err)
		}
		k, _ := json.Marshal(name)
		b.Write(k)
		b.WriteString(": ")
		b.Write(v)
		if i < len(read)-1 {
			b.WriteString(",")
		}
		b.WriteString("\n")
	}
	b.WriteString("}\n")
	if err := os.WriteFile(filepath.Join(dir, "read.json"), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// wireName is the corpus's name of the body at path: its path below the
// repository's root, its slashes as "--".
func wireName(path string) string {
	p := filepath.ToSlash(filepath.Clean(path))
	p = strings.TrimPrefix(p, "../")
	if !strings.HasPrefix(p, "testdata/") && !strings.HasPrefix(p, "examples/") {
		p = "pingstatus/" + p
	}
	p = strings.TrimPrefix(p, "testdata/")
	return strings.ReplaceAll(p, "/", "--")
}
