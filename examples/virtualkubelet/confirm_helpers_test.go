package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/pingnode/pingnode/examples/internal/pingclient"
	"github.com/pingnode/pingnode/examples/internal/podapi"
	"github.com/pingnode/pingnode/nodeapply/dra/confirm"
)

// askingPod is partPod that asks for the backend's confirmation: 1 of
// the extended resource the confirmation class serves.
func askingPod(name, owner string, cpu string) *corev1.Pod {
	pod := partPod(name, owner, nil, cpu)
	one := resource.MustParse("1")
	r := &pod.Spec.Containers[0].Resources
	r.Limits = corev1.ResourceList{confirm.DefaultResource: one}
	r.Requests[confirm.DefaultResource] = one
	return pod
}

// forgetConfirmation deletes, when the test ends, what the backend's
// confirmation leaves of the nodes named: their confirmation slices
// (testenv runs no garbage collector, which deletes them with their
// node), and the claims the scheduler made for the pods named (owned by
// their pod).
func forgetConfirmation(t *testing.T, nodes, pods []string) {
	t.Helper()
	clean := func() {
		ctx := context.Background()
		for _, node := range nodes {
			list, err := client.ResourceV1().ResourceSlices().List(ctx, metav1.ListOptions{
				FieldSelector: fields.Set{"spec.driver": confirm.DefaultDriver, "spec.nodeName": node}.String(),
			})
			if err != nil {
				t.Errorf("listing the slices of %s: %v", node, err)
				continue
			}
			for _, s := range list.Items {
				if err := client.ResourceV1().ResourceSlices().Delete(ctx, s.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
					t.Errorf("deleting the slice %s: %v", s.Name, err)
				}
			}
		}
		claims, err := client.ResourceV1().ResourceClaims(metav1.NamespaceDefault).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Errorf("listing the claims: %v", err)
			return
		}
		for _, c := range claims.Items {
			if slices.ContainsFunc(c.OwnerReferences, func(o metav1.OwnerReference) bool { return o.Kind == "Pod" && slices.Contains(pods, o.Name) }) {
				if err := client.ResourceV1().ResourceClaims(c.Namespace).Delete(ctx, c.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
					t.Errorf("deleting the claim %s: %v", c.Name, err)
				}
			}
		}
	}
	clean() // left by a run that was killed
	t.Cleanup(clean)
}

// confirmationDevices waits until each node has its confirmation slice.
func confirmationDevices(t *testing.T, nodes ...string) {
	t.Helper()
	for _, node := range nodes {
		eventually(t, node+"'s confirmation device is published", func(ctx context.Context) (bool, string) {
			list, err := client.ResourceV1().ResourceSlices().List(ctx, metav1.ListOptions{
				FieldSelector: fields.Set{"spec.driver": confirm.DefaultDriver, "spec.nodeName": node}.String(),
			})
			if err != nil {
				return false, err.Error()
			}
			return len(list.Items) == 1, fmt.Sprintf("%d slices", len(list.Items))
		})
	}
}

