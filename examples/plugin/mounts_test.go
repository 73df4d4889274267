package main

import (
	"net/http"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/pingnode/pingnode/examples/internal/podapi"
)

// volumeOf is the volume name of source.
func volumeOf(name string, source corev1.VolumeSource) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: source}
}

// configMapVolume is the volume name of the ConfigMap configMap.
func configMapVolume(name, configMap string, optional bool, mode *int32) corev1.Volume {
	return volumeOf(name, corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: configMap}, Optional: &optional, DefaultMode: mode,
	}})
}

// secretVolume is the volume name of the Secret secret.
func secretVolume(name, secret string, optional bool, mode *int32) corev1.Volume {
	return volumeOf(name, corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: secret, Optional: &optional, DefaultMode: mode}})
}

// modeOf is a volume's defaultMode m.
func modeOf(m int32) *int32 { return &m }

// The volumes of the mount tests: conf and creds name the ConfigMap app
// and the Secret token.
var (
	confVolume      = configMapVolume("conf", "app", false, nil)
	credsVolume     = secretVolume("creds", "token", false, nil)
	projectedVolume = volumeOf("kube-api-access-x", corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{}})
	downwardVolume  = volumeOf("podinfo", corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{}})
	scratchVolume   = volumeOf("scratch", corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}})
)

// mountsOf is container name mounting the volumes named, in order.
func mountsOf(name string, volumes ...string) corev1.Container {
	c := corev1.Container{Name: name}
	for _, v := range volumes {
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: v, MountPath: "/mnt/" + v})
	}
	return c
}

// mountRequest is the create of pod-<uid>, in namespace team-a, with
// volumes, the init containers and containers given, and the entries
// given under "container".
func mountRequest(uid string, volumes []corev1.Volume, init, containers []corev1.Container, entries ...podapi.RetrievedContainer) podapi.CreateRequest {
	pod := corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{UID: types.UID(uid), Namespace: "team-a", Name: "pod-" + uid},
		Spec:       corev1.PodSpec{Volumes: volumes, InitContainers: init, Containers: containers},
	}
	return podapi.CreateRequest{Pod: pod, Containers: entries}
}

// configMapNamed is an empty ConfigMap named name.
func configMapNamed(name string) corev1.ConfigMap {
	return corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}
}

// noAnswerWanted is the answer wanted of a create the handler panics on.
const noAnswerWanted = "(no answer)"

