package failure_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pingnode/pingnode/internal/testpki"
	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/nodeapply/failure"
)

// secretURL is a URL with credentials and a token in its query, as a
// misconfigured provider might use: no failure may show any part of it.
const secretURL = "https://admin:pa55word@plugin.example:8443/status?token=s3cret"

var secrets = []string{"admin", "pa55word", "s3cret", "8443", "10.0.0.7", "54321", "/run/plugin.sock"}

// get wraps err as net/http's client does.
func get(err error) error { return &url.Error{Op: "Get", URL: secretURL, Err: err} }

// dial is a failed dial of the plugin, as net reports it.
func dial(network string, errno syscall.Errno) error {
	var addr net.Addr = &net.TCPAddr{IP: net.IPv4(10, 0, 0, 7), Port: 8443}
	if network == "unix" {
		addr = &net.UnixAddr{Net: "unix", Name: "/run/plugin.sock"}
	}
	return &net.OpError{Op: "dial", Net: network, Addr: addr, Err: os.NewSyscallError("connect", errno)}
}

// onConn is a failed read or write on a connection, as net reports it.
func onConn(op string, errno syscall.Errno) error {
	return &net.OpError{Op: op, Net: "tcp", Source: &net.TCPAddr{IP: net.IPv4(10, 0, 0, 1), Port: 54321},
		Addr: &net.TCPAddr{IP: net.IPv4(10, 0, 0, 7), Port: 8443}, Err: os.NewSyscallError(op, errno)}
}

// verification is a failed verification of the server's certificate, as
// crypto/tls reports it.
func verification(err error) error { return &tls.CertificateVerificationError{Err: err} }

// remoteAlert is an alert from the server, as crypto/tls reports it (with
// its own unexported type, whose text tls.AlertError shares).
func remoteAlert(code uint8) error {
	return &net.OpError{Op: "remote error", Err: tls.AlertError(code)}
}

// timeoutError is an error that says it is a timeout, as net/http's are.
type timeoutError struct{}

func (timeoutError) Error() string {
	return "net/http: request canceled (Client.Timeout exceeded while awaiting headers) at 12:00:01.123456"
}
func (timeoutError) Timeout() bool { return true }

