package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/google/go-cmp/cmp"

	"github.com/pingnode/pingnode/examples/internal/partsfleet"
	"github.com/pingnode/pingnode/examples/internal/podapi"
)

// The scripts of the logs' pods: one, two and three at 0, 1 and 2
// seconds, then the end at 12 s; and two lines that begin with a time,
// for the Slurm plugin's since.
const (
	threeLines = "echo one; sleep 1; echo two; sleep 1; echo three; sleep 10; exit 0"
	stamped    = "echo 2025-06-01T12:00:00Z zero; echo 2025-06-01T11:00:00Z early; sleep 100"
)

// logsOf serves GET /getLogs alone, of a table of jobs that start at
// once, with slurm or not, looking again every 5 ms when following;
// done gets a value each time a request has been answered whole.
func logsOf(t *testing.T, slurm bool) (server *httptest.Server, jobs *partsfleet.Fleet, clock *testClock, done chan struct{}) {
	t.Helper()
	clock = &testClock{start: t0}
	jobs = partsfleet.New(partsfleet.Config{Unbounded: true, Slurm: slurm, Now: clock.now})
	s := &logServer{jobs: jobs, slurm: slurm, now: clock.now, every: 5 * time.Millisecond}
	done = make(chan struct{}, 16)
	server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() { done <- struct{}{} }()
		s.ServeHTTP(w, r)
	}))
	t.Cleanup(server.Close)
	return server, jobs, clock, done
}

// scripted creates the job of a pod uid of team-a, containers main
// (which runs the shell script) and side.
func scripted(jobs *partsfleet.Fleet, uid, script string) {
	pod := corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: types.UID(uid), Namespace: "team-a", Name: "pod-" + uid}}
	pod.Spec.Containers = []corev1.Container{{Name: "main", Command: []string{"/bin/sh", "-c", script}}, {Name: "side"}}
	jobs.Create(partsfleet.JobOf(&pod))
}

// logsReq is the request of the log of container of pod uid, with opts.
func logsReq(uid, container string, opts podapi.LogOptions) podapi.LogRequest {
	return podapi.LogRequest{Namespace: "team-a", PodUID: uid, PodName: "pod-" + uid, ContainerName: container, Opts: opts}
}

