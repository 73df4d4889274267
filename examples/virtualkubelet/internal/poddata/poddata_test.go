package poddata

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/pingnode/pingnode/examples/internal/podapi"
)

// source is a Source of fixed objects; it counts its reads and keeps the
// token requests it was sent.
type source struct {
	configMaps map[string]*corev1.ConfigMap
	secrets    map[string]*corev1.Secret
	reads      int
	tokens     []*authenticationv1.TokenRequest
	account    string
}

func (s *source) ConfigMap(_ context.Context, namespace, name string) (*corev1.ConfigMap, error) {
	s.reads++
	if c, ok := s.configMaps[namespace+"/"+name]; ok {
		return c, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "configmaps"}, name)
}

func (s *source) Secret(_ context.Context, namespace, name string) (*corev1.Secret, error) {
	s.reads++
	if c, ok := s.secrets[namespace+"/"+name]; ok {
		return c, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, name)
}

func (s *source) Token(_ context.Context, namespace, account string, req *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error) {
	s.tokens = append(s.tokens, req)
	s.account = namespace + "/" + account
	out := req.DeepCopy()
	out.Status.Token = "token-of-" + account
	return out, nil
}

func testSource() *source {
	return &source{
		configMaps: map[string]*corev1.ConfigMap{
			"team-a/settings":         {ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: "team-a"}, Data: map[string]string{"mode": "fast", "LEVEL": "3"}},
			"team-a/kube-root-ca.crt": {ObjectMeta: metav1.ObjectMeta{Name: "kube-root-ca.crt", Namespace: "team-a"}, Data: map[string]string{"ca.crt": "CA"}},
		},
		secrets: map[string]*corev1.Secret{
			"team-a/password": {ObjectMeta: metav1.ObjectMeta{Name: "password", Namespace: "team-a"}, Data: map[string][]byte{"key": []byte("s3cret")}},
		},
	}
}

func ptr[T any](v T) *T { return &v }

// testPod uses each kind of data: a ConfigMap and a Secret volume, the
// ServiceAccount's projected volume as the API server adds it, a
// downward API volume, and every kind of environment variable.
func testPod() *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "job-1-x", Namespace: "team-a", UID: "uid-1",
			Labels:      map[string]string{"app": "job", "tier": "batch"},
			Annotations: map[string]string{"batch.kubernetes.io/job-completion-index": "7"}},
		Spec: corev1.PodSpec{
			NodeName:           "vk-1",
			ServiceAccountName: "runner",
			Volumes: []corev1.Volume{
				{Name: "conf", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "settings"}}}},
				{Name: "pw", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "password"}}},
				{Name: "kube-api-access-x", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
					{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{ExpirationSeconds: ptr(int64(3607)), Path: "token"}},
					{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"}, Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
					{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{Path: "namespace", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}}}},
				}}}},
				{Name: "info", VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{DefaultMode: ptr(int32(0o644)), Items: []corev1.DownwardAPIVolumeFile{
					{Path: "labels", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels"}},
					{Path: "cpu", ResourceFieldRef: &corev1.ResourceFieldSelector{ContainerName: "main", Resource: "limits.cpu", Divisor: resource.MustParse("1m")}},
				}}}},
			},
			Containers: []corev1.Container{{
				Name: "main",
				Resources: corev1.ResourceRequirements{
					Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1500m")},
					Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("3Mi")},
				},
				EnvFrom: []corev1.EnvFromSource{{Prefix: "S_", ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "settings"}}}},
				Env: []corev1.EnvVar{
					{Name: "PLAIN", Value: "v"},
					{Name: "S_mode", Value: "slow"}, // env wins over envFrom
					{Name: "POD", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
					{Name: "NODE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}},
					{Name: "JOB_COMPLETION_INDEX", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.annotations['batch.kubernetes.io/job-completion-index']"}}},
					{Name: "CPUS", ValueFrom: &corev1.EnvVarSource{ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: "limits.cpu"}}},
					{Name: "MEM_MI", ValueFrom: &corev1.EnvVarSource{ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: "requests.memory", Divisor: resource.MustParse("1Mi")}}},
					{Name: "MEM_LIMIT", ValueFrom: &corev1.EnvVarSource{ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: "limits.memory"}}},
					{Name: "MODE", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "settings"}, Key: "mode"}}},
					{Name: "PASSWORD", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "password"}, Key: "key"}}},
					{Name: "MAYBE", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "absent"}, Key: "key", Optional: ptr(true)}}},
				},
				VolumeMounts: []corev1.VolumeMount{{Name: "conf", MountPath: "/etc/conf"}, {Name: "pw", MountPath: "/etc/pw"}},
			}},
		},
	}
}

