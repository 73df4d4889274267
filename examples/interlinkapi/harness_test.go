package main

import (
	"bytes"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// call is what the fake sidecar received.
type call struct {
	Method, Path, ContentType, Session, Authorization string
	Body                                              string
}

// fakeSidecar records every call, then answers it with reply.
type fakeSidecar struct {
	URL   string
	mu    sync.Mutex
	calls []call
}

// newSidecar starts a fake sidecar answering with reply.
func newSidecar(t *testing.T, reply http.HandlerFunc) *fakeSidecar {
	t.Helper()
	s := &fakeSidecar{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			t.Errorf("sidecar: %v", err)
		}
		s.mu.Lock()
		s.calls = append(s.calls, call{r.Method, r.URL.Path, r.Header.Get("Content-Type"), r.Header.Get(sessionHeader), r.Header.Get("Authorization"), string(body)})
		s.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body))
		reply(w, r)
	}))
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

// take returns the calls received since the last take.
func (s *fakeSidecar) take() []call {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.calls
	s.calls = nil
	return c
}

// replyWith answers every call with code and body.
func replyWith(code int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(code)
		_, _ = io.WriteString(w, body)
	}
}

// syncBuffer is a log that tests read while servers write it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// newDouble starts the API in front of the sidecar at base, with the
// response-header timeout timeout, and returns its URL and its log.
func newDouble(t *testing.T, base string, timeout time.Duration) (string, *syncBuffer) {
	t.Helper()
	logs := &syncBuffer{}
	srv := httptest.NewServer(newAPI(base, newClient(timeout), log.New(logs, "", 0)).routes())
	t.Cleanup(srv.Close)
	return srv.URL, logs
}

// answer is what the double answered.
type answer struct {
	Code        int
	ContentType string
	Body        string
}

// do sends body to url with method and the headers of kv (name, value,
// ...), and returns the answer.
func do(t *testing.T, method, url, body string, kv ...string) answer {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(kv); i += 2 {
		req.Header.Set(kv[i], kv[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return answer{resp.StatusCode, resp.Header.Get("Content-Type"), string(got)}
}

// closedURL returns the URL of a server that no longer listens.
func closedURL(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.NotFoundHandler())
	srv.Close()
	return srv.URL
}
