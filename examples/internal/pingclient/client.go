// Package pingclient asks a plugin's status endpoint once, as a provider does,
// and turns what happened into a [nodeapply.Ping]: the reply's bytes, or a
// short failure that stays the same while the plugin fails the same way
// ([failure.Of]). The Virtual Kubelet example and pingcheck share
// it, so that a plugin author sees exactly what the provider would.
//
// It reaches plugins as they are deployed (see [Config]): over HTTP,
// HTTPS with a CA file and a client certificate, or a Unix socket; with a
// bearer token; through the proxy of the environment. Its files are read
// again at each ping, so that a rotated token, certificate or CA is used
// without a restart. [Config.AddFlags] registers the flags for all of it.
package pingclient

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/pingnode/pingnode/examples/internal/podapi"
	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/nodeapply/failure"
	"github.com/pingnode/pingnode/pingstatus"
)

// Client pings one plugin. Its methods are safe for concurrent use, though
// a provider pings one plugin at a time.
type Client struct {
	timeout     time.Duration // of a ping
	callTimeout time.Duration // of a call of the pod API
	maxBody     int64         // bytes read of a reply
	now         func() time.Time
	log         *slog.Logger
	// request is the URL requested: the plugin's, or for a Unix socket,
	// http://unix and the path, as interLink does.
	request string
	// socket is the Unix socket's path, or "".
	socket string

	mu        sync.Mutex
	token     *watched[string] // nil without a token file
	tlsFiles  *tlsFiles        // nil for http and unix URLs
	transport *http.Transport
	client    *http.Client
}

// New returns a client for the plugin that cfg names. It fails when cfg
// does not pass [Config.Validate], or when a file it names cannot be read
// or used; an error names the flag of the file and never holds a token.
func New(cfg Config) (*Client, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	scheme, socket, _ := parseURL(cfg.URL)
	c := &Client{
		timeout:     cfg.Timeout,
		callTimeout: cfg.CallTimeout,
		maxBody:     int64(cfg.MaxBodyBytes) + 1,
		now:         cfg.Now,
		log:         cfg.Log,
		request:     cfg.URL,
		socket:      socket,
	}
	if cfg.MaxBodyBytes <= 0 {
		c.maxBody = pingstatus.DefaultMaxBodyBytes + 1
	}
	if c.callTimeout <= 0 {
		c.callTimeout = DefaultCallTimeout
	}
	if c.now == nil {
		c.now = time.Now
	}
	if c.log == nil {
		c.log = slog.Default()
	}
	if socket != "" {
		path := cfg.Path
		if path == "" {
			path = DefaultPath
		}
		c.request = "http://unix" + path
	}
	if cfg.TokenFile != "" {
		c.token = newToken(&cfg)
		if err := c.token.load(); err != nil {
			return nil, err
		}
		if scheme == "http" {
			c.log.Warn("the bearer token goes to the plugin in clear text: its URL is http://, not https://")
		}
	}
	if scheme == "https" {
		c.tlsFiles = newTLSFiles(&cfg)
		if err := c.tlsFiles.load(); err != nil {
			return nil, err
		}
		if cfg.InsecureSkipTLSVerify {
			c.log.Warn("the plugin's server certificate is not verified (" + cfg.flag(flagInsecure) + "): anyone between here and the plugin can answer for it")
		}
	}
	c.transport = c.newTransport()
	c.client = &http.Client{Transport: c.transport}
	return c, nil
}

// newTransport returns a transport for the TLS files in use: HTTP/1.1
// (interLink's client speaks it too), the proxy of the environment, and
// for a Unix socket, every connection to the socket and no proxy.
func (c *Client) newTransport() *http.Transport {
	dialer := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	t := &http.Transport{
		Proxy:                  http.ProxyFromEnvironment,
		OnProxyConnectResponse: proxyConnectResponse,
		DialContext:            dialer.DialContext,
		TLSHandshakeTimeout:    10 * time.Second,
		IdleConnTimeout:        90 * time.Second,
		MaxIdleConnsPerHost:    1,
	}
	if c.tlsFiles != nil {
		t.TLSClientConfig = c.tlsFiles.config()
	}
	if c.socket != "" {
		t.Proxy = nil
		t.DialContext = func(ctx context.Context, _, _ string) (net.Conn, error) {
			return dialer.DialContext(ctx, "unix", c.socket)
		}
	}
	return t
}

