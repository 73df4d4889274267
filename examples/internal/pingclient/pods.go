package pingclient

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/pingnode/pingnode/examples/internal/podapi"
)

// The most bytes read of an answer of the pod API: the statuses of many
// pods can be large; the other answers are small.
const (
	maxStatusAnswer = 8 << 20
	maxAnswer       = 1 << 20
)

// CallError is the failure of a call to the plugin's pod API
// ([Client.Create], [Client.Status], [Client.Delete]). Its message is
// the method, the API path and what went wrong, in the words of
// [failure.Of] ("POST /create: HTTP 500 Internal Server Error"); it
// never holds the URL, the token nor the answer's body.
type CallError struct {
	// Method and Path are the call's: "POST" and [podapi.CreatePath],
	// "GET" and [podapi.StatusPath], or "POST" and [podapi.DeletePath].
	// Path is the API's, whatever path the plugin's URL puts before it.
	Method, Path string
	// Code is the HTTP status code of the answer: 0 when none came (a
	// transport error, a timeout); 200 when the answer came but could
	// not be read or decoded.
	Code int

	words string
	err   error // what went wrong, without the URL; nil for a status code
}

func (e *CallError) Error() string { return e.Method + " " + e.Path + ": " + e.words }

// Unwrap returns the error of the request or of its answer, nil for an
// answer other than 200.
func (e *CallError) Unwrap() error { return e.err }

// Create asks the plugin to create pods: POST, to the sibling "create" of
// the ping's path, a JSON list of reqs. The plugin must answer 200 with a
// JSON list of [podapi.Created], one for each pod it created. Create is
// safe to repeat, after a failure or an answer that was lost: a backend
// creates a pod once by its UID, and answers a second create as the
// first. No reqs is nothing to create: Create returns nil without a
// request. A failure is a [*CallError].
func (c *Client) Create(ctx context.Context, reqs []podapi.CreateRequest) ([]podapi.Created, error) {
	if len(reqs) == 0 {
		return nil, nil
	}
	var created []podapi.Created
	if err := c.call(ctx, http.MethodPost, podapi.CreatePath, reqs, &created, maxAnswer); err != nil {
		return nil, err
	}
	return created, nil
}

// Status asks the plugin what its backend says of pods: GET, to the
// sibling "status" of the ping's path, a JSON list of the pods, each
// trimmed to what the plugin reads (its name, namespace and UID, and the
// node it is bound to), to keep the request small. The plugin must answer
// 200 with a JSON list of [podapi.PodStatus], one for each pod its
// backend has; a pod it does not have is left out. No pods (nil entries
// are skipped) is nothing to ask: Status returns nil without a request,
// since an empty list would be a ping. A failure is a [*CallError].
func (c *Client) Status(ctx context.Context, pods []*corev1.Pod) ([]podapi.PodStatus, error) {
	trimmed := make([]corev1.Pod, 0, len(pods))
	for _, pod := range pods {
		if pod != nil {
			trimmed = append(trimmed, trimPod(pod))
		}
	}
	if len(trimmed) == 0 {
		return nil, nil
	}
	var statuses []podapi.PodStatus
	if err := c.call(ctx, http.MethodGet, podapi.StatusPath, trimmed, &statuses, maxStatusAnswer); err != nil {
		return nil, err
	}
	return statuses, nil
}

// trimPod returns what the plugin reads of a pod for its status.
func trimPod(pod *corev1.Pod) corev1.Pod {
	var t corev1.Pod
	t.Name, t.Namespace, t.UID = pod.Name, pod.Namespace, pod.UID
	t.Spec.NodeName = pod.Spec.NodeName
	return t
}

// Delete asks the plugin to delete a pod: POST, to the sibling "delete"
// of the ping's path, the pod as JSON. The plugin must answer 200,
// whether or not its backend had the pod; Delete is safe to repeat. A
// failure is a [*CallError]; a nil pod is an error without a request.
func (c *Client) Delete(ctx context.Context, pod *corev1.Pod) error {
	if pod == nil {
		return errors.New("delete: no pod")
	}
	return c.call(ctx, http.MethodPost, podapi.DeletePath, pod, nil, maxAnswer)
}

// call sends in as JSON with method to the API path beside the ping's,
// with the ping's transport, token and timeout, and decodes the answer
// into out, unless out is nil. It reads at most limit bytes of the
// answer.
func (c *Client) call(ctx context.Context, method, path string, in, out any, limit int64) error {
	fail := func(code int, words string, err error) error {
		return &CallError{Method: method, Path: path, Code: code, words: words, err: err}
	}
	body, err := json.Marshal(in)
	if err != nil {
		return fail(0, "cannot encode the request: "+err.Error(), err)
	}
	target, err := sibling(c.request, path)
	if err != nil { // the URL passed Validate
		return fail(0, err.Error(), err)
	}
	answer, code, words, err := c.exchange(ctx, method, target, body, limit+1)
	if err != nil || code != http.StatusOK {
		return fail(code, words, err)
	}
	if int64(len(answer)) > limit {
		return fail(code, "answer larger than "+strconv.FormatInt(limit>>20, 10)+" MiB", nil)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(answer, out); err != nil {
		return fail(code, "cannot decode the answer: "+err.Error(), err)
	}
	return nil
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
