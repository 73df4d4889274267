package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestRun(t *testing.T) {
	side := newSidecar(t, replyWith(200, `{"status":"ok"}`))
	ctx, cancel := context.WithCancel(context.Background())
	r, w := io.Pipe()
	exit := make(chan int, 1)
	go func() {
		exit <- run(ctx, []string{"-addr", "127.0.0.1:0", "-sidecar", side.URL, "-response-header-timeout", "5s"}, w)
		_ = w.Close()
	}()
	lines := bufio.NewScanner(r)
	serving := regexp.MustCompile(`serving interLink's API on (http://127\.0\.0\.1:[1-9][0-9]*)\b`)
	var url string
	for url == "" && lines.Scan() {
		if m := serving.FindStringSubmatch(lines.Text()); m != nil {
			url = m[1]
		}
	}
	if url == "" {
		t.Fatal("no line says where the API serves")
	}
	rest := make(chan string)
	go func() {
		var b strings.Builder
		for lines.Scan() {
			b.WriteString(lines.Text() + "\n")
		}
		rest <- b.String()
	}()
	if got := do(t, http.MethodPost, url+"/pinglink", ""); got.Code != 200 || got.Body != `{"status":"ok"}` {
		t.Errorf("ping through %s: %+v", url, got)
	}
	cancel()
	select {
	case code := <-exit:
		if code != 0 {
			t.Errorf("exit status %d, want 0", code)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("run did not return once its context was done")
	}
	if more := <-rest; strings.Contains(more, "serving interLink's API") {
		t.Errorf("said where it serves twice; then:\n%s", more)
	}
}

func TestFlagsRefused(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"https sidecar", []string{"-sidecar", "https://127.0.0.1:4000"}, "-sidecar: want an http:// URL"},
		{"unix sidecar", []string{"-sidecar", "unix:///tmp/plugin.sock"}, "-sidecar: want an http:// URL"},
		{"trailing slash", []string{"-sidecar", "http://127.0.0.1:4000/"}, "-sidecar: want scheme, host, port"},
		{"a query", []string{"-sidecar", "http://127.0.0.1:4000?x=1"}, "-sidecar: want scheme, host, port"},
		{"no host", []string{"-sidecar", "http:///status"}, "-sidecar: no host"},
		{"no port in addr", []string{"-addr", "127.0.0.1"}, "-addr: "},
		{"zero timeout", []string{"-response-header-timeout", "0s"}, "-response-header-timeout: want a positive duration"},
		{"an argument", []string{"extra"}, "takes no arguments"},
		{"an unknown flag", []string{"-sidecar-port", "4000"}, "flag provided but not defined: -sidecar-port"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr strings.Builder
			if code := run(context.Background(), tt.args, &stderr); code != 2 {
				t.Errorf("exit status %d, want 2", code)
			}
			if !strings.Contains(stderr.String(), tt.want) {
				t.Errorf("stderr %q, want it to say %q", stderr.String(), tt.want)
			}
		})
	}
}

func TestFlagsDefault(t *testing.T) {
	c, err := parseFlags(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if want := (config{addr: "127.0.0.1:3000", sidecar: "http://127.0.0.1:4000", responseHeader: 120 * time.Second}); c != want {
		t.Errorf("defaults %+v, want %+v", c, want)
	}
}
