package main

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pingnode/pingnode/examples/internal/partsfleet"
	"github.com/pingnode/pingnode/internal/golden"
	"github.com/pingnode/pingnode/pingstatus"
)

// TestPartsFileIsServed: the parts of testdata/parts.json are served as
// the reply's nodes, beside the top-level taints and labels of -drain and
// -label (every part's) and no sum of resources; the body is
// testdata/parts.golden, and the provider reads it without a warning.
func TestPartsFileIsServed(t *testing.T) {
	var stderr bytes.Buffer
	c, err := parseFlags([]string{"-parts", "testdata/parts.json", "-drain", "-label", "feature.node.kubernetes.io/slurm-cluster=example"}, &stderr)
	if err != nil {
		t.Fatalf("parseFlags: %v; said:\n%s", err, stderr.String())
	}
	code, body := getWith(t, c.backend, c.opts)
	if code != http.StatusOK {
		t.Fatalf("status %d: %s", code, body)
	}
	golden.Check(t, "testdata/parts.golden", body)
	patch, warnings := pingstatus.Parse(body, pingstatus.Options{})
	if len(warnings) != 0 {
		t.Errorf("warnings: %v", warnings)
	}
	var names []string
	for _, p := range patch.Parts {
		names = append(names, p.Name)
	}
	if diff := cmp.Diff([]string{"cn001", "cn002", "gpu01"}, names); !patch.ReplaceParts || len(patch.Resources) != 0 || diff != "" {
		t.Errorf("ReplaceParts %v, resources %v, parts (-want +got):\n%s", patch.ReplaceParts, patch.Resources, diff)
	}
}

// TestPartsFileRefused: a -parts file that is not an array of parts, or
// whose parts the provider would refuse, stops the command at start with
// a message that names the flag and what is wrong.
func TestPartsFileRefused(t *testing.T) {
	dir := t.TempDir()
	file := func(name, data string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	for _, tt := range []struct {
		name, file, want string
	}{
		{"missing", filepath.Join(dir, "none.json"), "for flag -parts: open "},
		{"a devices file", "testdata/gpus.json", `for flag -parts: json: unknown field "count"`},
		{"a whole reply", "../../testdata/replies/slurm-parts-24.json", "for flag -parts: json: cannot unmarshal object"},
		{"null", file("null.json", "null"), "for flag -parts: want a JSON array of parts, got null"},
		{"two arrays", file("two.json", "[] []"), "for flag -parts: more after the array of parts"},
		{"a bad name", file("name.json", `[{"name": "CN_001", "resources": {"cpu": "1"}}]`), "plugin: -parts: nodes[0].name"},
		{"a bad cpu", file("cpu.json", `[{"name": "cn001", "resources": {"cpu": "-1"}}]`), "plugin: -parts: nodes[0].resources.cpu"},
		{"a repeated name", file("twice.json", `[{"name": "cn001"}, {"name": "cn001"}]`), "plugin: -parts: nodes[1]"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			if _, err := parseFlags([]string{"-parts", tt.file}, &stderr); !errors.Is(err, errUsage) || !strings.Contains(stderr.String(), tt.want) {
				t.Errorf("error %v, want %v with %q in:\n%s", err, errUsage, tt.want, stderr.String())
			}
		})
	}
}

