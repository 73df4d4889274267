package pingclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"

	"github.com/pingnode/pingnode/examples/internal/podapi"
)

// podRequest is a request that a podPlugin got.
type podRequest struct {
	Method, Path, Auth, ContentType string
	Body                            []byte
}

// podPlugin is a test plugin's pod API at any prefix: it records the
// requests, and answers a path that ends in an element of podAnswers
// with its answer, any other 404.
type podPlugin struct {
	mu  sync.Mutex
	got []podRequest
}

func (p *podPlugin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	p.mu.Lock()
	p.got = append(p.got, podRequest{r.Method, r.URL.Path, r.Header.Get("Authorization"), r.Header.Get("Content-Type"), body})
	p.mu.Unlock()
	answer, ok := podAnswers[path.Base(r.URL.Path)]
	if !ok {
		http.NotFound(w, r)
		return
	}
	_, _ = io.WriteString(w, answer)
}

func (p *podPlugin) requests() []podRequest {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]podRequest(nil), p.got...)
}

// fixture returns a fixture of interLink's wire (../podapi/testdata),
// which podapi's tests hold to its types key for key.
func fixture(name string) []byte {
	data, err := os.ReadFile(filepath.Join("..", "podapi", "testdata", name))
	if err != nil {
		panic(err)
	}
	return data
}

// decoded returns data decoded into a new T.
func decoded[T any](data []byte) T {
	var v T
	if err := json.Unmarshal(data, &v); err != nil {
		panic(err)
	}
	return v
}

var (
	// testPod is the fixtures' pod, as the provider has it.
	testPod    = decoded[corev1.Pod](fixture("delete.request.json"))
	testCreate = podapi.NewCreateRequest(&testPod)
	podAnswers = map[string]string{"create": string(fixture("create.answer.json")), "status": string(fixture("status.answer.json")), "delete": ""}
)

// podCalls are the calls of the pod API, with the fixture of the request
// each must send and the answer it decodes from the fixture of the
// plugin's answer.
var podCalls = []struct {
	name         string
	method, path string
	sent         any // the request's body, decoded from its fixture
	call         func(context.Context, *Client) (any, error)
	want         any
}{
	{"create", http.MethodPost, "/create", decoded[podapi.CreateRequest](fixture("create.request.json")), func(ctx context.Context, c *Client) (any, error) {
		created, list, err := c.Create(ctx, testCreate)
		if list {
			return nil, errors.New("an object answer read as a list")
		}
		return created, err
	}, decoded[podapi.Created](fixture("create.answer.json"))},
	{"status", http.MethodGet, "/status", decoded[[]corev1.Pod](fixture("status.request.json")), func(ctx context.Context, c *Client) (any, error) {
		return c.Status(ctx, []*corev1.Pod{nil, &testPod})
	}, decoded[[]podapi.PodStatus](fixture("status.answer.json"))},
	{"delete", http.MethodPost, "/delete", decoded[corev1.Pod](fixture("delete.request.json")), func(ctx context.Context, c *Client) (any, error) { return nil, c.Delete(ctx, &testPod) }, nil},
}

// TestPodCalls: each call sends the bytes of interLink's wire (its
// fixture) to the sibling of the ping's path, for a plugin at the root or
// under a prefix, over HTTP or a Unix socket, with the token when there
// is one, and decodes the answer of interLink's wire.
func TestPodCalls(t *testing.T) {
	const token = "s3cret-token-0123456789"
	paths := files(t, map[string][]byte{"token": []byte(token + "\n")})
	ways := []struct {
		name, prefix string
		unix, token  bool
	}{
		{name: "http, root path"},
		{name: "http, nested path", prefix: "/api/v1"},
		{name: "http with a token", token: true},
		{name: "unix socket", unix: true},
		{name: "unix socket, nested path and a token", prefix: "/api/v1", unix: true, token: true},
	}
	for _, way := range ways {
		for _, tt := range podCalls {
			t.Run(way.name+"/"+tt.name, func(t *testing.T) {
				p := &podPlugin{}
				log, _ := newLogs()
				cfg := Config{Timeout: 10 * time.Second, Log: log}
				if way.unix {
					cfg.URL = "unix://" + startUnix(t, p)
					if way.prefix != "" {
						cfg.Path = way.prefix + "/status"
					}
				} else {
					server := httptest.NewServer(p)
					t.Cleanup(server.Close)
					cfg.URL = server.URL + way.prefix + "/status"
				}
				wantAuth := ""
				if way.token {
					cfg.TokenFile, wantAuth = paths["token"], "Bearer "+token
				}
				got, err := tt.call(context.Background(), newClient(t, cfg))
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("answer (-want +got):\n%s", diff)
				}
				reqs := p.requests()
				if len(reqs) != 1 {
					t.Fatalf("%d requests, want 1: %+v", len(reqs), reqs)
				}
				want := podRequest{tt.method, way.prefix + tt.path, wantAuth, "application/json", nil}
				if diff := cmp.Diff(want, reqs[0], cmpopts.IgnoreFields(podRequest{}, "Body")); diff != "" {
					t.Errorf("request (-want +got):\n%s", diff)
				}
				sent := reflect.New(reflect.TypeOf(tt.sent))
				if err := json.Unmarshal(reqs[0].Body, sent.Interface()); err != nil {
					t.Fatalf("the request's body: %v\n%s", err, reqs[0].Body)
				}
				if diff := cmp.Diff(tt.sent, sent.Elem().Interface()); diff != "" {
					t.Errorf("request's body (-want +got):\n%s", diff)
				}
			})
		}
	}
}

