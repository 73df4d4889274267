package pingclient

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pingnode/pingnode/examples/internal/podapi"
	"github.com/pingnode/pingnode/internal/testpki"
	"github.com/pingnode/pingnode/pingstatus"
)

func TestPing(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	release := make(chan struct{})
	defer close(release)
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) {
		// The ping as interLink's API sends it: a JSON empty list of
		// pods, which interLink's Slurm plugin needs.
		body, _ := io.ReadAll(r.Body)
		if string(body) != podapi.PingBody || r.Header.Get("Content-Type") != "application/json" || r.Method != http.MethodGet {
			http.Error(w, "unexpected end of JSON input", http.StatusInternalServerError)
			return
		}
		_, _ = io.WriteString(w, reply)
	})
	mux.HandleFunc("/500", func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "<html>stack trace at 0xdeadbeef</html>", http.StatusInternalServerError)
	})
	mux.HandleFunc("/hang", func(_ http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body) // then the server sees the client go
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	mux.HandleFunc("/huge", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, strings.Repeat("x", 3*pingstatus.DefaultMaxBodyBytes))
	})
	mux.HandleFunc("/cut", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Length", "100")
		_, _ = io.WriteString(w, `{"status":`)
	})
	server := httptest.NewServer(mux)
	defer server.Close()
	closed := httptest.NewServer(mux)
	closedURL := closed.URL
	closed.Close()

	tests := []struct {
		name, url    string
		maxBodyBytes int
		timeout      time.Duration // 10s if zero
		wantFailure  string
		wantBody     string
		wantBodyLen  int
	}{
		{name: "answered", url: server.URL + "/ok", wantBody: reply},
		{name: "not 200: the status, never the body", url: server.URL + "/500", wantFailure: "HTTP 500 Internal Server Error"},
		{name: "hangs past the timeout", url: server.URL + "/hang", timeout: 200 * time.Millisecond, wantFailure: "timeout after 200ms"},
		{name: "refused", url: closedURL + "/ok", wantFailure: "connection refused"},
		{name: "oversized: one byte past the default limit, for Parse to refuse", url: server.URL + "/huge", wantBodyLen: pingstatus.DefaultMaxBodyBytes + 1},
		{name: "oversized: one byte past the caller's limit", url: server.URL + "/huge", maxBodyBytes: 10, wantBodyLen: 11},
		{name: "cut short", url: server.URL + "/cut", wantFailure: "connection closed before the reply ended"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			timeout := tt.timeout
			if timeout == 0 {
				timeout = 10 * time.Second
			}
			c := newClient(t, Config{URL: tt.url, Timeout: timeout, MaxBodyBytes: tt.maxBodyBytes, Now: func() time.Time { return at }})
			got := c.Ping(context.Background())
			if !got.At.Equal(at) {
				t.Errorf("At = %v, want %v", got.At, at)
			}
			if diff := cmp.Diff(tt.wantFailure, got.Failure); diff != "" {
				t.Errorf("Failure (-want +got):\n%s", diff)
			}
			if tt.wantBody != "" && string(got.Body) != tt.wantBody {
				t.Errorf("Body = %q, want %q", got.Body, tt.wantBody)
			}
			if tt.wantBodyLen != 0 && len(got.Body) != tt.wantBodyLen {
				t.Errorf("len(Body) = %d, want %d", len(got.Body), tt.wantBodyLen)
			}
			if tt.wantFailure != "" && got.Body != nil {
				t.Errorf("a failure with a body: %q", got.Body)
			}
		})
	}
}

// TestCallerDeadline: a timeout that is not the client's own is a plain
// "timeout", not the client's timeout.
func TestCallerDeadline(t *testing.T) {
	server := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body) // then the server sees the client go
		<-r.Context().Done()
	}))
	defer server.Close()
	c := newClient(t, Config{URL: server.URL, Timeout: time.Hour})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if got := c.Ping(ctx).Failure; got != "timeout" {
		t.Errorf("Failure = %q, want %q", got, "timeout")
	}
}

