package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/pingnode/pingnode/examples/internal/pingclient"
	"github.com/pingnode/pingnode/internal/golden"
	"github.com/pingnode/pingnode/internal/testpki"
	"github.com/pingnode/pingnode/nodeapply"
)

// startPlugin builds and starts examples/plugin on a free port of
// 127.0.0.1 (or on the Unix socket that args name) and returns its status
// URL, https:// when args hold -cert-file; it stops with the test.
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
	// The plugin logs one line once it listens: from then on it answers.
	lines := bufio.NewScanner(stderr)
	if !lines.Scan() {
		t.Fatal("the plugin said nothing")
	}
	if !strings.Contains(lines.Text(), "serving the ping reply") {
		t.Fatalf("the plugin did not start: %s", lines.Text())
	}
	go func() { _, _ = io.Copy(io.Discard, stderr) }()
	if slices.Contains(args, "-cert-file") {
		return "https://" + addr + "/status"
	}
	return "http://" + addr + "/status"
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

// TestLivePluginLabels: the example plugin's -label reaches the node when
// pingcheck allows its namespace as the plugin does, and without that
// allowance pingcheck refuses it with a warning naming its path, which
// -strict makes exit status 1.
func TestLivePluginLabels(t *testing.T) {
	url := startPlugin(t, "-label-namespaces", "nvidia.com", "-label", "nvidia.com/gpu.product=NVIDIA-A100-SXM4-80GB", "-label", "feature.node.kubernetes.io/cpu-model.vendor_id=AMD")
	for _, tt := range []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"allowed", []string{"-label-namespaces", "nvidia.com"}, exitOK, []string{
			"warnings (0)",
			"metadata.labels[nvidia.com/gpu.product]                           + NVIDIA-A100-SXM4-80GB",
			"metadata.labels[feature.node.kubernetes.io/cpu-model.vendor_id]   + AMD",
		}},
		{"not allowed", nil, exitWarnings, []string{
			"warnings (1)",
			"labels[nvidia.com/gpu.product]   nvidia.com/gpu.product is not in a namespace the provider allows",
			"metadata.labels[feature.node.kubernetes.io/cpu-model.vendor_id]   + AMD",
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(append([]string{"-strict", "-node", "../../testdata/nodes/interlink-node.json", "-url", url}, tt.args...), nil, &stdout, &stderr)
			out := stdout.String()
			if code != tt.code {
				t.Errorf("exit %d, want %d\n%s%s", code, tt.code, out, stderr.String())
			}
			for _, want := range tt.want {
				if !strings.Contains(out, want) {
					t.Errorf("no %q in:\n%s", want, out)
				}
			}
		})
	}
}

// TestLivePluginDevices: the example plugin's -devices reach pingcheck,
// which shows the devices by the names CEL reads for -dra-driver; with
// -basis total the reply is as clean (-strict).
func TestLivePluginDevices(t *testing.T) {
	url := startPlugin(t, "-devices", "../plugin/testdata/gpus.json", "-basis", "total")
	var stdout, stderr bytes.Buffer
	code := run([]string{"-strict", "-dra-driver", "gpu.nvidia.com", "-url", url}, nil, &stdout, &stderr)
	out := stdout.String()
	if code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, out, stderr.String())
	}
	for _, want := range []string{
		"warnings (0)",
		"devices (6, 6 changed: what the provider publishes, as driver gpu.nvidia.com)",
		"  a100-0, a100-1: 2 devices, all added\n    device.attributes['gpu.nvidia.com'].architecture = \"Ampere\"\n",
		"  t4-0 ... t4-3: 4 devices, all added\n",
		"    device.capacity['gpu.nvidia.com'].memory = 16Gi\n",
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
	hanging := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body) // then the server sees the client go
		<-r.Context().Done()
	}))
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

