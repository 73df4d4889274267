// Package pods finishes the deletion of the pods bound to a node: a
// [Finisher] deletes, with a grace period of 0, each pod of its node that
// someone deleted, as a kubelet does once the pod's containers have
// stopped.
//
// A pod bound to a node that someone deletes (kubectl delete pod, the
// taint eviction controllers, a Job's controller) is only marked: it gets
// a deletionTimestamp and stays, Terminating, until its node says it has
// stopped ([BeingDeleted]). A kubelet stops its containers, then deletes
// it with a grace period of 0 and the pod's UID as a precondition (its
// status manager); a provider does the same once its backend has stopped
// the pod. The reference provider runs a pod as a job on its backend:
// the finisher waits until the record on the pod says its job was removed
// (internal/jobs, Stopped), which the keeper writes at its next step, so
// that a provider that restarts in between still finds the job; a pod
// with no record has no job, and is deleted at once. Without
// the finisher, a graceful delete of a pod bound to the node would wait
// forever.
//
// It confirms the end only while the plugin answers, as a kubelet only
// while it runs: during an outage the pods being deleted stay Terminating,
// as on a real node that cannot be reached, and the first answered ping
// finishes them ([Finisher.Answered]). A provider that restarts finishes
// what it left: the first answer of its run queues every pod of the node
// that is being deleted.
//
// The pods' informer says when a pod bound to the node is being deleted
// ([Finisher.Add]); a queue of the finisher's own, rate limited per pod
// (client-go's workqueue, as k8s.io/sample-controller runs one), deletes
// each apart from the pings, and tries a delete that failed again after
// 1 s, then twice as long each time up to a minute. A pod already gone
// (404), or replaced by another of its name (the UID precondition, 409),
// is done with. Each pod deleted is logged once ("a pod being deleted on
// the node is deleted"); a failure when it begins or changes.
//
// The queue and its worker are made with the first pod being deleted:
// most nodes never have one, and a queue costs 12 KB and two goroutines
// (its delaying loop and the worker), which 5,000 parts' nodes would pay
// for nothing.
//
// The finisher needs delete on pods, which the provider's admission
// policy fences to the pods of its own nodes that are being deleted (see
// internal/rights).
package pods
