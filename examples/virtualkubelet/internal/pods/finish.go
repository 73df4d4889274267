package pods

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/workqueue"
)

// retryFirst and retryMax are the backoff of a delete that failed, per
// pod: its first wait and its longest, as the provider's start's
// (its DefaultStartRetry).
const (
	retryFirst = time.Second
	retryMax   = time.Minute
)

// podRef is a pod as the queue holds it: the precondition is its UID.
type podRef struct {
	namespace, name string
	uid             types.UID
}

// Finisher deletes the node's pods that are being deleted.
type Finisher struct {
	client kubernetes.Interface
	log    *slog.Logger
	pods   func() []*corev1.Pod // the pods bound to the node, as cached
	node   string
	// ended reports whether a pod's backend has stopped it; nil: every
	// pod's has.
	ended func(*corev1.Pod) bool
	// work starts the worker of the queue, once it is made; nil for a
	// test that works the queue itself ([Finisher.next]).
	work func()
	// cancel ends the worker's context, and done waits for the worker;
	// cancel is nil with work.
	cancel context.CancelFunc
	done   sync.WaitGroup

	mu sync.Mutex // guards queue and stopped
	// queue is made when the first pod being deleted is added: most
	// nodes never have one, and a queue costs 12 KB and two goroutines
	// (its delaying loop and the worker), which 5,000 parts' nodes would
	// pay for nothing.
	queue   workqueue.TypedRateLimitingInterface[podRef]
	stopped bool
	// answering says that the plugin answered the last ping.
	answering atomic.Bool
	// said is the last failure logged; only the worker touches it.
	said string
}

// NewFinisher returns a finisher of the node's pods, which pods lists,
// that deletes them through client, apart from the pings, until ctx ends
// or it is stopped. Nothing runs until a pod being deleted is added, and
// no pod is deleted before the plugin's first answer
// ([Finisher.Answered]), nor before ended says its backend has stopped
// it (nil: every pod's has).
func NewFinisher(ctx context.Context, client kubernetes.Interface, log *slog.Logger, pods func() []*corev1.Pod, node string, ended func(*corev1.Pod) bool) *Finisher {
	f := newFinisher(client, log, pods, node)
	f.ended = ended
	ctx, f.cancel = context.WithCancel(ctx)
	f.work = func() {
		f.done.Go(func() {
			for f.next(ctx) {
			}
		})
	}
	return f
}

// newFinisher returns a finisher with no worker: a test works its queue
// itself ([Finisher.next]).
func newFinisher(client kubernetes.Interface, log *slog.Logger, pods func() []*corev1.Pod, node string) *Finisher {
	return &Finisher{client: client, log: log, pods: pods, node: node}
}

// Stop stops the worker, if one runs, and waits until it has; no queue is
// made after.
func (f *Finisher) Stop() {
	if f.cancel != nil {
		f.cancel()
	}
	f.shutDown()
	f.done.Wait()
}

// queued returns the queue, which it makes and has worked the first
// time; nil once shut down.
func (f *Finisher) queued() workqueue.TypedRateLimitingInterface[podRef] {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.queue == nil && !f.stopped {
		f.queue = workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.NewTypedItemExponentialFailureRateLimiter[podRef](retryFirst, retryMax),
			workqueue.TypedRateLimitingQueueConfig[podRef]{Name: "pingnode-finish-" + f.node},
		)
		if f.work != nil {
			f.work()
		}
	}
	return f.queue
}

// shutDown shuts the queue down, if there is one, and makes none after.
func (f *Finisher) shutDown() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stopped = true
	if f.queue != nil {
		f.queue.ShutDown()
	}
}

// BeingDeleted reports whether pod is marked for deletion and waits for
// its node: a delete with a grace period of 0 has not been made yet.
func BeingDeleted(pod *corev1.Pod) bool {
	return pod.DeletionTimestamp != nil && (pod.DeletionGracePeriodSeconds == nil || *pod.DeletionGracePeriodSeconds > 0)
}

// Add queues pod, if it is being deleted and its backend has stopped it:
// the handler of the node's pods that the informer adds or updates.
func (f *Finisher) Add(pod *corev1.Pod) {
	if !BeingDeleted(pod) || f.ended != nil && !f.ended(pod) {
		return
	}
	if q := f.queued(); q != nil {
		q.Add(podRef{namespace: pod.Namespace, name: pod.Name, uid: pod.UID})
	}
}

// Answered says whether the plugin answered the ping just made. The first
// answer after none (or the run's first) queues every pod being deleted,
// which the worker passed over while the plugin did not answer.
func (f *Finisher) Answered(ok bool) {
	if f.answering.Swap(ok) == ok || !ok {
		return
	}
	for _, pod := range f.pods() {
		f.Add(pod)
	}
}

// next deletes one pod of the queue, and reports whether the queue still
// runs.
func (f *Finisher) next(ctx context.Context) bool {
	ref, shutdown := f.queue.Get()
	if shutdown {
		return false
	}
	defer f.queue.Done(ref)
	if !f.answering.Load() {
		f.queue.Forget(ref) // queued again at the plugin's next answer
		return true
	}
	zero := int64(0)
	err := f.client.CoreV1().Pods(ref.namespace).Delete(ctx, ref.name, metav1.DeleteOptions{
		GracePeriodSeconds: &zero, Preconditions: &metav1.Preconditions{UID: &ref.uid},
	})
	switch {
	case err == nil:
		f.queue.Forget(ref)
		f.said = ""
		f.log.Info("a pod being deleted on the node is deleted: its backend has stopped it (grace period 0)",
			"pod", ref.namespace+"/"+ref.name, "uid", ref.uid)
	case apierrors.IsNotFound(err) || apierrors.IsConflict(err):
		f.queue.Forget(ref) // gone, or another pod of that name now
	case ctx.Err() != nil:
	default:
		if text := err.Error(); text != f.said {
			f.said = text
			f.log.Error("deleting a pod being deleted on the node; trying again after a backoff", "pod", ref.namespace+"/"+ref.name, "error", err)
		}
		f.queue.AddRateLimited(ref)
	}
	return true
}
