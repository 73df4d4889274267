package main

import (
	"context"
	"encoding/json"
	"io"
	"log"
	"net/http"

	corev1 "k8s.io/api/core/v1"

	"github.com/pingnode/pingnode/examples/internal/podapi"
)

// api is interLink's API server (pkg/interlink/api, InterLinkHandler):
// the sidecar it forwards to and its status cache.
type api struct {
	sidecar sidecar
	cache   cache
	log     *log.Logger
}

// newAPI returns the API in front of the sidecar at base, called with
// client, that logs to logger.
func newAPI(base string, client *http.Client, logger *log.Logger) *api {
	return &api{sidecar: sidecar{base: base, client: client}, cache: cache{statuses: map[string]podapi.PodStatus{}}, log: logger}
}

// routes returns interLink's routes (cmd/interlink/main.go): paths
// without a method, so that each answers any method.
func (a *api) routes() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("/status", a.status)
	mux.HandleFunc("/create", a.create)
	mux.HandleFunc("/delete", a.delete)
	mux.HandleFunc("/pinglink", a.ping)
	mux.HandleFunc("/getLogs", a.getLogs)
	mux.HandleFunc("/updateCache", a.updateCache)
	return mux
}

// ping asks the sidecar for its status with no pods, as ping.go does: GET
// /status with the body [] and a new session (the caller's is not
// passed on), its answer streamed. On any failure "503" is written after
// what [sidecar.relay] wrote; ping.go's WriteHeader(503) comes after the
// relay's status and changes nothing, so a refused connection is a 500
// with the body "503".
func (a *api) ping(w http.ResponseWriter, _ *http.Request) {
	if _, err := a.sidecar.call(context.Background(), w, http.MethodGet, "/status", []byte("[]"), newSession(), streamed); err != nil {
		a.log.Printf("ping: %v", err)
		_, _ = io.WriteString(w, "503")
	}
}

// delete drops the pod's status from the cache, then forwards the body,
// as it came, to the sidecar's POST /delete and streams the answer
// (delete.go). The cache is dropped whatever the sidecar answers.
func (a *api) delete(w http.ResponseWriter, r *http.Request) {
	body, ok := a.readBody(w, r)
	if !ok {
		return
	}
	var pod *corev1.Pod
	if err := json.Unmarshal(body, &pod); err != nil {
		// interLink writes 500 and exits (log.Fatal); the double goes on.
		a.log.Printf("delete: %v", err)
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	if pod == nil {
		// The body null: interLink dereferences the nil pod and net/http
		// drops the connection without an answer.
		panic(http.ErrAbortHandler)
	}
	a.cache.drop(string(pod.UID))
	if _, err := a.sidecar.call(context.Background(), w, http.MethodPost, "/delete", body, sessionOf(r), streamed); err != nil {
		a.log.Printf("delete of pod %s: %v", pod.UID, err)
	}
}

// updateCache drops from the cache the status whose pod UID is the whole
// body, as it came, and answers 200 "Updated cache" (updateCache.go). It
// does not call the sidecar. interLink's Virtual Kubelet sends the pod as
// JSON here, which is never a UID, so its calls drop nothing.
func (a *api) updateCache(w http.ResponseWriter, r *http.Request) {
	body, ok := a.readBody(w, r)
	if !ok {
		return
	}
	a.cache.drop(string(body))
	_, _ = io.WriteString(w, "Updated cache")
}

// readBody reads r's body, or answers 500 with no body, as create.go
// does; interLink's other handlers exit (log.Fatal) instead, the double
// goes on.
func (a *api) readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		a.log.Printf("%s: reading the request: %v", r.URL.Path, err)
		w.WriteHeader(http.StatusInternalServerError)
		return nil, false
	}
	return body, true
}
