package main

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/pingnode/pingnode/examples/internal/pingclient"
	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/vnode"
	"github.com/pingnode/pingnode/internal/testpki"
	"github.com/pingnode/pingnode/nodeapply"
)

// The provider reaches a plugin as it is deployed: HTTPS with
// the plugin's own CA, mutual TLS and a bearer token, all rotated while it
// runs, on the real control plane.

// probeHeader marks the test's own requests to the plugin, which the
// plugin does not count as the provider's.
const probeHeader = "X-Pingnode-Test-Probe"

// credentials are what a request presented: its bearer token and the
// serial number of its client certificate.
type credentials struct{ token, serial string }

// tlsPlugin is a plugin's status endpoint as it is deployed: HTTPS with a
// server certificate of the test's CA, which requires a client
// certificate of that CA and verifies it, and then a bearer token. It
// answers as answers does a request whose token and certificate it
// accepts, and 401 any other.
type tlsPlugin struct {
	answers *fakePlugin
	server  *httptest.Server

	mu      sync.Mutex
	tokens  map[string]bool // accepted
	serials map[string]bool // accepted client certificates
	// echo refuses every request with 401 and a body that echoes the
	// token, as a careless plugin might.
	echo bool
	// last is what the provider's last accepted ping presented; refused
	// counts the provider's pings refused.
	last    credentials
	refused int
}

// startTLSPlugin starts a plugin with a server certificate of ca, which
// answers "ok" until told otherwise and accepts no one yet, and stops it
// when the test ends.
func startTLSPlugin(t *testing.T, ca *testpki.CA) *tlsPlugin {
	t.Helper()
	p := &tlsPlugin{answers: &fakePlugin{}}
	p.answers.reply(http.StatusOK, "ok", 0)
	p.server = httptest.NewUnstartedServer(p)
	p.server.TLS = &tls.Config{
		Certificates: []tls.Certificate{ca.Issue(t, testpki.Loopback).Certificate},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    ca.Pool(),
		MinVersion:   tls.VersionTLS12,
	}
	p.server.Config.ErrorLog = log.New(t.Output(), "plugin: ", 0) // handshakes refused
	p.server.StartTLS()
	t.Cleanup(p.server.Close)
	return p
}

func (p *tlsPlugin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var got credentials
	if r.TLS != nil && len(r.TLS.PeerCertificates) > 0 {
		got.serial = r.TLS.PeerCertificates[0].SerialNumber.String()
	}
	token, bearer := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	got.token = token
	probe := r.Header.Get(probeHeader) != ""
	p.mu.Lock()
	accepted := bearer && p.tokens[got.token] && p.serials[got.serial] && !p.echo
	echo := p.echo
	switch {
	case probe:
	case accepted:
		p.last = got
	default:
		p.refused++
	}
	p.mu.Unlock()
	if !accepted {
		w.WriteHeader(http.StatusUnauthorized)
		if echo {
			_, _ = io.WriteString(w, "invalid bearer token "+token)
		}
		return
	}
	p.answers.ServeHTTP(w, r)
}

// accept makes the plugin accept these tokens and client certificates,
// and no others.
func (p *tlsPlugin) accept(tokens []string, pairs ...*testpki.Leaf) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.tokens, p.serials = map[string]bool{}, map[string]bool{}
	for _, token := range tokens {
		p.tokens[token] = true
	}
	for _, pair := range pairs {
		p.serials[pair.Serial.String()] = true
	}
}

func (p *tlsPlugin) setEcho(echo bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.echo = echo
}

// seen returns what the provider's last accepted ping presented, and how
// many of its pings were refused.
func (p *tlsPlugin) seen() (credentials, int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.last, p.refused
}

