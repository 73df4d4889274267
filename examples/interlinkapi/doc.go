// Command interlinkapi is a double of interLink's API server, the process
// interLink deploys between its Virtual Kubelet and a plugin (the
// "sidecar"), built from interLink's code at commit f6321757
// (github.com/interlink-hq/interLink, f632175701d78b604138ce2e1e38af13d1f7546b):
// cmd/interlink/main.go, pkg/interlink/types.go, pkg/interlink/config.go
// and pkg/interlink/api. It forwards what a Virtual Kubelet (or pingnode's
// provider) sends to a plugin as interLink does, headers, bodies, cache
// and failures included, so that a plugin can be tried behind it and a
// caller in front of it, without interLink.
//
//	go run ./examples/plugin -slurm -addr 127.0.0.1:4000
//	go run ./examples/interlinkapi -sidecar http://127.0.0.1:4000
//
// It writes to stderr one line with "serving interLink's API on
// http://HOST:PORT", the address it listens on (-addr with port 0: a
// free port). The wire types are package podapi's.
//
// What it does, each rule from the file of interLink named (paths under
// pkg/interlink/api unless said):
//
//  1. Routes (cmd/interlink/main.go): /pinglink, /create, /status,
//     /delete, /getLogs and /updateCache, each answering any method. The
//     server reads a request within 30s, its headers within 10s, and has
//     no write timeout. It serves plain HTTP on TCP (interLink's
//     InterlinkAddress:InterlinkPort is -addr).
//  2. The sidecar (cmd/interlink/main.go): -sidecar is interLink's
//     SidecarURL:SidecarPort, http:// only, to which each path is
//     appended as a string. The client dials within 90s, keeps
//     connections alive 90s and idle 120s, waits for an answer's headers
//     -response-header-timeout (120s there), and has no overall timeout
//     and no proxy. Calls are made without the caller's context (but
//     /getLogs's), so a caller that hangs up does not end them.
//  3. Headers (handler.go, ReqWithError, GetSessionContext,
//     AddSessionContext): every call to the sidecar carries Content-Type
//     application/json and InterLink-Http-Session, the caller's header of
//     that name or, without one, "Request-" and a random UUID; the ping
//     always a new one. No other header of the caller's is passed on, its
//     Authorization neither, and no token is checked.
//  4. The relay (handler.go, ReqWithError): a failed exchange (refused,
//     reset, no headers in time) is a 500 with no body. Otherwise the
//     sidecar's status is written and flushed at once, so an answer
//     relayed has no Content-Type, whatever the sidecar said. A status
//     other than 200 (201 too) is kept, and its body replaced by
//     "HTTP InterLink session <session>:  call exit status: 500. Body:
//     <body>" (two spaces; 500 whatever the status), HTML-escaped. A 200
//     is streamed as it comes, in reads of 4096 bytes, each flushed, or
//     kept for the handler (/status).
//  5. /pinglink (ping.go): GET /status with the body [], whatever the
//     caller sent, the answer streamed. On any failure "503" is written
//     after what the relay wrote, whose status stands (ping.go's
//     WriteHeader(503) comes second): a refused connection is a 500 with
//     the body "503"; a sidecar's 500 is its 500 with the relay's words
//     and then "503".
//  6. /create (create.go): the body is read as PodCreateRequests (a
//     podapi.CreateRequest; a "container" list in it is dropped), or
//     answered 500 with no body. The sidecar's POST /create gets
//     RetrievedPodData: "pod" as decoded, "container" rebuilt (below),
//     null for a pod without containers, and "jobConfig", a zero
//     ScriptBuildConfig, always there (its omitempty does nothing for a
//     struct); never "jobScript". The annotation interlink.eu/pod-ip
//     changes nothing (interLink sets the IP on a copy). The answer is
//     streamed. The JobScriptBuilderURL and JobScriptTemplate branches are
//     left out: as interLink without a JobScriptBuildConfig, a create with
//     a "jobscriptURL" is answered 200 with no body and not forwarded.
//  7. The "container" list (func.go, getData, retrieveData): an entry for
//     each init container, then each container, with, for each of its
//     volume mounts in order, what the pod's volume of that name holds in
//     the top-level lists: a configMap volume the ConfigMap of its name, a
//     projected volume the projectedvolumesmaps entry named as the volume,
//     a secret volume the Secret of its secretName; the first of that name
//     is taken, and a volume mounted twice is added twice. An emptyDir adds
//     nothing ("emptyDirs" stays null), nor does any other kind, downwardAPI
//     among them, nor a mount of no volume. One not found is logged and
//     left out of the entry; it is not an error.
//  8. /status (status.go, func.go): the body is read as a list of pods
//     (what does not decode is logged, and what it decoded to is used,
//     often none). A pod is forwarded to the sidecar's GET /status if the
//     caller says it is Running or Pending, or no status of its UID is
//     cached: a cached pod sent Succeeded, Failed, Unknown or without a
//     phase is answered from the cache. The sidecar's answer is relayed
//     as the relay says if it is not 200; a 200 is read as a list of
//     statuses, each cached by its UID, pods not asked among them (a 200
//     that is not such a list leaves a 200 with no body). The answer is
//     the cached status of each pod asked, in order, a pod without one
//     left out; for no pods asked, every cached status, in no order;
//     null for none. The cache is in memory only, one per process.
//  9. /delete (delete.go): the body is read as a pod, its status dropped
//     from the cache, and the body as it came sent to the sidecar's POST
//     /delete, the answer streamed. The cache is dropped whatever the
//     sidecar answers.
//  10. /getLogs (logs.go): the body is read as a LogStruct (400 "invalid
//     request body" if it does not decode), refused with 400 and
//     interLink's words for a namespace that is not a DNS label, a pod UID
//     that is not a lower-case UUID, a container name (when given) that is
//     not a DNS label, Tail with Bytes, or SinceSeconds with SinceTime, in
//     that order; then encoded again (LogStruct's fields, all of them) and
//     sent with GET to the sidecar's /getLogs, the answer streamed until
//     it ends or the caller hangs up.
//  11. /updateCache (updateCache.go): the status whose UID is the whole
//     body, as it came, is dropped from the cache; the answer is 200
//     "Updated cache"; the sidecar is not called. interLink's Virtual
//     Kubelet sends the pod as JSON there (pkg/virtualkubelet/execute.go,
//     updateCacheRequest), which matches no UID: its calls drop nothing.
//
// Where interLink stops, the double goes on: where interLink exits
// (log.Fatal: a body it cannot read, on all routes but /create; a /delete
// body that is not a pod), the double answers 500 with no body. A null pod
// (the /delete body null, a null in a /status list) gets no answer, the
// connection dropped, as interLink's nil dereference does; there the
// /status one also leaves the cache's lock held, so that every later
// /status, /delete and /updateCache of interLink waits forever.
//
// Left out: TLS and mutual TLS, Unix sockets on either side, the job
// script builder and template, OpenTelemetry, pprof, the fake CRI runtime,
// the configuration file and its log levels.
package main
