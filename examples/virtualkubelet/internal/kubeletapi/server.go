package kubeletapi

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/pingnode/pingnode/examples/internal/podapi"
)

// ErrNotFound is the error a [LogsFunc] wraps when the pod or the
// container is unknown; the answer is then 404 with the error's words.
var ErrNotFound = errors.New("not found")

// LogsFunc opens the log of one container of one pod, asked as opts
// says. ctx is the request's: it is done when the client goes or
// [Serve] stops. The handler closes the stream it returns when the copy
// ends, and also when ctx is done, possibly while a Read is under way,
// so the stream must allow a Close beside a Read (as an io.Pipe, a
// net.Conn and an http.Response.Body do).
type LogsFunc func(ctx context.Context, namespace, pod, container string, opts podapi.LogOptions) (io.ReadCloser, error)

// ReadHeaderTimeout is how long [Serve] waits for a request's headers.
const ReadHeaderTimeout = 10 * time.Second

// IdleTimeout is how long [Serve] keeps an idle connection open, as a
// kubelet does (pkg/kubelet/server/server.go, ListenAndServeKubeletServer).
const IdleTimeout = 90 * time.Second

const logsPrefix = "/containerLogs/"

// Handler serves the log of a container from logs at
// GET /containerLogs/{namespace}/{pod}/{container} and a liveness
// answer at GET /healthz, as the package comment says. A nil logs
// answers every log request 501. A log that stops before its end panics
// with http.ErrAbortHandler, which an http.Server takes as the word to
// cut the connection without logging it.
func Handler(logs LogsFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/healthz" {
			if getOnly(w, r) {
				w.Header().Set("Content-Type", "text/plain; charset=utf-8")
				_, _ = io.WriteString(w, "ok")
			}
			return
		}
		namespace, pod, container, ok := logsPath(r.URL.Path)
		if !ok {
			http.NotFound(w, r)
			return
		}
		if getOnly(w, r) {
			serveLogs(w, r, logs, namespace, pod, container)
		}
	})
}

// getOnly reports whether r is a GET, and answers it 405 otherwise.
func getOnly(w http.ResponseWriter, r *http.Request) bool {
	if r.Method == http.MethodGet {
		return true
	}
	w.Header().Set("Allow", http.MethodGet)
	http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	return false
}

// logsPath splits a path of a log into its three names, and reports
// whether it is one.
func logsPath(path string) (namespace, pod, container string, ok bool) {
	rest, found := strings.CutPrefix(path, logsPrefix)
	if !found {
		return "", "", "", false
	}
	parts := strings.Split(rest, "/")
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
		return "", "", "", false
	}
	return parts[0], parts[1], parts[2], true
}

func serveLogs(w http.ResponseWriter, r *http.Request, logs LogsFunc, namespace, pod, container string) {
	if logs == nil {
		http.Error(w, "container logs are not implemented", http.StatusNotImplemented)
		return
	}
	opts, err := parseLogOptions(r.URL.Query())
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	ctx := r.Context()
	stream, err := logs(ctx, namespace, pod, container, opts)
	switch {
	case errors.Is(err, ErrNotFound):
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	case err != nil:
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	case stream == nil:
		http.Error(w, "the provider returned no log and no error", http.StatusBadGateway)
		return
	}
	var once sync.Once
	closeStream := func() { once.Do(func() { _ = stream.Close() }) }
	stop := context.AfterFunc(ctx, closeStream)
	defer func() {
		stop()
		closeStream()
	}()

	w.Header().Set("Content-Type", "text/plain")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	_ = rc.Flush()
	if !copyFlushing(w, rc, stream) {
		// The log did not reach its end: cut the connection, so that a
		// client still there sees a broken answer, not a whole log.
		panic(http.ErrAbortHandler)
	}
}

// copyFlushing copies stream to w, flushing after each read, until the
// stream ends, a read fails or a write fails. It reports whether the
// stream reached its io.EOF with every byte written.
func copyFlushing(w io.Writer, rc *http.ResponseController, stream io.Reader) bool {
	buf := make([]byte, 32*1024)
	for {
		n, err := stream.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return false
			}
			if rc.Flush() != nil {
				return false
			}
		}
		if err != nil {
			return errors.Is(err, io.EOF)
		}
	}
}

