package failure

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"

	"github.com/pingnode/pingnode/internal/text"
	"github.com/pingnode/pingnode/nodeapply"
)

// Of returns the words for a ping that got no usable answer, for the
// Failure field of a [nodeapply.Ping]: "" when the plugin answered (err is
// nil and code is 200), and otherwise a short description that is the same
// at every ping that fails the same way. err is the error of the request
// or of reading its reply; when err is nil, code is the reply's HTTP
// status code. The words never hold a secret nor anything that changes
// from one ping to the next: no URL (a URL may carry credentials or a
// token in its query), no address or port, no time, no header and no reply
// body. They are at most [nodeapply.MaxFailureBytes] long.
//
// The words for a status code:
//
//   - "HTTP 401 Unauthorized: credentials refused" and
//     "HTTP 403 Forbidden: credentials refused": the plugin refused the
//     request's credentials (a bearer token, a client certificate);
//   - "HTTP <code> <text>" for any other code, text being
//     [http.StatusText] (never the server's own reason phrase), or
//     "HTTP <code>" for a code that has none.
//
// The words for an error, the first that applies:
//
//   - "proxy: " and the words below, for an error in reaching the proxy
//     ([http.ProxyFromEnvironment]) rather than the plugin;
//   - "timeout": a deadline passed (http.Client.Timeout, the context's
//     deadline, a network timeout, the TLS handshake timeout);
//   - "canceled": the context was canceled;
//   - "unix socket missing", "unix socket refused the connection" (no
//     server listens on it) and "unix socket not accessible" (permission
//     denied), when dialing a Unix socket;
//   - "server speaks plain HTTP, not TLS" (an https URL answered in plain
//     HTTP) and "server does not speak TLS" (an https URL answered with
//     something else). The reverse, a plain-HTTP request to a TLS server,
//     cannot be told from the status alone: Go's net/http and nginx answer
//     it with "HTTP 400 Bad Request";
//   - "client certificate refused (<alert>)": the server refused the TLS
//     handshake with an alert about the client's certificate: "certificate
//     required" (TLS 1.3, none was sent), "bad certificate", "unknown
//     certificate authority", "expired certificate", "revoked
//     certificate", "unsupported certificate", "unknown certificate" or
//     "access denied". In TLS 1.3 the client learns it when it reads the
//     reply, not in the handshake; the words are the same. (A Go client
//     with tls.Config.Certificates sends none when the server names other
//     CAs, and so hears "certificate required"; one with
//     GetClientCertificate sends it anyway and hears the server's reason);
//   - "TLS alert from the server: <alert>" for another alert, such as
//     "handshake failure", which a Go server sends in TLS 1.2 when the
//     client sent no certificate, and also when the two share no cipher;
//   - "server certificate not trusted": signed by no CA the client trusts
//     (self-signed, or the CA file is missing the issuer);
//   - "server certificate expired or not yet valid";
//   - "server certificate for another name": its names do not include the
//     URL's host;
//   - "server certificate not for a TLS server" (its extended key usage),
//     and "server certificate invalid" for its other faults;
//   - "connection refused", "connection reset", "connection closed while
//     sending the request" (a broken pipe), "connection aborted",
//     "network unreachable" and "host unreachable";
//   - "connection closed before the reply ended": the connection ended
//     early ([io.EOF], [io.ErrUnexpectedEOF]);
//   - "no such host <host>", and "cannot resolve <host>: <reason>" for
//     another failure of name resolution;
//   - "malformed HTTP reply": the server does not speak HTTP (it answered
//     with something else, or spoke before it was asked);
//   - otherwise the text of the innermost error, after unwrapping the
//     [url.Error] and [net.OpError] that carry the URL and the addresses.
//
// Of is pure: it reads no clock, does no I/O and keeps no state.
func Of(code int, err error) string {
	if err == nil {
		return statusFailure(code)
	}
	return text.Clean(transportFailure(err), nodeapply.MaxFailureBytes)
}

// statusFailure names an HTTP status code other than 200.
func statusFailure(code int) string {
	if code == http.StatusOK {
		return ""
	}
	s := "HTTP " + strconv.Itoa(code)
	if t := http.StatusText(code); t != "" {
		s += " " + t
	}
	if code == http.StatusUnauthorized || code == http.StatusForbidden {
		s += ": credentials refused"
	}
	return s
}

// aboutClientCertificate reports whether a TLS alert, by Go's text, is one
// that a server sends about the certificate of its client.
func aboutClientCertificate(alert string) bool {
	switch alert {
	case "certificate required", "bad certificate", "unknown certificate authority", "expired certificate",
		"revoked certificate", "unsupported certificate", "unknown certificate", "access denied":
		return true
	}
	return false
}

// transportFailure names an error of a request or of reading its reply.
func transportFailure(err error) string {
	if op := findOp(err, func(op *net.OpError) bool { return op.Op == "proxyconnect" }); op != nil && op.Err != nil {
		return "proxy: " + transportFailure(op.Err)
	}
	if isTimeout(err) {
		return "timeout"
	}
	if errors.Is(err, context.Canceled) {
		return "canceled"
	}
	if s := unixSocketFailure(err); s != "" {
		return s
	}
	if s := tlsFailure(err); s != "" {
		return s
	}
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset"
	case errors.Is(err, syscall.EPIPE):
		return "connection closed while sending the request"
	case errors.Is(err, syscall.ECONNABORTED):
		return "connection aborted"
	case errors.Is(err, syscall.ENETUNREACH):
		return "network unreachable"
	case errors.Is(err, syscall.EHOSTUNREACH):
		return "host unreachable"
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return "connection closed before the reply ended"
	}
	if dnsErr, ok := errors.AsType[*net.DNSError](err); ok && dnsErr != nil {
		if dnsErr.IsNotFound {
			return "no such host " + dnsErr.Name
		}
		return "cannot resolve " + dnsErr.Name + ": " + dnsErr.Err
	}
	inner := innermost(err)
	if strings.HasPrefix(inner, "malformed HTTP ") || inner == unsolicited {
		return "malformed HTTP reply"
	}
	return inner
}

