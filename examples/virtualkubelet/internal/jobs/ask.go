package jobs

import (
	"context"
	"errors"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/pingnode/pingnode/examples/internal/podapi"
)

// asker asks the plugin about pods so that one pod's trouble is that
// pod's (see "One pod's trouble" in the package documentation): the pods
// it has no reason to doubt in one request, and those it doubts apart.
// interLink's Slurm plugin answers 500 for a whole status request when
// one pod of it is a job Slurm forgot without its status file, and
// serves its last answer again, whatever pods a request asks about, for
// 10 s after it computed it; an answer the plugin computed is a fresh
// one, and only a fresh one tells whose trouble a failure is.
type asker struct {
	plugin Plugin
	// age is how long the plugin may serve an answer again (StatusAge):
	// an answer within age of the last one is no evidence of the pods it
	// was asked about.
	age time.Duration
	// computed is when a request last succeeded with a fresh answer: one
	// the plugin computed, not one it served again. A request that
	// succeeds within age of it may be served the answer again, and
	// moves it not.
	computed time.Time
	// suspect are the pods of a request that failed, not yet told apart.
	suspect map[types.UID]bool
	// held are the pods whose question failed alone: each is asked alone,
	// with a back-off, until the plugin answers it.
	held map[types.UID]*trouble
}

// trouble is what the plugin does when asked about one pod alone.
type trouble struct {
	since time.Time     // the first failure
	next  time.Time     // when to ask again
	wait  time.Duration // the back-off
	err   error         // the last failure, the plugin's words in it
}

// The back-off of a pod whose question fails alone: the first wait, and
// the longest.
const (
	firstHold = time.Second
	maxHold   = 5 * time.Minute
)

// answers is what one round of questions learned.
type answers struct {
	// statuses are the answers of the requests that succeeded.
	statuses []podapi.PodStatus
	// answered are the pods of those requests: one left out of their
	// answer was asked and left out, which is not the same as not asked.
	answered map[types.UID]bool
	// held are the pods held for the first time or with other words than
	// before, to be said; freed, those answered again after being held.
	held  map[types.UID]error
	freed []types.UID
	// failed is a failure that was no pod's: the plugin was not reached.
	failed error
}

func newAsker(plugin Plugin, age time.Duration) *asker {
	return &asker{plugin: plugin, age: age, suspect: map[types.UID]bool{}, held: map[types.UID]*trouble{}}
}

// ask asks about pods at now, whole pods as interLink sends them. While
// the plugin's answer is fresh (none was computed within age, or a
// request just failed), the suspects are told apart by halves (a half answered is
// cleared; a half that fails is split, and a pod that fails alone is
// held), and the held pods due are asked, one a request; then the pods
// neither suspect nor held are asked in one request, and when it fails,
// each becomes a suspect, told apart at once. A pod no longer asked about
// is forgotten. A failure that did not reach the plugin blames no pod,
// and ends the round.
func (a *asker) ask(ctx context.Context, pods []*corev1.Pod, now time.Time) answers {
	out := answers{answered: map[types.UID]bool{}, held: map[types.UID]error{}}
	byUID := make(map[types.UID]*corev1.Pod, len(pods))
	for _, p := range pods {
		byUID[p.UID] = p
	}
	maps.DeleteFunc(a.suspect, func(uid types.UID, _ bool) bool { return byUID[uid] == nil })
	maps.DeleteFunc(a.held, func(uid types.UID, _ *trouble) bool { return byUID[uid] == nil })
	fresh := now.Sub(a.computed) >= a.age

	// request asks about some pods; a failure that did not reach the
	// plugin is no pod's.
	request := func(some []*corev1.Pod) error {
		statuses, err := a.plugin.Status(ctx, some)
		if err != nil {
			if !reached(err) {
				out.failed = err
			}
			fresh = true // the plugin computed this answer: it keeps no failure
			return err
		}
		out.statuses = append(out.statuses, statuses...)
		for _, p := range some {
			out.answered[p.UID] = true
		}
		if fresh {
			a.computed = now
		}
		fresh = false
		return nil
	}
	hold := func(uid types.UID, err error) {
		t := a.held[uid]
		if t == nil {
			t = &trouble{since: now, wait: firstHold}
			a.held[uid] = t
		} else {
			t.wait = min(2*t.wait, maxHold)
		}
		if t.err == nil || t.err.Error() != err.Error() {
			out.held[uid] = err
		}
		t.err, t.next = err, now.Add(t.wait)
	}

	// Tell the suspects apart by halves, while the answers are fresh: a
	// half answered is cleared (and the answers are no longer fresh), a
	// half that fails is split, a pod that fails alone is held. Then ask
	// the held pods that are due, one a request, while fresh.
	var split func(some []*corev1.Pod)
	split = func(some []*corev1.Pod) {
		for len(some) > 0 && fresh && out.failed == nil {
			half := some[:(len(some)+1)/2]
			some = some[len(half):]
			err := request(half)
			switch {
			case err == nil:
				for _, p := range half {
					delete(a.suspect, p.UID)
				}
			case out.failed != nil:
			case len(half) == 1:
				delete(a.suspect, half[0].UID)
				hold(half[0].UID, err)
			default:
				split(half)
			}
		}
	}
	doubted := func() {
		suspects := make([]*corev1.Pod, 0, len(a.suspect))
		for _, uid := range slices.Sorted(maps.Keys(a.suspect)) {
			suspects = append(suspects, byUID[uid])
		}
		split(suspects)
		for _, uid := range slices.Sorted(maps.Keys(a.held)) {
			if !fresh || out.failed != nil || now.Before(a.held[uid].next) || out.held[uid] != nil {
				continue
			}
			if err := request([]*corev1.Pod{byUID[uid]}); err == nil {
				delete(a.held, uid)
				out.freed = append(out.freed, uid)
			} else if out.failed == nil {
				hold(uid, err)
			}
		}
	}

	// The doubted first, while the answers are fresh, then the others in
	// one request; when that fails, its pods are doubted too.
	doubted()
	var clear []*corev1.Pod
	for _, p := range pods {
		if !a.suspect[p.UID] && a.held[p.UID] == nil {
			clear = append(clear, p)
		}
	}
	if len(clear) > 0 && request(clear) != nil && out.failed == nil {
		for _, p := range clear {
			a.suspect[p.UID] = true
		}
		doubted()
	}
	return out
}

// reached reports whether a failed call reached the plugin
// (pingclient.CallError.Reached); an error that does not say is taken as
// the plugin's.
func reached(err error) bool {
	r, ok := errors.AsType[interface {
		error
		Reached() bool
	}](err)
	return !ok || r.Reached()
}

// heldFor returns how long the pod of uid has been held at now: since its
// question first failed alone; 0 when it is not held.
func (a *asker) heldFor(uid types.UID, now time.Time) time.Duration {
	if h := a.held[uid]; h != nil {
		return now.Sub(h.since)
	}
	return 0
}
