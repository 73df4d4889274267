package main

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
)

// tree maps the path of every file under root, relative to root, to its
// content.
func tree(t *testing.T, root string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		content, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		files[filepath.ToSlash(rel)] = string(content)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestTestenvRefusesForeignDir: testenv refuses, with exit status 2, a
// -dir that is not empty and has no marker, or is not a folder, and leaves
// every file there as it was.
func TestTestenvRefusesForeignDir(t *testing.T) {
	needsControlPlane(t)
	bin := testenvBin
	tests := []struct {
		name  string
		files map[string]string // what the user has, under a temporary root
		dir   string            // -dir, under that root
	}{
		{"a user's file", map[string]string{"home/notes.txt": "mine"}, "home"},
		{"a user's file deeper down", map[string]string{"home/src/plan.txt": "mine"}, "home"},
		{"a folder named like the marker", map[string]string{"home/.pingnode-testenv/notes.txt": "mine"}, "home"},
		{"a file, not a folder", map[string]string{"notes.txt": "mine"}, "notes.txt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			for path, content := range tt.files {
				path = filepath.Join(root, filepath.FromSlash(path))
				if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
					t.Fatal(err)
				}
			}

			// Refusing takes a few milliseconds. Were the folder accepted,
			// the environment would start and serve: the deadline stops it,
			// and the checks below fail.
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, "-dir", filepath.Join(root, tt.dir))
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()

			var exitErr *exec.ExitError
			if !errors.As(err, &exitErr) || exitErr.ExitCode() != 2 {
				t.Errorf("testenv: %v, want exit status 2; stderr:\n%s", err, tail(stderr.String(), 20))
			}
			if !strings.Contains(stderr.String(), "refusing -dir") {
				t.Errorf("stderr does not say it refuses -dir:\n%s", tail(stderr.String(), 20))
			}
			if stdout.Len() != 0 {
				t.Errorf("stdout = %q, want nothing", stdout.String())
			}
			if got := tree(t, root); !maps.Equal(got, tt.files) {
				t.Errorf("files after: %v, want them untouched: %v", slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(tt.files)))
			}
		})
	}
}

// TestTestenvReusesItsOwnDir: a folder with the marker, left by an earlier
// run, is emptied but for the marker and used; on SIGTERM every component
// stops and testenv exits with status 0.
func TestTestenvReusesItsOwnDir(t *testing.T) {
	needsControlPlane(t)
	bin := testenvBin
	dir := filepath.Join(t.TempDir(), "env")
	stale := filepath.Join(dir, "etcd", "stale")
	if err := os.MkdirAll(filepath.Dir(stale), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(stale, []byte("an earlier run's"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".pingnode-testenv"), nil, 0o600); err != nil {
		t.Fatal(err)
	}

	cmd, kubeconfig, err := startEnv(bin, dir)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("after SIGTERM: %v, want exit status 0", err)
			}
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			t.Errorf("still running 30s after SIGTERM; killed: %v", <-done)
		}
	}()

	if kubeconfig != filepath.Join(dir, "kubeconfig") {
		t.Errorf("ready %s, want the kubeconfig in %s", kubeconfig, dir)
	}
	if _, err := os.Stat(stale); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the earlier run's file: %v, want it removed", err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".pingnode-testenv")); err != nil {
		t.Errorf("the marker: %v, want it kept", err)
	}
}

// readyNode is a node as a kubelet registers it: Ready, with 4 CPUs.
func readyNode(name string) *corev1.Node {
	list := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("4"),
		corev1.ResourceMemory: resource.MustParse("8Gi"),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
	now := metav1.Now()
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelHostname: name}},
		Status: corev1.NodeStatus{
			Capacity:    list,
			Allocatable: list,
			Conditions: []corev1.NodeCondition{{
				Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
				LastHeartbeatTime: now, LastTransitionTime: now,
			}},
		},
	}
}