// parseLogOptions reads the query of a log request as the Virtual
// Kubelet library's parseLogOptions does (node/api/logs.go), and refuses
// a stream other than All as a kubelet without PodLogsQuerySplitStreams
// does.
func parseLogOptions(q url.Values) (podapi.LogOptions, error) {
	var opts podapi.LogOptions
	var err error
	if s := q.Get("tailLines"); s != "" {
		if opts.Tail, err = parseInt("tailLines", s); err != nil {
			return opts, err
		}
		if opts.Tail < 0 {
			return opts, fmt.Errorf("%q is %d", "tailLines", opts.Tail)
		}
	}
	if s := q.Get("follow"); s != "" {
		if opts.Follow, err = parseBool("follow", s); err != nil {
			return opts, err
		}
	}
	if s := q.Get("limitBytes"); s != "" {
		if opts.LimitBytes, err = parseInt("limitBytes", s); err != nil {
			return opts, err
		}
		if opts.LimitBytes < 1 {
			return opts, fmt.Errorf("%q is %d", "limitBytes", opts.LimitBytes)
		}
	}
	if s := q.Get("previous"); s != "" {
		if opts.Previous, err = parseBool("previous", s); err != nil {
			return opts, err
		}
	}
	if s := q.Get("sinceSeconds"); s != "" {
		if opts.SinceSeconds, err = parseInt("sinceSeconds", s); err != nil {
			return opts, err
		}
		if opts.SinceSeconds < 1 {
			return opts, fmt.Errorf("%q is %d", "sinceSeconds", opts.SinceSeconds)
		}
	}
	if s := q.Get("sinceTime"); s != "" {
		if opts.SinceTime, err = time.Parse(time.RFC3339, s); err != nil {
			return opts, fmt.Errorf("could not parse %q: %w", "sinceTime", err)
		}
		if opts.SinceSeconds > 0 {
			return opts, fmt.Errorf("both %q and %q are set", "sinceSeconds", "sinceTime")
		}
	}
	if s := q.Get("timestamps"); s != "" {
		if opts.Timestamps, err = parseBool("timestamps", s); err != nil {
			return opts, err
		}
	}
	if s := q.Get("stream"); s != "" && s != corev1.LogStreamAll {
		return opts, fmt.Errorf("%q is %q: only %q is served", "stream", s, corev1.LogStreamAll)
	}
	return opts, nil
}

func parseInt(name, s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("could not parse %q: %w", name, err)
	}
	return n, nil
}

func parseBool(name, s string) (bool, error) {
	b, err := strconv.ParseBool(s)
	if err != nil {
		return false, fmt.Errorf("could not parse %q: %w", name, err)
	}
	return b, nil
}

// Serve serves h on l over TLS with tlsConfig until ctx is done, then
// closes l and every connection, which ends the context of every request
// still served, and returns nil without waiting for their handlers. It
// returns the server's error if serving fails first, and closes l in
// either case. A nil tlsConfig is refused: the kubelet API is HTTPS.
// What the server logs (a client refused at the handshake) goes to
// errorLog; nil, the log package's standard logger.
func Serve(ctx context.Context, l net.Listener, tlsConfig *tls.Config, h http.Handler, errorLog *log.Logger) error {
	if tlsConfig == nil {
		return errors.New("kubeletapi: no TLS configuration")
	}
	srv := &http.Server{
		Handler:           h,
		TLSConfig:         tlsConfig,
		ReadHeaderTimeout: ReadHeaderTimeout,
		IdleTimeout:       IdleTimeout,
		ErrorLog:          errorLog,
	}
	defer func() { _ = l.Close() }()
	stop := context.AfterFunc(ctx, func() { _ = srv.Close() })
	defer stop()
	err := srv.ServeTLS(l, "", "")
	if ctx.Err() != nil && errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}