// TestPodCallFailures: a failed call says the method, the API path and
// what went wrong, the same at two calls in a row, then the plugin's own
// words when it answered with an error (at most 512 bytes of its answer,
// on one line), and never the URL or the token; a call has the timeout of
// a call, not the ping's; an answer other than 200 leaves its connection
// to the next call.
func TestPodCallFailures(t *testing.T) {
	const secret, long = "s3cret-0123456789", 10 * time.Second
	failing := func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "<html>"+secret+strings.Repeat(" stack\ntrace", 400)+"</html>", http.StatusInternalServerError)
	}
	words := ": <html>[token]" + strings.Repeat(" stack trace", 400)[:512-len("<html>"+secret)]
	tests := []struct {
		name     string
		call     int // index in podCalls
		answer   http.HandlerFunc
		timeout  time.Duration
		want     string
		wantCode int
	}{
		{"create, HTTP 500", 0, failing, long, "POST /create: HTTP 500 Internal Server Error" + words, 500},
		{"status, HTTP 500", 1, failing, long, "GET /status: HTTP 500 Internal Server Error" + words, 500},
		{"delete, HTTP 500", 2, failing, long, "POST /delete: HTTP 500 Internal Server Error" + words, 500},
		{"create, not JSON", 0, func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "<html>"+secret+"</html>") },
			long, "POST /create: cannot decode the answer: invalid character '<' looking for beginning of value", 200},
		{"create, another pod's job", 0, func(w http.ResponseWriter, _ *http.Request) {
			_, _ = io.WriteString(w, `{"PodUID":"other","PodJID":"7"}`)
		},
			long, "POST /create: cannot read the answer: the job of another pod, other", 200},
		{"status, too large", 1, func(w http.ResponseWriter, _ *http.Request) {
			_, _ = io.WriteString(w, "["+strings.Repeat(" ", maxStatusAnswer))
		}, long, "GET /status: answer larger than 8 MiB", 200},
		{"delete, hangs past the timeout", 2, func(_ http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body) // then the server sees the client go
			<-r.Context().Done()
		}, 200 * time.Millisecond, "POST /delete: timeout after 200ms", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var conns atomic.Int32
			server := httptest.NewUnstartedServer(tt.answer)
			server.Config.ConnState = func(_ net.Conn, s http.ConnState) {
				if s == http.StateNew {
					conns.Add(1)
				}
			}
			server.Start()
			defer server.Close()
			paths := files(t, map[string][]byte{"token": []byte(secret)})
			log, out := newLogs()
			url := server.URL + "/api/v1/status?key=" + secret
			c := newClient(t, Config{URL: url, TokenFile: paths["token"], Timeout: time.Millisecond, CallTimeout: tt.timeout, Log: log})
			for i := range 2 {
				_, err := podCalls[tt.call].call(context.Background(), c)
				if diff := cmp.Diff(tt.want, fmt.Sprint(err)); diff != "" {
					t.Errorf("call %d: error (-want +got):\n%s", i+1, diff)
				}
				if callErr, ok := errors.AsType[*CallError](err); !ok || callErr.Code != tt.wantCode {
					t.Errorf("call %d: error %#v, want a *CallError with Code %d", i+1, err, tt.wantCode)
				}
				if strings.Contains(fmt.Sprint(err), server.URL) || strings.Contains(fmt.Sprint(err), secret) || strings.Contains(out.String(), secret) {
					t.Errorf("call %d: the URL, token or body in the error or the log: %v\n%s", i+1, err, out)
				}
			}
			if n := conns.Load(); tt.wantCode == http.StatusInternalServerError && n != 1 {
				t.Errorf("%d connections for 2 calls answered 500, want 1", n)
			}
		})
	}
}