// createNode creates node and deletes it when the test ends.
func createNode(t *testing.T, node *corev1.Node) {
	t.Helper()
	if _, err := client.CoreV1().Nodes().Create(context.Background(), node, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		err := client.CoreV1().Nodes().Delete(context.Background(), node.Name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting node %s: %v", node.Name, err)
		}
	})
}

// notReadyNoSchedule reports whether the node of this name has the
// node.kubernetes.io/not-ready:NoSchedule taint, and lists its taints.
func notReadyNoSchedule(ctx context.Context, name string) (bool, string) {
	node, err := client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return false, err.Error()
	}
	found, all := false, []string{}
	for _, taint := range node.Spec.Taints {
		all = append(all, taint.ToString())
		if taint.Key == corev1.TaintNodeNotReady && taint.Effect == corev1.TaintEffectNoSchedule {
			found = true
		}
	}
	return found, "taints [" + strings.Join(all, ", ") + "]"
}

// setReady sets the Ready condition of the node of this name, as its
// kubelet would.
func setReady(t *testing.T, name string, status corev1.ConditionStatus) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		node, err := client.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		now := metav1.Now()
		for i := range node.Status.Conditions {
			if c := &node.Status.Conditions[i]; c.Type == corev1.NodeReady {
				c.Status, c.LastHeartbeatTime, c.LastTransitionTime = status, now, now
			}
		}
		_, err = client.CoreV1().Nodes().UpdateStatus(context.Background(), node, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestTestenvNodeLifecycle shows the node lifecycle controller at work:
// the not-ready taint that admission puts on a new node goes once the
// node is Ready, and comes back while it is not.
func TestTestenvNodeLifecycle(t *testing.T) {
	needsControlPlane(t)
	const name = "testenv-lifecycle"
	createNode(t, readyNode(name))
	eventually(t, "the not-ready taint is lifted from a Ready node", func(ctx context.Context) (bool, string) {
		found, why := notReadyNoSchedule(ctx, name)
		return !found, why
	})
	setReady(t, name, corev1.ConditionFalse)
	eventually(t, "a node that is not Ready gets the not-ready taint", func(ctx context.Context) (bool, string) {
		return notReadyNoSchedule(ctx, name)
	})
	setReady(t, name, corev1.ConditionTrue)
	eventually(t, "the not-ready taint is lifted again", func(ctx context.Context) (bool, string) {
		found, why := notReadyNoSchedule(ctx, name)
		return !found, why
	})
}

// TestTestenvSchedulesPod shows the scheduler at work: a Pod that asks for
// 1 CPU is bound to a Ready node with 4.
func TestTestenvSchedulesPod(t *testing.T) {
	needsControlPlane(t)
	const name = "testenv-scheduling"
	createNode(t, readyNode(name))
	eventually(t, "the not-ready taint is lifted from a Ready node", func(ctx context.Context) (bool, string) {
		found, why := notReadyNoSchedule(ctx, name)
		return !found, why
	})

	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: metav1.NamespaceDefault},
		Spec: corev1.PodSpec{
			// Other tests' nodes may be there too: this one is the target.
			NodeSelector: map[string]string{corev1.LabelHostname: name},
			Containers: []corev1.Container{{
				Name:  "app",
				Image: "registry.k8s.io/pause:3.10", // never pulled: no kubelet runs it
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
				},
			}},
		},
	}
	pods := client.CoreV1().Pods(metav1.NamespaceDefault)
	if _, err := pods.Create(context.Background(), pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// At once: no kubelet will confirm that the pod has stopped.
		err := pods.Delete(context.Background(), name, metav1.DeleteOptions{GracePeriodSeconds: new(int64)})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting pod %s: %v", name, err)
		}
	})
	eventually(t, "the pod is bound to the node", func(ctx context.Context) (bool, string) {
		got, err := pods.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		for _, c := range got.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status != corev1.ConditionTrue {
				return false, "not scheduled: " + c.Reason + ": " + c.Message
			}
		}
		return got.Spec.NodeName == name, "spec.nodeName " + got.Spec.NodeName
	})
}