// TestOf: each kind of data is read, once an object, and given as
// interLink's Virtual Kubelet gives it; the environment is resolved as a
// kubelet resolves it; the pod given is not changed.
func TestOf(t *testing.T) {
	src := testSource()
	pod := testPod()
	before := pod.DeepCopy()
	node := &corev1.Node{Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Gi")}}}
	sent, data, err := Of(t.Context(), src, pod, node)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, pod); diff != "" {
		t.Errorf("Of changed the pod it was given:\n%s", diff)
	}
	wantEnv := []corev1.EnvVar{
		{Name: "S_LEVEL", Value: "3"},
		{Name: "S_mode", Value: "slow"},
		{Name: "PLAIN", Value: "v"},
		{Name: "POD", Value: "job-1-x"},
		{Name: "NODE", Value: "vk-1"},
		{Name: "JOB_COMPLETION_INDEX", Value: "7"},
		{Name: "CPUS", Value: "2"},                // 1500m rounded up to whole cpus
		{Name: "MEM_MI", Value: "3"},              // 3Mi in Mi
		{Name: "MEM_LIMIT", Value: "68719476736"}, // no limit: the node's allocatable, 64Gi
		{Name: "MODE", Value: "fast"},
		{Name: "PASSWORD", Value: "s3cret"},
	}
	if diff := cmp.Diff(wantEnv, sent.Spec.Containers[0].Env); diff != "" {
		t.Errorf("the environment sent (-want +got):\n%s", diff)
	}
	if sent.Spec.Containers[0].EnvFrom != nil {
		t.Errorf("envFrom is sent: %v", sent.Spec.Containers[0].EnvFrom)
	}
	want := podapi.Data{
		ConfigMaps: []corev1.ConfigMap{*src.configMaps["team-a/settings"]},
		Secrets:    []corev1.Secret{*src.secrets["team-a/password"]},
		ProjectedVolumeMaps: []corev1.ConfigMap{
			{ObjectMeta: metav1.ObjectMeta{Name: "kube-api-access-x"}, Data: map[string]string{"token": "token-of-runner", "ca.crt": "CA", "namespace": "team-a"}},
			{ObjectMeta: metav1.ObjectMeta{Name: "info"}, Data: map[string]string{"labels": "app=\"job\"\ntier=\"batch\"\n", "cpu": "1500"}},
		},
	}
	if diff := cmp.Diff(want, data); diff != "" {
		t.Errorf("the data (-want +got):\n%s", diff)
	}
	info := sent.Spec.Volumes[3]
	if info.DownwardAPI != nil || info.Projected == nil || info.Projected.Sources[0].DownwardAPI == nil || *info.Projected.DefaultMode != 0o644 {
		t.Errorf("the downward API volume is sent as %+v, want a projected volume of the same items and mode", info.VolumeSource)
	}
	// settings, password, kube-root-ca.crt and absent: once each, though
	// settings is used four times and password twice.
	if src.reads != 4 {
		t.Errorf("%d reads, want 4: one an object", src.reads)
	}
	if len(src.tokens) != 1 || src.account != "team-a/runner" {
		t.Fatalf("token requests %v of %s, want one of team-a/runner", src.tokens, src.account)
	}
	spec := src.tokens[0].Spec
	if *spec.ExpirationSeconds != 3607 || spec.BoundObjectRef.Kind != "Pod" || spec.BoundObjectRef.UID != "uid-1" || spec.BoundObjectRef.Name != "job-1-x" || spec.Audiences != nil {
		t.Errorf("the token request %+v, want the source's expiry, bound to the pod, for the API server's audience", spec)
	}
}

