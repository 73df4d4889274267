package failure_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/nodeapply/failure"
	"github.com/pingnode/pingnode/pingstatus"
)

// A provider's ping with net/http: the failure names what went wrong in
// words that stay the same while the plugin fails the same way, and never
// hold the URL (here with a token in its query) nor the reply's body.
func ExampleOf() {
	ping := func(client *http.Client, url string) nodeapply.Ping {
		p := nodeapply.Ping{At: time.Now()}
		resp, err := client.Get(url)
		if err != nil {
			p.Failure = failure.Of(0, err)
			return p
		}
		defer func() { _ = resp.Body.Close() }()
		// One byte more than Parse accepts, so that Parse tells an
		// oversized reply.
		body, err := io.ReadAll(io.LimitReader(resp.Body, pingstatus.DefaultMaxBodyBytes+1))
		if p.Failure = failure.Of(resp.StatusCode, err); p.Reached() {
			p.Body = body
		}
		return p
	}

	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, `{"status":"ok","resources":{"cpu":"64"}}`)
	}))
	defer up.Close()
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "<html>backend down at 12:00:01</html>", http.StatusServiceUnavailable)
	}))
	defer failing.Close()
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()
	slow := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	defer slow.Close()

	client := &http.Client{Timeout: 100 * time.Millisecond}
	for _, url := range []string{up.URL, failing.URL, gone.URL, slow.URL} {
		p := ping(client, url+"/status?token=s3cret")
		if p.Reached() {
			fmt.Printf("answered: %s\n", p.Body)
			continue
		}
		fmt.Printf("failed: %s\n", p.Failure)
	}
	// Output:
	// answered: {"status":"ok","resources":{"cpu":"64"}}
	// failed: HTTP 503 Service Unavailable
	// failed: connection refused
	// failed: timeout
}
