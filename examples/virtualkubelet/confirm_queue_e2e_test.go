package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/jobs"
)

// TestConfirmLongQueue: a queue longer than the deadline, scaled: with
// -confirm-deadline 5s, a pod that asks for confirmation on a node of its
// own (one sum, as interLink's Slurm plugin pings) whose job queues for
// six deadlines. At each deadline its allocation is refused and the
// pod told so (BackendQueued, with the job's ID) while its job keeps its
// place in the backend's queue (rule confirm-kept); the scheduler brings
// it back to the node, where it adopts the job. Once the backend starts
// the job, the pod binds: one create, no delete. An hour's queue against
// the scheduler's default binding timeout (600 s) and the default deadline
// (300 s) is the same cycle, twelve times.
func TestConfirmLongQueue(t *testing.T) {
	needsControlPlane(t)
	backend := newConfirmBackend(t, map[string]int{"all": 4}, func(string, string) string { return "queued" })
	backend.single = true
	url := backend.server.URL + "/status"
	cfg := configOfArgs(t, "-confirm", "-plugin", url, "-node", "vk-queue", "-interval", "500ms", "-timeout", "300ms", "-confirm-deadline", "5s")
	name, pod := cfg.Static.Name, "queue-asks"
	forgetConfirmation(t, []string{name}, []string{pod})
	runConfig(t, cfg)
	confirmingReady(t, name)
	asks := askingPod(pod, "", "1")
	asks.Spec.NodeSelector = map[string]string{"kubernetes.io/hostname": name}
	createTestPod(t, asks)
	within(t, 3*time.Minute, "six deadlines, each told to the pod, its job keeping its place", func(ctx context.Context) (bool, string) {
		n := int32(0)
		for _, e := range podEvents(ctx, t, pod, jobs.ReasonQueued) {
			n += e.Count
			if !strings.Contains(e.Message, "job 1 ") {
				return false, "the event does not name the job: " + e.Message
			}
		}
		return n >= 6, fmt.Sprintf("%d events", n)
	})
	backend.start(pod) // it leaves the backend's queue
	if created, _ := backend.calls(); len(created) != 1 {
		t.Errorf("creates %v while the job queued, want one", created)
	}
	// Its next allocation comes after the scheduler's back-off (up to
	// 10 s after six failed tries), then its deadline's wait for the start.
	within(t, time.Minute, pod+" is bound to "+name, func(ctx context.Context) (bool, string) {
		got, why, err := placement(ctx, pod)
		if err != nil {
			return false, err.Error()
		}
		return got == name, fmt.Sprintf("on %q; unschedulable: %s", got, why)
	})
	created, deleted := backend.calls()
	if !slices.Equal(created, []string{pod + "@" + name}) || len(deleted) != 0 {
		t.Errorf("creates %v, deletes %v; want one create of %s, no delete", created, deleted, pod)
	}
}
