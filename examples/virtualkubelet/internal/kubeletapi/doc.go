// Package kubeletapi is the part of a kubelet's HTTPS API that kubectl
// logs needs, for a Virtual Kubelet provider whose pods run on a remote
// plugin: a handler of container logs ([Handler]) fed by a [LogsFunc],
// the certificate and TLS configuration it is served with ([SelfSigned],
// [ServerTLS]), and the server ([Serve]).
//
// # The request
//
// kubectl logs asks the API server, which asks the pod's node
// (k8s.io/kubernetes pkg/registry/core/pod/strategy.go, LogLocation):
//
//	GET https://<node address>:<kubelet port>/containerLogs/<namespace>/<pod>/<container>?follow=true&tailLines=10
//
// with each parameter only when it was given: follow, previous and
// timestamps as "true", sinceSeconds, sinceTime (time.RFC3339, whole
// seconds), tailLines and limitBytes as decimals, and stream only with
// the PodLogsQuerySplitStreams feature gate (alpha, off by default).
//
// # Paths and methods
//
// GET /containerLogs/{namespace}/{pod}/{container} serves a log: exactly
// three non-empty names after /containerLogs/, as a kubelet routes it
// (pkg/kubelet/server/server.go, the containerLogs web service). GET
// /healthz answers 200 "ok". Any other path is 404; another method on
// either path is 405 with Allow: GET, as a kubelet's
// GETOnlyRestfulFilter answers.
//
// # The query
//
// The query becomes a [podapi.LogOptions] as the Virtual Kubelet
// library's parseLogOptions reads it (github.com/virtual-kubelet/
// virtual-kubelet node/api/logs.go). Each parameter is read from its
// first value; one absent or empty leaves its field zero, and a
// parameter not named here is ignored:
//
//   - tailLines is Tail, by strconv.Atoi; a negative one is refused.
//     tailLines=0 is Tail 0, which podapi reads as the whole log, where a
//     kubelet writes no line.
//   - limitBytes is LimitBytes, by strconv.Atoi; below 1 is refused.
//   - sinceSeconds is SinceSeconds, by strconv.Atoi; below 1 is refused.
//   - sinceTime is SinceTime, by time.Parse with time.RFC3339; it is
//     refused beside a sinceSeconds.
//   - follow, previous and timestamps are Follow, Previous and
//     Timestamps, by strconv.ParseBool.
//   - stream, which parseLogOptions ignores, is refused unless it is
//     "All": a plugin's log is stdout and stderr together, and a kubelet
//     without PodLogsQuerySplitStreams refuses the others likewise.
//
// A refused query is answered 400 with words that name the parameter,
// in parseLogOptions' words (could not parse "follow": ...; "tailLines"
// is -1; both "sinceSeconds" and "sinceTime" are set). A kubelet instead
// decodes the query into a corev1.PodLogOptions, answers 400 to a query
// it cannot decode and 422 to options that do not validate, and also
// takes the older tail parameter; this package does not.
//
// # The answer
//
// The handler calls the [LogsFunc] with the request's context, which
// ends when the client goes. An error that wraps [ErrNotFound] (the pod
// or the container is unknown) is answered 404, as a kubelet answers a
// pod or a container it does not have; any other error is answered 502
// Bad Gateway, since it is the remote plugin's, where a kubelet answers
// 400 to an error of its runtime. Both carry the error's words. A nil
// LogsFunc answers 501, as the Virtual Kubelet library does for a
// provider without logs.
//
// A stream is answered 200 with Content-Type text/plain and its headers
// flushed at once; then each read of the stream is written and flushed,
// as a kubelet writes through its flushwriter and the Virtual Kubelet
// library through flushOnWrite, so that kubectl logs -f shows each line
// when the plugin sends it. The copy stops at the stream's io.EOF, at a
// read or a write that fails, or when the request's context ends (the
// client went, or [Serve] stopped); the handler closes the stream then,
// and also at once when the context ends, so that a Read blocked on the
// plugin returns. Only the stream's io.EOF ends the answer whole; any
// other stop cuts the connection (http.ErrAbortHandler), so that a
// client still there sees a broken answer, not a whole log.
//
// # Certificate and TLS
//
// A kubelet given no --tls-cert-file makes its own
// (cmd/kubelet/app/server.go, InitializeTLS, with client-go's
// util/cert GenerateSelfSignedCertKey for its host name): an RSA 2048
// CA named host-ca@<unix time> and a serving certificate host@<unix
// time> it signs, valid from an hour before for a year. [SelfSigned]
// makes one ECDSA P-256 certificate signed by its own key, with the same
// validity and name, for every host given; the API server checks it
// only when started with --kubelet-certificate-authority
// (pkg/kubelet/client/kubelet_client.go, transportConfig), so its hosts
// are the addresses the API server dials (the node's status addresses,
// in the order of --kubelet-preferred-address-types).
//
// [ServerTLS] asks TLS 1.2 at least. With a client CA, the handshake
// requires a client certificate that verifies against it, and fails
// without one. A kubelet given --client-ca-file only requests one
// (tls.RequestClientCert, pkg/kubelet/kubelet.go) and judges it in its
// authenticator, beside bearer tokens, then asks the API server whether
// the user may read logs; this package has neither, so the handshake is
// its only check, and any certificate the CA signed reads every log.
// Give it a CA that signs the API server's kubelet client certificate
// (--kubelet-client-certificate) and few others. With no client CA, no
// certificate is asked and anyone who reaches the port reads every log.
//
// # Serving
//
// [Serve] waits [ReadHeaderTimeout] for a request's headers and keeps
// an idle connection [IdleTimeout], as a kubelet does. It sets no read
// or write timeout, where a kubelet sets 4 hours of each: a followed log
// lasts as long as its container.
package kubeletapi
