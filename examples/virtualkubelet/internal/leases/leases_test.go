package leases

import (
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/logcount"
)

// TestRenewer: the renewer of the nodes' Leases, worked one
// renewal at a time on a test clock. A node it serves gets a Lease as the
// kubelet's (named after it, held by it, owned by it, of the configured
// duration), renewed between nine and eleven tenths of the interval
// after; a Lease someone deleted is created again after the backoff; a
// node the cache does not show yet is waited for, without a write; a
// node dropped is renewed no more.
func TestRenewer(t *testing.T) {
	const renew = 10 * time.Second
	ctx := t.Context()
	client := fake.NewClientset()
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	addNode := func(name string) {
		t.Helper()
		if err := indexer.Add(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name)}}); err != nil {
			t.Fatal(err)
		}
	}
	addNode("vk-unit-a")
	clock := clocktesting.NewFakeClock(time.Date(2026, 12, 2, 5, 0, 0, 0, time.UTC))
	log := logcount.New(t.Output(), "renewing a node's Lease")
	nodes := corev1listers.NewNodeLister(indexer)
	r := New(client.CoordinationV1().Leases(corev1.NamespaceNodeLease), "pingnode-provider", 2, 40, renew, clock, slog.New(log))
	r.queue.ShutDown() // the renewer's own; the test's is stepped by hand
	queue := newSteppedQueue(clock)
	r.queue = queue
	t.Cleanup(r.queue.ShutDown)
	leases := client.CoordinationV1().Leases(corev1.NamespaceNodeLease)
	lease := func(name string) *coordinationv1.Lease {
		t.Helper()
		l, err := leases.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("the Lease of %s: %v", name, err)
		}
		return l
	}
	// writesSince are the Lease writes since the first actions.
	writesSince := func(first int) (out []string) {
		for _, a := range client.Actions()[first:] {
			if a.GetResource().Resource == "leases" && (a.GetVerb() == "create" || a.GetVerb() == "update") {
				out = append(out, a.GetVerb())
			}
		}
		return out
	}
	// step renews what is due after d on the clock.
	step := func(d time.Duration) {
		t.Helper()
		clock.Step(d)
		queue.due()
		if r.queue.Len() == 0 {
			t.Fatalf("nothing due after %s", d)
		}
		if !r.next(ctx) {
			t.Fatal("the queue stopped")
		}
	}

	r.Serve("vk-unit-a", nodes, false)
	step(0)
	l := lease("vk-unit-a")
	switch {
	case l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity != "vk-unit-a":
		t.Errorf("holder %v, want the node", l.Spec.HolderIdentity)
	case l.Spec.LeaseDurationSeconds == nil || *l.Spec.LeaseDurationSeconds != 40:
		t.Errorf("duration %v, want 40 s", l.Spec.LeaseDurationSeconds)
	case len(l.OwnerReferences) != 1 || l.OwnerReferences[0].Kind != "Node" || l.OwnerReferences[0].UID != "uid-vk-unit-a":
		t.Errorf("owners %v, want the node, by its UID", l.OwnerReferences)
	case !l.Spec.RenewTime.Time.Equal(clock.Now()):
		t.Errorf("renewed at %v, want now, %v", l.Spec.RenewTime, clock.Now())
	}
	first := clock.Now()
	step(renew * 11 / 10)
	if got := lease("vk-unit-a").Spec.RenewTime.Time; got.Before(first.Add(renew*9/10)) || got.After(first.Add(renew*11/10)) {
		t.Errorf("renewed again at %v, want within 9 and 11 tenths of %s after %v", got, renew, first)
	}

	// Someone deletes the Lease: the renewal fails, and after the backoff
	// the Lease is created again.
	if err := leases.Delete(ctx, "vk-unit-a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	step(renew * 11 / 10)
	if _, err := leases.Get(ctx, "vk-unit-a", metav1.GetOptions{}); err == nil {
		t.Fatal("the Lease is there again at once: want the renewal refused")
	}
	step(retryFirst)
	if l := lease("vk-unit-a"); len(l.OwnerReferences) != 1 || !l.Spec.RenewTime.Time.Equal(clock.Now()) {
		t.Errorf("created again: owners %v, renewed at %v; want the node, now", l.OwnerReferences, l.Spec.RenewTime)
	}
	if log.Count() != 1 {
		t.Errorf("the refused renewal logged %d times, want once", log.Count())
	}

	// A node the cache does not show yet: no write until it does.
	r.Serve("vk-unit-b", nodes, false)
	before := len(client.Actions())
	step(0)
	if w := writesSince(before); len(w) != 0 {
		t.Errorf("a Lease written for a node the cache does not show: %v", w)
	}
	addNode("vk-unit-b")
	step(retryFirst)
	if l := lease("vk-unit-b"); l.OwnerReferences[0].UID != "uid-vk-unit-b" {
		t.Errorf("owners %v, want vk-unit-b by its UID", l.OwnerReferences)
	}
	if log.Count() != 1 {
		t.Errorf("a node not in the cache yet logged: %d failures logged, want the one before", log.Count())
	}

	// Dropped: its next renewal writes nothing, and none follows.
	r.Drop("vk-unit-a")
	r.Drop("vk-unit-b")
	before = len(client.Actions())
	step(renew * 11 / 10)
	step(0)
	if w := writesSince(before); len(w) != 0 {
		t.Errorf("a dropped node's Lease renewed: %v", w)
	}
	if n := r.queue.Len(); n != 0 {
		t.Errorf("%d renewals queued after both nodes were dropped, want none", n)
	}
}

