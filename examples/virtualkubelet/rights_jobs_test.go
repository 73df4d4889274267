package main

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/pingnode/pingnode/examples/internal/podapi"
	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/jobs"
	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/poddata"
	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/vnode"
)

// runningPlugin is a backend that runs every pod it is asked to at once:
// the pod API of a plugin, for the rights a keeper of the jobs needs.
type runningPlugin struct {
	mu      sync.Mutex
	created []string
}

func (p *runningPlugin) Create(_ context.Context, r podapi.CreateRequest) (podapi.Created, bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.created = append(p.created, r.Pod.Name)
	return podapi.Created{PodUID: string(r.Pod.UID), PodJID: "1"}, false, nil
}

func (p *runningPlugin) Status(_ context.Context, pods []*corev1.Pod) ([]podapi.PodStatus, error) {
	var out []podapi.PodStatus
	for _, pod := range pods {
		s := podapi.PodStatus{Name: pod.Name, UID: string(pod.UID), Namespace: pod.Namespace}
		for _, c := range pod.Spec.Containers {
			s.Containers = append(s.Containers, corev1.ContainerStatus{Name: c.Name, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}})
		}
		out = append(out, s)
	}
	return out, nil
}

func (p *runningPlugin) Delete(context.Context, *corev1.Pod) error { return nil }

func (p *runningPlugin) creates() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.created
}

// jobsOf is a keeper of the jobs of the case's node, as its ServiceAccount
// (the pods bound to the node read as the test's, with no cache), with a
// pod bound to the node, changed by each of change, and its data read as
// the node.
func (c *rightsCase) jobsOf(t *testing.T, plugin jobs.Plugin, change ...func(*corev1.Pod)) (*jobs.Keeper, string) {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: c.name + "-job"},
		Spec:       corev1.PodSpec{NodeName: c.name, Tolerations: providerTolerations(), Containers: []corev1.Container{{Name: "job", Image: podImage}}},
	}
	for _, f := range change {
		f(pod)
	}
	createTestPod(t, pod)
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: c.name, UID: "rights"}}
	return jobs.New(jobs.Config{
		Client: c.client, Plugin: plugin, FieldManager: vnode.FieldManager,
		Data: poddata.NodeSource(c.log.configFor(c.id)),
		Bound: func(name string) []*corev1.Pod {
			list, err := client.CoreV1().Pods("").List(t.Context(), metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("spec.nodeName", name).String()})
			if err != nil {
				t.Error(err)
				return nil
			}
			out := make([]*corev1.Pod, len(list.Items))
			for i := range list.Items {
				out[i] = &list.Items[i]
			}
			return out
		},
		Nodes: func() []*corev1.Node { return []*corev1.Node{node} },
		Log:   slog.New(slog.NewTextHandler(t.Output(), nil)),
	}), pod.Name
}

// usesData makes the rights case's pod use a ConfigMap and a Secret, made
// for it, and read its ServiceAccount's token (its projected volume, as
// admission adds it, is asked for at every create).
func usesData(t *testing.T, name string) func(*corev1.Pod) {
	t.Helper()
	ctx := t.Context()
	config := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name + "-conf", Namespace: metav1.NamespaceDefault}, Data: map[string]string{"mode": "fast"}}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name + "-secret", Namespace: metav1.NamespaceDefault}, StringData: map[string]string{"password": "x"}}
	if _, err := client.CoreV1().ConfigMaps(config.Namespace).Create(ctx, config, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.CoreV1().Secrets(secret.Namespace).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = client.CoreV1().ConfigMaps(config.Namespace).Delete(context.Background(), config.Name, metav1.DeleteOptions{})
		_ = client.CoreV1().Secrets(secret.Namespace).Delete(context.Background(), secret.Name, metav1.DeleteOptions{})
	})
	return func(p *corev1.Pod) {
		p.Spec.Volumes = []corev1.Volume{
			{Name: "conf", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: config.Name}}}},
			{Name: "secret", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: secret.Name}}},
		}
		p.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "conf", MountPath: "/etc/conf"}, {Name: "secret", MountPath: "/etc/secret"}}
	}
}

// dataRefused is the symptom of a rule of reading a pod's data: its job
// is not made, for the API server refuses the request of path.
func dataRefused(method, path func(c *rightsCase) string) func(t *testing.T, c *rightsCase) {
	return func(t *testing.T, c *rightsCase) {
		plugin := &runningPlugin{}
		k, _ := c.jobsOf(t, plugin, usesData(t, c.name))
		k.Step(t.Context())
		c.awaitRefused(t, method(c), path(c))
		if created := plugin.creates(); len(created) != 0 {
			t.Errorf("jobs made %v without the pod's data, want none", created)
		}
	}
}

func get(*rightsCase) string { return http.MethodGet }

func configMapPath(name string) string {
	return "/api/v1/namespaces/" + metav1.NamespaceDefault + "/configmaps/" + name
}

// jobsSymptoms are what breaks without each rule of running pods, by
// ruleKey (rightsSymptoms).
var jobsSymptoms = map[string]func(t *testing.T, c *rightsCase){
	// Without the impersonation of its node, the first read of the pod's
	// data, its ConfigMap, is refused; without a right of reading as the
	// node, that read.
	"cluster nodes impersonate:arbitrary-node":             dataRefused(get, func(c *rightsCase) string { return configMapPath(c.name + "-conf") }),
	"cluster configmaps impersonate-on:arbitrary-node:get": dataRefused(get, func(c *rightsCase) string { return configMapPath(c.name + "-conf") }),
	"cluster secrets impersonate-on:arbitrary-node:get": dataRefused(get, func(c *rightsCase) string {
		return "/api/v1/namespaces/" + metav1.NamespaceDefault + "/secrets/" + c.name + "-secret"
	}),
	"cluster serviceaccounts/token impersonate-on:arbitrary-node:create": dataRefused(func(*rightsCase) string { return http.MethodPost }, func(*rightsCase) string {
		return "/api/v1/namespaces/" + metav1.NamespaceDefault + "/serviceaccounts/default/token"
	}),
	"cluster pods patch": func(t *testing.T, c *rightsCase) {
		// The record of the job, written before its create, is refused:
		// no job is made.
		plugin := &runningPlugin{}
		k, pod := c.jobsOf(t, plugin)
		k.Step(t.Context())
		c.awaitRefused(t, http.MethodPatch, "/api/v1/namespaces/"+metav1.NamespaceDefault+"/pods/"+pod)
		if created := plugin.creates(); len(created) != 0 {
			t.Errorf("jobs made %v without a record, want none", created)
		}
	},
	"cluster pods/status patch": func(t *testing.T, c *rightsCase) {
		// The job runs; the pod's status never says so.
		plugin := &runningPlugin{}
		k, pod := c.jobsOf(t, plugin)
		k.Step(t.Context())
		k.Step(t.Context())
		c.awaitRefused(t, http.MethodPatch, "/api/v1/namespaces/"+metav1.NamespaceDefault+"/pods/"+pod+"/status")
		stored, err := client.CoreV1().Pods(metav1.NamespaceDefault).Get(t.Context(), pod, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(plugin.creates()) != 1 || stored.Status.Phase == corev1.PodRunning {
			t.Errorf("jobs made %v, phase %s; want one job, and the pod not Running", plugin.creates(), stored.Status.Phase)
		}
	},
}