// TestLogs: each personality answers a log as its rules say, 5 seconds
// after the pods started: the default as a kubelet does (the last
// lines, the since, the stamps, the first bytes), -slurm as the Slurm
// plugin does (an empty line after a tail, the last bytes and one more,
// no stamps, a since only with them, kept when older, and no answer for
// a tail or a limit as long as the log); both an empty log for what has
// none.
func TestLogs(t *testing.T) {
	all := podapi.LogOptions{}
	tail := func(n int) podapi.LogOptions { return podapi.LogOptions{Tail: n} }
	limit := func(n int) podapi.LogOptions { return podapi.LogOptions{LimitBytes: n} }
	stamps := func(opts podapi.LogOptions) podapi.LogOptions { opts.Timestamps = true; return opts }
	since := podapi.LogOptions{SinceSeconds: 4} // from 1 s
	sinceTime := podapi.LogOptions{SinceTime: t0.Add(2 * time.Second)}
	previous := podapi.LogOptions{Previous: true}
	tests := []struct {
		name      string
		slurm     bool
		uid, ctr  string
		opts      podapi.LogOptions
		wantCode  int // 0: no answer
		want      string
		wantCType string
	}{
		{"all", false, "u1", "main", all, 200, "one\ntwo\nthree\n", ""},
		{"--tail 2", false, "u1", "main", tail(2), 200, "two\nthree\n", ""},
		{"--tail past the lines", false, "u1", "main", tail(9), 200, "one\ntwo\nthree\n", ""},
		{"--since 4s", false, "u1", "main", since, 200, "two\nthree\n", ""},
		{"--since-time", false, "u1", "main", sinceTime, 200, "three\n", ""},
		{"--timestamps", false, "u1", "main", stamps(tail(2)), 200, "2025-06-01T12:00:01.000000000Z two\n2025-06-01T12:00:02.000000000Z three\n", ""},
		{"--limit-bytes 6", false, "u1", "main", limit(6), 200, "one\ntw", ""},
		{"--limit-bytes with stamps", false, "u1", "main", stamps(limit(36)), 200, "2025-06-01T12:00:00.000000000Z one\n2", ""},
		{"--previous", false, "u1", "main", previous, 200, "", ""},
		{"another container", false, "u1", "side", all, 200, "", ""},
		{"a name the pod has not", false, "u1", "gone", all, 200, "", ""},
		{"a pod without a job", false, "u9", "main", all, 200, "", ""},
		{"a time in the words counts for nothing", false, "u2", "main", since, 200, "", ""},

		{"slurm: all", true, "u1", "main", all, 200, "one\ntwo\nthree\n", "text/plain"},
		{"slurm: --tail 2, and an empty line", true, "u1", "main", tail(2), 200, "two\nthree\n\n", "text/plain"},
		{"slurm: --tail past the pieces", true, "u1", "main", tail(5), 200, "one\ntwo\nthree\n\n", "text/plain"},
		{"slurm: --tail as many as the pieces", true, "u1", "main", tail(4), 0, "", ""},
		{"slurm: --tail 1 of an empty log", true, "u9", "main", tail(1), 0, "", ""},
		{"slurm: --limit-bytes 6, the last 7", true, "u1", "main", limit(6), 200, "\nthree\n", "text/plain"},
		{"slurm: --limit-bytes as long as the log", true, "u1", "main", limit(14), 0, "", ""},
		{"slurm: --timestamps writes none", true, "u1", "main", stamps(all), 200, "one\ntwo\nthree\n", "text/plain"},
		{"slurm: --since without stamps, all", true, "u1", "main", since, 200, "one\ntwo\nthree\n", "text/plain"},
		{"slurm: --since with stamps, none without a time", true, "u1", "main", stamps(since), 200, "", "text/plain"},
		{"slurm: --since 1m keeps the older", true, "u2", "main", stamps(podapi.LogOptions{SinceSeconds: 60}), 200, "2025-06-01T11:00:00Z early\n", "text/plain"},
		{"slurm: --since 2h, none older", true, "u2", "main", stamps(podapi.LogOptions{SinceSeconds: 7200}), 200, "", "text/plain"},
		{"slurm: --since-time keeps the later", true, "u2", "main", stamps(podapi.LogOptions{SinceTime: t0}), 200, "2025-06-01T12:00:00Z zero\n", "text/plain"},
		{"slurm: --previous not looked at", true, "u1", "main", previous, 200, "one\ntwo\nthree\n", "text/plain"},
		{"slurm: another container", true, "u1", "side", all, 200, "", "text/plain"},
		{"slurm: a pod without a job", true, "u9", "main", all, 200, "", "text/plain"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			server, jobs, clock, _ := logsOf(t, tt.slurm)
			scripted(jobs, "u1", threeLines)
			scripted(jobs, "u2", stamped)
			clock.set(5 * time.Second)
			data, _ := json.Marshal(logsReq(tt.uid, tt.ctr, tt.opts))
			req, _ := http.NewRequest(http.MethodGet, server.URL+podapi.LogsPath, strings.NewReader(string(data)))
			resp, err := http.DefaultClient.Do(req)
			if tt.wantCode == 0 {
				if err == nil {
					_ = resp.Body.Close()
					t.Fatalf("answered %d; want no answer", resp.StatusCode)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode != tt.wantCode {
				t.Errorf("answered %d; want %d", resp.StatusCode, tt.wantCode)
			}
			if diff := cmp.Diff(tt.want, string(body)); diff != "" {
				t.Errorf("the log (-want +got):\n%s", diff)
			}
			wantCType := tt.wantCType
			if wantCType == "" {
				wantCType = "text/plain; charset=utf-8"
			}
			if got := resp.Header.Get("Content-Type"); got != wantCType {
				t.Errorf("Content-Type %q, want %q", got, wantCType)
			}
		})
	}
}

// TestLogsBadBody: a body that is no LogRequest is answered 400 by
// default, and 500 in the Slurm plugin's words with -slurm.
func TestLogsBadBody(t *testing.T) {
	for _, tt := range []struct {
		name  string
		slurm bool
		body  string
		code  int
		want  string
	}{
		{"no body", false, "", 400, "want a podapi.LogRequest with its PodUID\n"},
		{"a list", false, "[]", 400, "want a JSON podapi.LogRequest: json: cannot unmarshal array into Go value of type podapi.LogRequest\n"},
		{"slurm: no body", true, "", 500, `error context: HTTP InterLink session NoSessionFound#0: error during Unmarshal() in GetLogsHandler request body type: &json.SyntaxError{msg:"unexpected end of JSON input", Offset:0} unexpected end of JSON input`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			server, _, _, _ := logsOf(t, tt.slurm)
			code, body := call(t, server, http.MethodGet, podapi.LogsPath, tt.body)
			if code != tt.code || string(body) != tt.want {
				t.Errorf("answered %d %q; want %d %q", code, body, tt.code, tt.want)
			}
		})
	}
}

