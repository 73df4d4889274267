package pingclient

import (
	"crypto/x509"
	"net"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pingnode/pingnode/internal/testpki"
)

// TestRotateToken: a token file rewritten while the client lives is used
// from the next ping on, with no failed ping in between.
func TestRotateToken(t *testing.T) {
	p := &plugin{}
	p.wantToken("token-1")
	socket := startUnix(t, p)
	paths := files(t, map[string][]byte{"token": []byte("token-1\n")})
	log, out := newLogs()
	c := newClient(t, Config{URL: "unix://" + socket, TokenFile: paths["token"], Log: log})
	answers(t, c, 2)

	write(t, paths["token"], []byte("token-2\n"))
	p.wantToken("token-2") // the plugin takes the new token alone
	answers(t, c, 2)

	if got := out.count("reloaded the bearer token"); got != 1 {
		t.Errorf("%d reloads logged, want 1:\n%s", got, out)
	}
	if got := out.count("level=WARN"); got != 0 {
		t.Errorf("%d warnings, want none:\n%s", got, out)
	}
	if strings.Contains(out.String(), "token-") {
		t.Errorf("a token in the log:\n%s", out)
	}
}

// TestRotateClientCertificate: a client certificate and key rewritten
// while the client lives are used from the next ping on, with no failed
// ping in between: the client drops its connection, made with the old
// certificate, and makes a handshake with the new one.
func TestRotateClientCertificate(t *testing.T) {
	ca := testpki.NewCA(t, "pingnode test CA")
	first := ca.Issue(t, testpki.Options{CommonName: "provider-1", Client: true})
	second := ca.Issue(t, testpki.Options{CommonName: "provider-2", Client: true})
	p := &plugin{}
	p.wantNames("provider-1")
	var opened atomic.Int64
	closed := make(chan struct{}, 8)
	server := startTLS(t, p, serverTLS{
		cert: certOf(ca.Issue(t, testpki.Loopback)), clientCAs: ca.Pool(),
		connState: func(_ net.Conn, state http.ConnState) {
			switch state {
			case http.StateNew:
				opened.Add(1)
			case http.StateClosed:
				closed <- struct{}{}
			}
		},
	})
	paths := files(t, map[string][]byte{"ca.pem": ca.PEM, "client.pem": first.CertPEM, "client-key.pem": first.KeyPEM})
	log, out := newLogs()
	c := newClient(t, Config{URL: server.URL + "/status", CAFile: paths["ca.pem"], CAOnly: true, CertFile: paths["client.pem"], KeyFile: paths["client-key.pem"], Log: log})
	answers(t, c, 2)
	if got := opened.Load(); got != 1 {
		t.Fatalf("%d connections for two pings, want 1 kept alive", got)
	}

	write(t, paths["client.pem"], second.CertPEM)
	write(t, paths["client-key.pem"], second.KeyPEM)
	p.wantNames("provider-2") // the plugin takes the new certificate alone
	answers(t, c, 1)
	<-closed // the connection with the old certificate
	answers(t, c, 1)
	if got := opened.Load(); got != 2 {
		t.Errorf("%d connections, want 2: one for each certificate", got)
	}
	if got := out.count("reloaded the client certificate"); got != 1 {
		t.Errorf("%d reloads logged, want 1:\n%s", got, out)
	}
	if got := out.count("level=WARN"); got != 0 {
		t.Errorf("%d warnings, want none:\n%s", got, out)
	}
}

