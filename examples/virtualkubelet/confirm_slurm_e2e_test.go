package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/pingnode/pingnode/examples/internal/partsfleet"
	"github.com/pingnode/pingnode/nodeapply/dra/confirm"
)

// TestConfirmSlurm: -confirm, every other setting at its default but the
// ping's pace and the deadline, against the sample plugin as interLink's
// Slurm plugin (-slurm): one sum in its ping, Slurm choosing the machine
// (spec.nodeName means nothing to it), a second create of a pod a second
// job, a status cache of 10 s, no answer to the delete of a pod it does
// not know; a shared backend of 6 machines of 2 cpus whose native jobs
// take and free cpus between pings. 8 pods ask for confirmation, 1 cpu
// each, and sleep 30 s. Every pod binds, and none while its job is queued
// (the backend's own account, read at every poll); a pod whose job
// queued past the deadline kept it (rule confirm-kept: one node of its
// own, one sum); the backend made one job a pod, and was sent no delete
// of a pod it did not know; once the pods are deleted, no job of theirs
// is left queued or running. (A part that never starts its job lets its
// pod go elsewhere: TestConfirmRefusedAndDeadline, with -parts.)
func TestConfirmSlurm(t *testing.T) {
	needsControlPlane(t)
	url := samplePlugin(t, "-slurm", "-parts-generate", "6", "-parts-cpus", "2", "-parts-churn", "0.3", "-parts-seed", "9")
	cfg := configOfArgs(t, "-confirm", "-plugin", url, "-node", "vk-slurm", "-interval", "1s", "-timeout", "500ms", "-confirm-deadline", "20s")
	name := cfg.Static.Name
	pods := make([]string, 8)
	for i := range pods {
		pods[i] = fmt.Sprintf("slurm-asks-%d", i)
	}
	forgetConfirmation(t, []string{name}, pods)
	runConfig(t, cfg)
	confirmingReady(t, name)

	uids := map[string]string{} // pod name by UID
	for _, n := range pods {
		pod := askingPod(n, "", "1")
		pod.Spec.NodeSelector = map[string]string{"kubernetes.io/hostname": name}
		pod.Spec.Containers[0].Command = []string{"sleep", "30"}
		createTestPod(t, pod)
		uids[string(storedPod(t, n).UID)] = n
	}
	bind := newBindTimes()
	within(t, 4*time.Minute, "every pod bound, each once its job ran", func(ctx context.Context) (bool, string) {
		return bind.poll(ctx, t, url, uids)
	})
	t.Logf("job start to bind, with the plugin's status cache of 10 s: %v", bind.latencies(t.Context(), t, url, uids))
	acct := accounting(t.Context(), t, url)
	ran := map[string]int{}
	for _, j := range acct.Jobs {
		if _, ours := uids[j.UID]; !ours {
			continue
		}
		if j.Started.IsZero() {
			t.Errorf("%s's job %s never ran, and is %v on %q", uids[j.UID], j.ID, j.State, j.Machine)
		}
		ran[uids[j.UID]]++
	}
	for _, n := range pods {
		if ran[n] != 1 {
			t.Errorf("the backend made %d jobs of %s, want 1", ran[n], n)
		}
	}
	if acct.UnknownDeletes != 0 {
		t.Errorf("%d deletes of a pod the backend did not know, want none", acct.UnknownDeletes)
	}

	for _, n := range pods {
		deletePod(t, n)
	}
	eventually(t, "no job of the pods left queued or running", func(ctx context.Context) (bool, string) {
		var live []string
		for _, j := range accounting(ctx, t, url).Jobs {
			if _, ours := uids[j.UID]; ours && (j.State == partsfleet.Queued || j.State == partsfleet.Running) {
				live = append(live, j.Name+" "+j.State.String())
			}
		}
		return len(live) == 0, strings.Join(live, ", ")
	})
	if n := accounting(t.Context(), t, url).UnknownDeletes; n != 0 {
		t.Errorf("%d deletes of a pod the backend did not know, want none", n)
	}
}

// bindTimes is when a test first saw each pod's confirmation written to
// its claim, and the pod bound, by pod name.
type bindTimes struct {
	confirmed, bound map[string]time.Time
}

func newBindTimes() *bindTimes {
	return &bindTimes{confirmed: map[string]time.Time{}, bound: map[string]time.Time{}}
}

