package main

import (
	"bufio"
	"bytes"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// startPlugin builds and starts examples/plugin on a free port and
// returns its status URL; it stops with the test.
func startPlugin(t *testing.T, args ...string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "plugin")
	build := exec.Command("go", "build", "-o", bin, "../plugin")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the plugin: %v\n%s", err, out)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	cmd := exec.Command(bin, append([]string{"-addr", addr}, args...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	// The plugin logs one line once it is about to serve; then wait until
	// it answers.
	if !bufio.NewScanner(stderr).Scan() {
		t.Fatal("the plugin said nothing")
	}
	url := "http://" + addr + "/status"
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := http.Get(url)
		if err == nil {
			_ = resp.Body.Close()
			return url
		}
		if time.Now().After(deadline) {
			t.Fatalf("the plugin does not answer: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestLivePlugin(t *testing.T) {
	url := startPlugin(t, "-cpu", "64", "-memory", "250000Mi", "-gpu", "nvidia.com/gpu=4")
	var stdout, stderr bytes.Buffer
	code := run([]string{"-strict", "-node", "../../testdata/nodes/interlink-node.json", "-url", url}, nil, &stdout, &stderr)
	out := stdout.String()
	if code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, out, stderr.String())
	}
	for _, want := range []string{
		"reply    " + url,
		`kind     structured, status "ok"`,
		"warnings (0)",
		"status.capacity[cpu]                         100 -> 64",
		"status.capacity[nvidia.com/gpu]              + 4",
		"status.conditions[InterlinkConnectivity]     + True InterlinkPingSuccessful",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
}

func TestLiveFailures(t *testing.T) {
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "<html>backend down</html>", http.StatusServiceUnavailable)
	}))
	defer failing.Close()
	hanging := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	defer hanging.Close()
	refused := httptest.NewServer(http.NotFoundHandler())
	refusedURL := refused.URL
	refused.Close()

	for _, tt := range []struct {
		name, url, failure string
	}{
		{"HTTP 503", failing.URL, "HTTP 503 Service Unavailable"},
		{"timeout", hanging.URL, "timeout after 200ms"},
		{"refused", refusedURL, "connection refused"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run([]string{"-strict", "-timeout", "200ms", "-node", "../../testdata/nodes/interlink-node.json", "-url", tt.url}, nil, &stdout, &stderr)
			out := stdout.String()
			if code != exitWarnings {
				t.Errorf("exit %d, want %d with -strict on a failed ping", code, exitWarnings)
			}
			for _, want := range []string{
				"failed   " + tt.failure,
				"status.conditions[InterlinkConnectivity]   + False InterlinkPingFailed: the plugin did not answer its last ping: " + tt.failure,
			} {
				if !strings.Contains(out, want) {
					t.Errorf("no %q in:\n%s", want, out)
				}
			}
			if strings.Contains(out, "backend down") {
				t.Errorf("the failing body shows:\n%s", out)
			}
		})
	}
}

// TestWatch: the first ping changes the node, the next ones do not, then
// the plugin fails and only the connectivity condition changes.
func TestWatch(t *testing.T) {
	var calls int
	plugin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		calls++
		if calls > 3 {
			http.Error(w, "gone", http.StatusBadGateway)
			return
		}
		_, _ = w.Write([]byte(`{"resources":{"cpu":"48"}}`))
	}))
	defer plugin.Close()
	var stdout, stderr bytes.Buffer
	code := run([]string{"-url", plugin.URL, "-watch", "-interval", "10ms", "-count", "5", "-node", "../../testdata/nodes/interlink-node.json"}, nil, &stdout, &stderr)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	var pings []string
	for _, l := range lines {
		if !strings.HasPrefix(l, "    ") {
			pings = append(pings, l[strings.Index(l, "ping "):])
		}
	}
	want := []string{
		"ping 1  answered, 26 bytes  6 changes, 0 warnings",
		"ping 2  answered, 26 bytes  0 changes, 0 warnings",
		"ping 3  answered, 26 bytes  0 changes, 0 warnings",
		"ping 4  failed: HTTP 502 Bad Gateway  N changes, 0 warnings", // 3, or 5 if the second turned: the times too
		"ping 5  failed: HTTP 502 Bad Gateway  0 changes, 0 warnings",
	}
	if len(pings) == len(want) {
		pings[3] = strings.Replace(strings.Replace(pings[3], "  3 changes", "  N changes", 1), "  5 changes", "  N changes", 1)
	}
	if strings.Join(pings, "\n") != strings.Join(want, "\n") {
		t.Errorf("pings:\n%s\nwant:\n%s\nfull output:\n%s", strings.Join(pings, "\n"), strings.Join(want, "\n"), stdout.String())
	}
	if !strings.Contains(stdout.String(), "status.conditions[InterlinkConnectivity].status: True -> False") {
		t.Errorf("no transition in:\n%s", stdout.String())
	}
}
