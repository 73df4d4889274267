package main

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const podUID = "0b6f5c4e-1d2a-4f3b-9c8d-7e6f5a4b3c2d"

func TestGetLogs(t *testing.T) {
	logText := strings.Repeat("line <1> of the job & more\n", 1000)
	side := newSidecar(t, replyWith(200, logText))
	url, _ := newDouble(t, side.URL, time.Minute)
	got := do(t, http.MethodPost, url+"/getLogs",
		`{"Namespace":"default","PodUID":"`+podUID+`","PodName":"P_not checked","ContainerName":"main","Opts":{"Tail":10,"Follow":true},"Extra":1}`,
		sessionHeader, "s1")
	if diff := cmp.Diff(answer{Code: 200, Body: logText}, got); diff != "" {
		t.Errorf("answer (-want +got):\n%s", diff)
	}
	want := []call{{Method: "GET", Path: "/getLogs", ContentType: "application/json", Session: "s1",
		Body: `{"Namespace":"default","PodUID":"` + podUID + `","PodName":"P_not checked","ContainerName":"main",` +
			`"Opts":{"Tail":10,"Bytes":0,"Timestamps":false,"Follow":true,"Previous":false,"SinceSeconds":0,"SinceTime":"0001-01-01T00:00:00Z"}}`}}
	if diff := cmp.Diff(want, side.take()); diff != "" {
		t.Errorf("sidecar calls (-want +got):\n%s", diff)
	}
}

func TestGetLogsRefused(t *testing.T) {
	ok := `"Namespace":"default","PodUID":"` + podUID + `"`
	tests := []struct{ name, body, want string }{
		{"not JSON", `{`, "invalid request body"},
		{"no namespace", `{"PodUID":"` + podUID + `"}`, "invalid namespace: must be a valid DNS label"},
		{"a UID in upper case", `{"Namespace":"default","PodUID":"` + strings.ToUpper(podUID) + `"}`, "invalid pod UID: must be a valid UUID"},
		{"a container name with a slash", `{` + ok + `,"ContainerName":"../x"}`, "invalid container name: must be a valid DNS label"},
		{"Tail and Bytes", `{` + ok + `,"Opts":{"Tail":1,"Bytes":2}}`, "Both Tail and LimitBytes set. Set only one of them"},
		{"SinceSeconds and SinceTime", `{` + ok + `,"Opts":{"SinceSeconds":1,"SinceTime":"2026-01-01T00:00:00Z"}}`, "Both SinceSeconds and SinceTime set. Set only one of them"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			side := newSidecar(t, replyWith(200, "log"))
			url, _ := newDouble(t, side.URL, time.Minute)
			got := do(t, http.MethodGet, url+"/getLogs", tt.body)
			if diff := cmp.Diff(answer{Code: 400, ContentType: "text/plain; charset=utf-8", Body: tt.want}, got); diff != "" {
				t.Errorf("answer (-want +got):\n%s", diff)
			}
			if calls := side.take(); len(calls) != 0 {
				t.Errorf("sidecar calls %+v, want none", calls)
			}
		})
	}
}