// TestWaysIn: each way to reach a plugin works, at two pings in a row.
func TestWaysIn(t *testing.T) {
	ca := testpki.NewCA(t, "pingnode test CA")
	serverCert := ca.Issue(t, testpki.Loopback)
	client := ca.Issue(t, testpki.Options{CommonName: "provider", Client: true})
	const token = "s3cret-token-0123456789"

	open := &plugin{}
	withToken := &plugin{}
	withToken.wantToken(token)
	mutual := &plugin{}
	mutual.wantNames("provider")
	mutualAndToken := &plugin{}
	mutualAndToken.wantNames("provider")
	mutualAndToken.wantToken(token)

	httpsURL := startTLS(t, open, serverTLS{cert: certOf(serverCert)}).URL + "/status"
	tokenURL := startTLS(t, withToken, serverTLS{cert: certOf(serverCert)}).URL + "/status"
	mutualURL := startTLS(t, mutual, serverTLS{cert: certOf(serverCert), clientCAs: ca.Pool()}).URL + "/status"
	mutual12URL := startTLS(t, mutual, serverTLS{cert: certOf(serverCert), clientCAs: ca.Pool(), version: tls.VersionTLS12}).URL + "/status"
	allURL := startTLS(t, mutualAndToken, serverTLS{cert: certOf(serverCert), clientCAs: ca.Pool()}).URL + "/status"
	plainWithToken := httptest.NewServer(withToken)
	defer plainWithToken.Close()
	socket := startUnix(t, open)
	socketWithToken := startUnix(t, withToken)
	socketOtherPath := startUnix(t, http.StripPrefix("/api/v1", open))

	paths := files(t, map[string][]byte{"ca.pem": ca.PEM, "client.pem": client.CertPEM, "client-key.pem": client.KeyPEM, "token": []byte(token + "\n")})
	tests := []struct {
		name string
		cfg  Config
	}{
		{"https, the CA besides the system's", Config{URL: httpsURL, CAFile: paths["ca.pem"]}},
		{"https, the CA alone", Config{URL: httpsURL, CAFile: paths["ca.pem"], CAOnly: true}},
		{"https with a token", Config{URL: tokenURL, CAFile: paths["ca.pem"], TokenFile: paths["token"]}},
		{"mutual TLS", Config{URL: mutualURL, CAFile: paths["ca.pem"], CertFile: paths["client.pem"], KeyFile: paths["client-key.pem"]}},
		{"mutual TLS 1.2", Config{URL: mutual12URL, CAFile: paths["ca.pem"], CertFile: paths["client.pem"], KeyFile: paths["client-key.pem"]}},
		{"mutual TLS and a token", Config{URL: allURL, CAFile: paths["ca.pem"], CertFile: paths["client.pem"], KeyFile: paths["client-key.pem"], TokenFile: paths["token"]}},
		{"http with a token", Config{URL: plainWithToken.URL + "/status", TokenFile: paths["token"]}},
		{"unix socket", Config{URL: "unix://" + socket}},
		{"unix socket and a token", Config{URL: "unix://" + socketWithToken, TokenFile: paths["token"]}},
		{"unix socket and another path", Config{URL: "unix://" + socketOtherPath, Path: "/api/v1/status"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log, out := newLogs()
			tt.cfg.Log = log
			tt.cfg.Timeout = 10 * time.Second
			answers(t, newClient(t, tt.cfg), 2)
			if strings.Contains(out.String(), token) {
				t.Errorf("the token in the log:\n%s", out)
			}
		})
	}
	open.mu.Lock()
	defer open.mu.Unlock()
	if want := "/status"; !contains(open.paths, want) {
		t.Errorf("paths asked %q: no %q", open.paths, want)
	}
}

