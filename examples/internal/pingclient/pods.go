package pingclient

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"unicode"

	corev1 "k8s.io/api/core/v1"

	"github.com/pingnode/pingnode/examples/internal/podapi"
)

// The most bytes read of an answer of the pod API: the statuses of many
// pods can be large; the other answers are small. Of an answer other
// than 200, maxWords bytes are kept, the plugin's words.
const (
	maxStatusAnswer = 8 << 20
	maxAnswer       = 1 << 20
	maxWords        = 512
)

// CallError is the failure of a call to the plugin's pod API
// ([Client.Create], [Client.Status], [Client.Delete]). Its message is
// the method, the API path and what went wrong, in the words of
// [failure.Of] ("POST /create: HTTP 504 Gateway Timeout"), then the
// plugin's own words when it answered with an error (the body of its
// answer, at most 512 bytes of it, on one line: interLink's Slurm plugin
// answers sbatch's stderr); it never holds the URL nor the token.
type CallError struct {
	// Method and Path are the call's: "POST" and [podapi.CreatePath],
	// "GET" and [podapi.StatusPath], or "POST" and [podapi.DeletePath].
	// Path is the API's, whatever path the plugin's URL puts before it.
	Method, Path string
	// Code is the HTTP status code of the answer: 0 when none came (a
	// transport error, a timeout); 200 when the answer came but could
	// not be read or decoded.
	Code int

	words  string
	answer string // the plugin's words, for an answer other than 200
	err    error  // what went wrong, without the URL; nil for a status code
	// wrote says that the request was sent whole: whatever happened
	// after was the plugin's, or the way to it.
	wrote bool
}

func (e *CallError) Error() string {
	if e.answer != "" {
		return e.Method + " " + e.Path + ": " + e.words + ": " + e.answer
	}
	return e.Method + " " + e.Path + ": " + e.words
}

// Words returns what the plugin answered, when it answered with an
// error: the body of its answer, at most 512 bytes of it, on one line;
// "" otherwise.
func (e *CallError) Words() string { return e.answer }

// Reached reports whether the request reached the plugin: it was sent
// whole, and then answered with an error, or cut, or not answered in
// time. A call that did not reach it (the connection refused, the name
// not resolved) failed for every pod alike; one that did may have
// failed for what it asked about.
func (e *CallError) Reached() bool { return e.Code != 0 || e.wrote }

// Answered reports whether the plugin answered the call: an answer came
// (Code is not 0), whatever it says. An answer with an error may still
// come after the work was done (interLink's Slurm plugin answers 504 to
// a create whose sbatch made the job and warned), and so may no answer.
func (e *CallError) Answered() bool { return e.Code != 0 }

// Unserved reports whether the plugin serves no such call: it answered
// 404 Not Found, 405 Method Not Allowed or 501 Not Implemented, as a
// plugin of the ping alone answers a pod call. Such a call did nothing.
func (e *CallError) Unserved() bool {
	return e.Code == http.StatusNotFound || e.Code == http.StatusMethodNotAllowed || e.Code == http.StatusNotImplemented
}

// Unwrap returns the error of the request or of its answer, nil for an
// answer other than 200.
func (e *CallError) Unwrap() error { return e.err }

// Create asks the plugin to create the job of one pod: POST, to the
// sibling "create" of the ping's path, req as one JSON object, as
// interLink sends it. The plugin must answer 200 with one
// [podapi.Created]; an older plugin's list of them is read too, and list
// reports that it was one ([podapi.DecodeCreated]). Create is not safe to
// repeat: interLink's Slurm plugin makes a second job for a second create
// of the same pod, so a caller whose create failed asks the plugin's
// status before it creates again. A failure is a [*CallError].
func (c *Client) Create(ctx context.Context, req podapi.CreateRequest) (created podapi.Created, list bool, err error) {
	var answer json.RawMessage
	if err := c.call(ctx, http.MethodPost, podapi.CreatePath, req, &answer, maxAnswer); err != nil {
		return podapi.Created{}, false, err
	}
	created, list, err = podapi.DecodeCreated(answer, req.Pod.UID)
	if err != nil {
		return podapi.Created{}, list, &CallError{Method: http.MethodPost, Path: podapi.CreatePath, Code: http.StatusOK, words: "cannot read the answer: " + err.Error(), err: err}
	}
	return created, list, nil
}

