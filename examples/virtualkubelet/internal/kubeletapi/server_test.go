package kubeletapi

import (
	"bufio"
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

// waitLimit bounds every wait of these tests, so that a missing flush or
// close fails a test instead of hanging it.
const waitLimit = 10 * time.Second

type call struct {
	namespace, pod, container string
	opts                      podapi.LogOptions
}

// recordingLogs returns a LogsFunc that records its call and answers
// "log", and the record.
func recordingLogs() (LogsFunc, *[]call) {
	var calls []call
	return func(_ context.Context, namespace, pod, container string, opts podapi.LogOptions) (io.ReadCloser, error) {
		calls = append(calls, call{namespace, pod, container, opts})
		return io.NopCloser(strings.NewReader("log")), nil
	}, &calls
}

func TestQuery(t *testing.T) {
	since := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		query   string
		want    podapi.LogOptions
		wantErr string // a part of the 400's words; "" for a 200
	}{
		{name: "none", query: ""},
		{name: "tailLines", query: "tailLines=10", want: podapi.LogOptions{Tail: 10}},
		{name: "tailLines zero", query: "tailLines=0", want: podapi.LogOptions{}},
		{name: "tailLines negative", query: "tailLines=-1", wantErr: `"tailLines" is -1`},
		{name: "tailLines not a number", query: "tailLines=ten", wantErr: `could not parse "tailLines"`},
		{name: "limitBytes", query: "limitBytes=500", want: podapi.LogOptions{LimitBytes: 500}},
		{name: "limitBytes zero", query: "limitBytes=0", wantErr: `"limitBytes" is 0`},
		{name: "limitBytes negative", query: "limitBytes=-3", wantErr: `"limitBytes" is -3`},
		{name: "limitBytes not a number", query: "limitBytes=1k", wantErr: `could not parse "limitBytes"`},
		{name: "sinceSeconds", query: "sinceSeconds=30", want: podapi.LogOptions{SinceSeconds: 30}},
		{name: "sinceSeconds zero", query: "sinceSeconds=0", wantErr: `"sinceSeconds" is 0`},
		{name: "sinceSeconds not a number", query: "sinceSeconds=10s", wantErr: `could not parse "sinceSeconds"`},
		{name: "sinceTime", query: "sinceTime=2024-05-01T12:00:00Z", want: podapi.LogOptions{SinceTime: since}},
		{name: "sinceTime not RFC3339", query: "sinceTime=2024-05-01", wantErr: `could not parse "sinceTime"`},
		{name: "sinceTime beside sinceSeconds", query: "sinceTime=2024-05-01T12:00:00Z&sinceSeconds=5", wantErr: `both "sinceSeconds" and "sinceTime" are set`},
		{name: "follow", query: "follow=true", want: podapi.LogOptions{Follow: true}},
		{name: "follow false", query: "follow=false", want: podapi.LogOptions{}},
		{name: "follow not a bool", query: "follow=yes", wantErr: `could not parse "follow"`},
		{name: "previous", query: "previous=1", want: podapi.LogOptions{Previous: true}},
		{name: "previous not a bool", query: "previous=maybe", wantErr: `could not parse "previous"`},
		{name: "timestamps", query: "timestamps=true", want: podapi.LogOptions{Timestamps: true}},
		{name: "timestamps not a bool", query: "timestamps=on", wantErr: `could not parse "timestamps"`},
		{name: "stream All", query: "stream=All", want: podapi.LogOptions{}},
		{name: "stream Stdout", query: "stream=Stdout", wantErr: `"stream" is "Stdout"`},
		{name: "first value counts", query: "tailLines=5&tailLines=-1", want: podapi.LogOptions{Tail: 5}},
		{name: "empty value is absent", query: "tailLines=&follow=", want: podapi.LogOptions{}},
		{name: "unknown parameter ignored", query: "tail=all&container=x", want: podapi.LogOptions{}},
		{
			name:  "all of them, as the API server sends them",
			query: "follow=true&limitBytes=100&previous=true&sinceTime=2024-05-01T12%3A00%3A00Z&tailLines=3&timestamps=true",
			want: podapi.LogOptions{
				Tail: 3, LimitBytes: 100, Timestamps: true, Follow: true, Previous: true, SinceTime: since,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logs, calls := recordingLogs()
			w := httptest.NewRecorder()
			Handler(logs).ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/containerLogs/ns/pod/c?"+tt.query, nil))
			if tt.wantErr != "" {
				if w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), tt.wantErr) {
					t.Errorf("answer %d %q, want 400 with %q", w.Code, w.Body.String(), tt.wantErr)
				}
				if len(*calls) != 0 {
					t.Errorf("LogsFunc called for a refused query: %+v", *calls)
				}
				return
			}
			want := []call{{"ns", "pod", "c", tt.want}}
			if diff := cmp.Diff(want, *calls, cmp.AllowUnexported(call{})); diff != "" {
				t.Errorf("LogsFunc calls (-want +got):\n%s", diff)
			}
			if w.Code != http.StatusOK || w.Body.String() != "log" {
				t.Errorf("answer %d %q, want 200 %q", w.Code, w.Body.String(), "log")
			}
			if got := w.Header().Get("Content-Type"); got != "text/plain" {
				t.Errorf("Content-Type %q, want text/plain", got)
			}
		})
	}
}