// probe asks the plugin once, as a client with the client certificate
// pair (none if nil) and the token, and returns the HTTP status, or the
// error when there was no reply.
func (p *tlsPlugin) probe(ctx context.Context, ca *testpki.CA, pair *testpki.Leaf, token string) (int, error) {
	config := &tls.Config{RootCAs: ca.Pool(), MinVersion: tls.VersionTLS12}
	if pair != nil {
		config.Certificates = []tls.Certificate{pair.Certificate}
	}
	transport := &http.Transport{TLSClientConfig: config}
	defer transport.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.server.URL+"/status", nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set(probeHeader, "yes")
	resp, err := (&http.Client{Transport: transport, Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		return 0, err
	}
	defer func() { _ = resp.Body.Close() }()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, nil
}

// rewrite replaces the file at path by one with data, by a rename, as a
// rotation by a controller or a projected volume does.
func rewrite(t *testing.T, path string, data []byte) {
	t.Helper()
	next := path + ".next"
	if err := os.WriteFile(next, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(next, path); err != nil {
		t.Fatal(err)
	}
}

// morePings waits until the provider has pinged n more times.
func morePings(t *testing.T, p *vnode.Node, n int64) {
	t.Helper()
	pings := p.Count.Pings.Load()
	eventually(t, "more pings", func(context.Context) (bool, string) { return p.Count.Pings.Load() >= pings+n, "pings" })
}

// TestTransportRotation: the provider pings a plugin that requires mutual
// TLS and a bearer token, configured with a CA file, a client certificate
// and key, and a token file. The node registers and follows the plugin's
// replies. Both the token and the client certificate are rotated while
// it runs: the plugin first takes the old and the new, then, once the
// provider presents the new ones, only those, refusing the old ones
// (checked with requests of the test's own); no ping fails on the way,
// not even while the certificate's file is new and the key's still old,
// and a later reply still reaches the node.
//
// The token appears in nothing the provider writes to the API server (its
// events, the node's conditions and annotations), even when the plugin
// refuses it with a body that echoes it. The provider's log is not
// checked: startProvider writes it to the test's output (t.Output), which
// the test cannot read back without editing startProvider; pingclient's
// own tests check its log lines for tokens.
func TestTransportRotation(t *testing.T) {
	needsControlPlane(t)
	const name = "vk-transport"
	clearNodeEvents(t, name)
	forgetNodes(t, name)
	ca := testpki.NewCA(t, "pingnode test CA")
	plugin := startTLSPlugin(t, ca)
	oldPair := ca.Issue(t, testpki.Options{CommonName: "provider-old", Client: true})
	newPair := ca.Issue(t, testpki.Options{CommonName: "provider-new", Client: true})
	oldToken, newToken := "old-"+rand.Text(), "new-"+rand.Text()
	plugin.accept([]string{oldToken}, oldPair)

	dir := t.TempDir()
	files := pingclient.Config{
		CAFile: filepath.Join(dir, "ca.pem"), CAOnly: true,
		CertFile: filepath.Join(dir, "provider.pem"), KeyFile: filepath.Join(dir, "provider-key.pem"),
		TokenFile: filepath.Join(dir, "token"),
	}
	rewrite(t, files.CAFile, ca.PEM)
	rewrite(t, files.CertFile, oldPair.CertPEM)
	rewrite(t, files.KeyFile, oldPair.KeyPEM)
	rewrite(t, files.TokenFile, []byte(oldToken+"\n"))

	p, _ := startProvider(t, name, time.Hour, func(c *vnode.Config) {
		c.PluginURL, c.Transport = plugin.server.URL+"/status", files
		c.Interval = 100 * time.Millisecond
	})
	plugin.answers.reply(http.StatusOK, goodReply, 0)
	eventually(t, "the good reply is stored, the plugin reachable", func(ctx context.Context) (bool, string) {
		if ok, why := conditionIs(stored(ctx, t, name), nodeapply.DefaultConnectivityCondition, corev1.ConditionTrue); !ok {
			return false, why
		}
		return nothingLost(ctx, t, name, false)
	})
	if got, _ := plugin.seen(); got != (credentials{oldToken, oldPair.Serial.String()}) {
		t.Errorf("the provider presented %+v, want the first token and certificate", got)
	}
	plugin.answers.reply(http.StatusOK, strings.Replace(goodReply, `"cpu":"64"`, `"cpu":"48"`, 1), 0)
	eventually(t, "the changed cpu is stored", func(ctx context.Context) (bool, string) {
		return hasResources(stored(ctx, t, name), map[string]string{"cpu": "48"})
	})
	reachableSince := vnode.ConditionNamed(stored(t.Context(), t, name), nodeapply.DefaultConnectivityCondition).LastTransitionTime

	// The rotation, as a plugin's operator makes it: the plugin takes the
	// new credentials beside the old ones; the files change, the key's
	// some pings after the certificate's; once the provider presents the
	// new ones, the plugin takes them alone.
	plugin.accept([]string{oldToken, newToken}, oldPair, newPair)
	rewrite(t, files.TokenFile, []byte(newToken+"\n"))
	rewrite(t, files.CertFile, newPair.CertPEM)
	morePings(t, p, 3) // with a certificate that does not match its key: the old pair stays
	rewrite(t, files.KeyFile, newPair.KeyPEM)
	rotated := credentials{newToken, newPair.Serial.String()}
	eventually(t, "the provider presents the new token and certificate", func(context.Context) (bool, string) {
		got, _ := plugin.seen()
		return got == rotated, "presented " + got.serial
	})
	plugin.accept([]string{newToken}, newPair)
	morePings(t, p, 20)
	if got, refused := plugin.seen(); got != rotated || refused != 0 {
		t.Errorf("after the rotation the provider presented %+v, and %d of its pings were refused", got, refused)
	}

	// The plugin takes the new credentials alone.
	for _, c := range []struct {
		what  string
		pair  *testpki.Leaf
		token string
		want  int
	}{
		{"the old certificate, the new token", oldPair, newToken, http.StatusUnauthorized},
		{"the new certificate, the old token", newPair, oldToken, http.StatusUnauthorized},
		{"the new certificate, the new token", newPair, newToken, http.StatusOK},
	} {
		if got, err := plugin.probe(t.Context(), ca, c.pair, c.token); err != nil || got != c.want {
			t.Errorf("%s: HTTP %d (%v), want %d", c.what, got, err, c.want)
		}
	}
	if got, err := plugin.probe(t.Context(), ca, nil, newToken); err == nil {
		t.Errorf("no client certificate: HTTP %d, want the handshake refused", got)
	}

	plugin.answers.reply(http.StatusOK, strings.Replace(goodReply, `"cpu":"64"`, `"cpu":"32"`, 1), 0)
	eventually(t, "a later change of the reply is stored", func(ctx context.Context) (bool, string) {
		return hasResources(stored(ctx, t, name), map[string]string{"cpu": "32"})
	})
	node := stored(t.Context(), t, name)
	if n := p.Count.Failures.Load(); n != 0 {
		t.Errorf("%d pings failed", n)
	}
	if c := vnode.ConditionNamed(node, nodeapply.DefaultConnectivityCondition); c.Status != corev1.ConditionTrue || !c.LastTransitionTime.Equal(&reachableSince) {
		t.Errorf("connectivity %s since %s, want True since %s: it turned False on the way", c.Status, c.LastTransitionTime, reachableSince)
	}
	if failed := eventsWith(nodeEventsOf(t.Context(), t, name), vnode.ReasonPingFailed); len(failed) != 0 {
		t.Errorf("ping failures on the way:%s", describe(failed))
	}

	// A plugin that refuses the token and echoes it.
	plugin.setEcho(true)
	eventually(t, "the refusal is on the node", func(ctx context.Context) (bool, string) {
		events := nodeEventsOf(ctx, t, name)
		node := stored(ctx, t, name)
		ok, why := conditionIs(node, nodeapply.DefaultConnectivityCondition, corev1.ConditionFalse)
		return ok && len(eventsWith(events, vnode.ReasonPingFailed)) == 1, why + describe(events)
	})
	node = stored(t.Context(), t, name)
	if c := vnode.ConditionNamed(node, nodeapply.DefaultConnectivityCondition); c.Message != "the plugin did not answer its last ping: HTTP 401 Unauthorized: credentials refused" {
		t.Errorf("connectivity message %q", c.Message)
	}
	plugin.setEcho(false)
	eventually(t, "reachable again, nothing lost", func(ctx context.Context) (bool, string) {
		node := stored(ctx, t, name)
		if ok, why := conditionIs(node, nodeapply.DefaultConnectivityCondition, corev1.ConditionTrue); !ok {
			return false, why
		}
		if ok, why := hasResources(node, map[string]string{"cpu": "32", "memory": "64Gi", "nvidia.com/gpu": "4"}); !ok {
			return false, why
		}
		return taintSet(node)[pluginTaint] && taintSet(node)[protectedTaint] && taintSet(node)[staticTaint], "taints " + strings.Join(keys(taintSet(node)), ", ")
	})

	events := nodeEventsOf(t.Context(), t, name)
	node = stored(t.Context(), t, name)
	var said []string
	for _, e := range events {
		said = append(said, e.Reason+": "+e.Message)
	}
	for _, c := range node.Status.Conditions {
		said = append(said, string(c.Type)+": "+c.Reason+": "+c.Message)
	}
	for k, v := range node.Annotations {
		said = append(said, k+": "+v)
	}
	for _, s := range said {
		for _, token := range []string{oldToken, newToken} {
			if strings.Contains(s, token) {
				t.Errorf("a token on the node: %q", s)
			}
		}
	}
	t.Logf("%d events on the node, none with a token:%s", len(events), describe(events))
	noWriteErrors(t, p)
}
