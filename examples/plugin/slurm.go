package main

import (
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/pingnode/pingnode/examples/internal/partsfleet"
	"github.com/pingnode/pingnode/pingstatus"
)

// SlurmStatusCache is how long interLink's Slurm plugin serves its last
// answer to a pod status again: -status-cache with -slurm, unless given.
const SlurmStatusCache = 10 * time.Second

// SlurmMinJobAge is how long after a job ended Slurm forgets it by
// default (slurm.conf's MinJobAge): -slurm-min-job-age, unless given.
const SlurmMinJobAge = 300 * time.Second

// SlurmReply is the ping reply that describes b as interLink's Slurm
// plugin sends it (pkg/slurm/Status.go, getClusterResources): one sum
// for the whole backend, its cpu and memory, a zero among them ("0" when
// the backend is full), and the draining taint when b drains; no pods,
// devices, parts or labels, and no taints list otherwise.
func SlurmReply(b Backend) pingstatus.PingResponse {
	reply := pingstatus.PingResponse{
		Status:       "ok",
		NodeResponse: pingstatus.NodeResponse{Resources: &pingstatus.ResourcesResponse{CPU: b.CPU, Memory: b.Memory}},
	}
	if b.Draining {
		reply.Taints = []pingstatus.TaintResponse{{Key: DrainKey, Value: "true", Effect: "NoSchedule"}}
	}
	return reply
}

// slurmPlugin is what interLink's Slurm plugin keeps beside Slurm, whose
// jobs are a Slurm fleet: its table of jobs by pod UID is the fleet's
// (partsfleet.Fleet.Job), and it adds what its status refreshes saw of
// each job, and the scancels still to fail. Its methods are safe for
// concurrent use.
type slurmPlugin struct {
	jobs          *partsfleet.Fleet
	now           func() time.Time
	sbatchLatency time.Duration // Options.SbatchLatency
	data          string        // Options.SlurmData

	mu sync.Mutex
	// seen holds, by job ID, what the refreshes saw of each job.
	seen map[string]*seen
	// scancelFailures is how many scancels are still to fail.
	scancelFailures int
}

// newSlurmPlugin is the Slurm plugin of jobs, as o says.
func newSlurmPlugin(jobs *partsfleet.Fleet, o Options) *slurmPlugin {
	return &slurmPlugin{jobs: jobs, now: o.Now, sbatchLatency: o.SbatchLatency, data: o.SlurmData, seen: map[string]*seen{}, scancelFailures: o.ScancelFailures}
}

// submit makes the job of pod as the Slurm plugin does, for serveCreate:
// it writes the job's script ([partsfleet.SlurmScriptOf]) and runs
// sbatch, which takes SbatchLatency, whatever the client does meanwhile
// (pkg/slurm/prepare.go, SLURMBatchSubmit, runs it and waits). Anything
// sbatch writes on its stderr is an error to the plugin, answered 504
// with those words: its own error, submitting nothing; Slurm's refusal;
// or a warning beside a job that sbatch made, which the plugin then does
// not record by the pod's UID, as it records a job only after sbatch
// answered without a word on stderr (pkg/slurm/Create.go, SubmitHandler,
// returns before handleJidAndPodUid). The pod's UID then names its
// earlier job, if any ([partsfleet.Fleet.CreateUnnamed]).
func (p *slurmPlugin) submit(pod *corev1.Pod) (string, string) {
	time.Sleep(p.sbatchLatency)
	script := partsfleet.SlurmScriptOf(pod)
	switch {
	case !script.Submitted:
		return "", script.Stderr
	case script.Stderr != "":
		if job := p.jobs.CreateUnnamed(script.Job); job.State == partsfleet.Refused {
			return "", script.Stderr + sbatchRefusal(job.Message)
		}
		return "", script.Stderr
	}
	job := p.jobs.Create(script.Job)
	if job.State == partsfleet.Refused {
		return "", sbatchRefusal(job.Message)
	}
	return job.ID, ""
}

// scancelFails reports whether the next scancel fails, and counts it.
func (p *slurmPlugin) scancelFails() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.scancelFailures == 0 {
		return false
	}
	p.scancelFailures--
	return true
}

// serveDelete answers POST /delete as the Slurm plugin does
// (pkg/slurm/Delete.go, StopHandler, and pkg/slurm/prepare.go,
// deleteContainer): it cancels the job of the pod in the body with
// scancel, and answers 200; a body that is no pod is answered 500 with
// the decoder's words. A scancel that fails (-scancel-failures) is
// answered 500 with the words of the failed command, "exit status 1",
// and the job is kept, running or queued. A pod without a job, never
// created or deleted already, runs no scancel and gets no answer at all:
// the Slurm plugin dereferences the job it has not and panics, and so
// does this handler, with http.ErrAbortHandler, on which net/http closes
// the connection without an answer and without a log line. The fleet
// counts each ([partsfleet.Fleet.UnknownDeletes]). With -slurm-data a
// cancelled job's pod has its folder removed, as deleteContainer
// removes it after scancel; a removal that fails is answered 500 with
// its words, the job cancelled.
func (p *slurmPlugin) serveDelete(w http.ResponseWriter, r *http.Request) {
	data, ok := readBody(w, r)
	if !ok {
		return
	}
	var pod corev1.Pod
	if err := json.Unmarshal(data, &pod); err != nil {
		plainError(w, http.StatusInternalServerError, err.Error())
		return
	}
	if _, had := p.jobs.Job(string(pod.UID)); had && p.scancelFails() {
		plainError(w, http.StatusInternalServerError, "exit status 1")
		return
	}
	if !p.jobs.Delete(string(pod.UID)) {
		panic(http.ErrAbortHandler)
	}
	if err := p.removeFiles(pod); err != nil {
		plainError(w, http.StatusInternalServerError, err.Error())
		return
	}
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, "All containers for submitted Pods have been deleted")
}

// removeFiles removes the folder of pod under -slurm-data, if any.
func (p *slurmPlugin) removeFiles(pod corev1.Pod) error {
	files, err := openPodFiles(p.data, pod)
	if err != nil {
		return err
	}
	defer files.close()
	return files.remove()
}