// proxyConnectRefused is a proxy's refusal to open a tunnel to the
// plugin, by its status code: net/http would report the proxy's own
// reason phrase instead.
type proxyConnectRefused int

func (code proxyConnectRefused) Error() string {
	return "the proxy refused the tunnel: " + failure.Of(int(code), nil)
}

func proxyConnectResponse(_ context.Context, _ *url.URL, _ *http.Request, resp *http.Response) error {
	if resp.StatusCode != http.StatusOK {
		return proxyConnectRefused(resp.StatusCode)
	}
	return nil
}

// current returns the HTTP client and the token for a ping, after it read
// the files again. When the TLS files changed, the new client connects
// anew, and the old one's idle connections are closed, so that the ping
// makes a handshake with the new certificate.
func (c *Client) current() (*http.Client, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	token := ""
	if c.token != nil {
		c.token.refresh(c.log)
		token = c.token.value
	}
	if c.tlsFiles != nil && c.tlsFiles.refresh(c.log) {
		old := c.transport
		c.transport = c.newTransport()
		c.client = &http.Client{Transport: c.transport}
		old.CloseIdleConnections()
	}
	return c.client, token
}

// Ping asks the plugin once, as interLink's API does: GET with the body
// [podapi.PingBody] (an empty list of pods) as JSON, which interLink's
// Slurm plugin needs (it answers a ping without a body 500). The
// result's At is when the ping began;
// Body holds at most one byte more than the body limit
// ([Config.MaxBodyBytes]). A reply other than HTTP 200, a timeout or a
// transport error is a failure, named by [failure.Of], except that
// a ping cut by the client's own timeout is "timeout after" the timeout.
// The reply's body, the URL and the token are never part of a failure.
func (c *Client) Ping(ctx context.Context) nodeapply.Ping {
	ping := nodeapply.Ping{At: c.now()}
	body, code, words, err := c.exchange(ctx, c.timeout, http.MethodGet, c.request, []byte(podapi.PingBody), c.maxBody)
	if err != nil || code != http.StatusOK {
		ping.Failure = words
		return ping
	}
	ping.Body = body
	return ping
}

// exchange sends one request to the plugin, with the client's transport
// and token, bounded by timeout (none when zero or less), and reads at
// most limit bytes of its answer; a body, when there is one, is JSON. It
// returns the status code (0 without an answer). An answer other than
// HTTP 200, a timeout, a transport error or an answer cut short is a
// failure, named by its words (a timeout that is the client's own says
// how long it was), with the error behind them, which never holds the
// URL, except that an answer other than 200 has no error; its body, at
// most maxWords bytes of it with the token in it replaced by "[token]",
// comes back as answer.
func (c *Client) exchange(ctx context.Context, timeout time.Duration, method, target string, body []byte, limit int64) (answer []byte, code int, words string, err error) {
	client, token := c.current()
	parent := ctx
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	var content io.Reader
	if body != nil {
		content = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, content)
	if err != nil { // the URL passed Validate
		return nil, 0, c.failure(parent, timeout, 0, err), withoutURL(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, 0, c.failure(parent, timeout, 0, err), withoutURL(err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		// Keep the plugin's words, and read a little more of the body,
		// so that the connection can serve the next request.
		answer, _ = io.ReadAll(io.LimitReader(resp.Body, maxWords))
		_, _ = io.CopyN(io.Discard, resp.Body, 64<<10)
		if token != "" { // a plugin that says the token back does not put it in a log
			answer = bytes.ReplaceAll(answer, []byte(token), []byte("[token]"))
		}
		return answer, resp.StatusCode, c.failure(parent, timeout, resp.StatusCode, nil), nil
	}
	answer, err = io.ReadAll(io.LimitReader(resp.Body, limit))
	if err != nil {
		return nil, resp.StatusCode, c.failure(parent, timeout, 0, err), withoutURL(err)
	}
	return answer, resp.StatusCode, "", nil
}

// failure names what went wrong; a timeout that is the client's own says
// how long it was.
func (c *Client) failure(parent context.Context, timeout time.Duration, code int, err error) string {
	words := failure.Of(code, err)
	if words == "timeout" && timeout > 0 && parent.Err() == nil {
		return "timeout after " + timeout.String()
	}
	return words
}

// Close closes the client's idle connections. The client may still ping
// after it, with new connections.
func (c *Client) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.transport.CloseIdleConnections()
}
