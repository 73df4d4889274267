package jobs

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/pingnode/pingnode/examples/internal/podapi"
)

// slurmStatuses answers a status as interLink's Slurm plugin does
// (pkg/slurm/Status.go): a request made within cache of the last answer
// it computed gets that answer again, whatever pods it asks about; a
// request computed with a pod of forgotten in it (a job Slurm forgot
// without its status file) is answered 500 for the whole request, and
// is not cached; otherwise every pod asked is answered. down refuses
// every connection.
type slurmStatuses struct {
	now       func() time.Time
	cache     time.Duration
	forgotten map[types.UID]bool
	down      bool

	at       time.Time
	last     []podapi.PodStatus
	computed [][]types.UID // the pods of each answer it computed
	requests int
}

func (p *slurmStatuses) Create(context.Context, podapi.CreateRequest) (podapi.Created, bool, error) {
	panic("not a create")
}

func (p *slurmStatuses) Delete(context.Context, *corev1.Pod) error { panic("not a delete") }

func (p *slurmStatuses) Status(_ context.Context, pods []*corev1.Pod) ([]podapi.PodStatus, error) {
	p.requests++
	if p.down {
		return nil, reachedErr{"GET /status: connection refused", false}
	}
	if p.last != nil && p.now().Sub(p.at) < p.cache {
		return p.last, nil
	}
	var out []podapi.PodStatus
	var uids []types.UID
	for _, pod := range pods {
		if p.forgotten[pod.UID] {
			return nil, reachedErr{"GET /status: HTTP 500 Internal Server Error: Some errors occurred deleting containers. Check SLURM Sidecar's logs", true}
		}
		out = append(out, podapi.PodStatus{Name: pod.Name, UID: string(pod.UID), Namespace: pod.Namespace,
			Containers: []corev1.ContainerStatus{{Name: "main", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{}}}}})
		uids = append(uids, pod.UID)
	}
	p.last, p.at = out, p.now()
	p.computed = append(p.computed, uids)
	return out, nil
}

// reachedErr is a failed call, as pingclient.CallError says whether it
// reached the plugin.
type reachedErr struct {
	words   string
	reached bool
}

func (e reachedErr) Error() string  { return e.words }
func (e reachedErr) Reached() bool  { return e.reached }
func (e reachedErr) Answered() bool { return e.reached }

func askedPods(n int) []*corev1.Pod {
	pods := make([]*corev1.Pod, n)
	for i := range pods {
		pods[i] = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "hpc", Name: fmt.Sprintf("p%02d", i), UID: types.UID(fmt.Sprintf("uid-%02d", i))},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main"}}}}
	}
	return pods
}

// TestAskOnePodsTrouble: of 20 pods, one is a job Slurm forgot, and
// every request the Slurm plugin computes with it fails. The asker, a
// step a second, holds that pod within a minute (six rounds of the
// plugin's 10 s cache at most), says so once, and from then on the
// plugin computes an answer of the 19 others at least every cache
// period, one request a step but for the held pod's, asked alone with a
// back-off.
func TestAskOnePodsTrouble(t *testing.T) {
	t0 := time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)
	now := t0
	pods := askedPods(20)
	bad := pods[13].UID
	plugin := &slurmStatuses{now: func() time.Time { return now }, cache: DefaultStatusAge, forgotten: map[types.UID]bool{bad: true}}
	a := newAsker(plugin, DefaultStatusAge)
	said := 0
	var isolated time.Time
	for s := range 180 {
		now = t0.Add(time.Duration(s) * time.Second)
		before := plugin.requests
		out := a.ask(context.Background(), pods, now)
		if out.failed != nil {
			t.Fatalf("at %v: a failure blamed on no pod: %v", now.Sub(t0), out.failed)
		}
		for uid, err := range out.held {
			said++
			if uid != bad {
				t.Errorf("at %v: %s held: %v", now.Sub(t0), uid, err)
			}
		}
		if isolated.IsZero() && a.held[bad] != nil && len(a.suspect) == 0 {
			isolated = now
		}
		if !isolated.IsZero() && plugin.requests-before > 2 {
			t.Errorf("at %v, after the pod was held: %d requests in a step, want at most 2", now.Sub(t0), plugin.requests-before)
		}
	}
	if isolated.IsZero() || isolated.Sub(t0) > time.Minute {
		t.Fatalf("the forgotten job's pod held at %v, want within a minute", isolated.Sub(t0))
	}
	if said != 1 {
		t.Errorf("the held pod said %d times, want once", said)
	}
	// Every cache period after, an answer computed of the 19 others.
	others := slices.DeleteFunc(slices.Clone(pods), func(p *corev1.Pod) bool { return p.UID == bad })
	want := make([]types.UID, len(others))
	for i, p := range others {
		want[i] = p.UID
	}
	full := 0
	for _, c := range plugin.computed {
		if slices.Equal(c, want) {
			full++
		}
	}
	if periods := int((180*time.Second - isolated.Sub(t0)) / DefaultStatusAge); full < periods-1 {
		t.Errorf("%d answers computed of the 19 others after the pod was held, in %d cache periods", full, periods)
	}
	t.Logf("held after %v; %d requests in 180 steps; %d full answers", isolated.Sub(t0), plugin.requests, full)
}