// poll reads the pods of uids (pod name by UID), their claims and the
// backend's account, notes when each pod's confirmation is first seen
// and when the pod is first seen bound, fails the test when a bound pod's
// latest job has not started, and reports whether all are bound.
func (b *bindTimes) poll(ctx context.Context, t *testing.T, url string, uids map[string]string) (bool, string) {
	t.Helper()
	now := time.Now()
	claims, err := client.ResourceV1().ResourceClaims(metav1.NamespaceDefault).List(ctx, metav1.ListOptions{})
	if err == nil {
		for _, c := range claims.Items {
			for _, o := range c.OwnerReferences {
				if _, seen := b.confirmed[o.Name]; o.Kind == "Pod" && !seen && confirmedClaim(&c) {
					b.confirmed[o.Name] = now
				}
			}
		}
	}
	latest := latestJobs(ctx, t, url)
	for uid, n := range uids {
		pod, err := client.CoreV1().Pods(metav1.NamespaceDefault).Get(ctx, n, metav1.GetOptions{})
		if err != nil || pod.Spec.NodeName == "" {
			continue
		}
		if _, seen := b.bound[n]; !seen {
			b.bound[n] = now
		}
		if j, ok := latest[uid]; !ok || j.State != partsfleet.Running && j.State != partsfleet.Completed {
			t.Fatalf("%s is bound to %s, and its job is %+v", n, pod.Spec.NodeName, j)
		}
	}
	return len(b.bound) == len(uids), fmt.Sprintf("%d of %d bound", len(b.bound), len(uids))
}

// confirmedClaim reports whether a device's entry of the claim's status
// has the condition confirm.ConditionRuns True.
func confirmedClaim(c *resourcev1.ResourceClaim) bool {
	for _, d := range c.Status.Devices {
		for _, cond := range d.Conditions {
			if cond.Type == confirm.ConditionRuns && cond.Status == metav1.ConditionTrue {
				return true
			}
		}
	}
	return false
}

// latencies says, over the pods of uids, the median and the longest time
// from their job's start on the backend to their confirmation (the
// provider's part), from the confirmation to their bind (the scheduler's
// part: it reads a pod's binding conditions every 5 s), and in all, as
// seen by poll (every 50 ms).
func (b *bindTimes) latencies(ctx context.Context, t *testing.T, url string, uids map[string]string) string {
	t.Helper()
	latest := latestJobs(ctx, t, url)
	var toConfirm, toBind, all []time.Duration
	for uid, n := range uids {
		started := latest[uid].Started
		confirmed, okc := b.confirmed[n]
		bound, okb := b.bound[n]
		if started.IsZero() || !okc || !okb {
			continue
		}
		toConfirm, toBind, all = append(toConfirm, confirmed.Sub(started)), append(toBind, bound.Sub(confirmed)), append(all, bound.Sub(started))
	}
	spread := func(d []time.Duration) string {
		if len(d) == 0 {
			return "none measured"
		}
		slices.Sort(d)
		return fmt.Sprintf("median %v, max %v", d[len(d)/2].Round(10*time.Millisecond), d[len(d)-1].Round(10*time.Millisecond))
	}
	return fmt.Sprintf("over %d pods: job start to confirmation %s; confirmation to bind %s; job start to bind %s", len(all), spread(toConfirm), spread(toBind), spread(all))
}

// storedPod returns the pod name as the API server has it.
func storedPod(t *testing.T, name string) *corev1.Pod {
	t.Helper()
	pod, err := client.CoreV1().Pods(metav1.NamespaceDefault).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return pod
}

// backendAccount is the sample plugin's account of its jobs (GET /jobs
// beside the ping's path).
type backendAccount struct {
	Jobs           []partsfleet.JobStatus `json:"jobs"`
	UnknownDeletes int                    `json:"unknownDeletes"`
}

// accounting reads the sample plugin's account of its jobs.
func accounting(ctx context.Context, t *testing.T, url string) backendAccount {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(url, "/status")+"/jobs", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("the backend's account: %v", err)
	}
	defer func() { _ = resp.Body.Close() }()
	var a backendAccount
	if err := json.NewDecoder(resp.Body).Decode(&a); err != nil {
		t.Fatalf("the backend's account: %v", err)
	}
	return a
}

// latestJobs returns the latest job the backend made of each pod, by its
// UID.
func latestJobs(ctx context.Context, t *testing.T, url string) map[string]partsfleet.JobStatus {
	t.Helper()
	latest := map[string]partsfleet.JobStatus{}
	for _, j := range accounting(ctx, t, url).Jobs {
		latest[j.UID] = j
	}
	return latest
}
