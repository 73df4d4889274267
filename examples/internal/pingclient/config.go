package pingclient

import (
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"
)

// DefaultPath is the HTTP path of the request to a plugin reached over a
// Unix socket, when [Config.Path] is empty.
const DefaultPath = "/status"

// DefaultCallTimeout is [Config.CallTimeout] when it is not set: the
// time interLink's API gives a plugin to answer (its
// ResponseHeaderTimeout, cmd/interlink/main.go).
const DefaultCallTimeout = 120 * time.Second

// maxSocketPath is the longest path of a Unix socket that Linux takes
// (sun_path holds 108 bytes with the terminating NUL).
const maxSocketPath = 107

// Config says how to reach a plugin. Its zero value with a URL pings over
// plain HTTP, or over HTTPS verified with the system's CAs, with no
// credentials, through the proxy that the environment names
// (http.ProxyFromEnvironment: HTTPS_PROXY, HTTP_PROXY, NO_PROXY). Every
// file is read at [New], which fails if one cannot be used, and read again
// at each ping, so that a rotated file is used from the next ping on
// without a restart.
type Config struct {
	// URL is the plugin's status endpoint: http://host:port/path,
	// https://host:port/path, or unix:///path/to/plugin.sock for a plugin
	// that listens on a Unix socket, as interLink's InterlinkURL does
	// (then Path is the HTTP path of the request).
	URL string
	// Path is the HTTP path of the request when URL names a Unix socket;
	// empty means [DefaultPath]. An http or https URL carries its own path.
	Path string
	// Timeout bounds one ping, from the first byte sent to the last byte
	// of the reply read; zero or less means no bound but the caller's
	// context.
	Timeout time.Duration
	// CallTimeout bounds one call of the plugin's pod API (a create, a
	// status of pods, a delete), whose work takes longer than a ping
	// (interLink's Slurm plugin runs sbatch within a create, one squeue a
	// job within a status, and may sleep 5 s within a delete); zero or
	// less means [DefaultCallTimeout].
	CallTimeout time.Duration
	// MaxBodyBytes is the largest reply that the caller accepts, the
	// MaxBodyBytes of the pingstatus.Options it parses the reply with;
	// zero or less means pingstatus.DefaultMaxBodyBytes. The client reads
	// one byte more, so that pingstatus.Parse tells an oversized reply.
	MaxBodyBytes int

	// CAFile is a PEM file of CA certificates that verify the plugin's
	// server certificate (interLink's TLS.CACertFile), trusted besides
	// the system's CAs.
	CAFile string
	// CAOnly trusts the CAs of CAFile alone, not the system's.
	CAOnly bool
	// CertFile and KeyFile are the PEM files of the client certificate
	// and its private key, for mutual TLS (interLink's TLS.CertFile and
	// TLS.KeyFile). The certificate is sent whatever CAs the server says
	// it accepts, so that a refusal comes with the server's reason.
	CertFile, KeyFile string
	// TokenFile holds a bearer token, sent in the Authorization header
	// (interLink's VKTokenFile). Leading and trailing white space is
	// dropped.
	TokenFile string
	// InsecureSkipTLSVerify accepts any server certificate: anyone
	// between the client and the plugin can answer for the plugin, and
	// read the token. [New] logs a warning that says so.
	InsecureSkipTLSVerify bool

	// Log receives the warnings: a file that could not be used at a ping
	// (once for each problem), and the start with InsecureSkipTLSVerify
	// or a token sent in clear. Nil means slog.Default().
	Log *slog.Logger
	// Now is the clock of the pings' times, for tests; nil means
	// time.Now.
	Now func() time.Time

	// flagPrefix is the prefix of the flags that AddFlags registered, for
	// the messages of Validate.
	flagPrefix string
}

// The names of the flags, without their prefix.
const (
	flagCAFile     = "ca-file"
	flagCAOnly     = "ca-only"
	flagCertFile   = "cert-file"
	flagKeyFile    = "key-file"
	flagTokenFile  = "token-file"
	flagInsecure   = "insecure-skip-tls-verify"
	flagPath       = "http-path"
	pluginURLField = "plugin URL"
)

// flag returns the flag's name as a user types it.
func (c *Config) flag(name string) string { return "-" + c.flagPrefix + name }

// Validate reports what is wrong with the configuration, each problem on a
// line that starts with the flag it is about (as [Config.AddFlags] named
// it), or with "plugin URL". A caller that took the configuration from
// flags exits with status 2 on an error. The message never holds the URL,
// which may carry credentials.
func (c *Config) Validate() error {
	var errs []error
	problem := func(name, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", name, fmt.Sprintf(format, args...)))
	}
	scheme, socket, err := parseURL(c.URL)
	if err != nil {
		problem(pluginURLField, "%v", err)
	}
	if c.Path != "" {
		switch {
		case err == nil && scheme != "unix":
			problem(c.flag(flagPath), "only with a unix:// plugin URL; an %s URL carries its own path", scheme)
		case !strings.HasPrefix(c.Path, "/"):
			problem(c.flag(flagPath), "want a path that starts with /, like %s", DefaultPath)
		}
	}
	if len(socket) > maxSocketPath {
		problem(pluginURLField, "the socket's path is %d bytes long, more than the %d that a Unix socket address holds", len(socket), maxSocketPath)
	}
	if c.CertFile != "" && c.KeyFile == "" {
		problem(c.flag(flagCertFile), "needs %s", c.flag(flagKeyFile))
	}
	if c.KeyFile != "" && c.CertFile == "" {
		problem(c.flag(flagKeyFile), "needs %s", c.flag(flagCertFile))
	}
	if c.CAOnly && c.CAFile == "" {
		problem(c.flag(flagCAOnly), "needs %s", c.flag(flagCAFile))
	}
	if c.InsecureSkipTLSVerify && c.CAFile != "" {
		problem(c.flag(flagInsecure), "with %s, which it would ignore", c.flag(flagCAFile))
	}
	if err == nil && scheme != "https" {
		for _, f := range []struct {
			name string
			set  bool
		}{
			{flagCAFile, c.CAFile != ""}, {flagCAOnly, c.CAOnly}, {flagCertFile, c.CertFile != ""},
			{flagKeyFile, c.KeyFile != ""}, {flagInsecure, c.InsecureSkipTLSVerify},
		} {
			if f.set {
				problem(c.flag(f.name), "only with an https:// plugin URL")
			}
		}
	}
	return errors.Join(errs...)
}

// parseURL checks a plugin URL and returns its scheme, and for a unix URL
// the socket's path. Its errors never hold the URL.
func parseURL(raw string) (scheme, socket string, err error) {
	if raw == "" {
		return "", "", errors.New("empty")
	}
	u, err := url.Parse(raw)
	if err != nil {
		if urlErr, ok := errors.AsType[*url.Error](err); ok {
			err = urlErr.Err // without the URL
		}
		return "", "", fmt.Errorf("not a URL: %w", err)
	}
	switch u.Scheme {
	case "http", "https":
		if u.Host == "" {
			return "", "", errors.New("no host")
		}
		return u.Scheme, "", nil
	case "unix":
		if u.Host != "" || !strings.HasPrefix(u.Path, "/") {
			return "", "", errors.New("a unix URL names a socket by its absolute path, as in unix:///var/run/plugin.sock")
		}
		return u.Scheme, u.Path, nil
	default:
		return "", "", fmt.Errorf("scheme %q: want http, https or unix", u.Scheme)
	}
}
