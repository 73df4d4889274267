package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/pingnode/pingnode/examples/internal/partsfleet"
	"github.com/pingnode/pingnode/examples/internal/podapi"
)

// How often a followed log looks for what its container wrote: the Slurm
// plugin sleeps 4 seconds at each end of its file (pkg/slurm/GetLogs.go,
// GetLogsFollowMode, at f8451d9); the default looks 4 times a second.
const (
	followEvery      = 250 * time.Millisecond
	slurmFollowEvery = 4 * time.Second
)

// logServer answers GET /getLogs, a podapi.LogRequest, with what the
// pod's container wrote (partsfleet.Fleet.Output: the lines of its
// first container's echoes), as a kubelet answers kubectl logs, or with
// slurm as interLink's Slurm plugin answers it (see [logServer.slurm]).
// every is how often a followed log looks again.
type logServer struct {
	jobs  *partsfleet.Fleet
	slurm bool
	now   func() time.Time
	every time.Duration
}

// serveLogs is the logServer of jobs, as o says.
func serveLogs(jobs *partsfleet.Fleet, o Options) *logServer {
	s := &logServer{jobs: jobs, slurm: o.Slurm, now: o.Now, every: followEvery}
	if o.Slurm {
		s.every = slurmFollowEvery
	}
	return s
}

// ServeHTTP reads the request, and answers it as the personality does.
// A body that is no JSON object of a LogRequest is answered 400, and one
// without a PodUID; with slurm, 500 in the Slurm plugin's words.
func (s *logServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	data, ok := readBody(w, r)
	if !ok {
		return
	}
	var req podapi.LogRequest
	if s.slurm {
		if err := json.Unmarshal(data, &req); err != nil { // no body too, as the plugin decodes it
			plainError(w, http.StatusInternalServerError, slurmVerbose(sessionOf(r), "error during Unmarshal() in GetLogsHandler request body", err))
			return
		}
		s.serveSlurm(w, r, req)
		return
	}
	if !decodeJSON(w, data, &req, "a JSON podapi.LogRequest") {
		return
	}
	if req.PodUID == "" {
		http.Error(w, "want a podapi.LogRequest with its PodUID", http.StatusBadRequest)
		return
	}
	s.serve(w, r, req)
}

// serve answers req as a kubelet answers kubectl logs
// (k8s.io/kubernetes pkg/kubelet/kuberuntime/logs/logs.go, ReadLogs, and
// NewLogOptions), with interLink's zeros for options not given: 200,
// text/plain, the lines the container wrote, each with its newline, of
// them the last Opts.Tail, and of those the ones at or after the later
// of now less Opts.SinceSeconds and Opts.SinceTime, each after its time
// (podapi.LogTimestamp, UTC) and a space with Opts.Timestamps, and at
// most Opts.LimitBytes bytes of them all, the last line cut. With
// Opts.Follow the lines it writes after are sent as it writes them, the
// since and the limit still applied, until its job ends, its pod is
// deleted, the limit is reached or the client goes. A pod without a job
// (never created, refused or deleted), a container the pod has not, and
// Opts.Previous (a job runs once: there is no previous instance) get an
// empty log, at once, whatever Follow says; a container that has not
// started is waited for with Follow, and has an empty log without.
func (s *logServer) serve(w http.ResponseWriter, r *http.Request, req podapi.LogRequest) {
	out, ok := s.jobs.Output(req.PodUID, req.ContainerName)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	if !ok || !out.Container || req.Opts.Previous {
		return
	}
	lw := &lineWriter{w: w, since: sinceOf(req.Opts, s.now()), timestamps: req.Opts.Timestamps, remain: math.MaxInt}
	if req.Opts.LimitBytes > 0 {
		lw.remain = req.Opts.LimitBytes
	}
	lines := out.Lines
	if tail := req.Opts.Tail; tail > 0 && tail < len(lines) {
		lines = lines[len(lines)-tail:]
	}
	sent := len(out.Lines)
	if !lw.write(lines) || !req.Opts.Follow || out.Ended {
		return
	}
	for flush(w) && pause(r, s.every) {
		if out, ok = s.jobs.Output(req.PodUID, req.ContainerName); !ok {
			return
		}
		sent = min(sent, len(out.Lines)) // a job made again (-slurm's fleet) writes anew
		if !lw.write(out.Lines[sent:]) || out.Ended {
			return
		}
		sent = len(out.Lines)
	}
}

