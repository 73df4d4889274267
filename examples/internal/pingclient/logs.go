package pingclient

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptrace"
	"sync/atomic"
	"time"

	"github.com/pingnode/pingnode/examples/internal/podapi"
	"github.com/pingnode/pingnode/nodeapply/failure"
)

// Logs asks the plugin for the log of one container: GET, to the sibling
// "getLogs" of the ping's path ([podapi.LogsPath]), req as JSON, with the
// ping's transport and token, as interLink's Virtual Kubelet sends it
// (pkg/virtualkubelet/execute.go, LogRetrieval, at f6321757). The plugin
// must answer 200; Logs then returns the answer's body unread, the log as
// plain text, for the caller to read to its end and close (a kubelet
// copies it to kubectl), and closing it early ends the request.
//
// With req.Opts.Follow the answer streams as long as the container runs,
// and nothing bounds the call but ctx: not the call timeout, which
// would cut kubectl logs -f. Without it the call timeout
// ([Config.CallTimeout]) bounds the wait for the answer's headers, and
// ctx alone the reading of its body, which may be long. An answer other
// than 200, a transport error or a timeout is a [*CallError] of "GET"
// and [podapi.LogsPath], as the other calls'; an error in reading the
// body is the transport's, from Read.
func (c *Client) Logs(ctx context.Context, req podapi.LogRequest) (io.ReadCloser, error) {
	const method, path = http.MethodGet, podapi.LogsPath
	var wrote atomic.Bool
	fail := func(code int, words string, answer []byte, err error) error {
		return &CallError{Method: method, Path: path, Code: code, words: words, answer: oneLine(answer), err: err, wrote: wrote.Load()}
	}
	body, err := json.Marshal(req)
	if err != nil { // a LogRequest holds nothing that fails to marshal
		return nil, fail(0, "cannot encode the request: "+err.Error(), nil, err)
	}
	target, err := sibling(c.request, path)
	if err != nil { // the URL passed Validate
		return nil, fail(0, err.Error(), nil, err)
	}
	client, token := c.current()
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	var timedOut atomic.Bool
	var headers *time.Timer // nil with Follow
	if !req.Opts.Follow {
		headers = time.AfterFunc(c.callTimeout, func() { timedOut.Store(true); cancel() })
	}
	// beforeTimeout stops the timer of the headers, and reports whether
	// it had not fired.
	beforeTimeout := func() bool { return headers == nil || headers.Stop() }
	// words are the failure's, a timeout of the call's own said with its
	// length, as exchange says it.
	words := func(code int, err error) (string, error) {
		if timedOut.Load() && parent.Err() == nil {
			return "timeout after " + c.callTimeout.String(), context.DeadlineExceeded
		}
		return failure.Of(code, err), err
	}
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{WroteRequest: func(i httptrace.WroteRequestInfo) { wrote.Store(i.Err == nil) }})
	r, err := http.NewRequestWithContext(ctx, method, target, bytes.NewReader(body))
	if err != nil { // the URL passed Validate
		beforeTimeout()
		cancel()
		return nil, fail(0, "cannot make the request", nil, withoutURL(err))
	}
	r.Header.Set("Content-Type", "application/json")
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(r)
	if err != nil {
		beforeTimeout()
		cancel()
		w, err := words(0, withoutURL(err))
		return nil, fail(0, w, nil, err)
	}
	if !beforeTimeout() { // the headers came as the call timed out
		_ = resp.Body.Close()
		cancel()
		w, err := words(0, context.DeadlineExceeded)
		return nil, fail(0, w, nil, err)
	}
	if resp.StatusCode != http.StatusOK {
		// Keep the plugin's words, and read a little more of the body so
		// that the connection can serve the next request, as exchange
		// does; never the token.
		answer, _ := io.ReadAll(io.LimitReader(resp.Body, maxWords))
		_, _ = io.CopyN(io.Discard, resp.Body, 64<<10)
		_ = resp.Body.Close()
		cancel()
		if token != "" {
			answer = bytes.ReplaceAll(answer, []byte(token), []byte("[token]"))
		}
		return nil, fail(resp.StatusCode, failure.Of(resp.StatusCode, nil), answer, nil)
	}
	return &logStream{ReadCloser: resp.Body, cancel: cancel}, nil
}

// logStream is the body of a log's answer, which ends its request when
// it is closed.
type logStream struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (s *logStream) Close() error {
	err := s.ReadCloser.Close()
	s.cancel()
	return err
}
