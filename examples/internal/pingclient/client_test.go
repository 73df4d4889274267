package pingclient

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/pingnode/pingnode/pingstatus"
)

func TestPing(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	release := make(chan struct{})
	defer close(release)
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(`{"status":"ok"}`)) })
	mux.HandleFunc("/500", func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "<html>stack trace at 0xdeadbeef</html>", http.StatusInternalServerError)
	})
	mux.HandleFunc("/hang", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	mux.HandleFunc("/huge", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(strings.Repeat("x", 3*pingstatus.DefaultMaxBodyBytes)))
	})
	mux.HandleFunc("/cut", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Length", "100")
		_, _ = w.Write([]byte(`{"status":`))
	})
	server := httptest.NewServer(mux)
	defer server.Close()
	closed := httptest.NewServer(mux)
	closedURL := closed.URL
	closed.Close()

	tests := []struct {
		name, url       string
		wantFailure     string
		wantBody        string
		wantBodyLen     int
		failurePrefixed bool
	}{
		{name: "answered", url: server.URL + "/ok", wantBody: `{"status":"ok"}`},
		{name: "not 200: the status, never the body", url: server.URL + "/500", wantFailure: "HTTP 500 Internal Server Error"},
		{name: "hangs past the timeout", url: server.URL + "/hang", wantFailure: "timeout after 200ms"},
		{name: "refused", url: closedURL + "/ok", wantFailure: "connection refused"},
		{name: "oversized: one byte past the limit, for Parse to refuse", url: server.URL + "/huge", wantBodyLen: pingstatus.DefaultMaxBodyBytes + 1},
		{name: "cut short", url: server.URL + "/cut", wantFailure: "reading the reply: connection closed before the reply ended"},
		{name: "bad URL", url: "http://[::1", wantFailure: "bad plugin URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &Client{URL: tt.url, Timeout: 200 * time.Millisecond, Now: func() time.Time { return at }}
			got := c.Ping(context.Background())
			if !got.At.Equal(at) {
				t.Errorf("At = %v, want %v", got.At, at)
			}
			if got.Failure != tt.wantFailure {
				t.Errorf("Failure = %q, want %q", got.Failure, tt.wantFailure)
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

// TestFailureHasNoURL: a URL may carry a token; a failure that goes onto
// the node must not.
func TestFailureHasNoURL(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { // accept and close at once: the client sees a reset or EOF
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			_ = conn.Close()
		}
	}()
	defer func() { _ = l.Close() }()
	c := &Client{URL: "http://" + l.Addr().String() + "/status?token=s3cret", Timeout: time.Second}
	got := c.Ping(context.Background())
	if got.Failure == "" || strings.Contains(got.Failure, "s3cret") || strings.Contains(got.Failure, l.Addr().String()+"/status") {
		t.Errorf("Failure = %q: want a failure without the URL", got.Failure)
	}
}
