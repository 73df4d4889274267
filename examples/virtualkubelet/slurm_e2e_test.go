package main

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/jobs"
	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/supervise"
	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/vnode"
)

// The sample plugin as interLink's Slurm plugin over time (-slurm): its
// status refreshes, 10 s apart, see a job's start only if it is running
// then; Slurm forgets a job some time after it ended.

// slurmPod is a pod of node that runs sleep seconds, with the Slurm
// plugin's sbatch flags (empty: none).
func slurmPod(name, node, seconds, flags string) *corev1.Pod {
	p := partPod(name, "", nil, "1")
	p.Spec.NodeSelector = map[string]string{"kubernetes.io/hostname": node}
	p.Spec.Containers[0].Command = []string{"sleep", seconds}
	if flags != "" {
		p.Annotations = map[string]string{"slurm-job.vk.io/flags": flags}
	}
	return p
}

// jobsOf counts the backend's jobs of each pod of names, by its own
// account.
func jobsOf(ctx context.Context, t *testing.T, url string, names ...string) map[string]int {
	t.Helper()
	uids := map[string]string{}
	for _, n := range names {
		uids[string(storedPod(t, n).UID)] = n
	}
	made := map[string]int{}
	for uid, n := range jobsByUID(ctx, t, url) {
		if name, ours := uids[uid]; ours {
			made[name] = n
		}
	}
	return made
}

// jobsByUID counts the backend's jobs of each pod by its UID, by its own
// account: for a pod that is gone too.
func jobsByUID(ctx context.Context, t *testing.T, url string) map[string]int {
	t.Helper()
	made := map[string]int{}
	for _, j := range accounting(ctx, t, url).Jobs {
		made[j.UID]++
	}
	return made
}

// TestSlurmShortJobs: jobs of 1 s, each over before the plugin's next
// status refresh, so that each is answered terminated, exit code 0, with
// no start. Every setting at its default but -confirm: three pods ask for
// confirmation and three do not. Each runs once, with one job, and ends
// Succeeded; a pod that asks binds once its job ended.
func TestSlurmShortJobs(t *testing.T) {
	needsControlPlane(t)
	url := samplePlugin(t, "-slurm")
	cfg := configOfArgs(t, "-confirm", "-plugin", url, "-node", "vk-slurm-short")
	name := cfg.Static.Name
	var pods []string
	for i := range 3 {
		pods = append(pods, fmt.Sprintf("short-asks-%d", i), fmt.Sprintf("short-plain-%d", i))
	}
	forgetConfirmation(t, []string{name}, pods)
	runConfig(t, cfg)
	confirmingReady(t, name)
	for _, n := range pods {
		p := slurmPod(n, name, "1", "")
		if strings.Contains(n, "asks") {
			p = askingPod(n, "", "1")
			p.Spec.NodeSelector = map[string]string{"kubernetes.io/hostname": name}
			p.Spec.Containers[0].Command = []string{"sleep", "1"}
		}
		createTestPod(t, p)
	}
	within(t, 3*time.Minute, "every pod Succeeded", func(ctx context.Context) (bool, string) {
		var not []string
		for _, n := range pods {
			if phase := storedPod(t, n).Status.Phase; phase != corev1.PodSucceeded {
				not = append(not, n+" "+string(phase))
			}
		}
		return len(not) == 0, strings.Join(not, ", ")
	})
	for n, made := range jobsOf(t.Context(), t, url, pods...) {
		if made != 1 {
			t.Errorf("%s: %d jobs on the backend, want 1", n, made)
		}
	}
}

// TestSlurmForgottenJob: a job killed by its time limit (--time=1, a
// minute) while no provider ran, then forgotten by Slurm
// (-slurm-min-job-age 5s), after which the plugin answers 500 to every
// status request that names its pod. The provider started again asks
// about that pod apart: the pod is told why (BackendStatusFailed, with the
// plugin's words), and a pod created then runs and Succeeds all the same,
// with one job. Deleted, the pod of the forgotten job is gone: every
// delete ends.
func TestSlurmForgottenJob(t *testing.T) {
	needsControlPlane(t)
	url := samplePlugin(t, "-slurm", "-slurm-min-job-age", "5s")
	cfg := configOfArgs(t, "-plugin", url, "-node", "vk-slurm-forgot")
	name := cfg.Static.Name
	id := grant(t, name, accessFor("", "", []vnode.Config{cfg}, nil))
	run := func() (stop func()) {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			done <- supervise.One(vnode.New(cfg, id.client, slog.New(slog.NewTextHandler(t.Output(), nil)))).Run(ctx)
		}()
		return func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("provider: %v", err)
			}
		}
	}
	stop := run()
	t.Cleanup(func() { deleteNode(t, name) })
	killed, later := "forgot-killed", "forgot-later"
	createTestPod(t, slurmPod(killed, name, "600", "--time=1"))
	within(t, time.Minute, killed+" runs", func(context.Context) (bool, string) {
		phase := storedPod(t, killed).Status.Phase
		return phase == corev1.PodRunning, string(phase)
	})
	stop() // no provider while its job is killed and forgotten
	uid := string(storedPod(t, killed).UID)
	within(t, 3*time.Minute, "Slurm forgets the killed job", func(ctx context.Context) (bool, string) {
		for _, j := range accounting(ctx, t, url).Jobs {
			if j.UID == uid {
				return j.Forgotten, fmt.Sprintf("%v, forgotten %v", j.State, j.Forgotten)
			}
		}
		return false, "no job"
	})
	stop = run()
	defer stop()
	createTestPod(t, slurmPod(later, name, "2", ""))
	within(t, 2*time.Minute, later+" Succeeded, beside the forgotten job", func(context.Context) (bool, string) {
		phase := storedPod(t, later).Status.Phase
		return phase == corev1.PodSucceeded, string(phase)
	})
	if made := jobsOf(t.Context(), t, url, later)[later]; made != 1 {
		t.Errorf("%s: %d jobs, want 1", later, made)
	}
	told := podEvents(t.Context(), t, killed, jobs.ReasonStatusFailed)
	if len(told) != 1 || !strings.Contains(told[0].Message, "unable to retrieve container status") {
		t.Errorf("%s told %v, want one %s event with the plugin's words", killed, told, jobs.ReasonStatusFailed)
	}
	podUID := deleteGracefully(t, killed)
	within(t, 4*time.Minute, killed+" deleted, its job never answered", func(ctx context.Context) (bool, string) {
		return gone(ctx, killed, podUID)
	})
}
