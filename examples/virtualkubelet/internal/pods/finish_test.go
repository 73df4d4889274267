package pods

import (
	"context"
	"errors"
	"log/slog"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/pingnode/pingnode/examples/virtualkubelet/internal/logcount"
)

// TestFinisher: the Finisher deletes a pod bound to the node that is
// being deleted, once, with grace period 0 and the pod's UID as a
// precondition, and only while the plugin answers: a pod queued before
// the plugin's first answer (or during an outage) is passed over, and
// queued again at the first answer. A pod not being deleted, or whose
// delete with grace period 0 was made, is not queued; a pod gone is done
// with; a delete the API server refuses is tried again, rate limited, and
// logged once. A fake client: no API server.
func TestFinisher(t *testing.T) {
	grace, zero := int64(30), int64(0)
	now := metav1.Now()
	marked := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Name: "marked", Namespace: "jobs", UID: "uid-marked", DeletionTimestamp: &now, DeletionGracePeriodSeconds: &grace,
	}}
	done := marked.DeepCopy()
	done.Name, done.UID, done.DeletionGracePeriodSeconds = "done", "uid-done", &zero
	live := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "live", Namespace: "jobs", UID: "uid-live"}}
	client := fake.NewClientset(marked, done, live)
	log := logcount.New(t.Output(), "deleting a pod being deleted on the node")
	f := newFinisher(client, slog.New(log), func() []*corev1.Pod { return []*corev1.Pod{marked, done, live} }, "vk-unit")
	t.Cleanup(f.Stop)
	deletes := func() []k8stesting.DeleteActionImpl {
		var out []k8stesting.DeleteActionImpl
		for _, a := range client.Actions() {
			if d, ok := a.(k8stesting.DeleteActionImpl); ok {
				out = append(out, d)
			}
		}
		return out
	}
	ctx := context.Background()

	for _, pod := range []*corev1.Pod{done, live} {
		f.Add(pod)
	}
	if f.queue != nil {
		t.Fatal("a queue for a node none of whose pods is being deleted: want none until one is (a queue costs 12 KB and two goroutines a node)")
	}
	f.Add(marked)
	if n := f.queue.Len(); n != 1 {
		t.Fatalf("%d pods queued, want the one being deleted", n)
	}
	f.next(ctx) // no answer yet
	if d := deletes(); len(d) != 0 || f.queue.Len() != 0 {
		t.Fatalf("before the plugin answered: deletes %v, %d queued; want none", d, f.queue.Len())
	}

	f.Answered(true)
	if n := f.queue.Len(); n != 1 {
		t.Fatalf("at the first answer, %d pods queued, want the one being deleted", n)
	}
	f.next(ctx)
	d := deletes()
	if len(d) != 1 || d[0].Name != "marked" || d[0].Namespace != "jobs" {
		t.Fatalf("deletes %v, want jobs/marked", d)
	}
	opts := d[0].DeleteOptions
	if opts.GracePeriodSeconds == nil || *opts.GracePeriodSeconds != 0 || opts.Preconditions == nil || opts.Preconditions.UID == nil || *opts.Preconditions.UID != "uid-marked" {
		t.Errorf("delete options %+v, want grace period 0 and the UID uid-marked as precondition", opts)
	}
	f.Answered(true) // another answer: nothing new
	if n := f.queue.Len(); n != 0 {
		t.Errorf("a second answer queued %d pods, want none", n)
	}

	// Gone already: done with, nothing logged.
	f.queue.Add(podRef{namespace: "jobs", name: "marked", uid: "uid-marked"})
	f.next(ctx)
	if n := f.queue.NumRequeues(podRef{namespace: "jobs", name: "marked", uid: "uid-marked"}); n != 0 || log.Count() != 0 {
		t.Errorf("a pod gone: %d retries, %d failures logged, want none", n, log.Count())
	}

	// An outage: passed over, queued again at the next answer.
	f.Answered(false)
	before := len(deletes())
	f.queue.Add(podRef{namespace: "jobs", name: "marked", uid: "uid-marked"})
	f.next(ctx)
	if n := len(deletes()) - before; n != 0 {
		t.Errorf("%d deletes during the outage, want none", n)
	}
	f.Answered(true)
	if n := f.queue.Len(); n != 1 {
		t.Errorf("after the outage, %d pods queued, want the one being deleted", n)
	}
	f.next(ctx)

	// Refused: tried again after a backoff, said once.
	client.PrependReactor("delete", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "live", errors.New("no"))
	})
	ref := podRef{namespace: "jobs", name: "live", uid: "uid-live"}
	for range 2 {
		f.queue.Add(ref)
		f.next(ctx)
	}
	if n := f.queue.NumRequeues(ref); n != 2 {
		t.Errorf("a refused delete: %d retries, want 2", n)
	}
	if n := log.Count(); n != 1 {
		t.Errorf("a refused delete logged %d times, want once", n)
	}
}

// TestFinisherWaitsForTheBackend: a pod being deleted whose backend has
// not stopped it is not queued, at its update or at the plugin's answer;
// its update that says the backend stopped it queues it.
func TestFinisherWaitsForTheBackend(t *testing.T) {
	grace := int64(30)
	now := metav1.Now()
	running := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Name: "running", Namespace: "jobs", UID: "uid-running", DeletionTimestamp: &now, DeletionGracePeriodSeconds: &grace,
		Annotations: map[string]string{"job": "runs"},
	}}
	f := newFinisher(fake.NewClientset(running), slog.New(slog.DiscardHandler), func() []*corev1.Pod { return []*corev1.Pod{running} }, "vk-unit")
	f.ended = func(p *corev1.Pod) bool { return p.Annotations["job"] == "removed" }
	t.Cleanup(f.Stop)
	f.Add(running)
	f.Answered(true)
	if f.queue != nil {
		t.Fatalf("%d pods queued whose backend runs them, want none", f.queue.Len())
	}
	stopped := running.DeepCopy()
	stopped.Annotations["job"] = "removed"
	f.Add(stopped)
	if f.queue == nil || f.queue.Len() != 1 {
		t.Fatal("the pod whose backend stopped it is not queued")
	}
}