// TestWatchDevices: -watch shows the devices each reply publishes and
// what it changed of them, only when what it says changes: a pool, a
// steady ping (nothing), fewer free and a group of none free, a group
// refused (its devices kept) beside one refused with nothing published
// before, an attribute changed and more free, a failed ping (nothing), and
// no devices at all. The plugin is pinged by the client -url uses; the
// pings are 5s apart by a clock of the test's, so that the conditions'
// times are the golden's.
func TestWatchDevices(t *testing.T) {
	replies := []string{"1-gpus.json", "2-same.json", "3-fewer-free.json", "4-refused.json", "5-new-driver.json", "HTTP 502", "6-none.json"}
	var calls int
	plugin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		name := replies[min(calls, len(replies)-1)]
		calls++
		if name == "HTTP 502" {
			http.Error(w, "backend down", http.StatusBadGateway)
			return
		}
		body, err := os.ReadFile(filepath.Join("testdata", "watch-devices", name))
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		_, _ = w.Write(body)
	}))
	defer plugin.Close()
	client, err := pingclient.New(pingclient.Config{URL: plugin.URL, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	ping := func(ctx context.Context) nodeapply.Ping {
		p := client.Ping(ctx)
		p.At, at = at, at.Add(5*time.Second)
		return p
	}
	var stdout bytes.Buffer
	code := watch(context.Background(), &stdout, ping, &corev1.Node{}, time.Millisecond, len(replies), nodeapply.Options{}, "gpu.nvidia.com")
	got := fmt.Sprintf("$ pingcheck -watch -dra-driver gpu.nvidia.com -url <plugin> # replies %s\nexit %d\n--- stdout\n%s",
		strings.Join(replies, ", "), code, stdout.String())
	golden.Check(t, filepath.Join("testdata", "watch-devices.golden"), []byte(got))
}

// TestLivePluginAsDeployed: pingcheck reaches the example plugin behind
// mutual TLS and a bearer token, and on a Unix socket, with the transport
// flags; each wrong way in fails with its own words, and the token shows
// nowhere.
func TestLivePluginAsDeployed(t *testing.T) {
	dir := t.TempDir()
	file := func(name string, content []byte) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, content, 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	ca := testpki.NewCA(t, "plugins")
	server := ca.Issue(t, testpki.Loopback)
	client := ca.Issue(t, testpki.Options{CommonName: "virtual-kubelet", Client: true})
	const token = "s3cret-token-7f1"
	files := map[string]string{
		"ca": file("ca.pem", ca.PEM), "cert": file("server.pem", server.CertPEM), "key": file("server-key.pem", server.KeyPEM),
		"client": file("client.pem", client.CertPEM), "client-key": file("client-key.pem", client.KeyPEM),
		"token": file("token", []byte(token+"\n")), "wrong": file("wrong-token", []byte("not-the-token\n")),
	}
	url := startPlugin(t, "-cert-file", files["cert"], "-key-file", files["key"], "-client-ca-file", files["ca"], "-token-file", files["token"])
	socket := filepath.Join(shortDir(t), "plugin.sock")
	startPlugin(t, "-unix-socket", socket, "-token-file", files["token"])

	for _, tt := range []struct {
		name    string
		args    []string
		failure string // "" when the plugin answers
	}{
		{"mutual TLS and a token", []string{"-url", url, "-ca-file", files["ca"], "-cert-file", files["client"], "-key-file", files["client-key"], "-token-file", files["token"]}, ""},
		{"a Unix socket and a token", []string{"-url", "unix://" + socket, "-token-file", files["token"]}, ""},
		{"the wrong token", []string{"-url", url, "-ca-file", files["ca"], "-cert-file", files["client"], "-key-file", files["client-key"], "-token-file", files["wrong"]}, "HTTP 401 Unauthorized: credentials refused"},
		{"no client certificate", []string{"-url", url, "-ca-file", files["ca"], "-token-file", files["token"]}, "client certificate refused (certificate required)"},
		{"the system's CAs only", []string{"-url", url, "-cert-file", files["client"], "-key-file", files["client-key"], "-token-file", files["token"]}, "server certificate not trusted"},
		{"a missing socket", []string{"-url", "unix://" + socket + ".gone", "-token-file", files["token"]}, "unix socket missing"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(append([]string{"-strict", "-timeout", "5s"}, tt.args...), nil, &stdout, &stderr)
			out := stdout.String() + stderr.String()
			want := `kind     structured, status "ok"`
			if tt.failure != "" {
				want = "failed   " + tt.failure
			}
			if !strings.Contains(out, want) {
				t.Errorf("no %q in:\n%s", want, out)
			}
			if wantCode := map[bool]int{true: exitOK, false: exitWarnings}[tt.failure == ""]; code != wantCode {
				t.Errorf("exit %d, want %d", code, wantCode)
			}
			if strings.Contains(out, token) {
				t.Errorf("the token shows in the output:\n%s", out)
			}
		})
	}
}

// shortDir is a folder with a short path, for a Unix socket (at most 107
// bytes), removed with the test.
func shortDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "pc")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}
