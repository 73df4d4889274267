package main

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// richReply is a ping reply longer than one read of the relay, with what
// HTML escaping would change.
var richReply = `{"status":"ok","resources":{"cpu":"64","memory":"250000Mi","pods":"500"},` +
	`"taints":[{"key":"a<b>&\"c\"","effect":"NoSchedule"}],"labels":{"x":"été"},"note":"` +
	strings.Repeat("0123456789", 900) + "\"}\n"

func TestPing(t *testing.T) {
	tests := []struct {
		name  string
		reply http.HandlerFunc
		want  func(session string) answer
	}{
		{
			name: "a rich reply relayed byte for byte, without its Content-Type",
			reply: func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(richReply))
			},
			want: func(string) answer { return answer{Code: 200, Body: richReply} },
		},
		{
			name:  "500 keeps its status, its body wrapped and escaped, then 503",
			reply: replyWith(500, "no <slurm> & co"),
			want: func(s string) answer {
				return answer{Code: 500, Body: "HTTP InterLink session " + s + ":  call exit status: 500. Body: no &lt;slurm&gt; &amp; co503"}
			},
		},
		{
			name:  "504 keeps its status and says 500 in its words",
			reply: replyWith(504, "timeout"),
			want: func(s string) answer {
				return answer{Code: 504, Body: "HTTP InterLink session " + s + ":  call exit status: 500. Body: timeout503"}
			},
		},
		{
			name:  "201 is not 200",
			reply: replyWith(201, "ok"),
			want: func(s string) answer {
				return answer{Code: 201, Body: "HTTP InterLink session " + s + ":  call exit status: 500. Body: ok503"}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			side := newSidecar(t, tt.reply)
			url, _ := newDouble(t, side.URL, time.Minute)
			got := do(t, http.MethodPost, url+"/pinglink", "", sessionHeader, "vk-1", "Authorization", "Bearer t")
			calls := side.take()
			if len(calls) != 1 {
				t.Fatalf("sidecar calls: %+v, want one", calls)
			}
			s := calls[0].Session
			if !strings.HasPrefix(s, "Request-") || len(s) != len("Request-")+36 {
				t.Errorf("session %q, want Request-<uuid>, not the caller's", s)
			}
			wantCall := call{Method: "GET", Path: "/status", ContentType: "application/json", Session: s, Body: "[]"}
			if diff := cmp.Diff(wantCall, calls[0]); diff != "" {
				t.Errorf("sidecar got (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want(s), got); diff != "" {
				t.Errorf("answer (-want +got):\n%s", diff)
			}
		})
	}
}

// TestFailedExchange pins down what a caller gets when the sidecar does
// not answer: 500, and for the ping the body "503".
func TestFailedExchange(t *testing.T) {
	slow := newSidecar(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	})
	pod := `{"metadata":{"uid":"u1"}}`
	tests := []struct {
		name, base, path, body string
		want                   answer
	}{
		{"ping refused", closedURL(t), "/pinglink", "", answer{Code: 500, ContentType: "text/plain; charset=utf-8", Body: "503"}},
		{"ping without headers in time", slow.URL, "/pinglink", "", answer{Code: 500, ContentType: "text/plain; charset=utf-8", Body: "503"}},
		{"create refused", closedURL(t), "/create", `{"pod":` + pod + `}`, answer{Code: 500}},
		{"status refused", closedURL(t), "/status", "[" + pod + "]", answer{Code: 500}},
		{"delete refused", closedURL(t), "/delete", pod, answer{Code: 500}},
		{"getLogs refused", closedURL(t), "/getLogs", `{"Namespace":"default","PodUID":"0b6f5c4e-1d2a-4f3b-9c8d-7e6f5a4b3c2d"}`, answer{Code: 500}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url, _ := newDouble(t, tt.base, 100*time.Millisecond)
			if diff := cmp.Diff(tt.want, do(t, http.MethodPost, url+tt.path, tt.body)); diff != "" {
				t.Errorf("answer (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSession(t *testing.T) {
	side := newSidecar(t, replyWith(200, "[]"))
	url, _ := newDouble(t, side.URL, time.Minute)
	for _, path := range []string{"/create", "/status", "/delete", "/getLogs"} {
		body := map[string]string{
			"/create":  `{"pod":{"metadata":{"uid":"u1"}}}`,
			"/status":  `[{"metadata":{"uid":"u1"}}]`,
			"/delete":  `{"metadata":{"uid":"u1"}}`,
			"/getLogs": `{"Namespace":"default","PodUID":"0b6f5c4e-1d2a-4f3b-9c8d-7e6f5a4b3c2d"}`,
		}[path]
		do(t, http.MethodPost, url+path, body, sessionHeader, "vk-7")
		do(t, http.MethodPost, url+path, body)
		calls := side.take()
		if len(calls) != 2 || calls[0].Session != "vk-7" || !strings.HasPrefix(calls[1].Session, "Request-") {
			t.Errorf("%s: sessions %+v, want the caller's, then a new one", path, calls)
		}
	}
}
