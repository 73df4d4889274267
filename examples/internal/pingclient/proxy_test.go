package pingclient

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pingnode/pingnode/internal/testpki"
)

// The environment of the process that TestProxyFromEnvironment starts.
const (
	childEnv   = "PINGCLIENT_TEST_PROXY_CHILD"
	childCAEnv = "PINGCLIENT_TEST_PROXY_CA"
)

// TestProxyFromEnvironment: the client goes through the proxy that
// HTTP_PROXY and HTTPS_PROXY name, for plain HTTP (the proxy asked for the
// URL) and for HTTPS (a tunnel with CONNECT, TLS verified end to end), and
// never for a Unix socket. net/http reads the environment once in a
// process, so the client runs in a process of its own (TestProxyChild),
// with the variables set; the plugin's name, plugin.example, is not a
// loopback address, which net/http would never send to a proxy.
func TestProxyFromEnvironment(t *testing.T) {
	ca := testpki.NewCA(t, "pingnode test CA")
	target := startTLS(t, &plugin{}, serverTLS{cert: certOf(ca.Issue(t, testpki.Options{CommonName: "plugin", DNSNames: []string{"plugin.example"}}))})
	paths := files(t, map[string][]byte{"ca.pem": ca.PEM})

	var mu sync.Mutex
	var asked []string
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked = append(asked, r.Method+" "+r.RequestURI)
		mu.Unlock()
		switch {
		case r.Method == http.MethodGet && r.URL.String() == "http://plugin.example/status":
			_, _ = io.WriteString(w, reply) // the proxy answers for the plugin
		case r.Method == http.MethodConnect && r.Host == "plugin.example:443":
			tunnel(w, target.Listener.Addr().String())
		default:
			http.Error(w, "not for you", http.StatusProxyAuthRequired)
		}
	}))
	defer proxy.Close()

	cmd := exec.Command(os.Args[0], "-test.run=^TestProxyChild$", "-test.count=1", "-test.v")
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch strings.ToUpper(name) {
		case "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "REQUEST_METHOD":
		default:
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "HTTP_PROXY="+proxy.URL, "HTTPS_PROXY="+proxy.URL, childEnv+"=1", childCAEnv+"="+paths["ca.pem"])
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestProxyChild") {
		t.Fatalf("the client's process: %v\n%s", err, out)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{
		"GET http://plugin.example/status", "GET http://plugin.example/status",
		"CONNECT plugin.example:443",
		"CONNECT refused.example:443", "CONNECT refused.example:443",
	}
	if diff := cmp.Diff(want, asked); diff != "" {
		t.Errorf("what the proxy was asked (-want +got):\n%s", diff)
	}
}

// TestProxyChild is the client's side of TestProxyFromEnvironment, in a
// process of its own.
func TestProxyChild(t *testing.T) {
	if os.Getenv(childEnv) == "" {
		t.Skip("run by TestProxyFromEnvironment")
	}
	answers(t, newClient(t, Config{URL: "http://plugin.example/status", Timeout: 10 * time.Second}), 2)
	answers(t, newClient(t, Config{URL: "https://plugin.example/status", CAFile: os.Getenv(childCAEnv), Timeout: 10 * time.Second}), 2)
	failsTwice(t, newClient(t, Config{URL: "https://refused.example/status", Timeout: 10 * time.Second}),
		"the proxy refused the tunnel: HTTP 407 Proxy Authentication Required")
	answers(t, newClient(t, Config{URL: "unix://" + startUnix(t, &plugin{}), Timeout: 10 * time.Second}), 2)
}

// tunnel answers a CONNECT with a tunnel to addr.
func tunnel(w http.ResponseWriter, addr string) {
	upstream, err := (&net.Dialer{}).DialContext(context.Background(), "tcp", addr)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	conn, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		_ = upstream.Close()
		return
	}
	_, _ = io.WriteString(conn, "HTTP/1.1 200 Connection established\r\n\r\n")
	go func() {
		_, _ = io.Copy(upstream, buf)
		_ = upstream.Close()
	}()
	_, _ = io.Copy(conn, upstream)
	_ = conn.Close()
}
