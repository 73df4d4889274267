package pingclient

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pingnode/pingnode/examples/internal/podapi"
)

// tailFive is the request of logs.request.json, kubectl logs --tail 5.
var tailFive = decoded[podapi.LogRequest](fixture("logs.request.json"))

// TestLogs: Logs sends the bytes of interLink's wire (logs.request.json)
// with GET to the sibling getLogs of the ping's path, as JSON with the
// token, and returns the answer's body as it came.
func TestLogs(t *testing.T) {
	const token, log = "s3cret-token-0123456789", "hello\nbye\n"
	p := &podPlugin{}
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.ServeHTTP(httptest.NewRecorder(), r) // records it
		w.Header().Set("Content-Type", "text/plain")
		_, _ = io.WriteString(w, log)
	}))
	defer server.Close()
	paths := files(t, map[string][]byte{"token": []byte(token + "\n")})
	quiet, _ := newLogs()
	c := newClient(t, Config{URL: server.URL + "/api/v1/status", TokenFile: paths["token"], Log: quiet})
	body, err := c.Logs(context.Background(), tailFive)
	if err != nil {
		t.Fatalf("Logs: %v", err)
	}
	got, err := io.ReadAll(body)
	_ = body.Close()
	if err != nil || string(got) != log {
		t.Errorf("the log: %q, %v; want %q", got, err, log)
	}
	want := []podRequest{{http.MethodGet, "/api/v1/getLogs", "Bearer " + token, "application/json", bytes.TrimSuffix(fixture("logs.request.json"), []byte("\n"))}}
	if diff := cmp.Diff(want, p.requests()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

// TestLogsTimeouts: the call timeout bounds the wait for the headers of
// a log without Follow, and nothing of a log with it; a body read past
// the call timeout is read whole either way, as a kubelet copies a long
// log or kubectl logs -f.
func TestLogsTimeouts(t *testing.T) {
	const timeout = 100 * time.Millisecond
	// slowHeaders answers after 3 call timeouts; slowBody answers at
	// once, and writes its second line after 3 call timeouts.
	slowHeaders := func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body) // then the server sees the client go
		select {
		case <-time.After(3 * timeout):
		case <-r.Context().Done():
			return
		}
		_, _ = io.WriteString(w, "a\nb\n")
	}
	slowBody := func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "a\n")
		w.(http.Flusher).Flush()
		time.Sleep(3 * timeout)
		_, _ = io.WriteString(w, "b\n")
	}
	for _, tt := range []struct {
		name    string
		handler http.HandlerFunc
		follow  bool
		want    string // the log, or the error
	}{
		{"slow headers", slowHeaders, false, "GET /getLogs: timeout after 100ms"},
		{"slow headers, following", slowHeaders, true, "a\nb\n"},
		{"slow body", slowBody, false, "a\nb\n"},
		{"slow body, following", slowBody, true, "a\nb\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			server := httptest.NewServer(tt.handler)
			defer server.Close()
			c := newClient(t, Config{URL: server.URL + "/status", CallTimeout: timeout})
			req := tailFive
			req.Opts.Follow = tt.follow
			body, err := c.Logs(context.Background(), req)
			if err != nil {
				if diff := cmp.Diff(tt.want, err.Error()); diff != "" {
					t.Errorf("error (-want +got):\n%s", diff)
				}
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("error %v: not a deadline", err)
				}
				return
			}
			defer func() { _ = body.Close() }()
			got, err := io.ReadAll(body)
			if diff := cmp.Diff(tt.want, string(got)); diff != "" || err != nil {
				t.Errorf("the log, %v (-want +got):\n%s", err, diff)
			}
		})
	}
}

// TestLogsFailures: an answer other than 200 is a *CallError with the
// plugin's words on one line, the token replaced, Unserved for a
// plugin without getLogs; a caller that gives up is "canceled".
func TestLogsFailures(t *testing.T) {
	const secret = "s3cret-0123456789"
	for _, tt := range []struct {
		name     string
		handler  http.HandlerFunc
		want     string
		code     int
		unserved bool
	}{
		{"500", func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "could not read\n"+secret, http.StatusInternalServerError)
		}, "GET /getLogs: HTTP 500 Internal Server Error: could not read [token]", 500, false},
		{"no such call", http.NotFound, "GET /getLogs: HTTP 404 Not Found: 404 page not found", 404, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			server := httptest.NewServer(tt.handler)
			defer server.Close()
			paths := files(t, map[string][]byte{"token": []byte(secret)})
			quiet, _ := newLogs()
			c := newClient(t, Config{URL: server.URL + "/status", TokenFile: paths["token"], Log: quiet})
			_, err := c.Logs(context.Background(), tailFive)
			callErr, ok := errors.AsType[*CallError](err)
			if !ok || callErr.Code != tt.code || callErr.Unserved() != tt.unserved || err.Error() != tt.want {
				t.Errorf("Logs: %v (%#v); want a *CallError %q, code %d, unserved %v", err, err, tt.want, tt.code, tt.unserved)
			}
			if strings.Contains(fmt.Sprint(err), server.URL) {
				t.Errorf("the URL in the error: %v", err)
			}
		})
	}
	t.Run("the caller gives up", func(t *testing.T) {
		server := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body) // then the server sees the client go
			<-r.Context().Done()
		}))
		defer server.Close()
		c := newClient(t, Config{URL: server.URL + "/status"})
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		req := tailFive
		req.Opts.Follow = true
		if _, err := c.Logs(ctx, req); err == nil || err.Error() != "GET /getLogs: timeout" {
			t.Errorf("Logs past the caller's deadline: %v; want GET /getLogs: timeout", err)
		}
	})
}

// TestLogsClose: closing a followed log before its end ends the request:
// the plugin sees its client go.
func TestLogsClose(t *testing.T) {
	gone := make(chan struct{})
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body) // then the server sees the client go
		_, _ = io.WriteString(w, "a\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		close(gone)
	}))
	defer server.Close()
	c := newClient(t, Config{URL: server.URL + "/status"})
	req := tailFive
	req.Opts.Follow = true
	body, err := c.Logs(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	line := make([]byte, 2)
	if _, err := io.ReadFull(body, line); err != nil || string(line) != "a\n" {
		t.Fatalf("the first line: %q, %v", line, err)
	}
	_ = body.Close()
	select {
	case <-gone:
	case <-time.After(5 * time.Second):
		t.Fatal("the plugin did not see its client go within 5s of Close")
	}
}
