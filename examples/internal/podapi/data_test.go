package podapi

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestDataRequest: each container's entry has the objects of the
// volumes it mounts, and only those, as interLink's API gives a sidecar;
// a volume with no object in the data (a ConfigMap not read, an
// emptyDir) adds nothing, and the request keeps the whole data.
func TestDataRequest(t *testing.T) {
	config := corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings"}, Data: map[string]string{"mode": "fast"}}
	secret := corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "password"}, Data: map[string][]byte{"key": []byte("s3cret")}}
	token := corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kube-api-access-x"}, Data: map[string]string{"token": "t", "namespace": "team-a"}}
	volume := func(name string, src corev1.VolumeSource) corev1.Volume {
		return corev1.Volume{Name: name, VolumeSource: src}
	}
	mounts := func(names ...string) []corev1.VolumeMount {
		var m []corev1.VolumeMount
		for _, n := range names {
			m = append(m, corev1.VolumeMount{Name: n, MountPath: "/" + n})
		}
		return m
	}
	pod := &corev1.Pod{Spec: corev1.PodSpec{
		Volumes: []corev1.Volume{
			volume("conf", corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "settings"}}}),
			volume("pw", corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "password"}}),
			volume("kube-api-access-x", corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{}}),
			volume("scratch", corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}),
			volume("other", corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "unread"}}}),
		},
		InitContainers: []corev1.Container{{Name: "init", VolumeMounts: mounts("pw")}},
		Containers: []corev1.Container{
			{Name: "main", VolumeMounts: mounts("conf", "kube-api-access-x", "scratch")},
			{Name: "side", VolumeMounts: mounts("other", "pw", "conf")},
			{Name: "bare"},
		},
	}}
	data := Data{ConfigMaps: []corev1.ConfigMap{config}, Secrets: []corev1.Secret{secret}, ProjectedVolumeMaps: []corev1.ConfigMap{token}}
	got := data.Request(pod)
	want := CreateRequest{
		Pod:                 *pod,
		ConfigMaps:          data.ConfigMaps,
		Secrets:             data.Secrets,
		ProjectedVolumeMaps: data.ProjectedVolumeMaps,
		Containers: []RetrievedContainer{
			{Name: "init", Secrets: []corev1.Secret{secret}},
			{Name: "main", ConfigMaps: []corev1.ConfigMap{config}, ProjectedVolumeMaps: []corev1.ConfigMap{token}},
			{Name: "side", Secrets: []corev1.Secret{secret}, ConfigMaps: []corev1.ConfigMap{config}},
			{Name: "bare"},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the request (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(Data{}.Request(pod).Containers, NewCreateRequest(pod).Containers); diff != "" {
		t.Errorf("NewCreateRequest is not the request with no data:\n%s", diff)
	}
}