// steppedQueue is the renewer's queue, its delays kept on the test clock
// and moved to the queue by due, in the test's goroutine. client-go's
// delaying queue moves them in a goroutine of its own, which reads the
// time and then sets its timer: a step of the clock between the two set
// the timer after the step, and TestRenewer waited for ever (it hung
// once in CI, at the retry after the Lease was deleted).
type steppedQueue struct {
	workqueue.TypedRateLimitingInterface[string] // ready items: Add, Get, Done, Len
	clock                                        *clocktesting.FakeClock
	limiter                                      workqueue.TypedRateLimiter[string]
	mu                                           sync.Mutex
	waiting                                      map[string]time.Time // by item, when it is due
}

func newSteppedQueue(clock *clocktesting.FakeClock) *steppedQueue {
	return &steppedQueue{
		TypedRateLimitingInterface: workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]()),
		clock:                      clock,
		limiter:                    workqueue.NewTypedItemExponentialFailureRateLimiter[string](retryFirst, retryMax),
		waiting:                    map[string]time.Time{},
	}
}

func (q *steppedQueue) AddAfter(item string, d time.Duration) {
	if d <= 0 {
		q.Add(item)
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	at := q.clock.Now().Add(d)
	if was, ok := q.waiting[item]; !ok || at.Before(was) { // the earlier wins, as in client-go's
		q.waiting[item] = at
	}
}

func (q *steppedQueue) AddRateLimited(item string)  { q.AddAfter(item, q.limiter.When(item)) }
func (q *steppedQueue) Forget(item string)          { q.limiter.Forget(item) }
func (q *steppedQueue) NumRequeues(item string) int { return q.limiter.NumRequeues(item) }

// due moves to the queue what is due by the clock, earliest first.
func (q *steppedQueue) due() {
	q.mu.Lock()
	var items []string
	for item, at := range q.waiting {
		if !at.After(q.clock.Now()) {
			items = append(items, item)
		}
	}
	slices.SortFunc(items, func(a, b string) int { return q.waiting[a].Compare(q.waiting[b]) })
	for _, item := range items {
		delete(q.waiting, item)
	}
	q.mu.Unlock()
	for _, item := range items {
		q.Add(item)
	}
}

// TestRenewerOfANodeRegisteredJustNow: the first renewal of a node
// registered just now creates its Lease without reading it first; when
// the Lease is there after all (a node of that name had one), the create
// is refused, and the Lease is read and renewed.
func TestRenewerOfANodeRegisteredJustNow(t *testing.T) {
	for _, tt := range []struct {
		name  string
		there bool
		want  []string
	}{
		{"no Lease", false, []string{"create"}},
		{"a Lease there already", true, []string{"create", "get", "update"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var objects []runtime.Object
			if tt.there {
				objects = append(objects, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "vk-unit-a", Namespace: corev1.NamespaceNodeLease}})
			}
			client := fake.NewClientset(objects...)
			indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
			if err := indexer.Add(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "vk-unit-a", UID: "uid-vk-unit-a"}}); err != nil {
				t.Fatal(err)
			}
			clock := clocktesting.NewFakeClock(time.Date(2026, 12, 3, 5, 0, 0, 0, time.UTC))
			r := New(client.CoordinationV1().Leases(corev1.NamespaceNodeLease), "pingnode-provider", 1, 40, 10*time.Second, clock, slog.New(slog.NewTextHandler(t.Output(), nil)))
			t.Cleanup(r.queue.ShutDown)
			r.Serve("vk-unit-a", corev1listers.NewNodeLister(indexer), true)
			if !r.next(t.Context()) {
				t.Fatal("the queue stopped")
			}
			var got []string
			for _, a := range client.Actions() {
				if a.GetResource().Resource == "leases" {
					got = append(got, a.GetVerb())
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("requests %v, want %v", got, tt.want)
			}
			l, err := client.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(t.Context(), "vk-unit-a", metav1.GetOptions{})
			if err != nil || l.Spec.RenewTime == nil || !l.Spec.RenewTime.Time.Equal(clock.Now()) || len(l.OwnerReferences) != 1 {
				t.Errorf("the Lease %+v (%v): want it renewed now, owned by the node", l, err)
			}
		})
	}
}
