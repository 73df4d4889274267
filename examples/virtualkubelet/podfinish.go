package main

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

// The end of a pod deleted on the node. A pod bound to a node that
// someone deletes (kubectl delete pod, the taint eviction controllers, a
// Job's controller) is only marked: it gets a deletionTimestamp and stays,
// Terminating, until its node says it has stopped. A kubelet stops its
// containers, then deletes it with a grace period of 0 and the pod's UID
// as a precondition (its status manager); a provider does the same once
// its backend has stopped the pod. This example hands no pod to its
// backend, so a pod being deleted has stopped already, and the provider
// deletes it at once.
//
// It confirms the end only while the plugin answers, as a kubelet only
// while it runs: during an outage the pods being deleted stay Terminating,
// as on a real node that is unreachable, and the first answered ping
// finishes them. A provider that restarts finishes what it left.
//
// The pods' informer says when a pod bound to the node is being deleted;
// a queue of its own, made with the first such pod, rate limited per pod
// (client-go's workqueue, as k8s.io/sample-controller runs one), deletes
// each apart from the pings,
// and tries a delete that failed again after 1 s, then twice as long each
// time up to a minute. A pod gone (404) or replaced by another of its name
// (the UID precondition, 409) is done with. Each pod deleted is logged
// once; a failure when it begins or changes.

// finishRetryFirst and finishRetryMax are the backoff of a delete that
// failed, per pod: its first wait and its longest, as a start's
// ([DefaultStartRetry]).
const (
	finishRetryFirst = time.Second
	finishRetryMax   = time.Minute
)

// podRef is a pod as the queue holds it: the precondition is its UID.
type podRef struct {
	namespace, name string
	uid             types.UID
}

// finisher deletes the node's pods that are being deleted.
type finisher struct {
	client kubernetes.Interface
	log    *slog.Logger
	pods   func() []*corev1.Pod // the pods bound to the node, as cached
	node   string
	// work starts the worker of the queue, once it is made; nil for a
	// test that works the queue itself ([finisher.next]).
	work func()

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

// finishDeletes starts deleting, apart from the pings, the pods bound to
// the node that are being deleted, as the caches show them, and returns
// what stops it and waits until it has. A pod waits for the plugin's first
// answer ([finisher.answered]).
func (p *Provider) finishDeletes(ctx context.Context) (stop func()) {
	f := newFinisher(p.client, p.log, p.caches.BoundPods, p.cfg.Static.Name)
	ctx, cancel := context.WithCancel(ctx)
	var done sync.WaitGroup
	f.work = func() {
		done.Go(func() {
			for f.next(ctx) {
			}
		})
	}
	p.finish = f
	remove := p.caches.OnBoundPod(f.add)
	return func() {
		remove()
		cancel()
		f.shutDown()
		done.Wait()
	}
}

// newFinisher returns a finisher of the node's pods, which pods lists,
// that deletes them through client; nothing runs until a pod being
// deleted is added.
func newFinisher(client kubernetes.Interface, log *slog.Logger, pods func() []*corev1.Pod, node string) *finisher {
	return &finisher{client: client, log: log, pods: pods, node: node}
}

// queued returns the queue, which it makes and has worked the first
// time; nil once shut down.
func (f *finisher) queued() workqueue.TypedRateLimitingInterface[podRef] {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.queue == nil && !f.stopped {
		f.queue = workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.NewTypedItemExponentialFailureRateLimiter[podRef](finishRetryFirst, finishRetryMax),
			workqueue.TypedRateLimitingQueueConfig[podRef]{Name: "pingnode-finish-" + f.node},
		)
		if f.work != nil {
			f.work()
		}
	}
	return f.queue
}

// shutDown shuts the queue down, if there is one, and makes none after.
func (f *finisher) shutDown() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stopped = true
	if f.queue != nil {
		f.queue.ShutDown()
	}
}

// beingDeleted reports whether pod is marked for deletion and waits for
// its node: a delete with a grace period of 0 has not been made yet.
func beingDeleted(pod *corev1.Pod) bool {
	return pod.DeletionTimestamp != nil && (pod.DeletionGracePeriodSeconds == nil || *pod.DeletionGracePeriodSeconds > 0)
}

// add queues pod, if it is being deleted.
func (f *finisher) add(pod *corev1.Pod) {
	if !beingDeleted(pod) {
		return
	}
	if q := f.queued(); q != nil {
		q.Add(podRef{namespace: pod.Namespace, name: pod.Name, uid: pod.UID})
	}
}

// answered says whether the plugin answered the ping just made. The first
// answer after none (or the run's first) queues every pod being deleted,
// which the worker passed over while the plugin did not answer.
func (f *finisher) answered(ok bool) {
	if f == nil || f.answering.Swap(ok) == ok || !ok {
		return
	}
	for _, pod := range f.pods() {
		f.add(pod)
	}
}

// next deletes one pod of the queue, and reports whether the queue still
// runs.
func (f *finisher) next(ctx context.Context) bool {
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
