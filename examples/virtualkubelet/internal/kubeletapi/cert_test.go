package kubeletapi

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/pingnode/pingnode/internal/testpki"
)

var now = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func TestSelfSigned(t *testing.T) {
	cert, err := SelfSigned([]string{"10.0.0.7", "vk-node-1.example"}, now)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	key, ok := leaf.PublicKey.(*ecdsa.PublicKey)
	if !ok || key.Curve != elliptic.P256() {
		t.Errorf("public key %T, want ECDSA P-256", leaf.PublicKey)
	}
	if want := now.Add(-time.Hour); !leaf.NotBefore.Equal(want) {
		t.Errorf("NotBefore %v, want %v", leaf.NotBefore, want)
	}
	if want := now.Add(-time.Hour).Add(365 * 24 * time.Hour); !leaf.NotAfter.Equal(want) {
		t.Errorf("NotAfter %v, want %v", leaf.NotAfter, want)
	}
	if want := "10.0.0.7@1767323045"; leaf.Subject.CommonName != want {
		t.Errorf("common name %q, want %q", leaf.Subject.CommonName, want)
	}
	roots := x509.NewCertPool()
	roots.AddCert(leaf)
	tests := []struct {
		host string
		ok   bool
	}{
		{"10.0.0.7", true},
		{"vk-node-1.example", true},
		{"10.0.0.8", false},
		{"vk-node-2.example", false},
	}
	for _, tt := range tests {
		t.Run(tt.host, func(t *testing.T) {
			_, err := leaf.Verify(x509.VerifyOptions{
				DNSName:     tt.host,
				Roots:       roots,
				CurrentTime: now,
				KeyUsages:   []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
			})
			if (err == nil) != tt.ok {
				t.Errorf("Verify for %s: %v, want ok %v", tt.host, err, tt.ok)
			}
		})
	}
	if _, err := leaf.Verify(x509.VerifyOptions{
		DNSName: "10.0.0.7", Roots: roots, CurrentTime: now.Add(366 * 24 * time.Hour),
	}); err == nil {
		t.Error("Verify after a year: ok, want expired")
	}
}

func TestSelfSignedRefuses(t *testing.T) {
	for _, hosts := range [][]string{nil, {""}, {"node", ""}} {
		if _, err := SelfSigned(hosts, now); err == nil {
			t.Errorf("SelfSigned(%q): no error", hosts)
		}
	}
}

// serve runs Serve with clientCA on a local port until the test ends,
// and returns its address and the server's certificate as a pool.
func serve(t *testing.T, clientCA *x509.CertPool) (string, *x509.CertPool) {
	t.Helper()
	cert, err := SelfSigned([]string{"127.0.0.1"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, l, ServerTLS(cert, clientCA), Handler(nil), log.New(io.Discard, "", 0)) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	roots := x509.NewCertPool()
	roots.AddCert(cert.Leaf)
	return l.Addr().String(), roots
}

// healthz asks /healthz at addr with tlsConfig, and returns the error.
func healthz(addr string, tlsConfig *tls.Config) error {
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: tlsConfig}, Timeout: waitLimit}
	defer c.CloseIdleConnections()
	resp, err := c.Get("https://" + addr + "/healthz")
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK || string(body) != "ok" {
		return errors.New(resp.Status + ": " + string(body))
	}
	return nil
}

func TestServerTLSClientCA(t *testing.T) {
	ca, other := testpki.NewCA(t, "apiserver-kubelet-client-ca"), testpki.NewCA(t, "other-ca")
	client := func(ca *testpki.CA) tls.Certificate {
		return ca.Issue(t, testpki.Options{CommonName: "kube-apiserver", Client: true}).Certificate
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	addr, roots := serve(t, pool)
	tests := []struct {
		name  string
		certs []tls.Certificate
		ok    bool
	}{
		{name: "no certificate", certs: nil, ok: false},
		{name: "signed by another CA", certs: []tls.Certificate{client(other)}, ok: false},
		{name: "signed by the client CA", certs: []tls.Certificate{client(ca)}, ok: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := healthz(addr, &tls.Config{RootCAs: roots, Certificates: tt.certs, MinVersion: tls.VersionTLS12})
			if (err == nil) != tt.ok {
				t.Errorf("healthz: %v, want ok %v", err, tt.ok)
			}
		})
	}
}

func TestServerTLSNoClientCA(t *testing.T) {
	addr, roots := serve(t, nil)
	if err := healthz(addr, &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}); err != nil {
		t.Errorf("healthz without a client certificate: %v", err)
	}
	err := healthz(addr, &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS10, MaxVersion: tls.VersionTLS11})
	if err == nil {
		t.Error("healthz over TLS 1.1: ok, want refused")
	}
}

func TestServerTLSConfig(t *testing.T) {
	pool := x509.NewCertPool()
	if c := ServerTLS(tls.Certificate{}, pool); c.ClientAuth != tls.RequireAndVerifyClientCert || c.ClientCAs != pool {
		t.Errorf("with a client CA: ClientAuth %v, ClientCAs %p; want RequireAndVerifyClientCert, %p", c.ClientAuth, c.ClientCAs, pool)
	}
	if c := ServerTLS(tls.Certificate{}, nil); c.ClientAuth != tls.NoClientCert || c.MinVersion != tls.VersionTLS12 {
		t.Errorf("without one: ClientAuth %v, MinVersion %x; want NoClientCert, TLS 1.2", c.ClientAuth, c.MinVersion)
	}
}