// Status asks the plugin what its backend says of pods: GET, to the
// sibling "status" of the ping's path, a JSON list of the whole pods, as
// interLink sends them (a plugin answers one status for each container
// of the pod it was sent, and none for a pod sent without them). The
// plugin must answer 200 with a JSON list of [podapi.PodStatus]; a pod
// its backend has no job of is left out, or answered with containers of
// an empty state. No pods (nil entries are skipped) is nothing to ask:
// Status returns nil without a request, since an empty list is the
// ping. A failure is a [*CallError].
func (c *Client) Status(ctx context.Context, pods []*corev1.Pod) ([]podapi.PodStatus, error) {
	asked := make([]*corev1.Pod, 0, len(pods))
	for _, pod := range pods {
		if pod != nil {
			asked = append(asked, pod)
		}
	}
	if len(asked) == 0 {
		return nil, nil
	}
	var statuses []podapi.PodStatus
	if err := c.call(ctx, http.MethodGet, podapi.StatusPath, asked, &statuses, maxStatusAnswer); err != nil {
		return nil, err
	}
	return statuses, nil
}

// Delete asks the plugin to delete the job of a pod: POST, to the sibling
// "delete" of the ping's path, the pod as JSON. The plugin must answer
// 200. Ask it only for a pod whose job the caller knows to exist, once:
// interLink's Slurm plugin gives no answer at all to the delete of a pod
// it does not know. A failure is a [*CallError]; a nil pod is an error
// without a request.
func (c *Client) Delete(ctx context.Context, pod *corev1.Pod) error {
	if pod == nil {
		return errors.New("delete: no pod")
	}
	return c.call(ctx, http.MethodPost, podapi.DeletePath, pod, nil, maxAnswer)
}

// call sends in as JSON with method to the API path beside the ping's,
// with the ping's transport and token and the timeout of a call, and
// decodes the answer into out, unless out is nil. It reads at most limit
// bytes of the answer.
func (c *Client) call(ctx context.Context, method, path string, in, out any, limit int64) error {
	var wrote atomic.Bool
	fail := func(code int, words string, answer []byte, err error) error {
		return &CallError{Method: method, Path: path, Code: code, words: words, answer: oneLine(answer), err: err, wrote: wrote.Load()}
	}
	body, err := json.Marshal(in)
	if err != nil {
		return fail(0, "cannot encode the request: "+err.Error(), nil, err)
	}
	target, err := sibling(c.request, path)
	if err != nil { // the URL passed Validate
		return fail(0, err.Error(), nil, err)
	}
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{WroteRequest: func(i httptrace.WroteRequestInfo) { wrote.Store(i.Err == nil) }})
	answer, code, words, err := c.exchange(ctx, c.callTimeout, method, target, body, limit+1)
	if err != nil || code != http.StatusOK {
		return fail(code, words, answer, err)
	}
	if int64(len(answer)) > limit {
		return fail(code, "answer larger than "+strconv.FormatInt(limit>>20, 10)+" MiB", nil, nil)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(answer, out); err != nil {
		return fail(code, "cannot decode the answer: "+err.Error(), nil, err)
	}
	return nil
}

// oneLine is a plugin's words on one line: its white space runs, line
// breaks among them, made one space, and what is not printable dropped.
func oneLine(answer []byte) string {
	return strings.Join(strings.FieldsFunc(strings.ToValidUTF8(string(answer), ""), func(r rune) bool {
		return unicode.IsSpace(r) || !unicode.IsPrint(r)
	}), " ")
}

// sibling returns the URL of the API path beside the ping's URL: the
// last element of its path replaced by the API path's, its query kept
// (http://h:4000/status to http://h:4000/create, http://h/api/v1/status
// to http://h/api/v1/create). The error never holds the URL.
func sibling(ping, path string) (string, error) {
	u, err := url.Parse(ping)
	if err != nil {
		return "", errors.New("the plugin URL is not a URL")
	}
	p := u.EscapedPath()
	p = p[:strings.LastIndex(p, "/")+1] + strings.TrimPrefix(path, "/")
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	if u.Path, err = url.PathUnescape(p); err != nil {
		return "", errors.New("the plugin URL's path is not escaped well")
	}
	u.RawPath = p
	return u.String(), nil
}

// withoutURL returns the error inside a *url.Error, whose message holds
// the URL.
func withoutURL(err error) error {
	if urlErr, ok := errors.AsType[*url.Error](err); ok {
		return urlErr.Err
	}
	return err
}
