package main

import (
	"encoding/json"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/pingnode/pingnode/examples/internal/podapi"
)

// zeroJobConfig is a zero ScriptBuildConfig as encoding/json writes it,
// its fields in the order of interLink's pkg/interlink/config.go.
const zeroJobConfig = `{"SingularityHubProxy":{"server":"","master_token":"","cache_validity_seconds":0},` +
	`"ApptainerOptions":{"executable":"","fakeroot":false,"containall":false,"fuseMode":"","noInit":false,"noHome":false,"noPrivs":false,"nvidiaSupport":false,"cleanenv":false,"unsquash":false},` +
	`"Volumes":{"scratch_area":"","apptainer_cachedir":"","image_dir":"","additional_directories_in_path":null,"fuse_sleep_seconds":0}}`

func configMap(name string, data map[string]string) corev1.ConfigMap {
	return corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: data}
}

func mounts(names ...string) []corev1.VolumeMount {
	var m []corev1.VolumeMount
	for _, n := range names {
		m = append(m, corev1.VolumeMount{Name: n, MountPath: "/mnt/" + n})
	}
	return m
}

// mountingPod is a pod whose containers mount every kind of volume
// retrieveData tells apart, one missing from the request, and one the
// pod does not have.
func mountingPod() corev1.Pod {
	return corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", UID: "u1", Annotations: map[string]string{"interlink.eu/pod-ip": "10.0.0.9"}},
		Spec: corev1.PodSpec{
			InitContainers: []corev1.Container{{Name: "init", VolumeMounts: mounts("cfg")}},
			Containers:     []corev1.Container{{Name: "main", VolumeMounts: mounts("cfg", "gone", "sec", "token", "scratch", "down", "nosuch", "cfg")}},
			Volumes: []corev1.Volume{
				{Name: "cfg", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cm-a"}}}},
				{Name: "gone", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cm-missing"}}}},
				{Name: "sec", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "s-a"}}},
				{Name: "token", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{}}},
				{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
				{Name: "down", VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{}}},
			},
		},
	}
}

