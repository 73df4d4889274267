package main

import (
	"context"
	"encoding/json"
	"net/http"

	corev1 "k8s.io/api/core/v1"

	"github.com/pingnode/pingnode/examples/internal/podapi"
)

// createBody is what interLink's API reads of a create, its
// PodCreateRequests (pkg/interlink/types.go): a [podapi.CreateRequest]
// whose "container" list, which PodCreateRequests has not, is taken as
// any JSON and dropped.
type createBody struct {
	podapi.CreateRequest
	Container json.RawMessage `json:"container"`
}

// retrievedPodData is what interLink's API sends the sidecar's /create,
// its RetrievedPodData (pkg/interlink/types.go). "jobConfig" is always
// sent: the omitempty of interLink's tag does nothing for a struct.
// "jobScript" is never sent, since the double builds no job script.
type retrievedPodData struct {
	Pod        corev1.Pod                  `json:"pod"`
	Containers []podapi.RetrievedContainer `json:"container"`
	JobConfig  scriptBuildConfig           `json:"jobConfig"`
	JobScript  string                      `json:"jobScript,omitempty"`
}

// scriptBuildConfig is interLink's ScriptBuildConfig
// (pkg/interlink/config.go), always zero here: the double has no
// JobScriptBuildConfig.
type scriptBuildConfig struct {
	SingularityHub struct {
		Server               string `json:"server"`
		MasterToken          string `json:"master_token"`
		CacheValiditySeconds int    `json:"cache_validity_seconds"`
	} `json:"SingularityHubProxy"`
	ApptainerOptions struct {
		Executable    string `json:"executable"`
		Fakeroot      bool   `json:"fakeroot"`
		ContainAll    bool   `json:"containall"`
		FuseMode      string `json:"fuseMode"`
		NoInit        bool   `json:"noInit"`
		NoHome        bool   `json:"noHome"`
		NoPrivs       bool   `json:"noPrivs"`
		NvidiaSupport bool   `json:"nvidiaSupport"`
		Cleanenv      bool   `json:"cleanenv"`
		Unsquash      bool   `json:"unsquash"`
	} `json:"ApptainerOptions"`
	VolumesOptions struct {
		ScratchArea                 string   `json:"scratch_area"`
		ApptainerCacheDir           string   `json:"apptainer_cachedir"`
		ImageDir                    string   `json:"image_dir"`
		AdditionalDirectoriesInPath []string `json:"additional_directories_in_path"`
		FuseSleepSeconds            int      `json:"fuse_sleep_seconds"`
	} `json:"Volumes"`
}

// create forwards a create to the sidecar's POST /create, as create.go
// does: the pod with the "container" list rebuilt by [podapi.Containers], and the
// answer streamed. A body that is not a create is a 500 with no body. A
// create with a "jobscriptURL" is answered 200 with no body and not
// forwarded, as interLink without a JobScriptBuildConfig answers it; the
// double has neither that nor a JobScriptTemplate.
func (a *api) create(w http.ResponseWriter, r *http.Request) {
	body, ok := a.readBody(w, r)
	if !ok {
		return
	}
	var req createBody
	if err := json.Unmarshal(body, &req); err != nil {
		a.log.Printf("create: %v", err)
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	if req.JobScriptURL != "" {
		a.log.Printf("create of pod %s: a job script asked of %s, but there is no JobScriptBuildConfig: not forwarded", req.Pod.UID, req.JobScriptURL)
		return
	}
	containers, missing := podapi.Containers(req.CreateRequest)
	for _, m := range missing {
		a.log.Printf("create of pod %s: %s", req.Pod.UID, m)
	}
	out, err := json.Marshal(retrievedPodData{Pod: req.Pod, Containers: containers})
	if err != nil {
		a.log.Printf("create: %v", err)
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	if _, err := a.sidecar.call(context.Background(), w, http.MethodPost, "/create", out, sessionOf(r), streamed); err != nil {
		a.log.Printf("create of pod %s: %v", req.Pod.UID, err)
	}
}
