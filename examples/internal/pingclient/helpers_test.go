package pingclient

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pingnode/pingnode/internal/testpki"
)

// reply is what the test plugin answers.
const reply = `{"status":"ok"}`

// plugin is a test plugin's status endpoint. It answers reply at
// /status, to a request with the bearer token it wants (401 without one,
// 403 with another) and, over mutual TLS, a client certificate with one
// of the common names it wants.
type plugin struct {
	token atomic.Pointer[string]   // nil: no token wanted
	names atomic.Pointer[[]string] // nil: any client certificate
	// paths are the paths asked, in order.
	mu    sync.Mutex
	paths []string
}

func (p *plugin) wantToken(token string)    { p.token.Store(&token) }
func (p *plugin) wantNames(names ...string) { p.names.Store(&names) }

func (p *plugin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	p.paths = append(p.paths, r.URL.Path)
	p.mu.Unlock()
	if r.URL.Path != "/status" {
		http.NotFound(w, r)
		return
	}
	if token := p.token.Load(); token != nil {
		switch r.Header.Get("Authorization") {
		case "":
			http.Error(w, "no token", http.StatusUnauthorized)
			return
		case "Bearer " + *token:
		default:
			http.Error(w, "not this token", http.StatusForbidden)
			return
		}
	}
	if names := p.names.Load(); names != nil {
		if r.TLS == nil || len(r.TLS.PeerCertificates) == 0 || !contains(*names, r.TLS.PeerCertificates[0].Subject.CommonName) {
			http.Error(w, "not this client", http.StatusForbidden)
			return
		}
	}
	_, _ = io.WriteString(w, reply)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// quiet drops a test server's log of refused handshakes.
var quiet = log.New(io.Discard, "", 0)

// serverTLS is how a test server does TLS.
type serverTLS struct {
	cert *atomic.Pointer[tls.Certificate] // the server's certificate, which a test may change
	// clientCAs, when set, makes the server require a client certificate
	// signed by one of them.
	clientCAs *x509.CertPool
	// version, when set, is the only TLS version the server speaks.
	version uint16
	// connState, when set, is the server's http.Server.ConnState.
	connState func(net.Conn, http.ConnState)
}

// startTLS starts an HTTPS server; it stops with the test.
func startTLS(t *testing.T, h http.Handler, s serverTLS) *httptest.Server {
	t.Helper()
	server := httptest.NewUnstartedServer(h)
	server.Config.ErrorLog = quiet
	server.Config.ConnState = s.connState
	// A configuration for each connection, with the certificate of the
	// moment (GetCertificate would not be asked without SNI, which a
	// client that connects to an IP address does not send).
	server.TLS = &tls.Config{GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
		config := &tls.Config{Certificates: []tls.Certificate{*s.cert.Load()}, MinVersion: s.version, MaxVersion: s.version}
		if s.clientCAs != nil {
			config.ClientAuth, config.ClientCAs = tls.RequireAndVerifyClientCert, s.clientCAs
		}
		return config, nil
	}}
	server.StartTLS()
	t.Cleanup(server.Close)
	return server
}

// certOf returns a pointer that holds leaf's certificate.
func certOf(leaf *testpki.Leaf) *atomic.Pointer[tls.Certificate] {
	p := new(atomic.Pointer[tls.Certificate])
	p.Store(&leaf.Certificate)
	return p
}

// startUnix starts a server on a Unix socket in a short directory (a
// socket's path holds at most 107 bytes, and t.TempDir's can be longer);
// it returns the socket's path, and stops with the test.
func startUnix(t *testing.T, h http.Handler) string {
	t.Helper()
	dir := shortDir(t)
	path := filepath.Join(dir, "plugin.sock")
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	server := httptest.NewUnstartedServer(h)
	_ = server.Listener.Close()
	server.Listener = l
	server.Start()
	t.Cleanup(server.Close)
	return path
}

// shortDir returns a new directory with a short path, removed with the
// test.
func shortDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "pc")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

// write writes a file, in place, as a rotation that is not atomic does.
func write(t *testing.T, path string, content []byte) {
	t.Helper()
	if err := os.WriteFile(path, content, 0o600); err != nil {
		t.Fatal(err)
	}
}

// files writes the named files in a new directory and returns their
// paths by name.
func files(t *testing.T, contents map[string][]byte) map[string]string {
	t.Helper()
	dir := t.TempDir()
	paths := map[string]string{}
	for name, content := range contents {
		paths[name] = filepath.Join(dir, name)
		write(t, paths[name], content)
	}
	return paths
}

// logs is a logger's output.
type logs struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logs) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logs) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// count returns how many lines hold s.
func (l *logs) count(s string) int {
	n := 0
	for _, line := range strings.Split(l.String(), "\n") {
		if strings.Contains(line, s) {
			n++
		}
	}
	return n
}

// newLogs returns a logger that writes to the returned logs.
func newLogs() (*slog.Logger, *logs) {
	l := &logs{}
	return slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug})), l
}

// newClient returns a client for cfg; it closes with the test.
func newClient(t *testing.T, cfg Config) *Client {
	t.Helper()
	c, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(c.Close)
	return c
}

// answers pings n times and checks that each is answered with reply.
func answers(t *testing.T, c *Client, n int) {
	t.Helper()
	for i := range n {
		p := c.Ping(context.Background())
		if !p.Reached() || string(p.Body) != reply {
			t.Fatalf("ping %d: failure %q, body %q; want the reply", i+1, p.Failure, p.Body)
		}
	}
}

// failsTwice pings twice and checks that both fail with want.
func failsTwice(t *testing.T, c *Client, want string) {
	t.Helper()
	for i := range 2 {
		p := c.Ping(context.Background())
		if diff := cmp.Diff(want, p.Failure); diff != "" {
			t.Errorf("ping %d: failure (-want +got):\n%s", i+1, diff)
		}
		if p.Body != nil {
			t.Errorf("ping %d: a failure with a body: %q", i+1, p.Body)
		}
	}
}
