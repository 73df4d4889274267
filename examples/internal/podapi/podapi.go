// Package podapi is the wire of interLink's plugin API for pods, as the
// sample plugin serves it and the reference provider calls it, so that an
// interLink plugin serves the provider unchanged:
//
//   - POST /create, a JSON list of [CreateRequest], answered with a list
//     of [Created], one for each pod;
//   - GET /status, a JSON list of pods (corev1.Pod, of which the plugin
//     reads the UID, name and namespace), answered with a list of
//     [PodStatus], one for each pod the backend has; a pod it does not
//     have is left out. An empty list (or no body) is the ping, answered
//     with the ping reply, which pingstatus reads;
//   - POST /delete, one pod (corev1.Pod), answered 200 whether or not the
//     backend had it.
//
// The paths are siblings of the ping's: a plugin pinged at
// http://host:4000/status serves http://host:4000/create. A backend
// creates a pod once by its UID: a second create of the same UID is
// answered as the first, with the same job.
package podapi

import corev1 "k8s.io/api/core/v1"

// The paths of the API, beside the ping's /status.
const (
	CreatePath = "/create"
	StatusPath = "/status"
	DeletePath = "/delete"
)

// CreateRequest is one pod to create, with what it mounts (interLink's
// PodCreateRequests).
type CreateRequest struct {
	Pod                 corev1.Pod         `json:"pod"`
	ConfigMaps          []corev1.ConfigMap `json:"configmaps"`
	Secrets             []corev1.Secret    `json:"secrets"`
	ProjectedVolumeMaps []corev1.ConfigMap `json:"projectedvolumesmaps"`
	JobScriptURL        string             `json:"jobscriptURL"`
}

// Created is the backend's job of a pod it created (interLink's
// CreateStruct).
type Created struct {
	PodUID string `json:"PodUID"`
	PodJID string `json:"PodJID"`
}

// PodStatus is what the backend says of a pod it has (interLink's
// PodStatus): its containers' states, as a kubelet reports them.
type PodStatus struct {
	Name           string                   `json:"name"`
	UID            string                   `json:"UID"`
	Namespace      string                   `json:"namespace"`
	JobID          string                   `json:"JID"`
	Containers     []corev1.ContainerStatus `json:"containers"`
	InitContainers []corev1.ContainerStatus `json:"initContainers"`
}