// unsolicited is the text of net/http's error for a server that spoke
// before it was asked (an SSH server does); "malformed HTTP ..." is its
// text for a reply that is not HTTP, followed by the server's bytes. The
// same server gives one or the other, as the timing goes.
const unsolicited = "readLoopPeekFailLocked: %!w(<nil>)"

// isTimeout reports whether err, or an error it wraps, is a timeout.
func isTimeout(err error) bool {
	return walk(err, func(e error) bool {
		t, ok := e.(interface{ Timeout() bool })
		return ok && t.Timeout()
	})
}

// unixSocketFailure names the failure to dial a Unix socket, or returns "".
func unixSocketFailure(err error) string {
	op := findOp(err, func(op *net.OpError) bool { return strings.HasPrefix(op.Net, "unix") && op.Op == "dial" })
	if op == nil {
		return ""
	}
	switch {
	case errors.Is(op.Err, fs.ErrNotExist):
		return "unix socket missing"
	case errors.Is(op.Err, syscall.ECONNREFUSED):
		return "unix socket refused the connection"
	case errors.Is(op.Err, fs.ErrPermission):
		return "unix socket not accessible"
	}
	return ""
}

// tlsFailure names a failure of the TLS handshake, or returns "".
func tlsFailure(err error) string {
	if errors.Is(err, http.ErrSchemeMismatch) {
		return "server speaks plain HTTP, not TLS"
	}
	if rh, ok := errors.AsType[tls.RecordHeaderError](err); ok {
		if string(rh.RecordHeader[:]) == "HTTP/" {
			return "server speaks plain HTTP, not TLS"
		}
		return "server does not speak TLS"
	}
	alert := ""
	if op := findOp(err, func(op *net.OpError) bool { return op.Op == "remote error" }); op != nil && op.Err != nil {
		// crypto/tls reports an alert from the peer as a net.OpError
		// around a value of an unexported type, whose text is "tls: "
		// and the alert's name.
		if s, ok := strings.CutPrefix(op.Err.Error(), "tls: "); ok {
			alert = s
		}
	}
	if a, ok := errors.AsType[tls.AlertError](err); ok && alert == "" {
		alert = strings.TrimPrefix(a.Error(), "tls: ")
	}
	if alert != "" {
		if aboutClientCertificate(alert) {
			return "client certificate refused (" + alert + ")"
		}
		return "TLS alert from the server: " + alert
	}
	if _, ok := errors.AsType[x509.UnknownAuthorityError](err); ok {
		return "server certificate not trusted"
	}
	if _, ok := errors.AsType[x509.HostnameError](err); ok {
		return "server certificate for another name"
	}
	if invalid, ok := errors.AsType[x509.CertificateInvalidError](err); ok {
		switch invalid.Reason {
		case x509.Expired:
			return "server certificate expired or not yet valid"
		case x509.IncompatibleUsage:
			return "server certificate not for a TLS server"
		default:
			return "server certificate invalid"
		}
	}
	return ""
}

// maxDepth bounds the walk down a chain of wrapped errors, so that a chain
// that wraps itself cannot loop forever.
const maxDepth = 64

// walk reports whether f holds for err or for an error it wraps, following
// both Unwrap() error and Unwrap() []error.
func walk(err error, f func(error) bool) bool {
	var visit func(err error, depth int) bool
	visit = func(err error, depth int) bool {
		if err == nil || depth >= maxDepth {
			return false
		}
		if f(err) {
			return true
		}
		for _, e := range wrapped(err) {
			if visit(e, depth+1) {
				return true
			}
		}
		return false
	}
	return visit(err, 0)
}

// wrapped returns the errors that err wraps.
func wrapped(err error) []error {
	if e := errors.Unwrap(err); e != nil {
		return []error{e}
	}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		return joined.Unwrap()
	}
	return nil
}

// findOp returns the first non-nil net.OpError in err's chain for which
// match holds, or nil.
func findOp(err error, match func(*net.OpError) bool) *net.OpError {
	var found *net.OpError
	walk(err, func(e error) bool {
		// The first OpError at or below e: walk reaches every one.
		if op, ok := errors.AsType[*net.OpError](e); ok && op != nil && match(op) {
			found = op
			return true
		}
		return false
	})
	return found
}

// innermost returns the text of the innermost error of err's chain (the
// first branch of a joined error). A url.Error or net.OpError with no
// error inside, whose text would hold a URL or an address, gives
// "request failed".
func innermost(err error) string {
	for depth := 0; depth < maxDepth; depth++ {
		next := wrapped(err)
		if len(next) == 0 || next[0] == nil {
			break
		}
		err = next[0]
	}
	// err wraps nothing: a url.Error or an OpError found is err itself.
	if _, ok := errors.AsType[*url.Error](err); ok {
		return "request failed"
	}
	if _, ok := errors.AsType[*net.OpError](err); ok {
		return "request failed"
	}
	return err.Error()
}
