package main

import (
	"encoding/json"
	"io"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/pingnode/pingnode/examples/internal/partsfleet"
	"github.com/pingnode/pingnode/examples/internal/podapi"
	"github.com/pingnode/pingnode/pingstatus"
)

// SlurmStatusCache is how long interLink's Slurm plugin serves its last
// answer to a pod status again: -status-cache with -slurm, unless given.
const SlurmStatusCache = 10 * time.Second

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

// slurmStatuses is the Slurm plugin's answer to GET /status when it asks
// for pods: one entry for each pod asked about, in order, with its name,
// UID and namespace, an empty JID, and one status for each container of
// the pod sent (its spec.containers, by name): in its job's state
// (partsfleet's SlurmContainerStatus), or an empty state ("state":{})
// when jobs has no job of the pod, never created or deleted.
func slurmStatuses(jobs *partsfleet.Fleet, pods []corev1.Pod) []podapi.PodStatus {
	statuses := make([]podapi.PodStatus, len(pods))
	for i, pod := range pods {
		job, ok := jobs.Job(string(pod.UID))
		status := podapi.PodStatus{Name: pod.Name, UID: string(pod.UID), Namespace: pod.Namespace, Containers: []corev1.ContainerStatus{}}
		for _, c := range pod.Spec.Containers {
			cs := corev1.ContainerStatus{Name: c.Name}
			if ok {
				cs = job.SlurmContainerStatus(c.Name)
			}
			status.Containers = append(status.Containers, cs)
		}
		statuses[i] = status
	}
	return statuses
}

// serveSlurmDelete answers POST /delete as the Slurm plugin does: it
// cancels the job of the pod in the body, and answers 200; a body that
// is no pod is answered 500 with the decoder's words. A pod without a
// job, never created or deleted already, gets no answer at all: the
// Slurm plugin dereferences the job it has not and panics, and so does
// this handler, with http.ErrAbortHandler, on which net/http closes the
// connection without an answer and without a log line. The fleet counts
// each ([partsfleet.Fleet.UnknownDeletes]).
func serveSlurmDelete(w http.ResponseWriter, r *http.Request, jobs *partsfleet.Fleet) {
	data, ok := readBody(w, r)
	if !ok {
		return
	}
	var pod corev1.Pod
	if err := json.Unmarshal(data, &pod); err != nil {
		plainError(w, http.StatusInternalServerError, err.Error())
		return
	}
	if !jobs.Delete(string(pod.UID)) {
		panic(http.ErrAbortHandler)
	}
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, "All containers for submitted Pods have been deleted")
}