func TestOf(t *testing.T) {
	tests := []struct {
		name string
		code int
		err  error
		want string
	}{
		{name: "answered", code: http.StatusOK, want: ""},
		{name: "401: the credentials refused", code: http.StatusUnauthorized, want: "HTTP 401 Unauthorized: credentials refused"},
		{name: "403: the credentials refused", code: http.StatusForbidden, want: "HTTP 403 Forbidden: credentials refused"},
		{name: "another status, with Go's text", code: http.StatusServiceUnavailable, want: "HTTP 503 Service Unavailable"},
		{name: "204 is not 200", code: http.StatusNoContent, want: "HTTP 204 No Content"},
		{name: "a status with no text", code: 599, want: "HTTP 599"},
		{name: "no status", code: 0, want: "HTTP 0"},

		{name: "client timeout", err: get(timeoutError{}), want: "timeout"},
		{name: "context deadline", err: get(context.DeadlineExceeded), want: "timeout"},
		{name: "deadline while reading the body", err: fmt.Errorf("reading: %w", os.ErrDeadlineExceeded), want: "timeout"},
		{name: "connect timed out", err: get(dial("tcp", syscall.ETIMEDOUT)), want: "timeout"},
		{name: "DNS timeout", err: get(&net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "i/o timeout", Name: "plugin.example", Server: "10.0.0.53:53", IsTimeout: true}}), want: "timeout"},
		{name: "canceled", err: get(context.Canceled), code: 200, want: "canceled"},

		{name: "refused", err: get(dial("tcp", syscall.ECONNREFUSED)), want: "connection refused"},
		{name: "reset while reading", err: get(onConn("read", syscall.ECONNRESET)), want: "connection reset"},
		{name: "broken pipe", err: get(onConn("write", syscall.EPIPE)), want: "connection closed while sending the request"},
		{name: "aborted", err: get(onConn("read", syscall.ECONNABORTED)), want: "connection aborted"},
		{name: "network unreachable", err: get(dial("tcp", syscall.ENETUNREACH)), want: "network unreachable"},
		{name: "host unreachable", err: get(dial("tcp", syscall.EHOSTUNREACH)), want: "host unreachable"},
		{name: "EOF before the reply", err: get(io.EOF), want: "connection closed before the reply ended"},
		{name: "body cut short", code: 200, err: io.ErrUnexpectedEOF, want: "connection closed before the reply ended"},
		{name: "connection broken", err: get(fmt.Errorf("net/http: HTTP/1.x transport connection broken: %w", io.ErrUnexpectedEOF)), want: "connection closed before the reply ended"},

		{name: "no such host", err: get(&net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "no such host", Name: "plugin.example", Server: "10.0.0.53:53", IsNotFound: true}}), want: "no such host plugin.example"},
		{name: "other DNS failure", err: get(&net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "server misbehaving", Name: "plugin.example", Server: "10.0.0.53:53"}}), want: "cannot resolve plugin.example: server misbehaving"},

		{name: "unix socket missing", err: get(dial("unix", syscall.ENOENT)), want: "unix socket missing"},
		{name: "unix socket refuses", err: get(dial("unix", syscall.ECONNREFUSED)), want: "unix socket refused the connection"},
		{name: "unix socket not accessible", err: get(dial("unix", syscall.EACCES)), want: "unix socket not accessible"},
		{name: "unix socket not permitted", err: get(dial("unix", syscall.EPERM)), want: "unix socket not accessible"},
		{name: "unix socket reset while reading", err: get(&net.OpError{Op: "read", Net: "unix", Err: os.NewSyscallError("read", syscall.ECONNRESET)}), want: "connection reset"},

		{name: "untrusted", err: get(verification(x509.UnknownAuthorityError{})), want: "server certificate not trusted"},
		{name: "expired, with the time in the text", err: get(verification(x509.CertificateInvalidError{Reason: x509.Expired, Detail: "current time 2026-11-30T12:00:01Z is after 2026-11-30T11:00:00Z"})), want: "server certificate expired or not yet valid"},
		{name: "another name", err: get(verification(x509.HostnameError{Certificate: &x509.Certificate{DNSNames: []string{"other.example"}}, Host: "plugin.example"})), want: "server certificate for another name"},
		{name: "not for a server", err: get(verification(x509.CertificateInvalidError{Reason: x509.IncompatibleUsage})), want: "server certificate not for a TLS server"},
		{name: "other invalid certificate", err: get(verification(x509.CertificateInvalidError{Reason: x509.NotAuthorizedToSign})), want: "server certificate invalid"},

		{name: "TLS 1.3: no client certificate", err: get(remoteAlert(116)), want: "client certificate refused (certificate required)"},
		{name: "TLS 1.3: no client certificate, seen by the read loop", err: get(fmt.Errorf("readLoopPeekFailLocked: %w", remoteAlert(116))), want: "client certificate refused (certificate required)"},
		{name: "client certificate of an unknown CA", err: get(remoteAlert(48)), want: "client certificate refused (unknown certificate authority)"},
		{name: "client certificate expired", err: get(remoteAlert(45)), want: "client certificate refused (expired certificate)"},
		{name: "bad client certificate", err: get(remoteAlert(42)), want: "client certificate refused (bad certificate)"},
		{name: "TLS 1.2: handshake failure", err: get(remoteAlert(40)), want: "TLS alert from the server: handshake failure"},
		{name: "unknown alert", err: get(remoteAlert(250)), want: "TLS alert from the server: alert(250)"},
		{name: "QUIC alert", err: get(tls.AlertError(116)), want: "client certificate refused (certificate required)"},

		{name: "plain HTTP to a TLS client", err: get(http.ErrSchemeMismatch), want: "server speaks plain HTTP, not TLS"},
		{name: "plain HTTP record header", err: get(tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake", RecordHeader: [5]byte{'H', 'T', 'T', 'P', '/'}}), want: "server speaks plain HTTP, not TLS"},
		{name: "not TLS at all", err: get(tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake", RecordHeader: [5]byte{'S', 'S', 'H', '-', '2'}}), want: "server does not speak TLS"},

		{name: "proxy refuses", err: get(&net.OpError{Op: "proxyconnect", Net: "tcp", Err: dial("tcp", syscall.ECONNREFUSED)}), want: "proxy: connection refused"},
		{name: "proxy times out", err: get(&net.OpError{Op: "proxyconnect", Net: "tcp", Err: dial("tcp", syscall.ETIMEDOUT)}), want: "proxy: timeout"},

		{name: "not HTTP", err: get(fmt.Errorf("net/http: HTTP/1.x transport connection broken: %w", errors.New(`malformed HTTP response "SSH-2.0-OpenSSH_9.6"`))), want: "malformed HTTP reply"},
		{name: "fallback: the innermost text", err: get(errors.New(`unsupported protocol scheme "ftp"`)), want: `unsupported protocol scheme "ftp"`},
		{name: "fallback: under an OpError", err: get(&net.OpError{Op: "dial", Net: "tcp", Addr: &net.TCPAddr{IP: net.IPv4(10, 0, 0, 7), Port: 8443}, Err: os.NewSyscallError("connect", syscall.EADDRNOTAVAIL)}), want: "cannot assign requested address"},
		{name: "fallback: the first of joined errors", err: get(errors.Join(errors.New("first"), errors.New("second"))), want: "first"},
		{name: "fallback: a url.Error with no error", err: &url.Error{Op: "Get", URL: secretURL}, want: "request failed"},
		{name: "fallback: an OpError with no error", err: get(&net.OpError{Op: "dial", Net: "tcp", Addr: &net.TCPAddr{IP: net.IPv4(10, 0, 0, 7), Port: 8443}}), want: "request failed"},
		{name: "fallback: cleaned and cut", err: errors.New("bad\x00" + strings.Repeat("é", 100)), want: "bad\ufffd" + strings.Repeat("é", 59) + "…"},
		{name: "an error wins over the code", code: 200, err: get(dial("tcp", syscall.ECONNREFUSED)), want: "connection refused"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := failure.Of(tt.code, tt.err)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Of(%d, %v) (-want +got):\n%s", tt.code, tt.err, diff)
			}
			if again := failure.Of(tt.code, tt.err); again != got {
				t.Errorf("a second call gives %q, the first %q", again, got)
			}
			if len(got) > nodeapply.MaxFailureBytes {
				t.Errorf("%d bytes, more than MaxFailureBytes", len(got))
			}
			for _, s := range secrets {
				if strings.Contains(got, s) {
					t.Errorf("%q holds %q", got, s)
				}
			}
		})
	}
}

