package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	corev1 "k8s.io/api/core/v1"

	"github.com/pingnode/pingnode/examples/internal/partsfleet"
	"github.com/pingnode/pingnode/examples/internal/podapi"
)

// maxRequestBytes bounds the body of a request: a create of a pod, with
// its config maps and secrets, or a status of thousands of pods. A
// larger body is answered 413.
const maxRequestBytes = 32 << 20

// readBody reads r's body, at most maxRequestBytes. It answers the
// request when it cannot (413 for a body too large, 400 for one it
// cannot read) and then reports false.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxRequestBytes))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		http.Error(w, fmt.Sprintf("body over %d bytes", tooLarge.Limit), http.StatusRequestEntityTooLarge)
		return nil, false
	case err != nil:
		http.Error(w, "reading the body: "+err.Error(), http.StatusBadRequest)
		return nil, false
	}
	return data, true
}

// decodeJSON decodes data, a body, into v: an empty body (or only white
// space) leaves v as it is. It answers 400 for a body that is not want,
// JSON of v's type, and then reports false.
func decodeJSON(w http.ResponseWriter, data []byte, v any, want string) bool {
	if len(bytes.TrimSpace(data)) == 0 {
		return true
	}
	if err := json.Unmarshal(data, v); err != nil {
		http.Error(w, "want "+want+": "+err.Error(), http.StatusBadRequest)
		return false
	}
	return true
}

// readJSON is readBody, then decodeJSON.
func readJSON(w http.ResponseWriter, r *http.Request, v any, want string) bool {
	data, ok := readBody(w, r)
	return ok && decodeJSON(w, data, v, want)
}

// plainError answers code with text, as it is, in plain text: as
// interLink's Slurm plugin answers an error (its handleError), without
// the newline that http.Error adds.
func plainError(w http.ResponseWriter, code int, text string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_, _ = io.WriteString(w, text)
}

// encode is v as JSON, and a newline.
func encode(v any) []byte {
	data, _ := json.Marshal(v) // the wire types hold nothing that fails to marshal
	return append(data, '\n')
}

// writeJSON answers v, as JSON.
func writeJSON(w http.ResponseWriter, v any) { writeBody(w, encode(v)) }

// writeBody answers body, JSON.
func writeBody(w http.ResponseWriter, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}

// podStatuses is the answer to GET /status when it asks for pods: the
// status of each pod that jobs has, in the order asked; a pod it has not
// is left out. It reads the pods' UIDs only, and does not move the fleet
// on.
func podStatuses(jobs *partsfleet.Fleet, pods []corev1.Pod) []podapi.PodStatus {
	statuses := []podapi.PodStatus{}
	for _, pod := range pods {
		if s, ok := jobs.Job(string(pod.UID)); ok {
			statuses = append(statuses, s.PodStatus())
		}
	}
	return statuses
}

// serveCreate answers POST /create: it reads the pod of one
// podapi.CreateRequest, checks and writes what its containers mount as
// mounts says ([mountOptions.prepare]), has submit make its job, and
// answers one podapi.Created, the pod's UID and its job's ID. A body
// that is not one such object (a list, no JSON, no body), whose pod has
// no UID, or whose mounts [prepareMounts] refuses (a mount without an
// entry of its container's name under "container", the RetrievedPodData
// a sidecar reads, or without its ConfigMap or Secret there) is answered
// 504 in plain text, as the Slurm plugin answers every create it
// refuses; so is a pod that submit refuses, in the words it returns
// instead of a job's ID, and its files are then removed.
func serveCreate(w http.ResponseWriter, r *http.Request, submit func(*corev1.Pod) (jid, refusal string), mounts mountOptions) {
	data, ok := readBody(w, r)
	if !ok {
		return
	}
	var req podapi.CreateRequest
	if err := json.Unmarshal(data, &req); err != nil {
		plainError(w, http.StatusGatewayTimeout, "want one JSON object, a pod to create (podapi.CreateRequest): "+err.Error())
		return
	}
	if req.Pod.UID == "" {
		plainError(w, http.StatusGatewayTimeout, "want one pod to create, with its pod.metadata.uid: got none")
		return
	}
	files, refusal := mounts.prepare(req)
	defer files.close()
	if refusal != "" {
		plainError(w, http.StatusGatewayTimeout, refusal)
		return
	}
	jid, refusal := submit(&req.Pod)
	if refusal != "" {
		_ = files.remove() // as the Slurm plugin's, whose error it does not look at
		plainError(w, http.StatusGatewayTimeout, refusal)
		return
	}
	writeJSON(w, podapi.Created{PodUID: string(req.Pod.UID), PodJID: jid})
}

// createIn is the submit of [serveCreate] on jobs without -slurm: the
// pod's job ([partsfleet.JobOf]), and for a pod its backend refuses (no
// machine is its node, or it is too large) sbatch's words, with no job
// made, as sbatch refuses a job at submission.
func createIn(jobs *partsfleet.Fleet) func(*corev1.Pod) (string, string) {
	return func(pod *corev1.Pod) (string, string) {
		job := jobs.Create(partsfleet.JobOf(pod))
		if job.State == partsfleet.Refused {
			return "", sbatchRefusal(job.Message)
		}
		return job.ID, ""
	}
}

// sbatchRefusal is what sbatch writes on its stderr when Slurm refuses a
// job at submission for the reason message.
func sbatchRefusal(message string) string {
	return "sbatch: error: Batch job submission failed: " + message
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