// TestCreateListAnswer: an older plugin's answer to a create, a list of
// jobs, is read, and Create says it was a list.
func TestCreateListAnswer(t *testing.T) {
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write(fixture("create.answer-list.json"))
	}))
	defer server.Close()
	c := newClient(t, Config{URL: server.URL + "/status", Timeout: 10 * time.Second})
	created, list, err := c.Create(context.Background(), testCreate)
	if want := decoded[podapi.Created](fixture("create.answer.json")); err != nil || !list || created != want {
		t.Errorf("Create = %+v, %v, %v; want %+v, a list, no error", created, list, err, want)
	}
}

// TestStatusNoPods: Status of no pods asks nothing, since an empty list
// would be a ping.
func TestStatusNoPods(t *testing.T) {
	p := &podPlugin{}
	server := httptest.NewServer(p)
	defer server.Close()
	c := newClient(t, Config{URL: server.URL + "/status", Timeout: 10 * time.Second})
	tests := []struct {
		name string
		pods []*corev1.Pod
	}{{"nil", nil}, {"empty", []*corev1.Pod{}}, {"only nil pods", []*corev1.Pod{nil, nil}}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, err := c.Status(context.Background(), tt.pods); got != nil || err != nil {
				t.Errorf("Status = %v, %v; want nil, nil", got, err)
			}
		})
	}
	if reqs := p.requests(); len(reqs) != 0 {
		t.Errorf("requests: %+v, want none", reqs)
	}
}

func TestSibling(t *testing.T) {
	tests := []struct{ name, ping, want string }{
		{"root", "http://127.0.0.1:4000/status", "http://127.0.0.1:4000/create"},
		{"nested", "https://plugin.example/api/v1/status", "https://plugin.example/api/v1/create"},
		{"no path", "http://127.0.0.1:4000", "http://127.0.0.1:4000/create"},
		{"query and credentials kept", "http://u:p@h/status?key=x", "http://u:p@h/create?key=x"},
		{"escaped directory kept", "http://h/a%2Fb/status", "http://h/a%2Fb/create"},
		{"unix socket", "http://unix/api/status", "http://unix/api/create"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := sibling(tt.ping, podapi.CreatePath)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("sibling (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCallReached: a call that was sent whole reached the plugin,
// whether it was answered with an error, cut without an answer (a
// handler's panic) or not answered in time; one whose connection was
// refused did not.
func TestCallReached(t *testing.T) {
	answers := map[string]http.HandlerFunc{
		"answered 500": func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "no", http.StatusInternalServerError) },
		"cut":          func(http.ResponseWriter, *http.Request) { panic(http.ErrAbortHandler) },
		"not in time": func(_ http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body) // then the server sees the client go
			<-r.Context().Done()
		},
		"refused (off)": nil,
	}
	for name, answer := range answers {
		t.Run(name, func(t *testing.T) {
			server := httptest.NewServer(answer)
			if answer == nil {
				server.Close()
			} else {
				defer server.Close()
			}
			c := newClient(t, Config{URL: server.URL + "/status", CallTimeout: 200 * time.Millisecond})
			err := c.Delete(context.Background(), &corev1.Pod{})
			callErr, ok := errors.AsType[*CallError](err)
			if !ok {
				t.Fatalf("Delete = %v, want a *CallError", err)
			}
			if want := answer != nil; callErr.Reached() != want {
				t.Errorf("%v: Reached() = %v, want %v", err, callErr.Reached(), want)
			}
		})
	}
}

// TestCallUnserved: a pod call the plugin answers 404, 405 or 501 is one
// it serves not (a plugin of the ping alone); 500, 504 and no answer are
// failures of a call it serves.
func TestCallUnserved(t *testing.T) {
	for code, want := range map[int]bool{
		http.StatusNotFound: true, http.StatusMethodNotAllowed: true, http.StatusNotImplemented: true,
		http.StatusInternalServerError: false, http.StatusGatewayTimeout: false, 0: false,
	} {
		t.Run(http.StatusText(code), func(t *testing.T) {
			server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				if code == 0 {
					panic(http.ErrAbortHandler)
				}
				http.Error(w, "no", code)
			}))
			defer server.Close()
			c := newClient(t, Config{URL: server.URL + "/status"})
			_, _, err := c.Create(context.Background(), podapi.NewCreateRequest(&corev1.Pod{}))
			callErr, ok := errors.AsType[*CallError](err)
			if !ok {
				t.Fatalf("Create = %v, want a *CallError", err)
			}
			if callErr.Unserved() != want {
				t.Errorf("%v: Unserved() = %v, want %v", err, callErr.Unserved(), want)
			}
		})
	}
}
