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
	"path"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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

var (
	testPod = corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "job-1", Namespace: "team-a", UID: "uid-1", Labels: map[string]string{"app": "job"}},
		Spec:       corev1.PodSpec{NodeName: "vk-node", Containers: []corev1.Container{{Name: "main", Image: "busybox", Command: []string{"sleep", "60"}}}},
		Status:     corev1.PodStatus{Phase: corev1.PodPending},
	}
	// trimmedPod is what Status sends of testPod.
	trimmedPod  = corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "job-1", Namespace: "team-a", UID: "uid-1"}, Spec: corev1.PodSpec{NodeName: "vk-node"}}
	testCreate  = []podapi.CreateRequest{{Pod: testPod, ConfigMaps: []corev1.ConfigMap{{ObjectMeta: metav1.ObjectMeta{Name: "conf"}, Data: map[string]string{"k": "v"}}}, JobScriptURL: "http://scripts/job.sh"}}
	createdJSON = `[{"PodUID":"uid-1","PodJID":"job-42"}]`
	testCreated = []podapi.Created{{PodUID: "uid-1", PodJID: "job-42"}}
	statusJSON  = `[{"name":"job-1","UID":"uid-1","namespace":"team-a","JID":"job-42","containers":[{"name":"main","ready":true,"restartCount":0,"image":"busybox","imageID":"","state":{"waiting":{"reason":"Queued"}}}],"initContainers":null}]`
	testStatus  = []podapi.PodStatus{{Name: "job-1", UID: "uid-1", Namespace: "team-a", JobID: "job-42", Containers: []corev1.ContainerStatus{
		{Name: "main", Ready: true, Image: "busybox", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "Queued"}}},
	}}}
	podAnswers = map[string]string{"create": createdJSON, "status": statusJSON, "delete": ""}
)

// podCalls are the calls of the pod API, with the request each makes and
// the answer it decodes.
var podCalls = []struct {
	name         string
	method, path string
	sent         any // the request's body, decoded
	call         func(context.Context, *Client) (any, error)
	want         any
}{
	{"create", http.MethodPost, "/create", testCreate, func(ctx context.Context, c *Client) (any, error) { return c.Create(ctx, testCreate) }, testCreated},
	{"status", http.MethodGet, "/status", []corev1.Pod{trimmedPod}, func(ctx context.Context, c *Client) (any, error) {
		return c.Status(ctx, []*corev1.Pod{nil, &testPod})
	}, testStatus},
	{"delete", http.MethodPost, "/delete", testPod, func(ctx context.Context, c *Client) (any, error) { return nil, c.Delete(ctx, &testPod) }, nil},
}

// TestPodCalls: each call asks the sibling of the ping's path, for a
// plugin at the root or under a prefix, over HTTP or a Unix socket, with
// the token when there is one, and decodes the answer.
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
// what went wrong, the same at two calls in a row, and never the URL, the
// token or the answer's body; an answer other than 200 leaves its
// connection to the next call.
func TestPodCallFailures(t *testing.T) {
	const secret, long = "s3cret-0123456789", 10 * time.Second
	failing := func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "<html>"+secret+strings.Repeat(" stack trace", 400)+"</html>", http.StatusInternalServerError)
	}
	tests := []struct {
		name     string
		call     int // index in podCalls
		answer   http.HandlerFunc
		timeout  time.Duration
		want     string
		wantCode int
	}{
		{"create, HTTP 500", 0, failing, long, "POST /create: HTTP 500 Internal Server Error", 500},
		{"status, HTTP 500", 1, failing, long, "GET /status: HTTP 500 Internal Server Error", 500},
		{"delete, HTTP 500", 2, failing, long, "POST /delete: HTTP 500 Internal Server Error", 500},
		{"create, not JSON", 0, func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "<html>"+secret+"</html>") },
			long, "POST /create: cannot decode the answer: invalid character '<' looking for beginning of value", 200},
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
			c := newClient(t, Config{URL: url, TokenFile: paths["token"], Timeout: tt.timeout, Log: log})
			for i := range 2 {
				_, err := podCalls[tt.call].call(context.Background(), c)
				if diff := cmp.Diff(tt.want, fmt.Sprint(err)); diff != "" {
					t.Errorf("call %d: error (-want +got):\n%s", i+1, diff)
				}
				if callErr, ok := errors.AsType[*CallError](err); !ok || callErr.Code != tt.wantCode {
					t.Errorf("call %d: error %#v, want a *CallError with Code %d", i+1, err, tt.wantCode)
				}
				if strings.Contains(fmt.Sprint(err), server.URL) || strings.Contains(out.String(), secret) {
					t.Errorf("call %d: the URL, token or body in the error or the log: %v\n%s", i+1, err, out)
				}
			}
			if n := conns.Load(); tt.wantCode == http.StatusInternalServerError && n != 1 {
				t.Errorf("%d connections for 2 calls answered 500, want 1", n)
			}
		})
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