// TestWrongWays: each wrong way in fails with its own words, the same at
// two pings in a row, and neither the failures nor the log hold the token.
func TestWrongWays(t *testing.T) {
	ca := testpki.NewCA(t, "pingnode test CA")
	other := testpki.NewCA(t, "another CA")
	expired := testpki.Loopback
	expired.NotBefore, expired.NotAfter = time.Now().Add(-2*time.Hour), time.Now().Add(-time.Hour)
	otherName := testpki.Options{CommonName: "plugin", DNSNames: []string{"other.example"}}
	good := ca.Issue(t, testpki.Loopback)
	client := ca.Issue(t, testpki.Options{CommonName: "provider", Client: true})
	strangerClient := other.Issue(t, testpki.Options{CommonName: "provider", Client: true})
	const token = "s3cret-token-0123456789"

	open := &plugin{}
	withToken := &plugin{}
	withToken.wantToken(token)
	mutual := &plugin{}
	mutual.wantNames("someone else")
	plain := httptest.NewServer(open)
	defer plain.Close()
	socketDir := shortDir(t)

	paths := files(t, map[string][]byte{
		"ca.pem": ca.PEM, "client.pem": client.CertPEM, "client-key.pem": client.KeyPEM,
		"stranger.pem": strangerClient.CertPEM, "stranger-key.pem": strangerClient.KeyPEM,
		"token": []byte(token), "wrong-token": []byte("wrong-" + token),
	})
	url := func(h http.Handler, s serverTLS) string { return startTLS(t, h, s).URL + "/status" }
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"untrusted CA", Config{URL: url(open, serverTLS{cert: certOf(other.Issue(t, testpki.Loopback))}), CAFile: paths["ca.pem"]}, "server certificate not trusted"},
		{"self-signed", Config{URL: url(open, serverTLS{cert: certOf(testpki.SelfSigned(t, testpki.Loopback))}), CAFile: paths["ca.pem"]}, "server certificate not trusted"},
		{"no CA file", Config{URL: url(open, serverTLS{cert: certOf(good)})}, "server certificate not trusted"},
		{"wrong name", Config{URL: url(open, serverTLS{cert: certOf(ca.Issue(t, otherName))}), CAFile: paths["ca.pem"]}, "server certificate for another name"},
		{"expired server certificate", Config{URL: url(open, serverTLS{cert: certOf(ca.Issue(t, expired))}), CAFile: paths["ca.pem"]}, "server certificate expired or not yet valid"},
		{"no client certificate, TLS 1.3", Config{URL: url(open, serverTLS{cert: certOf(good), clientCAs: ca.Pool()}), CAFile: paths["ca.pem"]}, "client certificate refused (certificate required)"},
		{"no client certificate, TLS 1.2", Config{URL: url(open, serverTLS{cert: certOf(good), clientCAs: ca.Pool(), version: tls.VersionTLS12}), CAFile: paths["ca.pem"]}, "TLS alert from the server: handshake failure"},
		{"client certificate of another CA", Config{URL: url(open, serverTLS{cert: certOf(good), clientCAs: ca.Pool()}), CAFile: paths["ca.pem"], CertFile: paths["stranger.pem"], KeyFile: paths["stranger-key.pem"]}, "client certificate refused (unknown certificate authority)"},
		{"client certificate of someone else", Config{URL: url(mutual, serverTLS{cert: certOf(good), clientCAs: ca.Pool()}), CAFile: paths["ca.pem"], CertFile: paths["client.pem"], KeyFile: paths["client-key.pem"]}, "HTTP 403 Forbidden: credentials refused"},
		{"no token", Config{URL: url(withToken, serverTLS{cert: certOf(good)}), CAFile: paths["ca.pem"]}, "HTTP 401 Unauthorized: credentials refused"},
		{"wrong token", Config{URL: url(withToken, serverTLS{cert: certOf(good)}), CAFile: paths["ca.pem"], TokenFile: paths["wrong-token"]}, "HTTP 403 Forbidden: credentials refused"},
		{"https to a plain HTTP server", Config{URL: "https://" + plain.Listener.Addr().String() + "/status?token=" + token, TokenFile: paths["token"]}, "server speaks plain HTTP, not TLS"},
		{"missing socket", Config{URL: "unix://" + filepath.Join(socketDir, "missing.sock"), TokenFile: paths["token"]}, "unix socket missing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log, out := newLogs()
			tt.cfg.Log = log
			tt.cfg.Timeout = 10 * time.Second
			failsTwice(t, newClient(t, tt.cfg), tt.want)
			if strings.Contains(out.String(), token) {
				t.Errorf("the token in the log:\n%s", out)
			}
		})
	}
}

// TestInsecureSkipTLSVerify: verification is skipped only when asked, and
// then a warning says so at start.
func TestInsecureSkipTLSVerify(t *testing.T) {
	server := startTLS(t, &plugin{}, serverTLS{cert: certOf(testpki.SelfSigned(t, testpki.Loopback))})
	log, out := newLogs()
	answers(t, newClient(t, Config{URL: server.URL + "/status", InsecureSkipTLSVerify: true, Log: log}), 1)
	if out.count("level=WARN") != 1 || !strings.Contains(out.String(), "-insecure-skip-tls-verify") {
		t.Errorf("want one warning that names the flag; the log:\n%s", out)
	}
	failsTwice(t, newClient(t, Config{URL: server.URL + "/status"}), "server certificate not trusted")
}