// TestAskNoTroubleOneRequest: with no pod in trouble, a step is one
// request of every pod.
func TestAskNoTroubleOneRequest(t *testing.T) {
	now := time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)
	plugin := &slurmStatuses{now: func() time.Time { return now }, cache: DefaultStatusAge}
	a := newAsker(plugin, DefaultStatusAge)
	pods := askedPods(500)
	for s := range 30 {
		now = now.Add(time.Second)
		out := a.ask(context.Background(), pods, now)
		if len(out.answered) != len(pods) {
			t.Fatalf("step %d: %d pods answered, want %d", s, len(out.answered), len(pods))
		}
	}
	if plugin.requests != 30 {
		t.Errorf("%d requests in 30 steps, want 30", plugin.requests)
	}
}

// TestAskPluginDown: a plugin that cannot be reached is no pod's
// trouble: no pod is doubted or held, and the failure is said once a
// step.
func TestAskPluginDown(t *testing.T) {
	now := time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)
	plugin := &slurmStatuses{now: func() time.Time { return now }, cache: DefaultStatusAge, down: true}
	a := newAsker(plugin, DefaultStatusAge)
	for range 3 {
		now = now.Add(20 * time.Second)
		out := a.ask(context.Background(), askedPods(8), now)
		if out.failed == nil || !errors.Is(out.failed, out.failed) {
			t.Fatalf("no failure said: %+v", out)
		}
	}
	if len(a.suspect)+len(a.held) != 0 || plugin.requests != 3 {
		t.Errorf("%d suspects, %d held, %d requests; want none, none, 3", len(a.suspect), len(a.held), plugin.requests)
	}
	plugin.down = false
	now = now.Add(20 * time.Second)
	if out := a.ask(context.Background(), askedPods(8), now); out.failed != nil || len(out.answered) != 8 {
		t.Errorf("back up: %v, %d answered", out.failed, len(out.answered))
	}
}

// TestAskHeldFreed: a held pod whose job is answered again is freed,
// and said so; a pod no longer asked about is forgotten.
func TestAskHeldFreed(t *testing.T) {
	t0 := time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)
	now := t0
	pods := askedPods(2)
	plugin := &slurmStatuses{now: func() time.Time { return now }, forgotten: map[types.UID]bool{pods[0].UID: true}}
	a := newAsker(plugin, 0)
	a.ask(context.Background(), pods, now)
	if a.held[pods[0].UID] == nil {
		t.Fatalf("held: %v, want %s", slices.Collect(maps.Keys(a.held)), pods[0].UID)
	}
	delete(plugin.forgotten, pods[0].UID)
	now = now.Add(time.Minute)
	if out := a.ask(context.Background(), pods, now); !slices.Equal(out.freed, []types.UID{pods[0].UID}) {
		t.Errorf("freed %v, want %s", out.freed, pods[0].UID)
	}
	plugin.forgotten[pods[1].UID] = true
	now = now.Add(time.Minute)
	a.ask(context.Background(), pods, now)
	a.ask(context.Background(), pods[:1], now.Add(time.Minute))
	if len(a.held)+len(a.suspect) != 0 {
		t.Errorf("a pod no longer asked about is still held or doubted: %v %v", a.held, a.suspect)
	}
}
