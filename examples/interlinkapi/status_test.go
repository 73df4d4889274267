package main

import (
	"encoding/json"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/pingnode/pingnode/examples/internal/podapi"
)

// pod returns the pod with uid, in phase, as JSON.
func pod(uid string, phase corev1.PodPhase) string {
	b, err := json.Marshal(corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: uid, UID: types.UID(uid)}, Status: corev1.PodStatus{Phase: phase}})
	if err != nil {
		panic(err)
	}
	return string(b)
}

func list(pods ...string) string { return "[" + strings.Join(pods, ",") + "]" }

// backend is a sidecar's status: the job of each pod it knows, by UID;
// it answers the pods asked about that it knows.
type backend struct {
	mu   sync.Mutex
	jobs map[string]string
}

func (b *backend) set(uid, job string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.jobs[uid] = job
}

func (b *backend) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/delete" {
		_, _ = w.Write([]byte("deleted"))
		return
	}
	var asked []corev1.Pod
	if err := json.NewDecoder(r.Body).Decode(&asked); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	out := []podapi.PodStatus{}
	for _, p := range asked {
		if job, ok := b.jobs[string(p.UID)]; ok {
			out = append(out, podapi.PodStatus{Name: p.Name, UID: string(p.UID), JobID: job})
		}
	}
	_ = json.NewEncoder(w).Encode(out)
}

// summary is a status answer or request in short: "uid/job" for each
// status, or the UIDs of the pods asked, or the path and body of another
// call.
func summary(t *testing.T, c call) string {
	t.Helper()
	if c.Path != "/status" {
		return c.Method + " " + c.Path + " " + c.Body
	}
	var asked []corev1.Pod
	if err := json.Unmarshal([]byte(c.Body), &asked); err != nil {
		t.Fatal(err)
	}
	uids := []string{}
	for _, p := range asked {
		uids = append(uids, string(p.UID))
	}
	return c.Method + " /status " + strings.Join(uids, ",")
}

func statuses(t *testing.T, body string, sorted bool) string {
	t.Helper()
	var got []podapi.PodStatus
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatalf("answer %q: %v", body, err)
	}
	out := []string{}
	for _, s := range got {
		out = append(out, s.UID+"/"+s.JobID)
	}
	if sorted {
		sort.Strings(out)
	}
	return strings.Join(out, " ")
}

func TestStatusCache(t *testing.T) {
	b := &backend{jobs: map[string]string{"a": "a1", "b": "b1"}}
	side := newSidecar(t, b.serve)
	url, _ := newDouble(t, side.URL, time.Minute)
	steps := []struct {
		name       string
		path, body string
		then       func() // after the step
		want       string // the statuses answered, "uid/job" each; the body for a path other than /status
		wantCalls  []string
	}{
		{name: "none cached: all forwarded, the unknown pod left out", path: "/status",
			body: list(pod("a", corev1.PodRunning), pod("b", corev1.PodSucceeded), pod("c", corev1.PodPending)),
			then: func() { b.set("a", "a2"); b.set("b", "b2") },
			want: "a/a1 b/b1", wantCalls: []string{"GET /status a,b,c"}},
		{name: "Succeeded cached answered from the cache, Pending forwarded, in the order asked", path: "/status",
			body: list(pod("b", corev1.PodSucceeded), pod("a", corev1.PodPending)),
			want: "b/b1 a/a2", wantCalls: []string{"GET /status a"}},
		{name: "a cached pod without phase is not forwarded", path: "/status",
			body: list(pod("b", "")),
			want: "b/b1"},
		{name: "no pods asked: every cached status, nothing forwarded", path: "/status", body: "[]",
			want: "a/a2 b/b1"},
		{name: "delete forwards the body as it came", path: "/delete", body: pod("b", corev1.PodSucceeded) + "\n",
			want: "deleted", wantCalls: []string{"POST /delete " + pod("b", corev1.PodSucceeded) + "\n"}},
		{name: "after the delete, the pod is forwarded", path: "/status",
			body: list(pod("b", corev1.PodSucceeded)),
			want: "b/b2", wantCalls: []string{"GET /status b"}},
		{name: "updateCache with the pod as JSON drops nothing", path: "/updateCache", body: pod("b", corev1.PodSucceeded),
			want: "Updated cache"},
		{name: "so the pod is still cached", path: "/status", body: list(pod("b", corev1.PodFailed)),
			want: "b/b2"},
		{name: "updateCache with the bare UID drops it", path: "/updateCache", body: "b",
			want: "Updated cache"},
		{name: "and the pod is forwarded again", path: "/status", body: list(pod("b", corev1.PodFailed)),
			want: "b/b2", wantCalls: []string{"GET /status b"}},
	}
	for _, st := range steps {
		got := do(t, http.MethodGet, url+st.path, st.body)
		if got.Code != 200 {
			t.Fatalf("%s: HTTP %d %s", st.name, got.Code, got.Body)
		}
		answered := got.Body
		if st.path == "/status" {
			answered = statuses(t, got.Body, st.body == "[]")
		}
		if answered != st.want {
			t.Errorf("%s: answered %q, want %q", st.name, answered, st.want)
		}
		calls := []string{}
		for _, c := range side.take() {
			calls = append(calls, summary(t, c))
		}
		if diff := cmp.Diff(append([]string{}, st.wantCalls...), calls); diff != "" {
			t.Errorf("%s: sidecar calls (-want +got):\n%s", st.name, diff)
		}
		if st.then != nil {
			st.then()
		}
	}
}