// sinceOf is the time from which lines are sent, as a kubelet's
// NewLogOptions has it: now less o.SinceSeconds, or o.SinceTime when it
// is later; the zero time for neither.
func sinceOf(o podapi.LogOptions, now time.Time) time.Time {
	var since time.Time
	if o.SinceSeconds > 0 {
		since = now.Add(-time.Duration(o.SinceSeconds) * time.Second)
	}
	if o.SinceTime.After(since) {
		since = o.SinceTime
	}
	return since
}

// lineWriter writes lines as a kubelet's logWriter does: a line before
// since is skipped, one is stamped with timestamps, and no more than
// remain bytes are written.
type lineWriter struct {
	w          io.Writer
	since      time.Time
	timestamps bool
	remain     int
}

// write writes lines, and reports whether more may follow: false once
// the limit is reached or a write failed (the client went).
func (l *lineWriter) write(lines []partsfleet.Line) bool {
	for _, line := range lines {
		if line.Time.Before(l.since) {
			continue
		}
		text := line.Text + "\n"
		if l.timestamps {
			text = line.Time.UTC().Format(podapi.LogTimestamp) + " " + text
		}
		text = text[:min(len(text), l.remain)]
		n, err := io.WriteString(l.w, text)
		if l.remain -= n; err != nil || l.remain <= 0 {
			return false
		}
	}
	return true
}

// flush sends what was written, and reports whether it could.
func flush(w http.ResponseWriter) bool { return http.NewResponseController(w).Flush() == nil }

// pause waits d, and reports whether the client is still there.
func pause(r *http.Request, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-r.Context().Done():
		return false
	case <-t.C:
		return true
	}
}

// slurmVerbose is the Slurm plugin's words for an error of what it was
// doing (pkg/slurm/func.go, logErrorVerbose), in session.
func slurmVerbose(session, doing string, err error) string {
	return fmt.Sprintf("error context: HTTP InterLink session %s: %s type: %#v %s", session, doing, err, err)
}

// slurmFile is the container's output file as the Slurm plugin reads it,
// its run-<container>.out, which the job's script makes when the
// container starts and to which it writes: each line and its newline;
// and reports whether it exists.
func slurmFile(out partsfleet.Output) (string, bool) {
	var b strings.Builder
	for _, l := range out.Lines {
		b.WriteString(l.Text + "\n")
	}
	return b.String(), out.Started
}

// slurmStatusFile reports whether the container's run-<container>.status
// exists, which the job's script writes when the container exits on its
// own: for a job that completed or failed, not for one cancelled or
// timed out (as slurmstatus.go reads it for a job Slurm forgot).
func slurmStatusFile(out partsfleet.Output) bool {
	return out.Started && (out.State == partsfleet.Completed || out.State == partsfleet.Failed)
}

// serveSlurm answers req as the Slurm plugin does (pkg/slurm/GetLogs.go,
// GetLogsHandler), on any pod: the content of the job's job.out (the
// sample's jobs write nothing there of their own) and then of the
// container's run-<container>.out ([slurmFile]), none for a pod without
// a job, a container the pod has not or one not started, which is no
// error. Of that it keeps, with Opts.Tail, the last Tail+1 pieces
// between newlines, each written with a newline (so the last Tail lines
// and an empty one), or all of them when Tail is more than the pieces;
// or else, with Opts.LimitBytes, the last LimitBytes+1 bytes, or all of
// them when it is more; and a Tail or a LimitBytes that is just as many
// (Tail 1 of an empty log) panics the plugin, which answers nothing: so
// does this handler, with http.ErrAbortHandler. Opts.Timestamps writes
// no time, but with Opts.SinceSeconds or Opts.SinceTime only the lines
// that begin with a time ([slurmSince]) are kept; without Timestamps
// the since is not looked at. Opts.Previous is not looked at. It answers
// 200, text/plain, and with Opts.Follow goes on ([logServer.slurmFollow]).
func (s *logServer) serveSlurm(w http.ResponseWriter, r *http.Request, req podapi.LogRequest) {
	now := s.now()
	out, _ := s.jobs.Output(req.PodUID, req.ContainerName)
	file, _ := slurmFile(out)
	returned := file
	o := req.Opts
	switch {
	case o.Tail != 0:
		pieces := strings.Split(file, "\n")
		if o.Tail <= len(pieces) {
			start := len(pieces) - o.Tail - 1
			if start < 0 || start > len(pieces) { // the plugin's slice out of range
				panic(http.ErrAbortHandler)
			}
			pieces = pieces[start:]
		}
		returned = ""
		for _, piece := range pieces {
			returned += piece + "\n"
		}
	case o.LimitBytes != 0:
		if o.LimitBytes <= len(file) {
			start := len(file) - o.LimitBytes - 1
			if start < 0 || start > len(file) {
				panic(http.ErrAbortHandler)
			}
			returned = file[start:]
		}
	}
	if o.Timestamps && (o.SinceSeconds != 0 || !o.SinceTime.IsZero()) {
		returned = slurmSince(returned, o, now)
	}
	w.Header().Set("Content-Type", "text/plain")
	w.WriteHeader(http.StatusOK)
	if _, err := io.WriteString(w, returned); err != nil || !flush(w) || !o.Follow {
		return
	}
	s.slurmFollow(w, r, req, len(file))
}

