package main

import (
	"errors"
	"net/http"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/pingnode/pingnode/examples/internal/partsfleet"
	"github.com/pingnode/pingnode/examples/internal/podapi"
)

// SlurmDataRoot is where the Slurm plugin keeps each pod's files, its
// DataRootFolder as its example configuration sets it
// (examples/config/SlurmConfig.yaml): a pod's are in the folder of its
// namespace, "-" and its UID, under it.
const SlurmDataRoot = ".local/interlink/jobs/"

// seen is what the Slurm plugin's status refreshes saw of a job, its
// JidStruct's StartTime and EndTime: when one first saw it running, and
// when one first saw it ended; zero for never.
type seen struct{ started, finished time.Time }

// sessionOf is the session of r as the Slurm plugin names it in its
// words (pkg/slurm/func.go, GetSessionContext): the header
// InterLink-Http-Session, or NoSessionFound#0 without one.
func sessionOf(r *http.Request) string {
	if s := r.Header.Get("InterLink-Http-Session"); s != "" {
		return s
	}
	return "NoSessionFound#0"
}

// statuses is a status refresh of the Slurm plugin, its answer to GET
// /status when it asks for pods and the cache has none to serve
// (pkg/slurm/Status.go, StatusHandler): one entry for each pod asked
// about, in order, with its name, UID and namespace, an empty JID, and
// one status for each container of the pod sent (its spec.containers,
// by name), each as [slurmContainerStatus] says. A pod whose UID names no
// job, never created or deleted, has an empty state ("state":{}) each.
// It reads each job's state only now, as squeue says it, and keeps when
// this refresh first saw it running or ended.
//
// A job Slurm has forgotten (partsfleet.JobStatus.Forgotten) is one
// squeue no longer knows: the plugin then reads each container's exit
// code from its status file, which only a job that completed or failed
// on its own wrote (its job script writes it when the container exits:
// pkg/slurm/prepare.go, produceSLURMScript), and answers it terminated
// with that exit code, 0 or the failed job's own, and no times. Of a job
// cancelled from outside or timed out there is no such file: the whole
// request fails, with the plugin's words for the first file it missed,
// naming session, and nothing of it is cached.
func (p *slurmPlugin) statuses(pods []corev1.Pod, session string) ([]podapi.PodStatus, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	statuses := make([]podapi.PodStatus, len(pods))
	for i, pod := range pods {
		status := podapi.PodStatus{Name: pod.Name, UID: string(pod.UID), Namespace: pod.Namespace, Containers: []corev1.ContainerStatus{}}
		job, ok := p.jobs.Job(string(pod.UID))
		var sn seen
		if ok && !job.Forgotten {
			sn = p.look(job)
		}
		for _, c := range pod.Spec.Containers {
			cs := corev1.ContainerStatus{Name: c.Name}
			switch {
			case !ok:
			case job.Forgotten && (job.State != partsfleet.Completed && job.State != partsfleet.Failed || !slices.Contains(job.Containers, c.Name)):
				file := SlurmDataRoot + pod.Namespace + "-" + string(pod.UID) + "/run-" + c.Name + ".status"
				return nil, errors.New("HTTP InterLink session " + session + ": unable to retrieve container status: open " + file + ": no such file or directory")
			case job.Forgotten:
				cs.State.Terminated = &corev1.ContainerStateTerminated{ExitCode: job.ExitCode}
			default:
				cs = slurmContainerStatus(c.Name, job, sn)
			}
			status.Containers = append(status.Containers, cs)
		}
		statuses[i] = status
	}
	return statuses, nil
}

// look is what the refreshes saw of job, with p.mu held, this one the
// last: it keeps now as when they first saw it running, if it runs, or
// ended, if it has ended, unless one saw it before.
func (p *slurmPlugin) look(job partsfleet.JobStatus) seen {
	s := p.seen[job.ID]
	if s == nil {
		s = &seen{}
		p.seen[job.ID] = s
	}
	switch {
	case job.State == partsfleet.Running && s.started.IsZero():
		s.started = p.now()
	case job.State != partsfleet.Queued && job.State != partsfleet.Running && s.finished.IsZero():
		s.finished = p.now()
	}
	return *s
}

// slurmContainerStatus is the status of the container name of job, as
// the Slurm plugin reports it from squeue's state of the job and what its
// refreshes saw (sn), without a reason or a message but for a timed-out
// job: queued (PD) is waiting ({"waiting":{}}); running (R) is running
// since a refresh first saw it so, and ready; completed (CD), cancelled
// (CA) and timed out (TO) are terminated with exit code 0, 15 and 15, the
// last with the plugin's reason SlurmJobTimeout and its message, and
// failed (F) with the job's exit code, which the plugin reads from the
// container's status file (pkg/slurm/prepare.go, getExitCode) and
// answers as it answers CD, with no reason (pkg/slurm/Status.go,
// StatusHandler, its case "F"); each started and finished when
// refreshes first saw it running and ended: a job that ended before a
// refresh saw it running has startedAt null.
func slurmContainerStatus(name string, job partsfleet.JobStatus, sn seen) corev1.ContainerStatus {
	c := corev1.ContainerStatus{Name: name}
	terminated := func(code int32) *corev1.ContainerStateTerminated {
		return &corev1.ContainerStateTerminated{ExitCode: code, StartedAt: metav1.NewTime(sn.started), FinishedAt: metav1.NewTime(sn.finished)}
	}
	switch job.State {
	case partsfleet.Queued:
		c.State.Waiting = &corev1.ContainerStateWaiting{}
	case partsfleet.Running:
		c.State.Running = &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(sn.started)}
		c.Ready = true
	case partsfleet.Completed:
		c.State.Terminated = terminated(partsfleet.ExitCompleted)
	case partsfleet.Cancelled:
		c.State.Terminated = terminated(partsfleet.ExitCancelled)
	case partsfleet.TimedOut:
		c.State.Terminated = terminated(partsfleet.ExitTimedOut)
		c.State.Terminated.Reason, c.State.Terminated.Message = partsfleet.ReasonTimedOut, partsfleet.MessageTimedOut
	case partsfleet.Failed:
		c.State.Terminated = terminated(job.ExitCode)
	default: // refused, which no pod's UID names
		c.State.Terminated = terminated(partsfleet.ExitRefused)
	}
	return c
}
