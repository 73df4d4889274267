package kubeletapi

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/pingnode/pingnode/examples/internal/podapi"
)

func TestServeStopsAtContextEnd(t *testing.T) {
	cert, err := SelfSigned([]string{"127.0.0.1"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	pr, pw := io.Pipe()
	defer func() { _ = pw.Close() }()
	ctxs := make(chan context.Context, 1)
	h := Handler(func(ctx context.Context, _, _, _ string, _ podapi.LogOptions) (io.ReadCloser, error) {
		ctxs <- ctx
		return pr, nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, l, ServerTLS(cert, nil), h, nil) }()

	roots := x509.NewCertPool()
	roots.AddCert(cert.Leaf)
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}}}
	reqCtx, reqCancel := context.WithTimeout(context.Background(), waitLimit)
	defer reqCancel()
	req, err := http.NewRequestWithContext(reqCtx, http.MethodGet, "https://"+l.Addr().String()+"/containerLogs/ns/pod/c?follow=true", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	logsCtx := <-ctxs

	cancel()
	timer := time.NewTimer(waitLimit)
	defer timer.Stop()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve: %v, want nil", err)
		}
	case <-timer.C:
		t.Fatal("Serve still runs after its context ended")
	}
	select {
	case <-logsCtx.Done():
	case <-timer.C:
		t.Fatal("a followed log's context is live after Serve stopped")
	}
	if _, err := io.ReadAll(resp.Body); err == nil {
		t.Error("a followed log ended whole when Serve stopped; want a cut connection")
	}
	if conn, err := net.Dial("tcp", l.Addr().String()); err == nil {
		_ = conn.Close()
		t.Error("the listener still accepts after Serve stopped")
	}
}

func TestServeRefusesNoTLS(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	if err := Serve(context.Background(), l, nil, Handler(nil), nil); err == nil {
		t.Error("Serve without TLS: nil error")
	}
}