// stream is the body of a followed log, read as it comes.
type stream struct {
	chunks chan string // closed at the end of the body
	got    string
	cancel context.CancelFunc
}

// follow asks server for the log of req, following it, and returns its
// body, which the test ends.
func follow(t *testing.T, server *httptest.Server, req podapi.LogRequest) *stream {
	t.Helper()
	req.Opts.Follow = true
	data, _ := json.Marshal(req)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	r, _ := http.NewRequestWithContext(ctx, http.MethodGet, server.URL+podapi.LogsPath, strings.NewReader(string(data)))
	resp, err := http.DefaultClient.Do(r)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("follow: %v %v", resp, err)
	}
	s := &stream{chunks: make(chan string), cancel: cancel}
	go func() {
		defer close(s.chunks)
		defer func() { _ = resp.Body.Close() }()
		p := make([]byte, 4096)
		for {
			n, err := resp.Body.Read(p)
			if n > 0 {
				s.chunks <- string(p[:n])
			}
			if err != nil {
				return
			}
		}
	}()
	return s
}

// until reads s until it has got want since the last until, and fails
// after 5 seconds or at its end.
func (s *stream) until(t *testing.T, want string) {
	t.Helper()
	timeout := time.After(5 * time.Second)
	for len(s.got) < len(want) {
		select {
		case chunk, ok := <-s.chunks:
			if !ok {
				t.Fatalf("the log ended with %q; want %q", s.got, want)
			}
			s.got += chunk
		case <-timeout:
			t.Fatalf("after 5s the log is %q; want %q", s.got, want)
		}
	}
	if s.got != want {
		t.Fatalf("the log is %q; want %q", s.got, want)
	}
	s.got = ""
}

// ends reports whether s ends within d, with nothing more.
func (s *stream) ends(t *testing.T, d time.Duration) bool {
	t.Helper()
	timeout := time.After(d)
	for {
		select {
		case chunk, ok := <-s.chunks:
			if !ok {
				return true
			}
			s.got += chunk
		case <-timeout:
			return false
		}
	}
}

// answered fails unless the handler has answered within 5 seconds.
func answered(t *testing.T, done chan struct{}) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the handler goes on 5s after its client went")
	}
}