// TestOfMissing: an object or key a pod needs that is not there fails
// Of in the kubelet's words; an optional one is left out.
func TestOfMissing(t *testing.T) {
	for _, tt := range []struct {
		name   string
		change func(*corev1.Pod)
		want   string // "" for no error
	}{
		{"a ConfigMap volume", func(p *corev1.Pod) { p.Spec.Volumes[0].ConfigMap.Name = "gone" }, `volume conf: configmap "gone" not found`},
		{"an optional ConfigMap volume", func(p *corev1.Pod) {
			p.Spec.Volumes[0].ConfigMap.Name, p.Spec.Volumes[0].ConfigMap.Optional = "gone", ptr(true)
		}, ""},
		{"a Secret volume", func(p *corev1.Pod) { p.Spec.Volumes[1].Secret.SecretName = "gone" }, `volume pw: secret "gone" not found`},
		{"a key of a projected ConfigMap", func(p *corev1.Pod) {
			p.Spec.Volumes[2].Projected.Sources[1].ConfigMap.Items[0].Key = "nope"
		}, "volume kube-api-access-x: couldn't find key nope in ConfigMap kube-root-ca.crt"},
		{"a key of a Secret", func(p *corev1.Pod) { p.Spec.Containers[0].Env[9].ValueFrom.SecretKeyRef.Key = "nope" }, "container main: env PASSWORD: couldn't find key nope in Secret team-a/password"},
		{"an envFrom ConfigMap", func(p *corev1.Pod) { p.Spec.Containers[0].EnvFrom[0].ConfigMapRef.Name = "gone" }, `container main: configmap "gone" not found`},
		{"a field", func(p *corev1.Pod) { p.Spec.Containers[0].Env[2].ValueFrom.FieldRef.FieldPath = "spec.hostname" }, `container main: env POD: unsupported field path "spec.hostname"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pod := testPod()
			tt.change(pod)
			_, _, err := Of(t.Context(), testSource(), pod, nil)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Of: %v, want no error", err)
				}
				return
			}
			if err == nil || err.Error() != tt.want {
				t.Fatalf("Of: %v, want %q", err, tt.want)
			}
			if _, field := errors.AsType[Missing](err); !field && tt.name != "a field" {
				t.Errorf("%v is not a Missing", err)
			}
		})
	}
}

// TestOfUnbound: without a Source (a pod not bound yet), a pod that uses
// a ConfigMap or a Secret is refused, and one that uses neither is sent
// what it says itself: its projected volume without the token and the
// cluster's CA, its fields and resources.
func TestOfUnbound(t *testing.T) {
	if _, _, err := Of(t.Context(), nil, testPod(), nil); !errors.Is(err, ErrUnbound) {
		t.Errorf("a pod with a ConfigMap, without a Source: %v, want ErrUnbound", err)
	}
	pod := testPod()
	pod.Spec.Volumes = pod.Spec.Volumes[2:]
	c := &pod.Spec.Containers[0]
	c.VolumeMounts, c.EnvFrom, c.Env = nil, nil, c.Env[2:6]
	sent, data, err := Of(t.Context(), nil, pod, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := data.ProjectedVolumeMaps[0].Data; !cmp.Equal(got, map[string]string{"namespace": "team-a"}) {
		t.Errorf("the projected volume without a Source: %v, want its namespace alone", got)
	}
	if got := sent.Spec.Containers[0].Env[3]; got.Value != "2" || got.ValueFrom != nil {
		t.Errorf("CPUS without a Source: %+v, want 2", got)
	}
}