// TestPartsFlags: the flags of parts are checked at start, each refusal
// naming its flag, and those that pass make the fleet they say.
func TestPartsFlags(t *testing.T) {
	defaults := partsfleet.Config{Machines: 24, CPUs: 48, MemoryMi: 192000, Churn: 0.02, Seed: 1}
	tests := []struct {
		name   string
		args   []string
		stderr []string // each a substring of what is said; none: accepted
		fleet  *partsfleet.Config
	}{
		{"parts file", []string{"-parts", "testdata/parts.json", "-label", "feature.node.kubernetes.io/slurm-cluster=example", "-drain"}, nil, nil},
		{"generate defaults", []string{"-parts-generate", "24"}, nil, &defaults},
		{"generate none", []string{"-parts-generate", "0"}, nil, &partsfleet.Config{CPUs: 48, MemoryMi: 192000, Churn: 0.02, Seed: 1}},
		{"generate all flags", []string{"-parts-generate", "5000", "-parts-cpus", "8", "-parts-memory", "32Gi", "-parts-churn", "1", "-parts-seed", "9"}, nil,
			&partsfleet.Config{Machines: 5000, CPUs: 8, MemoryMi: 32768, Churn: 1, Seed: 9}},
		{"generate no churn", []string{"-parts-generate", "24", "-parts-churn", "0"}, nil, &partsfleet.Config{Machines: 24, CPUs: 48, MemoryMi: 192000, Seed: 1}},
		{"negative machines", []string{"-parts-generate", "-1"}, []string{`invalid value "-1" for flag -parts-generate: want a number of machines, 0 or more`}, nil},
		{"too many machines", []string{"-parts-generate", "5001"}, []string{"plugin: -parts-generate: at most 5000 machines, the most parts a provider takes by default, got 5001"}, nil},
		{"churn over 1", []string{"-parts-generate", "24", "-parts-churn", "1.5"}, []string{`invalid value "1.5" for flag -parts-churn: want a fraction from 0 to 1`}, nil},
		{"churn negative", []string{"-parts-generate", "24", "-parts-churn", "-0.1"}, []string{`invalid value "-0.1" for flag -parts-churn: want a fraction from 0 to 1`}, nil},
		{"churn NaN", []string{"-parts-generate", "24", "-parts-churn", "NaN"}, []string{`invalid value "NaN" for flag -parts-churn: want a fraction from 0 to 1`}, nil},
		{"no cpus", []string{"-parts-generate", "24", "-parts-cpus", "0"}, []string{`invalid value "0" for flag -parts-cpus: want 1 to 65536 cpus`}, nil},
		{"memory without a unit", []string{"-parts-generate", "24", "-parts-memory", "192000"}, []string{`invalid value "192000" for flag -parts-memory: want a whole number of Mi or Gi`}, nil},
		{"memory under a cpu's", []string{"-parts-generate", "24", "-parts-memory", "10Mi"}, []string{"plugin: -parts-memory: want at least 1Mi a cpu (48Mi with -parts-cpus 48), got 10Mi"}, nil},
		{"both", []string{"-parts", "testdata/parts.json", "-parts-generate", "24"}, []string{"plugin: -parts and -parts-generate: one or the other"}, nil},
		{"stuck machines", []string{"-parts-generate", "24", "-parts-stuck", "cn024", "-parts-stuck", "cn003"}, nil,
			&partsfleet.Config{Machines: 24, CPUs: 48, MemoryMi: 192000, Churn: 0.02, Seed: 1, Stuck: []string{"cn024", "cn003"}}},
		{"stuck, no such machine", []string{"-parts-generate", "24", "-parts-stuck", "cn025", "-parts-stuck", "vk-cn001"}, []string{
			`plugin: -parts-stuck: "cn025" is no machine of the fleet (24 machines, cn001 and on)`,
			`plugin: -parts-stuck: "vk-cn001" is no machine of the fleet (24 machines, cn001 and on)`}, nil},
		{"stuck without a fleet", []string{"-parts-stuck", "cn001"}, []string{"plugin: -parts-stuck: only with -parts-generate"}, nil},
		{"churn without a fleet", []string{"-parts-churn", "0.5", "-parts-seed", "3"}, []string{"plugin: -parts-churn: only with -parts-generate", "plugin: -parts-seed: only with -parts-generate"}, nil},
		{"churn beside a file", []string{"-parts", "testdata/parts.json", "-parts-cpus", "8"}, []string{"plugin: -parts-cpus: only with -parts-generate"}, nil},
		{"resources beside parts", []string{"-parts", "testdata/parts.json", "-cpu", "8", "-basis", "total"}, []string{
			"plugin: -cpu: not with -parts: each part has its own resources and devices",
			"plugin: -basis: not with -parts",
		}, nil},
		{"devices beside a fleet", []string{"-parts-generate", "24", "-devices", "testdata/gpus.json"}, []string{"plugin: -devices: not with -parts-generate"}, nil},
		{"help", []string{"-h"}, []string{"-parts value", "-parts-generate value", "-parts-churn value", "-parts-seed uint"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, ok := parsed(t, tt.args, tt.stderr)
			if ok && cmp.Diff(tt.fleet, c.fleet) != "" {
				t.Errorf("fleet (-want +got):\n%s", cmp.Diff(tt.fleet, c.fleet))
			}
		})
	}
}

// parsed parses args as the plugin's flags, fails the test unless what
// they say holds each of stderr (none: accepted, with nothing said), and
// returns the configuration and whether it was accepted.
func parsed(t *testing.T, args, stderr []string) (config, bool) {
	t.Helper()
	var said bytes.Buffer
	c, err := parseFlags(args, &said)
	if stderr == nil && (err != nil || said.Len() > 0) {
		t.Fatalf("error %v; said:\n%s", err, said.String())
	}
	for _, want := range stderr {
		if !strings.Contains(said.String(), want) {
			t.Errorf("no %q in:\n%s", want, said.String())
		}
	}
	return c, err == nil
}

// TestFleetServedConcurrently: the handler serves a fleet to concurrent
// pings (run with -race), each reply moving it on and each one clean.
func TestFleetServedConcurrently(t *testing.T) {
	fleet := partsfleet.New(partsfleet.Config{Machines: 100, CPUs: 48, MemoryMi: 192000, Churn: 0.1, Seed: 3})
	server := httptest.NewServer(Handler(func() Backend { return Backend{Parts: fleet.Next()} }, fleet, Options{}))
	defer server.Close()
	var wg sync.WaitGroup
	codes := make(chan int, 80)
	for range 8 {
		wg.Go(func() {
			for range 10 {
				resp, err := http.Get(server.URL + "/status")
				if err != nil {
					t.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
				codes <- resp.StatusCode
			}
		})
	}
	wg.Wait()
	close(codes)
	for code := range codes {
		if code != http.StatusOK {
			t.Errorf("status %d", code)
		}
	}
}

// TestPartsCommandExitStatus: the command refuses the flags of parts that
// cannot work with exit status 2 and a message that names the flag.
func TestPartsCommandExitStatus(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"-parts-generate", "-1"}, `invalid value "-1" for flag -parts-generate`},
		{[]string{"-parts-generate", "24", "-parts-churn", "2"}, `invalid value "2" for flag -parts-churn`},
		{[]string{"-parts", "testdata/parts.json", "-parts-generate", "24"}, "plugin: -parts and -parts-generate: one or the other"},
	} {
		if code, stderr := runCommand(t, tt.args...); code != 2 || !strings.Contains(stderr, tt.want) {
			t.Errorf("plugin %s: exit %d, want 2, with %q in:\n%s", strings.Join(tt.args, " "), code, tt.want, stderr)
		}
	}
}
