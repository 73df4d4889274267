package main

import (
	"encoding/json"
	"io"
	"net/http"
	"regexp"

	"github.com/pingnode/pingnode/examples/internal/podapi"
)

// The names logs.go accepts: a DNS label of any length, and a UUID in
// lower case.
var (
	dnsLabel = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]*[a-z0-9])?$`)
	uuid     = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
)

// refusal returns why logs.go answers 400 to req, interLink's LogStruct,
// the first reason it finds, in its words; "" when none.
func refusal(req podapi.LogRequest) string {
	switch {
	case !dnsLabel.MatchString(req.Namespace):
		return "invalid namespace: must be a valid DNS label"
	case !uuid.MatchString(req.PodUID):
		return "invalid pod UID: must be a valid UUID"
	case req.ContainerName != "" && !dnsLabel.MatchString(req.ContainerName):
		return "invalid container name: must be a valid DNS label"
	case req.Opts.Tail != 0 && req.Opts.LimitBytes != 0:
		return "Both Tail and LimitBytes set. Set only one of them"
	case req.Opts.SinceSeconds != 0 && !req.Opts.SinceTime.IsZero():
		return "Both SinceSeconds and SinceTime set. Set only one of them"
	}
	return ""
}

// getLogs forwards a log request to the sidecar's GET /getLogs, as
// logs.go does: the request decoded, checked ([refusal], 400
// with its words; 400 "invalid request body" for what does not decode)
// and encoded again, so that only LogStruct's fields reach the sidecar,
// all of them. The answer is streamed, flushed at each read, for as long
// as the caller stays: unlike the other calls, this one ends when the
// caller hangs up.
func (a *api) getLogs(w http.ResponseWriter, r *http.Request) {
	session := sessionOf(r)
	body, ok := a.readBody(w, r)
	if !ok {
		return
	}
	var req podapi.LogRequest
	if err := json.Unmarshal(body, &req); err != nil {
		a.log.Printf("getLogs: %v", err)
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, "invalid request body")
		return
	}
	if why := refusal(req); why != "" {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, why)
		return
	}
	out, err := json.Marshal(req)
	if err != nil {
		a.log.Printf("getLogs: %v", err)
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	if _, err := a.sidecar.call(r.Context(), w, http.MethodGet, "/getLogs", out, session, streamed); err != nil {
		a.log.Printf("getLogs of pod %s: %v", req.PodUID, err)
	}
}