// slurmTimeLayout is how the Slurm plugin reads the time that begins a
// line, in UTC only.
const slurmTimeLayout = "2006-01-02T15:04:05.999999999Z"

// slurmSince is what the Slurm plugin keeps of logs for a since, asked
// with Timestamps: each piece between newlines that begins with a time
// and a space (or is one), with its newline, if that time is more than
// o.SinceSeconds before now (older, not newer: the plugin's comparison),
// or, without SinceSeconds, at or after o.SinceTime.
func slurmSince(logs string, o podapi.LogOptions, now time.Time) string {
	var b strings.Builder
	for _, line := range strings.Split(logs, "\n") {
		stamp, _, _ := strings.Cut(line, " ")
		at, err := time.Parse(slurmTimeLayout, stamp)
		switch {
		case err != nil:
		case o.SinceSeconds != 0 && now.Sub(at).Seconds() > float64(o.SinceSeconds),
			o.SinceSeconds == 0 && at.Sub(o.SinceTime).Seconds() >= 0:
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

// slurmFollow goes on with a followed log as the Slurm plugin does
// (GetLogsFollowMode), from offset, the length of the container's file
// when the log was answered. Until the file exists (its job queues, or
// the pod has no job or no such container) it writes, every 4 seconds,
// that it cannot open it, without a newline. Then, each time it finds no
// more in the file, it ends if the container was found dead at the last
// look, and otherwise finds it dead if the pod's job is gone (deleted)
// or the container's status file exists ([slurmStatusFile]: not for a
// job cancelled from outside or timed out, whose log never ends), and
// looks once more at once; while the container lives it waits 4 seconds
// between looks. It sends what the file holds past what it sent, as
// raw as it is (Tail and the rest were for the first answer only), and
// what it had read when the job went. It stops, too, when the client
// goes, where the Slurm plugin would go on looking (its TODO).
func (s *logServer) slurmFollow(w http.ResponseWriter, r *http.Request, req podapi.LogRequest, offset int) {
	path := SlurmDataRoot + req.Namespace + "-" + req.PodUID + "/run-" + req.ContainerName + ".out"
	for {
		out, _ := s.jobs.Output(req.PodUID, req.ContainerName)
		if _, exists := slurmFile(out); exists {
			break
		}
		msg := "HTTP InterLink session " + sessionOf(r) + ": Cannot open in follow mode the container logs " + path + " because it does not exist yet, sleeping before retrying..."
		if _, err := io.WriteString(w, msg); err != nil || !flush(w) || !pause(r, s.every) {
			return
		}
	}
	var file string
	dead := false
	for {
		out, ok := s.jobs.Output(req.PodUID, req.ContainerName)
		if ok {
			file, _ = slurmFile(out)
		}
		if len(file) > offset {
			if _, err := io.WriteString(w, file[offset:]); err != nil {
				return
			}
			offset = len(file)
		}
		switch {
		case !flush(w):
			return
		case dead:
			return
		case !ok || slurmStatusFile(out):
			dead = true
		case !pause(r, s.every):
			return
		}
	}
}
