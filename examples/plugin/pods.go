package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/pingnode/pingnode/examples/internal/partsfleet"
	"github.com/pingnode/pingnode/examples/internal/podapi"
)

// maxRequestBytes bounds the body of a request: a create of many pods,
// with their config maps and secrets, or a status of thousands of pods.
// A larger body is answered 413.
const maxRequestBytes = 32 << 20

// readJSON reads r's body, at most maxRequestBytes, into v: an empty body
// (or only white space) leaves v as it is. It answers the request when it
// cannot (413 for a body too large, 400 for one that is not want, JSON
// of v's type) and then reports false.
func readJSON(w http.ResponseWriter, r *http.Request, v any, want string) bool {
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxRequestBytes))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		http.Error(w, fmt.Sprintf("body over %d bytes", tooLarge.Limit), http.StatusRequestEntityTooLarge)
		return false
	case err != nil:
		http.Error(w, "reading the body: "+err.Error(), http.StatusBadRequest)
		return false
	case len(bytes.TrimSpace(data)) == 0:
		return true
	}
	if err := json.Unmarshal(data, v); err != nil {
		http.Error(w, "want "+want+": "+err.Error(), http.StatusBadRequest)
		return false
	}
	return true
}

// writeJSON answers v, as JSON.
func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// servePodStatus answers GET /status when it asks for pods: the status of
// each pod that jobs has, in the order asked; a pod it has not is left
// out. It reads the pods only, and does not move the fleet on.
func servePodStatus(w http.ResponseWriter, jobs *partsfleet.Fleet, pods []corev1.Pod) {
	statuses := []podapi.PodStatus{}
	for _, pod := range pods {
		if s, ok := jobs.Job(string(pod.UID)); ok {
			statuses = append(statuses, s.PodStatus())
		}
	}
	writeJSON(w, statuses)
}

// serveCreate answers POST /create: it creates the job of each pod of a
// JSON list of podapi.CreateRequest, and answers the list of their jobs,
// in the same order. A list with a pod without a UID is refused whole,
// 400 with each such pod's index, as is a body that is not a list.
func serveCreate(w http.ResponseWriter, r *http.Request, jobs *partsfleet.Fleet) {
	var requests []podapi.CreateRequest
	if !readJSON(w, r, &requests, "a JSON list of pods to create") {
		return
	}
	if requests == nil {
		http.Error(w, "want a JSON list of pods to create, got no list", http.StatusBadRequest)
		return
	}
	var problems []string
	for i, req := range requests {
		if req.Pod.UID == "" {
			problems = append(problems, fmt.Sprintf("[%d].pod.metadata.uid: empty", i))
		}
	}
	if len(problems) > 0 {
		http.Error(w, "pods without a UID:\n"+strings.Join(problems, "\n"), http.StatusBadRequest)
		return
	}
	created := make([]podapi.Created, len(requests))
	for i, req := range requests {
		created[i] = podapi.Created{PodUID: string(req.Pod.UID), PodJID: jobs.Create(partsfleet.JobOf(&req.Pod))}
	}
	writeJSON(w, created)
}

// serveDelete answers POST /delete: it deletes the job of the pod in the
// body, and answers 200 whether jobs had it or not; 400 for a body that
// is not a pod with a UID.
func serveDelete(w http.ResponseWriter, r *http.Request, jobs *partsfleet.Fleet) {
	var pod corev1.Pod
	if !readJSON(w, r, &pod, "a JSON pod") {
		return
	}
	if pod.UID == "" {
		http.Error(w, "want a JSON pod with its metadata.uid", http.StatusBadRequest)
		return
	}
	jobs.Delete(string(pod.UID))
	w.WriteHeader(http.StatusOK)
}
