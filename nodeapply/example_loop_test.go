package nodeapply_test

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/printer"
	"go/token"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/nodeapply/failure"
	"github.com/pingnode/pingnode/pingstatus"
)

// pingOnce and providerLoop are the README's provider loop, word for word
// (TestReadmeLoop holds the README to them).

// pingOnce is one ping: ask the plugin, and apply what happened to node.
func pingOnce(client *http.Client, url string, node *corev1.Node, opts nodeapply.Options) nodeapply.Result {
	ping := nodeapply.Ping{At: time.Now()} // the library reads no clock: the time is passed in
	// As interLink pings: GET with the body [], an empty list of pods
	// (interLink's Slurm plugin answers a ping without it 500).
	req, err := http.NewRequest(http.MethodGet, url, strings.NewReader("[]"))
	var resp *http.Response
	if err == nil {
		req.Header.Set("Content-Type", "application/json")
		resp, err = client.Do(req) // client.Timeout bounds the ping
	}
	code := 0
	if err == nil {
		code = resp.StatusCode
		ping.Body, err = io.ReadAll(io.LimitReader(resp.Body, opts.Reply.ReadLimit()))
		_ = resp.Body.Close()
	}
	ping.Failure = failure.Of(code, err) // "" when answered; else short, stable words: "timeout", "HTTP 503 Service Unavailable"
	// The one gate: the body parsed once, whatever takes the ping after.
	ping, warnings := nodeapply.Judge(ping, opts.Reply)
	logWarnings(warnings)
	res := nodeapply.Apply(node, ping, opts)
	logWarnings(res.Warnings)
	return res
}

// providerLoop pings at every tick and sends what changed.
func providerLoop(ticks <-chan time.Time, client *http.Client, url string, node *corev1.Node, send func(taints, status []byte)) {
	opts := nodeapply.Options{Reply: pingstatus.Options{ProtectedKeys: []string{"site.example.com/static"}}}
	for range ticks {
		res := pingOnce(client, url, node, opts) // node: as stored
		if len(res.Changes) == 0 {
			continue // nothing changed: no API write
		}
		send(res.ObjectPatch(), res.StatusPatch()) // either may be nil
		node = res.Node
	}
}

func logWarnings(warnings []pingstatus.Warning) {
	for _, w := range warnings {
		fmt.Println("  warning:", w)
	}
}

// A provider's loop with net/http, against a plugin that answers, answers
// the same again, then fails: the first ping sends both patches, the
// second nothing, the third only the status (the connectivity condition
// turns False). The plugin reads the ping's body as interLink's Slurm
// plugin does: a list of pods, the empty one for the ping; a ping without
// it is answered 500.
func Example_providerLoop() {
	var calls atomic.Int32
	plugin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if body, _ := io.ReadAll(r.Body); string(body) != "[]" {
			http.Error(w, "unexpected end of JSON input", http.StatusInternalServerError)
			return
		}
		if calls.Add(1) == 3 {
			http.Error(w, "<html>down for maintenance</html>", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprint(w, `{"status":"ok","resources":{"cpu":"64","memory":"-1"},"taints":[{"key":"slurm.example.com/drain","effect":"NoSchedule"}]}`)
	}))
	defer plugin.Close()

	ticks := make(chan time.Time, 3)
	for range cap(ticks) {
		ticks <- time.Now()
	}
	close(ticks)
	providerLoop(ticks, &http.Client{Timeout: 3 * time.Second}, plugin.URL+"/status", &corev1.Node{},
		func(taints, status []byte) {
			fmt.Printf("send: object patch %t, status patch %t\n", taints != nil, status != nil)
		})
	// Output:
	//   warning: resources.memory: -1 must not be negative; memory left unchanged
	// send: object patch true, status patch true
	//   warning: resources.memory: -1 must not be negative; memory left unchanged
	// send: object patch false, status patch true
}

// TestReadmeLoop: the README's provider loop is pingOnce and providerLoop,
// as this file has them, so that it compiles and does what it says.
func TestReadmeLoop(t *testing.T) {
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, "example_loop_test.go", nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	for _, decl := range file.Decls {
		if f, ok := decl.(*ast.FuncDecl); ok && (f.Name.Name == "pingOnce" || f.Name.Name == "providerLoop") {
			if want.Len() > 0 {
				want.WriteString("\n")
			}
			var b bytes.Buffer
			if err := format.Node(&b, fset, &printer.CommentedNode{Node: f, Comments: file.Comments}); err != nil {
				t.Fatal(err)
			}
			want.WriteString(b.String() + "\n")
		}
	}
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	const start = "<!-- the provider loop: nodeapply/example_loop_test.go -->\n```go\n"
	_, rest, ok := strings.Cut(string(readme), start)
	got, _, closed := strings.Cut(rest, "```\n")
	if !ok || !closed {
		t.Fatalf("README.md has no Go block after %q", start)
	}
	if diff := cmp.Diff(want.String(), got); diff != "" {
		t.Errorf("README.md's provider loop differs from pingOnce and providerLoop (-example +README):\n%s", diff)
	}
}