func TestStatusAnswers(t *testing.T) {
	tests := []struct {
		name  string
		reply http.HandlerFunc
		body  string
		want  answer
	}{
		{"500 relayed with its body", replyWith(500, "squeue <down>"), list(pod("a", corev1.PodRunning)),
			answer{Code: 500, Body: "HTTP InterLink session s1:  call exit status: 500. Body: squeue &lt;down&gt;"}},
		{"504 relayed with its body", replyWith(504, "slow"), list(pod("a", corev1.PodRunning)),
			answer{Code: 504, Body: "HTTP InterLink session s1:  call exit status: 500. Body: slow"}},
		{"a 200 that is not statuses: 200 and no body", replyWith(200, "not json"), list(pod("a", corev1.PodRunning)),
			answer{Code: 200}},
		{"no status known: null", replyWith(200, "[]"), list(pod("a", corev1.PodRunning)),
			answer{Code: 200, Body: "null"}},
		{"not a list, nothing cached: null, not forwarded", replyWith(500, "unused"), `{"pods":1}`,
			answer{Code: 200, ContentType: "text/plain; charset=utf-8", Body: "null"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			side := newSidecar(t, tt.reply)
			url, _ := newDouble(t, side.URL, time.Minute)
			if diff := cmp.Diff(tt.want, do(t, http.MethodGet, url+"/status", tt.body, sessionHeader, "s1")); diff != "" {
				t.Errorf("answer (-want +got):\n%s", diff)
			}
		})
	}
}

// TestNullPod pins down that a null pod gets no answer, as interLink's
// nil dereference gives none, and reaches no sidecar.
func TestNullPod(t *testing.T) {
	side := newSidecar(t, replyWith(200, "[]"))
	url, _ := newDouble(t, side.URL, time.Minute)
	for _, c := range []struct{ path, body string }{{"/delete", "null"}, {"/status", "[null]"}} {
		req, err := http.NewRequest(http.MethodPost, url+c.path, strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		if resp, err := http.DefaultClient.Do(req); err == nil {
			_ = resp.Body.Close()
			t.Errorf("%s %s: HTTP %d, want no answer", c.path, c.body, resp.StatusCode)
		}
	}
	if calls := side.take(); len(calls) != 0 {
		t.Errorf("sidecar calls %+v, want none", calls)
	}
	if got := do(t, http.MethodPost, url+"/delete", "{"); got.Code != 500 {
		t.Errorf("delete of what is not a pod: %+v, want 500", got)
	}
}
