package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/jobs"
)

// TestConfirmJob: -confirm, every other setting at its default but the
// ping's pace, against the sample plugin as shipped (every pod's job
// starts at once, and a pod that sleeps N seconds completes then): a
// Kubernetes Job of 10 completions, 3 at a time, whose pods ask for
// confirmation and sleep 8 s. Each pod binds once its job runs; its
// status follows its job, Running then Succeeded, as the test sees it;
// the Job completes; and the backend made one job a pod. Then a pod that
// sleeps long runs, and deleting it removes its job on the backend, then
// its delete completes: its last version records the job removed.
func TestConfirmJob(t *testing.T) {
	needsControlPlane(t)
	url := samplePlugin(t)
	cfg := configOfArgs(t, "-confirm", "-plugin", url, "-node", "vk-job", "-interval", "1s", "-timeout", "500ms")
	name := cfg.Static.Name
	forgetConfirmation(t, []string{name}, []string{"job-long"})
	runConfig(t, cfg)
	confirmingReady(t, name)

	template := askingPod("job-pod", "", "1")
	template.Spec.NodeSelector = map[string]string{"kubernetes.io/hostname": name}
	template.Spec.Containers[0].Command = []string{"sleep", "8"}
	run := runJob(t, "confirm-job", 10, 3, 0, template, 4*time.Minute, func(s batchv1.JobStatus) bool { return s.Succeeded == 10 })
	if len(run.phases) != 10 {
		t.Errorf("%d pods, want 10 (no retry): %v", len(run.phases), run.phases)
	}
	for pod, phases := range run.phases {
		if !slices.Contains(phases, corev1.PodRunning) || phases[len(phases)-1] != corev1.PodSucceeded {
			t.Errorf("%s went through %v, want Running then Succeeded", pod, phases)
		}
	}
	run.madeOnce(t, url)

	long := askingPod("job-long", "", "1")
	long.Spec.NodeSelector = map[string]string{"kubernetes.io/hostname": name}
	long.Spec.Containers[0].Command = []string{"sleep", "600"}
	long.Spec.TerminationGracePeriodSeconds = nil // 30 s: its delete waits for the provider to finish it
	createTestPod(t, long)
	uid := string(storedPod(t, long.Name).UID)
	eventually(t, "the long pod runs", func(ctx context.Context) (bool, string) {
		p, err := client.CoreV1().Pods(metav1.NamespaceDefault).Get(ctx, long.Name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return p.Status.Phase == corev1.PodRunning, string(p.Status.Phase)
	})
	w, err := client.CoreV1().Pods(metav1.NamespaceDefault).Watch(t.Context(), metav1.ListOptions{FieldSelector: "metadata.name=" + long.Name})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if err := client.CoreV1().Pods(metav1.NamespaceDefault).Delete(t.Context(), long.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	for e := range w.ResultChan() { // the pod's last version records its job removed: the job ended before the pod
		if e.Type == watch.Deleted {
			if r, ok := jobs.RecordOf(e.Object.(*corev1.Pod)); !ok || !r.Removed {
				t.Errorf("the long pod was deleted with the record %+v (%v): its job not removed first", r, ok)
			}
			break
		}
	}
	eventually(t, "the long pod's delete completes, and its job is removed", func(ctx context.Context) (bool, string) {
		_, err := client.CoreV1().Pods(metav1.NamespaceDefault).Get(ctx, long.Name, metav1.GetOptions{})
		var states []string
		for _, j := range accounting(ctx, t, url).Jobs {
			if j.UID == uid {
				states = append(states, fmt.Sprintf("%s deleted=%v", j.State, j.Deleted))
			}
		}
		return err != nil && len(states) == 1 && strings.HasSuffix(states[0], "deleted=true"), fmt.Sprintf("pod: %v; jobs: %v", err, states)
	})
}
