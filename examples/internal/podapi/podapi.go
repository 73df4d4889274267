// Package podapi is the wire of interLink's plugin API, as interLink
// (github.com/interlink-hq/interLink at f6321757, its types in
// pkg/interlink/types.go, its calls in pkg/interlink/api and
// pkg/virtualkubelet/execute.go) and its Slurm plugin
// (github.com/interlink-hq/interlink-slurm-plugin at f8451d9,
// pkg/slurm) speak it. The sample plugin serves it and the reference
// provider calls it, so that an interLink plugin serves the provider
// unchanged. The bytes of each call are in testdata/, and a contract test
// holds the client and the sample plugin to them.
//
//   - The ping: GET /status with the body [] ([PingBody]) and
//     Content-Type application/json, answered with the ping reply, which
//     pingstatus reads. interLink's API sends that body; the Slurm plugin
//     decodes it, and answers a ping without a body 500 ("unexpected end
//     of JSON input").
//   - POST /create: ONE [CreateRequest], the pod under "pod", which both
//     interLink's API (its PodCreateRequests) and a sidecar (its
//     RetrievedPodData) read: a sidecar finds under "container" an entry
//     for each container by name, and interLink's Slurm plugin refuses a
//     pod one of whose containers mounts a volume but has no entry (504
//     "could not find retrieved container"). It is answered by ONE
//     [Created] (interLink's CreateStruct), whose PodJID
//     interLink's Virtual Kubelet writes to the pod's annotation "JobID".
//     A list is refused by the Slurm plugin (504, plain text). An older
//     plugin answers a list of Created; [DecodeCreated] reads both.
//   - GET /status: a JSON list of whole pods, answered by a list of
//     [PodStatus], one for each pod, with one status for each container
//     of the pod sent (a pod sent without its containers comes back with
//     none). A pod whose job was deleted, or that the plugin never had,
//     is answered with containers of an empty state ("state":{}), or left
//     out.
//   - POST /delete: one pod (corev1.Pod). Send it only for a pod whose
//     job the caller knows to exist: the Slurm plugin panics on a pod it
//     does not know, and the request gets no answer at all.
//   - GET /getLogs: one [LogRequest], the container and its kubectl logs
//     options, answered 200 with the log in plain text (text/plain),
//     streamed while the container runs with Opts.Follow: one long
//     answer, not a poll. The Slurm plugin (pkg/slurm/GetLogs.go) reads
//     the job's files, and answers 200 with an empty log for a pod or a
//     container it has no file of; it writes no timestamps, filters by
//     time only with Timestamps, and follows, polling every 4 seconds,
//     until the container's status file or the pod's job is gone, not
//     when the client goes.
//
// The paths are siblings of the ping's: a plugin pinged at
// http://host:4000/status serves http://host:4000/create.
//
// What a caller must not rely on, because interLink's Slurm plugin does
// not do it: a second create of a pod (same UID) is a second job, not the
// first one again; spec.nodeName does not choose the machine (Slurm does,
// unless the pod's annotation [SlurmFlags] pins it, e.g.
// --nodelist=cn04); JID in a status is empty; and a status may be
// up to 10 seconds old, for the plugin keeps one cache for the whole
// endpoint.
package podapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// The paths of the API, beside the ping's /status.
const (
	CreatePath = "/create"
	StatusPath = "/status"
	DeletePath = "/delete"
)

// PingBody is the body of the ping, GET /status: an empty list of pods,
// as interLink's API sends it.
const PingBody = "[]"

// SlurmFlags is the pod annotation from which interLink's Slurm plugin
// copies sbatch flags, verbatim, into the pod's job: the only way to pin
// a job to a machine there (--nodelist=cn04).
const SlurmFlags = "slurm-job.vk.io/flags"

// JobIDAnnotation is the pod annotation to which interLink's Virtual
// Kubelet writes the PodJID of the pod's job.
const JobIDAnnotation = "JobID"

// CreateRequest is one pod to create, with what it mounts: interLink's
// PodCreateRequests, and the "container" list of its RetrievedPodData,
// which interLink's API builds from the former for a sidecar (its
// getData) and a sidecar reads.
type CreateRequest struct {
	Pod                 corev1.Pod         `json:"pod"`
	ConfigMaps          []corev1.ConfigMap `json:"configmaps"`
	Secrets             []corev1.Secret    `json:"secrets"`
	ProjectedVolumeMaps []corev1.ConfigMap `json:"projectedvolumesmaps"`
	JobScriptURL        string             `json:"jobscriptURL"`
	// Containers has an entry for each init container and container of
	// the pod, in that order (RetrievedPodData's "container"); interLink's
	// API ignores it.
	Containers []RetrievedContainer `json:"container"`
}

// RetrievedContainer is what a container of a pod mounts, as a sidecar
// reads it (interLink's RetrievedContainer): the config maps, projected
// volumes and secrets it mounts, with their data, and its emptyDir paths.
// A projected volume (the ServiceAccount token's) a sidecar does not find
// is mounted empty, with a warning; a config map or secret it does not
// find refuses the pod.
type RetrievedContainer struct {
	Name                string             `json:"name"`
	ConfigMaps          []corev1.ConfigMap `json:"configMaps"`
	ProjectedVolumeMaps []corev1.ConfigMap `json:"projectedvolumemaps"`
	Secrets             []corev1.Secret    `json:"secrets"`
	EmptyDirs           []string           `json:"emptyDirs"`
}

// NewCreateRequest returns the request that creates pod with no data:
// Data{}.Request(pod).
func NewCreateRequest(pod *corev1.Pod) CreateRequest { return Data{}.Request(pod) }

// Created is the backend's job of a pod it created (interLink's
// CreateStruct).
type Created struct {
	PodUID string `json:"PodUID"`
	PodJID string `json:"PodJID"`
}

// PodStatus is what the backend says of a pod (interLink's PodStatus):
// its containers' states, as a kubelet reports them.
type PodStatus struct {
	Name           string                   `json:"name"`
	UID            string                   `json:"UID"`
	Namespace      string                   `json:"namespace"`
	JobID          string                   `json:"JID"`
	Containers     []corev1.ContainerStatus `json:"containers"`
	InitContainers []corev1.ContainerStatus `json:"initContainers"`
}

// DecodeCreated reads the answer to the create of the pod whose UID is
// uid: one [Created], as interLink's plugins answer, or a list of them,
// as older plugins did, of which it takes the pod's entry (or the only
// one), and reports that it was a list. An answer that names another pod
// is an error, as is one that is not JSON of either shape.
func DecodeCreated(answer []byte, uid types.UID) (created Created, list bool, err error) {
	trimmed := bytes.TrimSpace(answer)
	if len(trimmed) > 0 && trimmed[0] == '[' {
		var all []Created
		if err := json.Unmarshal(trimmed, &all); err != nil {
			return Created{}, true, err
		}
		for _, c := range all {
			if c.PodUID == string(uid) {
				return c, true, nil
			}
		}
		return Created{}, true, fmt.Errorf("a list of %d jobs, none of pod %s", len(all), uid)
	}
	if err := json.Unmarshal(trimmed, &created); err != nil {
		return Created{}, false, err
	}
	if created.PodUID != "" && created.PodUID != string(uid) {
		return Created{}, false, errors.New("the job of another pod, " + created.PodUID)
	}
	return created, false, nil
}
