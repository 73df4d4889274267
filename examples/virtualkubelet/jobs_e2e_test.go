package main

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// jobRun is what a test saw of a Kubernetes Job's pods.
type jobRun struct {
	phases map[string][]corev1.PodPhase // each pod's phases, in the order seen
	uids   map[string]string            // pod by UID
	pods   map[string]*corev1.Pod       // each pod, as last seen
}

// runJob creates a Job of completions pods, parallelism at a time, of
// template, and follows its pods until done holds of it, within limit.
// The Job and its pods are deleted when the test ends.
func runJob(t *testing.T, name string, completions, parallelism, backoff int32, template *corev1.Pod, limit time.Duration, done func(batchv1.JobStatus) bool) jobRun {
	t.Helper()
	template.Spec.RestartPolicy = corev1.RestartPolicyNever
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: metav1.NamespaceDefault},
		Spec: batchv1.JobSpec{
			Completions: ptr.To(completions), Parallelism: ptr.To(parallelism), BackoffLimit: ptr.To(backoff),
			Template: corev1.PodTemplateSpec{Spec: template.Spec},
		},
	}
	batch := client.BatchV1().Jobs(metav1.NamespaceDefault)
	background := metav1.DeletePropagationBackground
	_ = batch.Delete(t.Context(), job.Name, metav1.DeleteOptions{PropagationPolicy: &background}) // left by a run that was killed
	if _, err := batch.Create(t.Context(), job, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = batch.Delete(context.Background(), job.Name, metav1.DeleteOptions{PropagationPolicy: &background})
	})
	run := jobRun{phases: map[string][]corev1.PodPhase{}, uids: map[string]string{}, pods: map[string]*corev1.Pod{}}
	within(t, limit, "the Job "+name+" ends", func(ctx context.Context) (bool, string) {
		pods, err := client.CoreV1().Pods(metav1.NamespaceDefault).List(ctx, metav1.ListOptions{LabelSelector: "job-name=" + job.Name})
		if err != nil {
			return false, err.Error()
		}
		for i, p := range pods.Items {
			run.uids[string(p.UID)], run.pods[p.Name] = p.Name, &pods.Items[i]
			if phases := run.phases[p.Name]; len(phases) == 0 || phases[len(phases)-1] != p.Status.Phase {
				run.phases[p.Name] = append(phases, p.Status.Phase)
			}
		}
		got, err := batch.Get(ctx, job.Name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return done(got.Status), fmt.Sprintf("%d succeeded, %d failed, %d active", got.Status.Succeeded, got.Status.Failed, got.Status.Active)
	})
	return run
}

// madeOnce checks that the backend at url made one job of each pod of
// run, and returns how many it made of them.
func (run jobRun) madeOnce(t *testing.T, url string) int {
	t.Helper()
	made := map[string]int{}
	n := 0
	for _, j := range accounting(t.Context(), t, url).Jobs {
		if pod, ok := run.uids[j.UID]; ok {
			made[pod]++
			n++
		}
	}
	for pod := range run.phases {
		if made[pod] != 1 {
			t.Errorf("the backend made %d jobs of %s, want 1", made[pod], pod)
		}
	}
	return n
}

// TestConfirmJobs: -confirm, every other setting at its default, against
// the sample plugin as shipped. A Job of 100 completions of 1-second
// jobs, 10 at a time, whose pods ask for confirmation, completes with
// exactly 100 backend jobs, each pod Succeeded. A Job whose
// pods exit 3 at once (backoffLimit 2) ends Failed by its backoffLimit:
// 3 pods, each Failed with exit code 3, each with one job; the backend
// ran each (its own exit code), so none was refused and run again.
func TestConfirmJobs(t *testing.T) {
	needsControlPlane(t)
	url := samplePlugin(t)
	cfg := configOfArgs(t, "-confirm", "-plugin", url, "-node", "vk-jobs")
	name := cfg.Static.Name
	forgetConfirmation(t, []string{name}, nil)
	runConfig(t, cfg)
	confirmingReady(t, name)
	template := func(command ...string) *corev1.Pod {
		p := askingPod("jobs-pod", "", "1")
		p.Spec.NodeSelector = map[string]string{"kubernetes.io/hostname": name}
		p.Spec.Containers[0].Command = command
		return p
	}

	start := time.Now()
	many := runJob(t, "jobs-100", 100, 10, 0, template("sleep", "1"), 10*time.Minute, func(s batchv1.JobStatus) bool { return s.Succeeded == 100 })
	t.Logf("a Job of 100 completions of 1 s, 10 at a time, completed in %s", time.Since(start).Round(time.Second))
	if len(many.phases) != 100 {
		t.Errorf("%d pods, want 100 (no retry)", len(many.phases))
	}
	for pod, phases := range many.phases {
		if phases[len(phases)-1] != corev1.PodSucceeded {
			t.Errorf("%s went through %v, want Succeeded (a job of 1 s may end between two looks at it)", pod, phases)
		}
	}
	if n := many.madeOnce(t, url); n != 100 {
		t.Errorf("the backend made %d jobs of the Job's pods, want 100", n)
	}

	failing := runJob(t, "jobs-exit-3", 1, 1, 2, template("sh", "-c", "exit 3"), 5*time.Minute, func(s batchv1.JobStatus) bool {
		return slices.ContainsFunc(s.Conditions, func(c batchv1.JobCondition) bool {
			return c.Type == batchv1.JobFailed && c.Status == corev1.ConditionTrue && c.Reason == batchv1.JobReasonBackoffLimitExceeded
		})
	})
	if len(failing.pods) != 3 {
		t.Errorf("%d pods of the failing Job, want 3 (backoffLimit 2)", len(failing.pods))
	}
	for name, p := range failing.pods {
		cs := p.Status.ContainerStatuses
		if p.Status.Phase != corev1.PodFailed || len(cs) != 1 || cs[0].State.Terminated == nil || cs[0].State.Terminated.ExitCode != 3 {
			t.Errorf("%s: phase %s, containers %+v; want Failed, exit code 3", name, p.Status.Phase, cs)
		}
	}
	failing.madeOnce(t, url)
}