// TestRotateCA: a CA file rewritten while the client lives verifies the
// server from the next ping on.
func TestRotateCA(t *testing.T) {
	old := testpki.NewCA(t, "old CA")
	renewed := testpki.NewCA(t, "new CA")
	cert := certOf(old.Issue(t, testpki.Loopback))
	server := startTLS(t, &plugin{}, serverTLS{cert: cert})
	server.Config.SetKeepAlivesEnabled(false) // a handshake, so a verification, at each ping
	paths := files(t, map[string][]byte{"ca.pem": old.PEM})
	log, out := newLogs()
	c := newClient(t, Config{URL: server.URL + "/status", CAFile: paths["ca.pem"], CAOnly: true, Log: log})
	answers(t, c, 2)

	cert.Store(&renewed.Issue(t, testpki.Loopback).Certificate)
	write(t, paths["ca.pem"], renewed.PEM)
	answers(t, c, 2)
	if got := out.count("reloaded the CA certificates"); got != 1 {
		t.Errorf("%d reloads logged, want 1:\n%s", got, out)
	}
}

// step is one step of a rotation gone wrong: a change to the files, then
// pings, each answered with the value in use, and the warnings logged so
// far.
type step struct {
	name     string
	change   func(t *testing.T)
	pings    int
	warnings int
}

// runSteps runs the steps, and checks after each that the pings were
// answered and how many warnings the log holds.
func runSteps(t *testing.T, c *Client, out *logs, warning string, steps []step) {
	t.Helper()
	for _, s := range steps {
		s.change(t)
		answers(t, c, s.pings)
		if got := out.count(warning); got != s.warnings {
			t.Fatalf("after %s: %d warnings, want %d:\n%s", s.name, got, s.warnings, out)
		}
	}
}

// TestHalfWrittenToken: a token file that cannot be used leaves the last
// good token in use, and its problem is logged once, until a good read.
func TestHalfWrittenToken(t *testing.T) {
	const secret = "s3cret"
	p := &plugin{}
	p.wantToken(secret + "-1")
	socket := startUnix(t, p)
	paths := files(t, map[string][]byte{"token": []byte(secret + "-1")})
	log, out := newLogs()
	c := newClient(t, Config{URL: "unix://" + socket, TokenFile: paths["token"], Log: log})
	const warning = "cannot reload the bearer token"
	runSteps(t, c, out, warning, []step{
		{"start", func(*testing.T) {}, 1, 0},
		{"emptied, as a rewrite begins", func(t *testing.T) { write(t, paths["token"], nil) }, 3, 1},
		{"deleted", func(t *testing.T) { remove(t, paths["token"]) }, 2, 2},
		{"written again", func(t *testing.T) { write(t, paths["token"], []byte(secret+"-2\n")); p.wantToken(secret + "-2") }, 2, 2},
		{"cut in the middle of a line", func(t *testing.T) { write(t, paths["token"], []byte(secret+" -3")) }, 2, 3},
		{"emptied again", func(t *testing.T) { write(t, paths["token"], []byte("\n")) }, 1, 4},
	})
	if strings.Contains(out.String(), secret) {
		t.Errorf("a token in the log:\n%s", out)
	}
	want := []string{
		"-token-file: no token: the file is empty or white space",
		"-token-file: open " + paths["token"] + ": no such file or directory",
		"-token-file: not a bearer token: it holds white space, control characters or non-ASCII bytes",
		"-token-file: no token: the file is empty or white space",
	}
	if diff := cmp.Diff(want, problems(out)); diff != "" {
		t.Errorf("problems logged (-want +got):\n%s", diff)
	}
}

