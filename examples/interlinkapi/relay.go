package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
)

// sessionHeader is the header with which interLink traces one call from
// its Virtual Kubelet through its API to the sidecar
// (pkg/interlink/api/handler.go, AddSessionContext).
const sessionHeader = "InterLink-Http-Session"

// chunk is the size of the reads with which [sidecar.relay] streams an
// answer, flushing after each (ReqWithError's buffer).
const chunk = 4096

// delivery is what [sidecar.relay] does with the sidecar's 200 answer:
// ReqWithError's respondWithValues and respondWithReturn
// (pkg/interlink/api/handler.go).
type delivery int

const (
	// streamed copies the answer to the caller as it comes
	// (respondWithValues only).
	streamed delivery = iota
	// kept reads the answer whole and returns it; the caller gets only
	// the status (respondWithReturn only).
	kept
)

// sidecar is the plugin behind interLink's API.
type sidecar struct {
	base   string // interLink's SidecarURL:SidecarPort, to which paths are appended
	client *http.Client
}

// newSession returns a session of interLink's form, "Request-" and a
// random UUID (GetSessionContext, for a call that brought none).
func newSession() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never returns an error
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("Request-%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// sessionOf returns the session r brought in its [sessionHeader], or a
// new one (GetSessionContext).
func sessionOf(r *http.Request) string {
	if s := r.Header.Get(sessionHeader); s != "" {
		return s
	}
	return newSession()
}

// call sends body to the sidecar's path with method, as interLink's API
// sends every call, through [sidecar.relay]. interLink makes these
// requests without a context (http.NewRequest), so a caller that hangs up
// does not end them; ctx is context.Background() but for /getLogs.
func (s *sidecar) call(ctx context.Context, w http.ResponseWriter, method, path string, body []byte, session string, a delivery) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, s.base+path, bytes.NewReader(body))
	if err != nil { // the base URL was checked at start
		w.WriteHeader(http.StatusInternalServerError)
		return nil, err
	}
	return s.relay(w, req, session, a)
}

// relay sends req to the sidecar and tells w its answer as ReqWithError
// does (pkg/interlink/api/handler.go):
//
//   - req goes with Content-Type application/json and session in
//     [sessionHeader]; no other header of the caller's goes with it.
//   - A failed exchange (refused, reset, no headers within the client's
//     timeout) is a 500 with no body.
//   - The sidecar's status is written and flushed at once, so the
//     caller's answer has no Content-Type.
//   - An answer other than 200 (201 included) keeps its status, and its
//     body is replaced by "HTTP InterLink session <session>:  call exit
//     status: 500. Body: <body>", HTML-escaped: 500 whatever the status.
//   - A 200 is streamed or kept, as a says.
//
// It returns the kept body, and an error for all but a 200 read whole.
func (s *sidecar) relay(w http.ResponseWriter, req *http.Request, session string, a delivery) ([]byte, error) {
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(sessionHeader, session)
	resp, err := s.client.Do(req)
	if err != nil {
		w.WriteHeader(http.StatusInternalServerError)
		return nil, fmt.Errorf("session %s: %w", session, err)
	}
	defer func() { _ = resp.Body.Close() }()
	w.WriteHeader(resp.StatusCode)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	if resp.StatusCode != http.StatusOK {
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			return nil, fmt.Errorf("session %s: HTTP %d, its body cut: %w", session, resp.StatusCode, err)
		}
		words := fmt.Sprintf("HTTP InterLink session %s:  call exit status: %d. Body: %s", session, http.StatusInternalServerError, body)
		if _, err := io.WriteString(w, html.EscapeString(words)); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%s %s answered HTTP %d: %s", req.Method, req.URL.Path, resp.StatusCode, words)
	}
	if a == kept {
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			return nil, fmt.Errorf("session %s: 200, its body cut: %w", session, err)
		}
		return body, nil
	}
	return nil, stream(w, resp.Body)
}

// stream copies body to w in reads of [chunk] bytes, flushing after each;
// what a read returns with an error other than io.EOF is dropped, as
// ReqWithError drops it.
func stream(w http.ResponseWriter, body io.Reader) error {
	buf := make([]byte, chunk)
	for {
		n, err := body.Read(buf)
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return werr
			}
		}
		if err != nil {
			return nil
		}
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
	}
}
