package main

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"
)

// TestPluginPing: a ping sends GET with the body [] as JSON, as
// interLink's API does, over HTTP or a Unix socket, and takes the reply
// whole; an answer other than 200, or one too slow, is a failure in
// words that hold neither the URL nor the body.
func TestPluginPing(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body := make([]byte, 8)
		n, _ := r.Body.Read(body)
		switch {
		case r.Method != http.MethodGet || r.URL.Path != "/status" || string(body[:n]) != "[]" || r.Header.Get("Content-Type") != "application/json":
			http.Error(w, "not a ping", http.StatusBadRequest)
		case r.URL.Query().Has("slow"):
			time.Sleep(300 * time.Millisecond)
		case r.URL.Query().Has("down"):
			http.Error(w, "secret words", http.StatusServiceUnavailable)
		default:
			_, _ = w.Write([]byte(`{"resources":{"cpu":"64"}}`))
		}
	})
	server := httptest.NewServer(handler)
	defer server.Close()
	socket := filepath.Join(t.TempDir(), "plugin.sock")
	l, err := net.Listen("unix", socket)
	if err != nil {
		t.Fatal(err)
	}
	unix := &http.Server{Handler: handler, ReadHeaderTimeout: time.Second}
	go func() { _ = unix.Serve(l) }()
	defer func() { _ = unix.Close() }()

	tests := []struct {
		name, url, body, failure string
	}{
		{"http", server.URL + "/status", `{"resources":{"cpu":"64"}}`, ""},
		{"unix", "unix://" + socket, `{"resources":{"cpu":"64"}}`, ""},
		{"down", server.URL + "/status?down", "", "HTTP 503 Service Unavailable"},
		{"slow", server.URL + "/status?slow", "", "timeout after 100ms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := newPlugin(tt.url, 100*time.Millisecond, func() time.Time { return t0 })
			if err != nil {
				t.Fatal(err)
			}
			ping := p.ping(context.Background())
			if string(ping.Body) != tt.body || ping.Failure != tt.failure || !ping.At.Equal(t0) {
				t.Errorf("ping: body %q, failure %q, at %v; want %q, %q, %v", ping.Body, ping.Failure, ping.At, tt.body, tt.failure, t0)
			}
		})
	}
}
