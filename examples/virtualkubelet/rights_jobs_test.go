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
// pod bound to the node.
func (c *rightsCase) jobsOf(t *testing.T, plugin jobs.Plugin) (*jobs.Keeper, string) {
	t.Helper()
	pod := c.name + "-job"
	createTestPod(t, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: pod},
		Spec:       corev1.PodSpec{NodeName: c.name, Tolerations: providerTolerations(), Containers: []corev1.Container{{Name: "job", Image: podImage}}},
	})
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: c.name, UID: "rights"}}
	return jobs.New(jobs.Config{
		Client: c.client, Plugin: plugin, FieldManager: vnode.FieldManager,
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
	}), pod
}

// jobsSymptoms are what breaks without each rule of running pods, by
// ruleKey (rightsSymptoms).
var jobsSymptoms = map[string]func(t *testing.T, c *rightsCase){
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