func TestCreate(t *testing.T) {
	cmA := configMap("cm-a", map[string]string{"k": "v"})
	token := configMap("token", map[string]string{"token": "t"})
	secret := corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s-a"}, Data: map[string][]byte{"p": []byte("w")}}
	req := podapi.CreateRequest{
		Pod:                 mountingPod(),
		ConfigMaps:          []corev1.ConfigMap{configMap("cm-b", nil), cmA, configMap("cm-a", map[string]string{"second": "not taken"})},
		Secrets:             []corev1.Secret{secret},
		ProjectedVolumeMaps: []corev1.ConfigMap{token, configMap("down", map[string]string{"labels": "x"})},
		Containers:          []podapi.RetrievedContainer{{Name: "bogus", ConfigMaps: []corev1.ConfigMap{configMap("cm-b", nil)}}},
	}
	body, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	side := newSidecar(t, replyWith(200, `{"PodUID":"u1","PodJID":"42"}`))
	url, logs := newDouble(t, side.URL, time.Minute)

	got := do(t, http.MethodPost, url+"/create", string(body), sessionHeader, "s1")
	if diff := cmp.Diff(answer{Code: 200, Body: `{"PodUID":"u1","PodJID":"42"}`}, got); diff != "" {
		t.Errorf("answer (-want +got):\n%s", diff)
	}
	calls := side.take()
	if len(calls) != 1 || calls[0].Method != http.MethodPost || calls[0].Path != "/create" || calls[0].ContentType != "application/json" || calls[0].Session != "s1" {
		t.Fatalf("sidecar calls %+v, want one POST /create", calls)
	}
	var sent map[string]json.RawMessage
	if err := json.Unmarshal([]byte(calls[0].Body), &sent); err != nil {
		t.Fatal(err)
	}
	keys := make([]string, 0, len(sent))
	for k := range sent {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if diff := cmp.Diff([]string{"container", "jobConfig", "pod"}, keys); diff != "" {
		t.Errorf("keys sent (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(zeroJobConfig, string(sent["jobConfig"])); diff != "" {
		t.Errorf("jobConfig (-want +got):\n%s", diff)
	}
	var pod corev1.Pod
	if err := json.Unmarshal(sent["pod"], &pod); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(req.Pod, pod); diff != "" {
		t.Errorf("pod, its pod-ip annotation changing nothing (-want +got):\n%s", diff)
	}
	var containers []podapi.RetrievedContainer
	if err := json.Unmarshal(sent["container"], &containers); err != nil {
		t.Fatal(err)
	}
	want := []podapi.RetrievedContainer{
		{Name: "init", ConfigMaps: []corev1.ConfigMap{cmA}},
		{Name: "main", ConfigMaps: []corev1.ConfigMap{cmA, cmA}, Secrets: []corev1.Secret{secret}, ProjectedVolumeMaps: []corev1.ConfigMap{token}},
	}
	if diff := cmp.Diff(want, containers); diff != "" {
		t.Errorf("container list (-want +got):\n%s", diff)
	}
	if !strings.Contains(string(sent["container"]), `"emptyDirs":null`) {
		t.Errorf("container list %s, want emptyDirs null", sent["container"])
	}
	if !strings.Contains(logs.String(), "no ConfigMap cm-missing for volume gone") {
		t.Errorf("log %q does not say the missing ConfigMap", logs.String())
	}
}

func TestCreateNotForwarded(t *testing.T) {
	tests := []struct {
		name, body string
		reply      http.HandlerFunc
		want       answer
		forwarded  bool
	}{
		{"504 relayed with its body", `{"pod":{"metadata":{"uid":"u1"}}}`, replyWith(504, "could not find retrieved container"),
			answer{Code: 504, Body: "HTTP InterLink session s1:  call exit status: 500. Body: could not find retrieved container"}, true},
		{"500 relayed with its body", `{"pod":{"metadata":{"uid":"u1"}}}`, replyWith(500, `sbatch: "no"`),
			answer{Code: 500, Body: "HTTP InterLink session s1:  call exit status: 500. Body: sbatch: &#34;no&#34;"}, true},
		{"not a create", `{"pod":[]}`, replyWith(200, "{}"), answer{Code: 500}, false},
		{"a job script asked", `{"pod":{"metadata":{"uid":"u1"}},"jobscriptURL":"http://builder"}`, replyWith(200, "{}"), answer{Code: 200}, false},
		{"any container list dropped", `{"pod":{"metadata":{"uid":"u1"}},"container":{"not":"a list"}}`, replyWith(200, "{}"), answer{Code: 200, Body: "{}"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			side := newSidecar(t, tt.reply)
			url, _ := newDouble(t, side.URL, time.Minute)
			if diff := cmp.Diff(tt.want, do(t, http.MethodPost, url+"/create", tt.body, sessionHeader, "s1")); diff != "" {
				t.Errorf("answer (-want +got):\n%s", diff)
			}
			calls := side.take()
			if tt.forwarded != (len(calls) == 1) {
				t.Errorf("sidecar calls %+v, want forwarded %v", calls, tt.forwarded)
			}
			if tt.forwarded && !strings.Contains(calls[0].Body, `"container":null`) {
				t.Errorf("sent %s, want the container list of a pod without containers, null", calls[0].Body)
			}
		})
	}
}

func TestRetrieve(t *testing.T) {
	tests := []struct {
		name        string
		req         podapi.CreateRequest
		want        []podapi.RetrievedContainer
		wantMissing []string
	}{
		{
			name: "every kind, one missing",
			req: podapi.CreateRequest{Pod: mountingPod(), ConfigMaps: []corev1.ConfigMap{configMap("cm-a", nil)},
				ProjectedVolumeMaps: []corev1.ConfigMap{configMap("down", nil)}},
			want: []podapi.RetrievedContainer{
				{Name: "init", ConfigMaps: []corev1.ConfigMap{configMap("cm-a", nil)}},
				{Name: "main", ConfigMaps: []corev1.ConfigMap{configMap("cm-a", nil), configMap("cm-a", nil)}},
			},
			wantMissing: []string{
				"container main: no ConfigMap cm-missing for volume gone",
				"container main: no Secret s-a for volume sec",
				"container main: no projected volume map token",
			},
		},
		{
			name: "a Secret and a projected map found say nothing",
			req: podapi.CreateRequest{Pod: mountingPod(), ConfigMaps: []corev1.ConfigMap{configMap("cm-a", nil)},
				Secrets: []corev1.Secret{{ObjectMeta: metav1.ObjectMeta{Name: "s-a"}}}, ProjectedVolumeMaps: []corev1.ConfigMap{configMap("token", nil)}},
			want: []podapi.RetrievedContainer{
				{Name: "init", ConfigMaps: []corev1.ConfigMap{configMap("cm-a", nil)}},
				{Name: "main", ConfigMaps: []corev1.ConfigMap{configMap("cm-a", nil), configMap("cm-a", nil)},
					Secrets: []corev1.Secret{{ObjectMeta: metav1.ObjectMeta{Name: "s-a"}}}, ProjectedVolumeMaps: []corev1.ConfigMap{configMap("token", nil)}},
			},
			wantMissing: []string{"container main: no ConfigMap cm-missing for volume gone"},
		},
		{name: "no containers", req: podapi.CreateRequest{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, missing := podapi.Containers(tt.req)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("containers (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantMissing, missing); diff != "" {
				t.Errorf("missing (-want +got):\n%s", diff)
			}
		})
	}
}