// TestTLSVersion: the client speaks TLS 1.2 at least.
func TestTLSVersion(t *testing.T) {
	ca := testpki.NewCA(t, "pingnode test CA")
	server := startTLS(t, &plugin{}, serverTLS{cert: certOf(ca.Issue(t, testpki.Loopback)), version: tls.VersionTLS11})
	paths := files(t, map[string][]byte{"ca.pem": ca.PEM})
	failsTwice(t, newClient(t, Config{URL: server.URL + "/status", CAFile: paths["ca.pem"]}), "TLS alert from the server: protocol version not supported")
}

// TestCAOnly: the CA file is trusted besides the system's CAs, or alone.
func TestCAOnly(t *testing.T) {
	ca := testpki.NewCA(t, "pingnode test CA")
	both, err := x509.SystemCertPool()
	if err != nil {
		t.Skip("no system CAs:", err)
	}
	both.AddCert(ca.Cert)
	paths := files(t, map[string][]byte{"ca.pem": ca.PEM})
	for _, tt := range []struct {
		name   string
		caOnly bool
		want   *x509.CertPool
	}{
		{"the system's and the CA", false, both},
		{"the CA alone", true, ca.Pool()},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := newClient(t, Config{URL: "https://plugin.example/status", CAFile: paths["ca.pem"], CAOnly: tt.caOnly})
			if !c.transport.TLSClientConfig.RootCAs.Equal(tt.want) {
				t.Errorf("the pool is not %s", tt.name)
			}
		})
	}
}

// TestNewFailsFast: a file that cannot be used at start is an error that
// names its flag, and never holds the token.
func TestNewFailsFast(t *testing.T) {
	ca := testpki.NewCA(t, "pingnode test CA")
	client := ca.Issue(t, testpki.Options{CommonName: "provider", Client: true})
	other := ca.Issue(t, testpki.Options{CommonName: "other", Client: true})
	const token = "s3cret token"
	paths := files(t, map[string][]byte{
		"ca.pem": ca.PEM, "half-ca.pem": ca.PEM[:len(ca.PEM)/2], "not-pem": []byte("hello"),
		"client.pem": client.CertPEM, "client-key.pem": client.KeyPEM, "other-key.pem": other.KeyPEM,
		"token-with-space": []byte(token), "empty": nil,
	})
	missing := filepath.Join(t.TempDir(), "missing")
	const https = "https://plugin.example/status"
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"missing token file", Config{URL: https, TokenFile: missing}, "-token-file: open " + missing + ": no such file or directory"},
		{"empty token file", Config{URL: https, TokenFile: paths["empty"]}, "-token-file: no token: the file is empty or white space"},
		{"not a token", Config{URL: https, TokenFile: paths["token-with-space"]}, "-token-file: not a bearer token: it holds white space, control characters or non-ASCII bytes"},
		{"missing CA file", Config{URL: https, CAFile: missing}, "-ca-file: open " + missing + ": no such file or directory"},
		{"CA file cut short", Config{URL: https, CAFile: paths["half-ca.pem"]}, "-ca-file: PEM block 1 does not end: the file is cut short or malformed"},
		{"CA file not PEM", Config{URL: https, CAFile: paths["not-pem"]}, "-ca-file: no PEM data"},
		{"key of another certificate", Config{URL: https, CertFile: paths["client.pem"], KeyFile: paths["other-key.pem"]}, "-cert-file, -key-file: tls: private key does not match public key"},
		{"missing key", Config{URL: https, CertFile: paths["client.pem"], KeyFile: missing}, "-key-file: open " + missing + ": no such file or directory"},
		{"invalid config", Config{URL: https, CertFile: paths["client.pem"]}, "-cert-file: needs -key-file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := New(tt.cfg)
			if err == nil {
				c.Close()
				t.Fatal("New: no error")
			}
			if diff := cmp.Diff(tt.want, err.Error()); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if strings.Contains(err.Error(), "s3cret") {
				t.Errorf("the token in the error: %v", err)
			}
		})
	}
}

// TestClose: Close closes the idle connection, which the server sees.
func TestClose(t *testing.T) {
	closed := make(chan struct{})
	server := httptest.NewUnstartedServer(&plugin{})
	server.Config.ConnState = func(_ net.Conn, state http.ConnState) {
		if state == http.StateClosed {
			close(closed)
		}
	}
	server.Start()
	defer server.Close()
	c, err := New(Config{URL: server.URL + "/status"})
	if err != nil {
		t.Fatal(err)
	}
	answers(t, c, 1)
	c.Close()
	<-closed
}