// backendJobs is what the plugin at url says of the pods named (GET
// /status with the pods): their jobs, by pod name.
func backendJobs(ctx context.Context, t *testing.T, url string, names ...string) map[string]podapi.PodStatus {
	t.Helper()
	c, err := pingclient.New(pingclient.Config{URL: url, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var pods []*corev1.Pod
	for _, name := range names {
		pod, err := client.CoreV1().Pods(metav1.NamespaceDefault).Get(ctx, name, metav1.GetOptions{})
		if err == nil {
			pods = append(pods, pod)
		}
	}
	statuses, err := c.Status(ctx, pods)
	if err != nil {
		t.Fatalf("the backend's status: %v", err)
	}
	out := map[string]podapi.PodStatus{}
	for _, s := range statuses {
		out[s.Name] = s
	}
	return out
}

// startedBeforeBound reports whether each pod named that is bound has a
// job on the backend that started no later than the pod was bound (its
// PodScheduled condition, both to the second): no pod was bound while its
// job was queued. It says which pods are bound.
func startedBeforeBound(ctx context.Context, t *testing.T, url string, names []string) (bound []string, problems []string) {
	t.Helper()
	jobs := backendJobs(ctx, t, url, names...)
	for _, name := range names {
		pod, err := client.CoreV1().Pods(metav1.NamespaceDefault).Get(ctx, name, metav1.GetOptions{})
		if err != nil || pod.Spec.NodeName == "" {
			continue
		}
		bound = append(bound, name)
		var scheduled time.Time
		for _, c := range pod.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionTrue {
				scheduled = c.LastTransitionTime.Time
			}
		}
		job, ok := jobs[name]
		switch {
		case !ok:
			problems = append(problems, name+" is bound to "+pod.Spec.NodeName+" with no job on the backend")
		case confirm.StateOf(job.Containers) != confirm.JobStarted:
			problems = append(problems, fmt.Sprintf("%s is bound to %s while its job is %v", name, pod.Spec.NodeName, confirm.StateOf(job.Containers)))
		case !scheduled.IsZero() && job.Containers[0].State.Running != nil && job.Containers[0].State.Running.StartedAt.After(scheduled):
			problems = append(problems, fmt.Sprintf("%s was bound at %v, before its job started at %v", name, scheduled, job.Containers[0].State.Running.StartedAt))
		}
	}
	return bound, problems
}

// confirmBackend is a plugin of parts for tests of the backend's
// confirmation: its ping lists each part with its cpus (a part with none
// is full, and tainted so), and its pod API, interLink's, keeps each job
// in the state that its rule gives the pod on its node, recording every
// create and delete as pod@node; a second create of a pod is a second
// job, as in interLink's Slurm plugin.
type confirmBackend struct {
	server *httptest.Server

	mu      sync.Mutex
	parts   map[string]int                // cpus by part
	rule    func(pod, node string) string // "queued", "running" or "refused"
	jobs    map[string]podapi.PodStatus   // by pod UID
	node    map[string]string             // each job's node, by pod UID
	created []string                      // pod@node
	deleted []string                      // pod@node
	// single makes its ping one sum, the cpus of every part, as a
	// backend of one node of its own (interLink's Slurm plugin).
	single bool
}

// start starts the job of the pod name, as the backend does once it
// leaves the queue.
func (b *confirmBackend) start(name string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for uid, s := range b.jobs {
		if s.Name == name {
			s.Containers = slices.Clone(s.Containers)
			s.Containers[0].State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}
			b.jobs[uid] = s
		}
	}
}

func newConfirmBackend(t *testing.T, parts map[string]int, rule func(pod, node string) string) *confirmBackend {
	t.Helper()
	b := &confirmBackend{parts: parts, rule: rule, jobs: map[string]podapi.PodStatus{}, node: map[string]string{}}
	b.server = httptest.NewServer(b)
	t.Cleanup(b.server.Close)
	return b
}

// set sets the cpus of a part.
func (b *confirmBackend) set(part string, cpus int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.parts[part] = cpus
}

// setRule sets the rule of the jobs made from now on.
func (b *confirmBackend) setRule(rule func(pod, node string) string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.rule = rule
}

// live returns the jobs the backend has, as pod@node.
func (b *confirmBackend) live() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for uid, s := range b.jobs {
		out = append(out, s.Name+"@"+b.node[uid])
	}
	slices.Sort(out)
	return out
}

// calls returns the creates and deletes so far.
func (b *confirmBackend) calls() (created, deleted []string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.created), slices.Clone(b.deleted)
}

