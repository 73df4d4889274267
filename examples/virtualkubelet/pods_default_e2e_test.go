package main

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/jobs"
)

// TestPodsRunByDefault: every setting at its default (no -confirm), and
// the sample plugin as shipped. A pod placed on the node runs as a job of
// the plugin, annotated JobID with the job's ID, as interLink's Virtual
// Kubelet annotates it, and its status follows the job: a job of sleep 2
// ends Succeeded. A running pod deleted has its job removed, then is
// gone. The backend made one job a pod, and has none left running.
func TestPodsRunByDefault(t *testing.T) {
	needsControlPlane(t)
	url := samplePlugin(t)
	cfg := configOfArgs(t, "-plugin", url)
	name := cfg.Static.Name
	runConfig(t, cfg)
	short, long := "runs-short", "runs-long"
	for pod, sleep := range map[string]string{short: "2", long: "600"} {
		p := partPod(pod, "", nil, "1")
		p.Spec.NodeSelector = map[string]string{"kubernetes.io/hostname": name}
		p.Spec.Containers[0].Command = []string{"sleep", sleep}
		createTestPod(t, p)
	}
	boundTo(t, short, name)
	boundTo(t, long, name)
	eventually(t, "the short pod Succeeded, the long one Running", func(context.Context) (bool, string) {
		s, l := storedPod(t, short).Status.Phase, storedPod(t, long).Status.Phase
		return s == corev1.PodSucceeded && l == corev1.PodRunning, fmt.Sprintf("%s %s, %s %s", short, s, long, l)
	})
	ids := map[string]string{} // job ID by pod UID, as the backend has them
	made := map[string]int{}
	for _, j := range accounting(t.Context(), t, url).Jobs {
		ids[j.UID] = j.ID
		made[j.UID]++
	}
	for _, pod := range []string{short, long} {
		p := storedPod(t, pod)
		if got, want := p.Annotations[jobs.JobIDAnnotation], ids[string(p.UID)]; got == "" || got != want || made[string(p.UID)] != 1 {
			t.Errorf("%s: annotation %s %q, %d jobs on the backend; want its job's ID %q, one job", pod, jobs.JobIDAnnotation, got, made[string(p.UID)], want)
		}
	}
	uid := deleteGracefully(t, long)
	eventually(t, "the deleted pod gone, once its job was removed", func(ctx context.Context) (bool, string) {
		for _, j := range accounting(ctx, t, url).Jobs {
			if j.UID == string(uid) && !j.Deleted {
				if ok, _ := gone(ctx, long, uid); ok {
					return false, "the pod gone before its job " + j.ID + " was deleted"
				}
				return false, "its job " + j.ID + " not deleted yet"
			}
		}
		return gone(ctx, long, uid)
	})
}