func TestRoutes(t *testing.T) {
	tests := []struct {
		name, method, path string
		wantCode           int
		wantBody           string // "" for any
		wantAllow          string
	}{
		{name: "healthz", method: http.MethodGet, path: "/healthz", wantCode: http.StatusOK, wantBody: "ok"},
		{name: "healthz POST", method: http.MethodPost, path: "/healthz", wantCode: http.StatusMethodNotAllowed, wantAllow: "GET"},
		{name: "logs", method: http.MethodGet, path: "/containerLogs/ns/pod/c", wantCode: http.StatusOK, wantBody: "log"},
		{name: "logs POST", method: http.MethodPost, path: "/containerLogs/ns/pod/c", wantCode: http.StatusMethodNotAllowed, wantAllow: "GET"},
		{name: "logs HEAD", method: http.MethodHead, path: "/containerLogs/ns/pod/c", wantCode: http.StatusMethodNotAllowed, wantAllow: "GET"},
		{name: "two names", method: http.MethodGet, path: "/containerLogs/ns/pod", wantCode: http.StatusNotFound},
		{name: "four names", method: http.MethodGet, path: "/containerLogs/ns/pod/c/d", wantCode: http.StatusNotFound},
		{name: "trailing slash", method: http.MethodGet, path: "/containerLogs/ns/pod/c/", wantCode: http.StatusNotFound},
		{name: "empty name", method: http.MethodGet, path: "/containerLogs/ns//c", wantCode: http.StatusNotFound},
		{name: "other path", method: http.MethodGet, path: "/pods", wantCode: http.StatusNotFound},
		{name: "other path POST", method: http.MethodPost, path: "/exec/ns/pod/c", wantCode: http.StatusNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logs, _ := recordingLogs()
			w := httptest.NewRecorder()
			Handler(logs).ServeHTTP(w, httptest.NewRequest(tt.method, tt.path, nil))
			if w.Code != tt.wantCode {
				t.Errorf("status %d, want %d", w.Code, tt.wantCode)
			}
			if tt.wantBody != "" && w.Body.String() != tt.wantBody {
				t.Errorf("body %q, want %q", w.Body.String(), tt.wantBody)
			}
			if got := w.Header().Get("Allow"); got != tt.wantAllow {
				t.Errorf("Allow %q, want %q", got, tt.wantAllow)
			}
		})
	}
}

func TestLogsErrors(t *testing.T) {
	tests := []struct {
		name     string
		logs     LogsFunc
		wantCode int
		wantBody string
	}{
		{
			name: "not found",
			logs: func(_ context.Context, ns, pod, _ string, _ podapi.LogOptions) (io.ReadCloser, error) {
				return nil, fmt.Errorf("pod %s/%s: %w", ns, pod, ErrNotFound)
			},
			wantCode: http.StatusNotFound,
			wantBody: "pod ns/pod: not found",
		},
		{
			name: "plugin error",
			logs: func(context.Context, string, string, string, podapi.LogOptions) (io.ReadCloser, error) {
				return nil, errors.New("plugin answered 500: slurm is down")
			},
			wantCode: http.StatusBadGateway,
			wantBody: "plugin answered 500: slurm is down",
		},
		{
			name: "no stream and no error",
			logs: func(context.Context, string, string, string, podapi.LogOptions) (io.ReadCloser, error) {
				return nil, nil
			},
			wantCode: http.StatusBadGateway,
			wantBody: "the provider returned no log and no error",
		},
		{name: "nil LogsFunc", logs: nil, wantCode: http.StatusNotImplemented, wantBody: "not implemented"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			Handler(tt.logs).ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/containerLogs/ns/pod/c", nil))
			if w.Code != tt.wantCode || !strings.Contains(w.Body.String(), tt.wantBody) {
				t.Errorf("answer %d %q, want %d with %q", w.Code, w.Body.String(), tt.wantCode, tt.wantBody)
			}
		})
	}
}