// TestOfRealErrors provokes each failure against a real server, in
// TLS 1.2 and 1.3 where TLS is involved, and checks the words at two
// pings in a row with the same client.
func TestOfRealErrors(t *testing.T) {
	ca := testpki.NewCA(t, "pingnode test CA")
	other := testpki.NewCA(t, "another CA")
	good := ca.Issue(t, testpki.Loopback)
	expired := testpki.Loopback
	expired.NotBefore, expired.NotAfter = time.Now().Add(-2*time.Hour), time.Now().Add(-time.Hour)
	otherName := testpki.Options{CommonName: "plugin", DNSNames: []string{"other.example"}}
	clientOpts := testpki.Options{CommonName: "provider", Client: true}
	clientExpired := clientOpts
	clientExpired.NotBefore, clientExpired.NotAfter = expired.NotBefore, expired.NotAfter

	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, `{"status":"ok"}`) })
	for _, version := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
		tlsTests := []struct {
			name   string
			server *testpki.Leaf
			mutual bool
			client *testpki.Leaf
			want   string
		}{
			{name: "trusted", server: good, want: ""},
			{name: "untrusted CA", server: other.Issue(t, testpki.Loopback), want: "server certificate not trusted"},
			{name: "self-signed", server: testpki.SelfSigned(t, testpki.Loopback), want: "server certificate not trusted"},
			{name: "expired", server: ca.Issue(t, expired), want: "server certificate expired or not yet valid"},
			{name: "another name", server: ca.Issue(t, otherName), want: "server certificate for another name"},
			{name: "mutual TLS", server: good, mutual: true, client: ca.Issue(t, clientOpts), want: ""},
			{name: "no client certificate", server: good, mutual: true, want: map[uint16]string{
				tls.VersionTLS12: "TLS alert from the server: handshake failure",
				tls.VersionTLS13: "client certificate refused (certificate required)",
			}[version]},
			{name: "client certificate of another CA", server: good, mutual: true, client: other.Issue(t, clientOpts), want: "client certificate refused (unknown certificate authority)"},
			{name: "client certificate expired", server: good, mutual: true, client: ca.Issue(t, clientExpired), want: "client certificate refused (expired certificate)"},
		}
		for _, tt := range tlsTests {
			t.Run(fmt.Sprintf("TLS 1.%d/%s", version-tls.VersionTLS10, tt.name), func(t *testing.T) {
				server := httptest.NewUnstartedServer(ok)
				server.Config.ErrorLog = quiet
				server.TLS = &tls.Config{Certificates: []tls.Certificate{tt.server.Certificate}, MinVersion: version, MaxVersion: version}
				if tt.mutual {
					server.TLS.ClientAuth, server.TLS.ClientCAs = tls.RequireAndVerifyClientCert, ca.Pool()
				}
				server.StartTLS()
				defer server.Close()
				config := &tls.Config{RootCAs: ca.Pool(), MinVersion: tls.VersionTLS12}
				if tt.client != nil {
					// Sent whatever CAs the server names, as curl does; a
					// client with Certificates sends none when the server
					// names other CAs, and then sees "certificate required".
					config.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
						return &tt.client.Certificate, nil
					}
				}
				client := &http.Client{Transport: &http.Transport{TLSClientConfig: config}}
				defer client.CloseIdleConnections()
				twice(t, client, server.URL+"/status?token=s3cret", tt.want)
			})
		}
	}

	t.Run("plain HTTP server, https URL", func(t *testing.T) {
		server := httptest.NewServer(ok)
		defer server.Close()
		twice(t, &http.Client{}, "https://"+server.Listener.Addr().String()+"/status", "server speaks plain HTTP, not TLS")
	})
	t.Run("TLS server, http URL: a 400 like any other", func(t *testing.T) {
		server := httptest.NewUnstartedServer(ok)
		server.Config.ErrorLog = quiet
		server.StartTLS()
		defer server.Close()
		twice(t, &http.Client{}, "http://"+server.Listener.Addr().String()+"/status", "HTTP 400 Bad Request")
	})
	t.Run("status", func(t *testing.T) {
		server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != "Bearer right" {
				http.Error(w, "who are you, 0xdeadbeef", http.StatusUnauthorized)
				return
			}
			http.Error(w, "<html>stack trace</html>", http.StatusServiceUnavailable)
		}))
		defer server.Close()
		twice(t, &http.Client{}, server.URL+"/status", "HTTP 401 Unauthorized: credentials refused")
		twice(t, &http.Client{Transport: bearer("right")}, server.URL+"/status", "HTTP 503 Service Unavailable")
	})
	t.Run("refused", func(t *testing.T) {
		server := httptest.NewServer(ok)
		addr := server.Listener.Addr().String()
		server.Close()
		twice(t, &http.Client{}, "http://"+addr+"/status", "connection refused")
	})
	t.Run("reset", func(t *testing.T) {
		addr := serveRaw(t, func(conn net.Conn) {
			_, _ = conn.Read(make([]byte, 1024)) // the request
			_ = conn.(*net.TCPConn).SetLinger(0)
			_ = conn.Close()
		})
		twice(t, &http.Client{}, "http://"+addr+"/status", "connection reset")
	})
	t.Run("closed before the reply", func(t *testing.T) {
		addr := serveRaw(t, func(conn net.Conn) {
			_, _ = conn.Read(make([]byte, 1024))
			_ = conn.Close()
		})
		twice(t, &http.Client{}, "http://"+addr+"/status", "connection closed before the reply ended")
	})
	t.Run("body cut short", func(t *testing.T) {
		server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Length", "100")
			_, _ = io.WriteString(w, `{"status":`)
		}))
		defer server.Close()
		twice(t, &http.Client{}, server.URL+"/status", "connection closed before the reply ended")
	})
	t.Run("not HTTP", func(t *testing.T) {
		addr := serveRaw(t, func(conn net.Conn) {
			_, _ = conn.Read(make([]byte, 1024))
			_, _ = io.WriteString(conn, "SSH-2.0-OpenSSH_9.6\r\n")
			_ = conn.Close()
		})
		twice(t, &http.Client{}, "http://"+addr+"/status", "malformed HTTP reply")
	})
	t.Run("not HTTP, and speaks first, as SSH does", func(t *testing.T) {
		addr := serveRaw(t, func(conn net.Conn) {
			_, _ = io.WriteString(conn, "SSH-2.0-OpenSSH_9.6\r\n")
			_ = conn.Close()
		})
		twice(t, &http.Client{}, "http://"+addr+"/status", "malformed HTTP reply")
	})
	t.Run("timeout", func(t *testing.T) {
		release := make(chan struct{})
		server := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}))
		defer server.Close()
		defer close(release)
		twice(t, &http.Client{Timeout: 50 * time.Millisecond}, server.URL+"/status", "timeout")
	})
	t.Run("unix socket", func(t *testing.T) {
		dir, err := os.MkdirTemp("", "pn")
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = os.RemoveAll(dir) }()
		missing := filepath.Join(dir, "missing.sock")
		twice(t, unixClient(missing), "http://unix/status", "unix socket missing")

		stale := filepath.Join(dir, "stale.sock")
		l, err := net.ListenUnix("unix", &net.UnixAddr{Net: "unix", Name: stale})
		if err != nil {
			t.Fatal(err)
		}
		l.SetUnlinkOnClose(false)
		_ = l.Close() // the file stays, and no one listens
		twice(t, unixClient(stale), "http://unix/status", "unix socket refused the connection")

		if os.Geteuid() == 0 {
			return // root may connect to any socket
		}
		locked := filepath.Join(dir, "locked")
		if err := os.Mkdir(locked, 0o700); err != nil {
			t.Fatal(err)
		}
		l, err = net.ListenUnix("unix", &net.UnixAddr{Net: "unix", Name: filepath.Join(locked, "p.sock")})
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = l.Close() }()
		if err := os.Chmod(locked, 0); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = os.Chmod(locked, 0o700) }()
		twice(t, unixClient(filepath.Join(locked, "p.sock")), "http://unix/status", "unix socket not accessible")
	})
}

// quiet drops the servers' logs of refused handshakes.
var quiet = log.New(io.Discard, "", 0)

// twice pings url twice with client and checks the words each time.
func twice(t *testing.T, client *http.Client, url, want string) {
	t.Helper()
	for i := range 2 {
		got := ping(client, url)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("ping %d (-want +got):\n%s", i+1, diff)
		}
	}
}

// ping is what a provider does: a request, and its reply read to the end.
func ping(client *http.Client, url string) string {
	resp, err := client.Get(url)
	if err != nil {
		return failure.Of(0, err)
	}
	defer func() { _ = resp.Body.Close() }()
	_, err = io.Copy(io.Discard, resp.Body)
	return failure.Of(resp.StatusCode, err)
}

// bearer is a transport that sends a bearer token.
type bearer string

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}

// unixClient is a client whose every request goes to the socket at path.
func unixClient(path string) *http.Client {
	return &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", path)
	}}}
}

// serveRaw accepts TCP connections and hands each to handle; it returns
// the listener's address.
func serveRaw(t *testing.T, handle func(net.Conn)) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			go handle(conn)
		}
	}()
	return l.Addr().String()
}
