package main

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// kubeconfigFile writes a kubeconfig of a cluster at server and returns
// its path.
func kubeconfigFile(t *testing.T, server string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	config := `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "` + server + `"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestFlags: every flag is checked once, at start, and a value that
// cannot work is refused with a message that names its flag (main then
// exits with status 2); the URL, which may hold credentials, is never in
// it.
func TestFlags(t *testing.T) {
	t.Setenv("KUBECONFIG", "")
	kubeconfig := kubeconfigFile(t, "https://127.0.0.1:6443")
	tests := []struct {
		name string
		args []string
		want string // in the message; "" for flags that are accepted
	}{
		{"defaults", nil, ""},
		{"every flag", []string{"-node", "gpu-site.example.com", "-plugin-url", "unix:///run/plugin.sock", "-ping-interval", "2s"}, ""},
		{"a node name that is not a DNS subdomain", []string{"-node", "GPU_site"}, "invalid value for flag -node: a lowercase RFC 1123 subdomain"},
		{"a plugin URL of another scheme", []string{"-plugin-url", "ftp://user:secret@plugin/status"}, `invalid value for flag -plugin-url: scheme "ftp": want http, https or unix`},
		{"no plugin URL", []string{"-plugin-url", ""}, "invalid value for flag -plugin-url: empty"},
		{"a ping interval of zero", []string{"-ping-interval", "0s"}, "invalid value for flag -ping-interval: 0s: want more than zero"},
		{"a kubeconfig that is not there", []string{"-kubeconfig", "/nonexistent/kubeconfig"}, "invalid value for flag -kubeconfig: stat /nonexistent/kubeconfig"},
		{"no kubeconfig, outside a cluster", []string{"-kubeconfig", ""}, "invalid value for flag -kubeconfig: not given, and not in a cluster: unable to load in-cluster configuration"},
		{"an argument", []string{"extra"}, `unexpected argument "extra"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("KUBERNETES_SERVICE_HOST", "") // outside a cluster, even in a pod
			var stderr strings.Builder
			c, err := parseFlags(append([]string{"-kubeconfig", kubeconfig}, tt.args...), &stderr)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("refused: %v\n%s", err, stderr.String())
				}
				return
			}
			if err == nil {
				t.Fatalf("accepted: %+v", c)
			}
			if !strings.Contains(stderr.String(), tt.want) {
				t.Errorf("message:\n%s\nwant it to hold %q", stderr.String(), tt.want)
			}
			if strings.Contains(stderr.String(), "secret") {
				t.Errorf("the message holds the URL's credentials:\n%s", stderr.String())
			}
		})
	}
}

// TestDefaults: the defaults are the sample plugin's address, a ping
// every 5 s, each within 3 s.
func TestDefaults(t *testing.T) {
	c, err := parseFlags([]string{"-kubeconfig", kubeconfigFile(t, "https://127.0.0.1:6443")}, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	if c.node != "pingnode-template" || c.pluginURL != "http://127.0.0.1:4000/status" || c.interval != 5*time.Second || c.timeout() != 3*time.Second {
		t.Errorf("defaults: node %q, plugin %q, every %s within %s", c.node, c.pluginURL, c.interval, c.timeout())
	}
	if c, _ := parseFlags([]string{"-kubeconfig", kubeconfigFile(t, "https://127.0.0.1:6443"), "-ping-interval", "2s"}, os.Stderr); c.timeout() != 1200*time.Millisecond {
		t.Errorf("timeout with -ping-interval 2s = %s, want 1.2s", c.timeout())
	}
}

// TestKubeconfigFromTheEnvironment: -kubeconfig not given is
// $KUBECONFIG, read when the flags are checked.
func TestKubeconfigFromTheEnvironment(t *testing.T) {
	t.Setenv("KUBECONFIG", kubeconfigFile(t, "https://192.0.2.1:6443"))
	c, err := parseFlags(nil, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	if c.rest.Host != "https://192.0.2.1:6443" {
		t.Errorf("the API server is %q, want $KUBECONFIG's https://192.0.2.1:6443", c.rest.Host)
	}
}

// TestREADMEFlags: the README's table of flags has a row for each flag,
// with its default, and no other, so that a flag added or changed is
// said in the README too.
func TestREADMEFlags(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := 0
	for _, line := range strings.Split(string(readme), "\n") {
		if strings.HasPrefix(line, "| `-") {
			rows++
		}
	}
	fs := flagSet(new(config), new(string))
	fs.VisitAll(func(f *flag.Flag) {
		name, _ := flag.UnquoteUsage(f)
		row := "| `-" + strings.TrimSpace(f.Name+" "+name) + "` | `" + f.DefValue + "` |"
		if f.DefValue == "" {
			row = strings.TrimSuffix(row, "`` |") + " |"
		}
		if !strings.Contains(string(readme), row) {
			t.Errorf("README.md has no row %q", row)
		}
		rows--
	})
	if rows != 0 {
		t.Errorf("README.md has %d rows of flags more than the flag set", rows)
	}
}