// pipeServer serves a Handler over TLS whose LogsFunc hands out pr and
// sends its ctx on ctxs.
func pipeServer(t *testing.T, pr io.ReadCloser, ctxs chan<- context.Context) *httptest.Server {
	t.Helper()
	srv := httptest.NewTLSServer(Handler(func(ctx context.Context, _, _, _ string, _ podapi.LogOptions) (io.ReadCloser, error) {
		ctxs <- ctx
		return pr, nil
	}))
	t.Cleanup(srv.Close)
	return srv
}

func get(t *testing.T, ctx context.Context, srv *httptest.Server, path string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func TestFollowFlushesEachRead(t *testing.T) {
	pr, pw := io.Pipe()
	ctxs := make(chan context.Context, 1)
	srv := pipeServer(t, pr, ctxs)
	t.Cleanup(func() { _ = pw.Close() }) // before srv.Close, which waits for the handler
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()

	resp := get(t, ctx, srv, "/containerLogs/ns/pod/c?follow=true")
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d, want 200", resp.StatusCode)
	}
	lines := bufio.NewReader(resp.Body)
	for _, line := range []string{"one\n", "two\n"} {
		// The pipe's Write returns once the handler has read the line;
		// the client can only read it if the handler flushed it.
		if _, err := io.WriteString(pw, line); err != nil {
			t.Fatal(err)
		}
		got, err := lines.ReadString('\n')
		if err != nil {
			t.Fatalf("reading %q before the next is written: %v", line, err)
		}
		if got != line {
			t.Fatalf("read %q, want %q", got, line)
		}
	}
	_ = pw.Close()
	if rest, err := io.ReadAll(lines); err != nil || len(rest) != 0 {
		t.Errorf("after the stream's end: %q, %v; want an empty end", rest, err)
	}
}

// closeRecorder is a stream that says when it is closed.
type closeRecorder struct {
	*io.PipeReader
	closed chan struct{}
}

func (c closeRecorder) Close() error {
	close(c.closed)
	return c.PipeReader.Close()
}

func TestClientGoneCancelsAndCloses(t *testing.T) {
	pr, pw := io.Pipe()
	stream := closeRecorder{PipeReader: pr, closed: make(chan struct{})}
	ctxs := make(chan context.Context, 1)
	srv := pipeServer(t, stream, ctxs)
	t.Cleanup(func() { _ = pw.Close() }) // before srv.Close, which waits for the handler
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()

	resp := get(t, ctx, srv, "/containerLogs/ns/pod/c?follow=true")
	if _, err := io.WriteString(pw, "one\n"); err != nil {
		t.Fatal(err)
	}
	if _, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	logsCtx := <-ctxs
	cancel() // the client goes, with nothing more written
	_ = resp.Body.Close()

	timer := time.NewTimer(waitLimit)
	defer timer.Stop()
	select {
	case <-logsCtx.Done():
	case <-timer.C:
		t.Fatal("the LogsFunc's context is live after the client went")
	}
	select {
	case <-stream.closed:
	case <-timer.C:
		t.Fatal("the stream is open after the client went")
	}
}

// failingStream yields its text, then err.
type failingStream struct {
	r   io.Reader
	err error
}

func (f *failingStream) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if errors.Is(err, io.EOF) {
		return n, f.err
	}
	return n, err
}

func (f *failingStream) Close() error { return nil }

func TestBrokenStreamCutsAnswer(t *testing.T) {
	stream := &failingStream{r: strings.NewReader("one\n"), err: errors.New("plugin went away")}
	ctxs := make(chan context.Context, 1)
	srv := pipeServer(t, stream, ctxs)
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()

	resp := get(t, ctx, srv, "/containerLogs/ns/pod/c")
	defer func() { _ = resp.Body.Close() }()
	got, err := io.ReadAll(resp.Body)
	if err == nil {
		t.Errorf("read a whole answer %q from a broken stream, want an error", got)
	}
	if string(got) != "one\n" {
		t.Errorf("read %q before the cut, want %q", got, "one\n")
	}
}

// closeCounter is a whole log that counts its closes.
type closeCounter struct {
	io.Reader
	closes int
}

func (c *closeCounter) Close() error {
	c.closes++
	return nil
}

func TestStreamClosedOnceAtItsEnd(t *testing.T) {
	stream := &closeCounter{Reader: strings.NewReader("one\ntwo\n")}
	h := Handler(func(context.Context, string, string, string, podapi.LogOptions) (io.ReadCloser, error) {
		return stream, nil
	})
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/containerLogs/ns/pod/c", nil))
	if w.Code != http.StatusOK || w.Body.String() != "one\ntwo\n" {
		t.Errorf("answer %d %q, want 200 %q", w.Code, w.Body.String(), "one\ntwo\n")
	}
	if stream.closes != 1 {
		t.Errorf("stream closed %d times, want 1", stream.closes)
	}
}