func (b *confirmBackend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case strings.HasSuffix(r.URL.Path, podapi.StatusPath):
		var pods []corev1.Pod
		_ = json.Unmarshal(body, &pods)
		if len(pods) == 0 {
			_, _ = w.Write(b.reply())
			return
		}
		out := []podapi.PodStatus{}
		for _, p := range pods {
			if s, ok := b.jobs[string(p.UID)]; ok {
				out = append(out, s)
			}
		}
		_ = json.NewEncoder(w).Encode(out)
	case strings.HasSuffix(r.URL.Path, podapi.CreatePath):
		// One pod in, one job out, as interLink's plugins answer; a
		// second create of a pod is a second job, as in interLink's
		// Slurm plugin, recorded as such.
		var req podapi.CreateRequest
		if err := json.Unmarshal(body, &req); err != nil {
			http.Error(w, err.Error(), http.StatusGatewayTimeout)
			return
		}
		p := req.Pod
		uid := string(p.UID)
		b.jobs[uid] = jobStatus(p, b.rule(p.Name, p.Spec.NodeName))
		b.node[uid] = p.Spec.NodeName
		b.created = append(b.created, p.Name+"@"+p.Spec.NodeName)
		_ = json.NewEncoder(w).Encode(podapi.Created{PodUID: uid, PodJID: fmt.Sprint(len(b.created))})
	case strings.HasSuffix(r.URL.Path, podapi.DeletePath):
		var p corev1.Pod
		_ = json.Unmarshal(body, &p)
		if _, ok := b.jobs[string(p.UID)]; ok {
			b.deleted = append(b.deleted, p.Name+"@"+b.node[string(p.UID)])
			delete(b.jobs, string(p.UID))
			delete(b.node, string(p.UID))
		}
	default:
		http.NotFound(w, r)
	}
}

// reply is the ping reply: each part with its cpus, or full.
func (b *confirmBackend) reply() []byte {
	if b.single {
		cpus := 0
		for _, c := range b.parts {
			cpus += c
		}
		body, _ := json.Marshal(map[string]any{"status": "ok", "resources": map[string]string{"cpu": fmt.Sprint(cpus), "memory": fmt.Sprintf("%dGi", 4*cpus)}})
		return body
	}
	var nodes []map[string]any
	for _, part := range slices.Sorted(maps.Keys(b.parts)) {
		n := map[string]any{"name": part, "taints": []any{}}
		if cpus := b.parts[part]; cpus > 0 {
			n["resources"] = map[string]string{"cpu": fmt.Sprint(cpus), "memory": fmt.Sprintf("%dGi", 4*cpus)}
		} else {
			n["taints"] = []map[string]string{{"key": "plugin.example.com/full", "value": "true", "effect": "NoSchedule"}}
		}
		nodes = append(nodes, n)
	}
	body, _ := json.Marshal(map[string]any{"status": "ok", "nodes": nodes})
	return body
}

// jobStatus is a job of pod in state, as interLink reports it.
func jobStatus(pod corev1.Pod, state string) podapi.PodStatus {
	c := corev1.ContainerStatus{Name: pod.Spec.Containers[0].Name}
	switch state {
	case "running":
		c.State.Running = &corev1.ContainerStateRunning{StartedAt: metav1.Now()}
	case "refused":
		c.State.Terminated = &corev1.ContainerStateTerminated{Reason: "Cancelled", ExitCode: confirm.ExitCancelled} // cancelled while queued: never ran
	default:
		c.State.Waiting = &corev1.ContainerStateWaiting{Reason: "Queued"}
	}
	return podapi.PodStatus{Name: pod.Name, UID: string(pod.UID), Namespace: pod.Namespace, Containers: []corev1.ContainerStatus{c}}
}

// confirmingReady waits until the node name is Ready, free of the
// controllers' taints, and publishes its confirmation device.
func confirmingReady(t *testing.T, name string) {
	t.Helper()
	eventually(t, "the node is Ready", func(ctx context.Context) (bool, string) {
		return conditionIs(stored(ctx, t, name), corev1.NodeReady, corev1.ConditionTrue)
	})
	schedulable(t, name)
	confirmationDevices(t, name)
}
