package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/pingnode/pingnode/examples/internal/partsfleet"
)

// TestPodDataReachesJob: with every setting at its default, against the
// sample plugin as interLink's Slurm plugin (-slurm), which writes what a
// job reads under its data folder (-slurm-data): a pod that mounts a
// ConfigMap and a Secret and reads from them, and from its own fields,
// into its environment, runs with one job, and the job's files hold
// their data, its environment file their values, and its projected
// volume a token of the pod's ServiceAccount that the API server
// accepts. A second pod whose ConfigMap is missing gets no job and says
// why, in the kubelet's words; once the ConfigMap is made, it runs too.
// Both, deleted, are gone, with no job left.
func TestPodDataReachesJob(t *testing.T) {
	needsControlPlane(t)
	dir := t.TempDir()
	url := samplePlugin(t, "-slurm", "-slurm-data", dir)
	cfg := configOfArgs(t, "-plugin", url, "-node", "vk-data")
	name := cfg.Static.Name
	ctx := t.Context()
	conf := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "data-conf", Namespace: metav1.NamespaceDefault}, Data: map[string]string{"mode": "fast"}}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "data-secret", Namespace: metav1.NamespaceDefault}, StringData: map[string]string{"password": "s3cret"}}
	made := func(c *corev1.ConfigMap) {
		t.Helper()
		if _, err := client.CoreV1().ConfigMaps(c.Namespace).Create(ctx, c, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = client.CoreV1().ConfigMaps(c.Namespace).Delete(context.Background(), c.Name, metav1.DeleteOptions{})
		})
	}
	made(conf)
	if _, err := client.CoreV1().Secrets(secret.Namespace).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = client.CoreV1().Secrets(secret.Namespace).Delete(context.Background(), secret.Name, metav1.DeleteOptions{})
	})
	runConfig(t, cfg)

	const uses, waits = "data-uses", "data-waits"
	createTestPod(t, dataPod(uses, name, conf.Name, secret.Name))
	createTestPod(t, dataPod(waits, name, "data-later", secret.Name))
	within(t, 2*time.Minute, uses+" runs", func(context.Context) (bool, string) {
		phase := storedPod(t, uses).Status.Phase
		return phase == corev1.PodRunning, string(phase)
	})
	folder := filepath.Join(dir, metav1.NamespaceDefault+"-"+string(storedPod(t, uses).UID))
	read := func(parts ...string) string {
		t.Helper()
		data, err := os.ReadFile(filepath.Join(append([]string{folder}, parts...)...))
		if err != nil {
			t.Error(err)
		}
		return string(data)
	}
	if got := read("configMaps", "conf", "mode"); got != "fast" {
		t.Errorf("the job's file of the ConfigMap's key mode: %q, want fast", got)
	}
	if got := read("secrets", "secret", "password"); got != "s3cret" {
		t.Errorf("the job's file of the Secret's key password: %q, want s3cret", got)
	}
	env := read("job_envfile.properties")
	for _, want := range []string{"MODE=fast", "PASSWORD=s3cret", "POD=" + uses, "NODE=" + name} {
		if !strings.Contains(env, want+"\n") {
			t.Errorf("the job's environment file lacks %s:\n%s", want, env)
		}
	}
	tokens, _ := filepath.Glob(filepath.Join(folder, "projectedVolumeMaps", "kube-api-access-*", "token"))
	if len(tokens) != 1 {
		t.Fatalf("the job's token files: %v, want one", tokens)
	}
	token, _ := os.ReadFile(tokens[0])
	if who := whoseToken(t, string(token)); who != "system:serviceaccount:default:default" {
		t.Errorf("the job's token authenticates as %q, want the pod's ServiceAccount", who)
	}

	within(t, time.Minute, waits+" told its ConfigMap is missing", func(ctx context.Context) (bool, string) {
		events := podEvents(ctx, t, waits, "DataUnavailable")
		return len(events) > 0 && strings.Contains(events[0].Message, `configmap "data-later" not found`), describe(events)
	})
	if n := jobsOf(ctx, t, url, waits)[waits]; n != 0 {
		t.Fatalf("%s: %d jobs without its ConfigMap, want none", waits, n)
	}
	made(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "data-later", Namespace: metav1.NamespaceDefault}, Data: map[string]string{"mode": "later"}})
	within(t, 2*time.Minute, waits+" runs once its ConfigMap is there", func(context.Context) (bool, string) {
		phase := storedPod(t, waits).Status.Phase
		return phase == corev1.PodRunning, string(phase)
	})
	for n, jobs := range jobsOf(ctx, t, url, uses, waits) {
		if jobs != 1 {
			t.Errorf("%s: %d jobs on the backend, want 1", n, jobs)
		}
	}
	for _, n := range []string{uses, waits} {
		deleteGracefully(t, n)
	}
	within(t, time.Minute, "both pods gone", func(ctx context.Context) (bool, string) {
		list, err := client.CoreV1().Pods(metav1.NamespaceDefault).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		var left []string
		for _, p := range list.Items {
			if p.Name == uses || p.Name == waits {
				left = append(left, p.Name)
			}
		}
		return len(left) == 0, strings.Join(left, ", ")
	})
	within(t, time.Minute, "no job left", func(ctx context.Context) (bool, string) {
		var left []string
		for _, j := range accounting(ctx, t, url).Jobs {
			if j.State == partsfleet.Running || j.State == partsfleet.Queued {
				left = append(left, j.Name+" "+j.State.String())
			}
		}
		return len(left) == 0, strings.Join(left, ", ")
	})
}

// dataPod is a pod of a minute bound by its selector to node that mounts
// the ConfigMap conf and the Secret secret, and reads into its
// environment a key of each, its name and its node.
func dataPod(name, node, conf, secret string) *corev1.Pod {
	p := slurmPod(name, node, "60", "")
	p.Spec.Volumes = []corev1.Volume{
		{Name: "conf", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: conf}}}},
		{Name: "secret", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: secret}}},
	}
	c := &p.Spec.Containers[0]
	c.VolumeMounts = []corev1.VolumeMount{{Name: "conf", MountPath: "/etc/conf"}, {Name: "secret", MountPath: "/etc/secret"}}
	field := func(path string) *corev1.EnvVarSource {
		return &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: path}}
	}
	c.Env = []corev1.EnvVar{
		{Name: "MODE", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: conf}, Key: "mode"}}},
		{Name: "PASSWORD", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: secret}, Key: "password"}}},
		{Name: "POD", ValueFrom: field("metadata.name")},
		{Name: "NODE", ValueFrom: field("spec.nodeName")},
	}
	return p
}

// whoseToken returns the user the API server authenticates token as.
func whoseToken(t *testing.T, token string) string {
	t.Helper()
	config := rest.AnonymousClientConfig(envConfig)
	config.BearerToken = token
	c, err := kubernetes.NewForConfig(config)
	if err != nil {
		t.Fatal(err)
	}
	review, err := c.AuthenticationV1().SelfSubjectReviews().Create(t.Context(), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("the job's token: %v", err)
	}
	return review.Status.UserInfo.Username
}