// TestLogsFollow: a followed log streams each line when its container
// writes it, and ends as each personality ends it: the default when the
// job ends, its pod is deleted, its limit is reached or its client goes;
// -slurm when the container's status file is written (a job that ended
// on its own) or the pod is deleted, never for a job cancelled from
// outside, and until then says every look that it has no file of a pod
// it does not know; and both stop when their client goes.
func TestLogsFollow(t *testing.T) {
	for _, slurm := range []bool{false, true} {
		t.Run(map[bool]string{false: "default", true: "slurm"}[slurm], func(t *testing.T) {
			t.Run("until the job ends", func(t *testing.T) {
				server, jobs, clock, _ := logsOf(t, slurm)
				scripted(jobs, "u1", threeLines)
				clock.set(500 * time.Millisecond)
				s := follow(t, server, logsReq("u1", "main", podapi.LogOptions{}))
				s.until(t, "one\n")
				clock.set(2500 * time.Millisecond)
				s.until(t, "two\nthree\n")
				if s.ends(t, 50*time.Millisecond) {
					t.Fatalf("the log ended while its job runs, with %q", s.got)
				}
				clock.set(time.Minute)
				if !s.ends(t, 5*time.Second) || s.got != "" {
					t.Errorf("the log of an ended job goes on, or says more: %q", s.got)
				}
			})
			t.Run("until the pod is deleted", func(t *testing.T) {
				server, jobs, clock, _ := logsOf(t, slurm)
				scripted(jobs, "u1", "echo a; sleep 1; echo b; sleep 100")
				s := follow(t, server, logsReq("u1", "main", podapi.LogOptions{}))
				s.until(t, "a\n")
				clock.set(time.Second)
				s.until(t, "b\n") // sent while following, not in the first answer
				jobs.Delete("u1")
				if !s.ends(t, 5*time.Second) {
					t.Errorf("the log of a deleted pod goes on")
				}
			})
			t.Run("until the client goes", func(t *testing.T) {
				server, jobs, _, done := logsOf(t, slurm)
				scripted(jobs, "u1", "echo a; sleep 100")
				s := follow(t, server, logsReq("u1", "main", podapi.LogOptions{}))
				s.until(t, "a\n")
				s.cancel()
				answered(t, done)
			})
		})
	}
	t.Run("default: until its limit", func(t *testing.T) {
		server, jobs, clock, _ := logsOf(t, false)
		scripted(jobs, "u1", threeLines)
		s := follow(t, server, logsReq("u1", "main", podapi.LogOptions{LimitBytes: 6}))
		s.until(t, "one\n")
		clock.set(time.Second)
		s.until(t, "tw")
		if !s.ends(t, 5*time.Second) {
			t.Errorf("a log past its limit goes on")
		}
	})
	t.Run("default: a pod without a job", func(t *testing.T) {
		server, _, _, _ := logsOf(t, false)
		s := follow(t, server, logsReq("u9", "main", podapi.LogOptions{}))
		if !s.ends(t, 5*time.Second) || s.got != "" {
			t.Errorf("the log of a pod without a job goes on, or says %q", s.got)
		}
	})
	t.Run("slurm: a pod without a job, until the client goes", func(t *testing.T) {
		server, _, _, done := logsOf(t, true)
		s := follow(t, server, logsReq("u9", "main", podapi.LogOptions{}))
		msg := "HTTP InterLink session NoSessionFound#0: Cannot open in follow mode the container logs .local/interlink/jobs/team-a-u9/run-main.out because it does not exist yet, sleeping before retrying..."
		s.until(t, msg)
		s.until(t, msg)
		s.cancel()
		answered(t, done)
	})
	t.Run("slurm: a job cancelled from outside, never", func(t *testing.T) {
		server, jobs, _, done := logsOf(t, true)
		scripted(jobs, "u1", "echo a; sleep 100")
		s := follow(t, server, logsReq("u1", "main", podapi.LogOptions{}))
		s.until(t, "a\n")
		if !jobs.Cancel("1") {
			t.Fatal("job 1 was not running")
		}
		if s.ends(t, 100*time.Millisecond) {
			t.Errorf("the log of a job cancelled from outside ended")
		}
		s.cancel()
		answered(t, done)
	})
}

// TestLogsContract: the request of logs.request.json, as interLink
// sends it, is served by the plugin's handler in either mode with GET,
// answered 200 in plain text; another method is not.
func TestLogsContract(t *testing.T) {
	for _, args := range [][]string{nil, {"-slurm"}} {
		server, _, _ := serve(t, t0, args...)
		code, body := call(t, server, http.MethodGet, podapi.LogsPath, string(fixture(t, "logs.request.json")))
		want := "" // the empty log of a pod without a job
		if len(args) > 0 {
			want = "\n" // and with -slurm its --tail 5: the one empty piece, with a newline
		}
		if code != http.StatusOK || string(body) != want {
			t.Errorf("%v: GET %s: %d %q; want 200 and %q", args, podapi.LogsPath, code, body, want)
		}
		if code, _ := call(t, server, http.MethodPost, podapi.LogsPath, string(fixture(t, "logs.request.json"))); code != http.StatusMethodNotAllowed {
			t.Errorf("%v: POST %s: %d; want 405", args, podapi.LogsPath, code)
		}
	}
}
