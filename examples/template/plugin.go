package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/nodeapply/failure"
	"github.com/pingnode/pingnode/pingstatus"
)

// plugin pings the plugin as interLink's API does: GET on its status
// URL with the body [] as JSON (interLink's Slurm plugin answers a ping
// without a body 500). It is the template's own few lines of net/http,
// so that a copy needs nothing but the library; the reference provider
// adds TLS files, a bearer token and interLink's pod calls
// (examples/internal/pingclient), which a copy takes when it needs them.
type plugin struct {
	client  *http.Client
	url     string // what is asked: for a unix URL, http://plugin/status over the socket
	timeout time.Duration
	now     func() time.Time
}

// newPlugin returns the client of the plugin at raw: http://, https://
// (verified with the system's CAs) or unix:///path/to/plugin.sock (its
// path /status). Its error never holds the URL, which may carry
// credentials.
func newPlugin(raw string, timeout time.Duration, now func() time.Time) (*plugin, error) {
	u, err := url.Parse(raw)
	switch {
	case raw == "":
		return nil, errors.New("empty")
	case err != nil:
		return nil, errors.New("not a URL")
	}
	p := &plugin{client: &http.Client{}, url: raw, timeout: timeout, now: now}
	switch u.Scheme {
	case "http", "https":
		if u.Host == "" {
			return nil, errors.New("no host")
		}
	case "unix":
		if u.Host != "" || !strings.HasPrefix(u.Path, "/") {
			return nil, errors.New("a unix URL names a socket by its absolute path, as in unix:///var/run/plugin.sock")
		}
		var dialer net.Dialer
		p.client.Transport = &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return dialer.DialContext(ctx, "unix", u.Path)
		}}
		p.url = "http://plugin/status"
	default:
		return nil, fmt.Errorf("scheme %q: want http, https or unix", u.Scheme)
	}
	return p, nil
}

// ping asks the plugin once. The result's At is when it began, and its
// Body at most one byte more than the library's limit, so that Parse
// says when a reply is too large. An answer other than HTTP 200, a
// timeout or a transport error is a failure, in words that stay the same
// while the plugin fails the same way (failure.Of; the client's own
// timeout says how long it was), never with the URL or the body.
func (p *plugin) ping(ctx context.Context) nodeapply.Ping {
	ping := nodeapply.Ping{At: p.now()}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.url, strings.NewReader("[]"))
	if err != nil {
		ping.Failure = failure.Of(0, err)
		return ping
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := p.client.Do(req)
	if err == nil {
		defer func() { _ = resp.Body.Close() }()
		if resp.StatusCode == http.StatusOK {
			ping.Body, err = io.ReadAll(io.LimitReader(resp.Body, pingstatus.DefaultMaxBodyBytes+1))
			if err == nil {
				return ping
			}
		}
	}
	code := 0
	if resp != nil && err == nil {
		code = resp.StatusCode
	}
	ping.Failure = failure.Of(code, err)
	if ping.Failure == "timeout" && parent.Err() == nil {
		ping.Failure = "timeout after " + p.timeout.String()
	}
	ping.Body = nil
	return ping
}