// TestHalfWrittenClientCertificate: a client certificate or key that
// cannot be used (cut short, a key that does not match the certificate
// yet, deleted) leaves the last good pair in use, and each problem is
// logged once.
func TestHalfWrittenClientCertificate(t *testing.T) {
	ca := testpki.NewCA(t, "pingnode test CA")
	first := ca.Issue(t, testpki.Options{CommonName: "provider-1", Client: true})
	second := ca.Issue(t, testpki.Options{CommonName: "provider-2", Client: true})
	p := &plugin{}
	p.wantNames("provider-1")
	server := startTLS(t, p, serverTLS{cert: certOf(ca.Issue(t, testpki.Loopback)), clientCAs: ca.Pool()})
	server.Config.SetKeepAlivesEnabled(false) // a handshake, with the certificate in use, at each ping
	paths := files(t, map[string][]byte{"ca.pem": ca.PEM, "client.pem": first.CertPEM, "client-key.pem": first.KeyPEM})
	log, out := newLogs()
	c := newClient(t, Config{URL: server.URL + "/status", CAFile: paths["ca.pem"], CertFile: paths["client.pem"], KeyFile: paths["client-key.pem"], Log: log})
	const warning = "cannot reload the client certificate"
	runSteps(t, c, out, warning, []step{
		{"start", func(*testing.T) {}, 1, 0},
		{"certificate half written", func(t *testing.T) { write(t, paths["client.pem"], second.CertPEM[:len(second.CertPEM)/2]) }, 2, 1},
		{"certificate written, key still the old one", func(t *testing.T) { write(t, paths["client.pem"], second.CertPEM) }, 2, 2},
		{"key half written", func(t *testing.T) { write(t, paths["client-key.pem"], second.KeyPEM[:len(second.KeyPEM)/2]) }, 2, 3},
		{"key written", func(t *testing.T) { write(t, paths["client-key.pem"], second.KeyPEM); p.wantNames("provider-2") }, 2, 3},
		{"key deleted", func(t *testing.T) { remove(t, paths["client-key.pem"]) }, 2, 4},
	})
	want := []string{
		"-cert-file: PEM block 1 does not end: the file is cut short or malformed",
		"-cert-file, -key-file: tls: private key does not match public key",
		"-key-file: PEM block 1 does not end: the file is cut short or malformed",
		"-key-file: open " + paths["client-key.pem"] + ": no such file or directory",
	}
	if diff := cmp.Diff(want, problems(out)); diff != "" {
		t.Errorf("problems logged (-want +got):\n%s", diff)
	}
}

// TestHalfWrittenCA: a CA bundle cut in the middle of a certificate leaves
// the last good bundle in use (pem.Decode alone would keep the first
// certificate and drop the rest), and it is logged once.
func TestHalfWrittenCA(t *testing.T) {
	ca := testpki.NewCA(t, "pingnode test CA")
	next := testpki.NewCA(t, "next CA")
	server := startTLS(t, &plugin{}, serverTLS{cert: certOf(ca.Issue(t, testpki.Loopback))})
	paths := files(t, map[string][]byte{"ca.pem": ca.PEM})
	log, out := newLogs()
	c := newClient(t, Config{URL: server.URL + "/status", CAFile: paths["ca.pem"], CAOnly: true, Log: log})
	bundle := append(append([]byte{}, ca.PEM...), next.PEM...)
	runSteps(t, c, out, "cannot reload the CA certificates", []step{
		{"start", func(*testing.T) {}, 1, 0},
		{"bundle half written", func(t *testing.T) { write(t, paths["ca.pem"], bundle[:len(ca.PEM)+len(next.PEM)/2]) }, 2, 1},
		{"bundle written", func(t *testing.T) { write(t, paths["ca.pem"], bundle) }, 2, 1},
	})
	if !c.transport.TLSClientConfig.RootCAs.Equal(poolOf(ca, next)) {
		t.Error("the pool is not that of the whole bundle")
	}
}

func poolOf(cas ...*testpki.CA) *x509.CertPool {
	pool := x509.NewCertPool()
	for _, ca := range cas {
		pool.AddCert(ca.Cert)
	}
	return pool
}

func remove(t *testing.T, path string) {
	t.Helper()
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
}

// problems returns the problems of the warnings logged, in order.
func problems(out *logs) []string {
	var list []string
	for _, line := range strings.Split(out.String(), "\n") {
		if _, problem, ok := strings.Cut(line, ` problem="`); ok && strings.Contains(line, "level=WARN") {
			list = append(list, strings.TrimSuffix(strings.ReplaceAll(problem, `\"`, `"`), `"`))
		}
	}
	return list
}
