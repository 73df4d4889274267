// Package pingclient asks a plugin's status endpoint once, as a provider does,
// and turns what happened into a [nodeapply.Ping]: the reply's bytes, or a
// short failure that stays the same while the plugin fails the same way.
// The Virtual Kubelet example and pingcheck share it, so that a plugin
// author sees exactly what the provider would.
package pingclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"syscall"
	"time"

	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/pingstatus"
)

// Client pings one plugin.
type Client struct {
	// URL is the plugin's status endpoint.
	URL string
	// Timeout bounds one ping, from sending the request to the last byte
	// of the reply.
	Timeout time.Duration
	// HTTP is the client to use; nil means http.DefaultClient, shared
	// with everything else in the process that uses it (Timeout still
	// bounds each ping).
	HTTP *http.Client
	// Now is the clock, for tests; nil means time.Now.
	Now func() time.Time
}

// Ping asks the plugin once. The result's At is when the request was
// sent; Body holds at most one byte more than
// pingstatus.DefaultMaxBodyBytes, so that Parse can tell an oversized
// reply. A reply other than HTTP 200, a timeout or a transport error is a
// failure; the reply's body is never part of the failure.
func (c *Client) Ping(ctx context.Context) nodeapply.Ping {
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	ping := nodeapply.Ping{At: now()}
	if c.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.Timeout)
		defer cancel()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.URL, nil)
	if err != nil {
		ping.Failure = "bad plugin URL"
		return ping
	}
	httpClient := c.HTTP
	if httpClient == nil {
		httpClient = http.DefaultClient
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		ping.Failure = c.describe(ctx, err)
		return ping
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		ping.Failure = "HTTP " + resp.Status
		return ping
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, pingstatus.DefaultMaxBodyBytes+1))
	if err != nil {
		ping.Failure = "reading the reply: " + c.describe(ctx, err)
		return ping
	}
	ping.Body = body
	return ping
}

// describe names a transport error without the URL (which may carry a
// token) and without anything that changes from one ping to the next.
func (c *Client) describe(ctx context.Context, err error) string {
	var netErr net.Error
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return fmt.Sprintf("timeout after %s", c.Timeout)
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset"
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return "connection closed before the reply ended"
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return "no such host " + dnsErr.Name
	}
	var urlErr *url.Error
	if errors.As(err, &urlErr) {
		err = urlErr.Err
	}
	return "transport error: " + err.Error()
}