// TestCreateMounts: in either mode, a create is refused 504, in the
// Slurm plugin's words (prepareMounts), at the first mount, init
// containers first, of a ConfigMap or Secret that is not in the
// container's own entry, by its name, optional or not; a mount of no
// volume of the pod is refused with getPodVolume's words, and with
// -slurm gets no answer, as the plugin panics on it, before it looks for
// the container's entry. A projected volume without its map, an
// emptyDir, a volume no container mounts and anything a container
// mounts after a downwardAPI volume are let through. A refused create
// makes no job.
func TestCreateMounts(t *testing.T) {
	mainOnly := []podapi.RetrievedContainer{{Name: "main"}}
	withApp := []podapi.RetrievedContainer{{Name: "main", ConfigMaps: []corev1.ConfigMap{configMapNamed("app")}}}
	both := []corev1.Volume{confVolume, credsVolume}
	tests := []struct {
		name  string
		req   podapi.CreateRequest
		want  string // the words of the 504; "" accepted
		slurm string // with -slurm, when not want
	}{
		{"a ConfigMap not in the entry", withTopLevel(mountRequest("r", both, nil, []corev1.Container{mountsOf("main", "conf")}, mainOnly...)),
			"could not find configMap app in container main in pod pod-r", ""},
		{"an optional ConfigMap", mountRequest("r", []corev1.Volume{configMapVolume("conf", "app", true, nil)}, nil, []corev1.Container{mountsOf("main", "conf")}, mainOnly...),
			"could not find configMap app in container main in pod pod-r", ""},
		{"a ConfigMap named as the volume", mountRequest("r", both, nil, []corev1.Container{mountsOf("main", "conf")},
			podapi.RetrievedContainer{Name: "main", ConfigMaps: []corev1.ConfigMap{configMapNamed("conf")}}),
			"could not find configMap app in container main in pod pod-r", ""},
		{"a Secret not in the entry", withTopLevel(mountRequest("r", both, nil, []corev1.Container{mountsOf("main", "conf", "creds")}, withApp...)),
			"could not find secret token in container main in pod pod-r", ""},
		{"an optional Secret", mountRequest("r", []corev1.Volume{secretVolume("creds", "token", true, nil)}, nil, []corev1.Container{mountsOf("main", "creds")}, mainOnly...),
			"could not find secret token in container main in pod pod-r", ""},
		{"init containers first", mountRequest("r", both, []corev1.Container{mountsOf("init", "creds")}, []corev1.Container{mountsOf("main", "conf")},
			podapi.RetrievedContainer{Name: "init"}, mainOnly[0]),
			"could not find secret token in container init in pod pod-r", ""},
		{"another container's ConfigMap", mountRequest("r", both, []corev1.Container{mountsOf("init", "conf")}, []corev1.Container{mountsOf("main", "conf")},
			podapi.RetrievedContainer{Name: "init", ConfigMaps: []corev1.ConfigMap{configMapNamed("app")}}, mainOnly[0]),
			"could not find configMap app in container main in pod pod-r", ""},
		{"a mount of no volume", mountRequest("r", both, nil, []corev1.Container{mountsOf("main", "gone")}, mainOnly...),
			"could not find volume gone in pod pod-r", noAnswerWanted},
		{"a mount of no volume, no entry", mountRequest("r", nil, nil, []corev1.Container{mountsOf("main", "gone")}),
			"could not find volume gone in pod pod-r", noAnswerWanted},
		{"mounts in order", mountRequest("r", both, nil, []corev1.Container{mountsOf("main", "conf", "gone")}, mainOnly...),
			"could not find configMap app in container main in pod pod-r", ""},
		{"a projected volume without its map", mountRequest("r", []corev1.Volume{projectedVolume}, nil, []corev1.Container{mountsOf("main", "kube-api-access-x")}, mainOnly...), "", ""},
		{"an emptyDir", mountRequest("r", []corev1.Volume{scratchVolume}, nil, []corev1.Container{mountsOf("main", "scratch")}, mainOnly...), "", ""},
		{"a volume no container mounts", mountRequest("r", both, nil, []corev1.Container{mountsOf("main")}), "", ""},
		{"after a downwardAPI volume", mountRequest("r", []corev1.Volume{downwardVolume, confVolume}, nil, []corev1.Container{mountsOf("main", "podinfo", "conf", "gone")}, mainOnly...), "", ""},
		{"found", mountRequest("r", both, nil, []corev1.Container{mountsOf("main", "conf", "creds")},
			podapi.RetrievedContainer{Name: "main", ConfigMaps: withApp[0].ConfigMaps, Secrets: []corev1.Secret{{ObjectMeta: metav1.ObjectMeta{Name: "token"}}}}), "", ""},
	}
	for _, personality := range []string{"default", "slurm"} {
		t.Run(personality, func(t *testing.T) {
			var args []string
			if personality == "slurm" {
				args = []string{"-slurm"}
			}
			server, jobs, _ := serve(t, t0, args...)
			for i, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					tt.req.Pod.UID = types.UID(strconv.Itoa(i)) // a pod of its own, which the default personality creates once
					want := tt.want
					if personality == "slurm" && tt.slurm != "" {
						want = tt.slurm
					}
					before := jobs.Created()
					if want == noAnswerWanted {
						noAnswer(t, server.URL, podapi.CreatePath, tt.req)
					} else if code, body := call(t, server, http.MethodPost, podapi.CreatePath, tt.req); want == "" && code != http.StatusOK ||
						want != "" && (code != http.StatusGatewayTimeout || string(body) != want) {
						t.Errorf("%d: %s; want %s", code, body, answerWanted(want))
					}
					if made := jobs.Created() - before; want != "" && made != 0 || want == "" && made != 1 {
						t.Errorf("%d jobs made, want %s", made, answerWanted(want))
					}
				})
			}
		})
	}
}

// withTopLevel is req with the ConfigMap app and the Secret token at its
// top level, where the Slurm plugin does not look for them.
func withTopLevel(req podapi.CreateRequest) podapi.CreateRequest {
	req.ConfigMaps = []corev1.ConfigMap{configMapNamed("app")}
	req.Secrets = []corev1.Secret{{ObjectMeta: metav1.ObjectMeta{Name: "token"}}}
	return req
}

// answerWanted says what a test of [TestCreateMounts] wants: a job for
// "", else a 504 with want, or no answer.
func answerWanted(want string) string {
	switch want {
	case "":
		return "200 and a job"
	case noAnswerWanted:
		return "no answer and no job"
	}
	return "504 " + want + ", no job"
}
