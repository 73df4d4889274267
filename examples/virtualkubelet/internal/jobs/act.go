package jobs

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"

	"github.com/pingnode/pingnode/nodeapply/dra/confirm"
)

// write writes each confirmation and refusal to its claim. One that
// fails is decided again at the next step, the same way.
func (k *Keeper) write(ctx context.Context, decisions []confirm.Decision) {
	for _, d := range decisions {
		patch := d.Patch(k.cfg.Now())
		if patch == nil {
			continue
		}
		a := d.Allocation
		_, err := k.cfg.Client.ResourceV1().ResourceClaims(a.Claim.Namespace).Patch(ctx, a.Claim.Name, types.ApplyPatchType, patch,
			metav1.PatchOptions{FieldManager: k.cfg.FieldManager}, "status")
		if err != nil {
			k.failed("claim "+a.Claim.String(), err)
			continue
		}
		delete(k.said, "claim "+a.Claim.String())
		if d.Verdict == confirm.Confirm {
			k.add(func(c *Count) { c.Confirmed++ })
		} else {
			k.add(func(c *Count) { c.Refused++ })
			k.tellQueued(d)
		}
		k.cfg.Log.Info("the backend's confirmation written", "claim", a.Claim.String(), "node", a.Node, "pods", fmt.Sprint(a.Pods), "verdict", d.Verdict.String(), "reason", d.Reason)
	}
}

// tellQueued tells each pod of d, refused at the deadline, whose job is
// kept for its next allocation that its job keeps its place in the
// backend's queue: a Normal event [ReasonQueued], with the job's ID and
// what the backend last said of it.
func (k *Keeper) tellQueued(d confirm.Decision) {
	if d.Reason != confirm.ReasonNotStarted {
		return
	}
	a := d.Allocation
	for _, p := range a.Pods {
		j := k.placed[p.UID]
		if !j.kept {
			continue
		}
		id := j.id
		if id == "" {
			id = "(its ID not known)"
		}
		pod := k.whole(p.UID, a.Claim.Namespace, p.Name, a.Node)
		k.event(pod, corev1.EventTypeNormal, ReasonQueued, fmt.Sprintf("the backend has not started the pod's job %s within %v (%s): the job keeps its place in the backend's queue, and the pod waits for %s again", id, k.cfg.Deadline, j.state, a.Node))
	}
}

// ReasonQueued is the reason of the event that tells a pod its job keeps
// its place in the backend's queue, though its allocation was refused at
// the deadline (confirm rule confirm-kept).
const ReasonQueued = "BackendQueued"

// remove removes each job, once (rule confirm-gone): a delete is sent
// for a job the backend listed or the keeper made, and its outcome is
// read from what the backend says next, not from the delete's answer.
//
//   - A job whose create made none (refused) is none: no delete is sent,
//     and it is recorded removed, with its refusal.
//   - A delete answered 200 removed the job: it is recorded so, and
//     reads as gone until the pod's next job, whatever a cached answer
//     still says.
//   - A delete answered with an error, or not answered (interLink's
//     Slurm plugin answers 500 when scancel fails and keeps the job, and
//     may sleep past a timeout and then remove it), leaves the job's
//     fate to the backend's next answers newer than the delete: a job
//     gone, or ended, is recorded removed; a job still queued or running
//     is deleted again, after a back-off. No delete is sent for a job the
//     backend says it has not: the Slurm plugin gives no answer to it.
//   - A job whose delete failed and that the plugin cannot answer about
//     for [Config.LostAfter] (its question fails alone: a job Slurm
//     forgot, whose scancel fails too) is recorded removed: no answer
//     will ever say, and the pod's delete ends.
//   - The job of a pod in a phase it never leaves ended: one delete is
//     sent, so that the backend frees what it keeps of it, and the job
//     is recorded removed whatever the answer.
func (k *Keeper) remove(ctx context.Context, jobs []confirm.Job, now time.Time) {
	for _, j := range jobs {
		rec, known := k.placed[j.Pod]
		rec.namespace, rec.name, rec.Node = j.Namespace, j.Name, j.Node
		switch {
		case known && rec.refused:
			rec.refused = false // refused once; gone from now on
			k.placed[j.Pod] = rec
			k.removed(ctx, j, rec, "refused")
			continue
		case rec.deleting != nil && (j.State == confirm.JobGone || j.State == confirm.JobRefused || rec.ended()):
			k.removed(ctx, j, rec, "gone after its delete")
			continue
		case rec.deleting != nil && k.asker.heldFor(j.Pod, now) >= k.cfg.LostAfter:
			k.removed(ctx, j, rec, "not answered") // a job Slurm forgot: no answer will ever say
			k.cfg.Log.Warn("a deleted pod's job recorded removed: the plugin neither answers about it nor deletes it", "pod", j.Namespace+"/"+j.Name,
				"for", k.cfg.LostAfter, "delete", rec.deleting.err)
			continue
		case rec.deleting != nil && now.Before(rec.deleting.next):
			continue // the backend's next answers say whether it is gone
		}
		p := k.whole(j.Pod, j.Namespace, j.Name, j.Node)
		err := k.cfg.Plugin.Delete(ctx, stub(j.Pod, j.Namespace, j.Name))
		if err == nil || done(p) {
			k.removed(ctx, j, rec, j.State.String())
			continue
		}
		k.failed("delete", err)
		if rec.deleting == nil {
			rec.deleting = &retry{wait: firstHold}
		} else {
			rec.deleting.wait = min(2*rec.deleting.wait, maxHold)
		}
		rec.deleting.at, rec.deleting.err = now, err // an answer is news of the delete once newer than it
		rec.deleting.next = now.Add(max(rec.deleting.wait, k.cfg.StatusAge))
		k.placed[j.Pod] = rec
	}
}

// ended reports whether the backend last said the job ended: it ran, and
// is no longer running.
func (j job) ended() bool { return j.state == confirm.JobStarted && j.finished }

// removed records that the job of j's pod is removed, on the pod (a pod
// deleted keeps no record) and in placed.
func (k *Keeper) removed(ctx context.Context, j confirm.Job, rec job, why string) {
	rec.Removed, rec.deleting = true, nil
	k.placed[j.Pod] = rec
	if p := k.whole(j.Pod, j.Namespace, j.Name, j.Node); p.Spec.Containers != nil {
		if err := k.record(ctx, j.Pod, j.Namespace, j.Name, rec.Record); err != nil {
			k.failed("record", err)
		}
	}
	k.add(func(c *Count) { c.Removed++ })
	k.cfg.Log.Info("a pod's job removed from the backend", "pod", j.Namespace+"/"+j.Name, "node", j.Node, "state", why)
}

// start creates the job of each pod on the backend, one create a pod as
// interLink sends it, the pod with spec.nodeName set to the node its
// allocation names. It records the job on the pod first (its node, when,
// the pod's refusals so far), and makes it only once the record is
// written, so that a keeper that restarts finds it. A create that fails,
// answered with an error (interLink's Slurm plugin answers 504 when
// sbatch writes anything on stderr, a warning too, and the job may be
// there) or not at all, is not sent again blindly: the job it may have
// made is recorded as made, and the backend's answers newer than the
// create say whether it is there (adopted) or not (a refusal of the
// pod). A pod the backend refused [Config.Refusals] times fails instead,
// with the backend's words.
func (k *Keeper) start(ctx context.Context, starts []confirm.Start, asked map[types.UID]*corev1.Pod) {
	for _, s := range starts {
		if k.unserved {
			return
		}
		p := asked[s.Pod]
		if (p == nil || p.Spec.Containers == nil) && k.cfg.Waiting != nil {
			p, _ = k.cfg.Waiting.Pods(s.Namespace).Get(s.Name) // a pod of an allocation the informer had not listed then
		}
		if p == nil || p.UID != s.Pod {
			continue // gone, or another of its name: nothing to start
		}
		old := k.placed[s.Pod]
		if old.Refusals >= k.cfg.Refusals {
			k.fail(ctx, p, old.Refusal)
			continue
		}
		pod, data, err := k.dataOf(ctx, p, s.Node)
		if err != nil {
			k.tellData(p, s.Node, err)
			continue
		}
		now := k.cfg.Now()
		rec := job{namespace: s.Namespace, name: s.Name, Record: Record{Node: s.Node, Made: now, Refusals: old.Refusals, Refusal: old.Refusal}, seen: now}
		for _, c := range p.Spec.Containers {
			rec.containers = append(rec.containers, c.Name)
		}
		if err := k.record(ctx, s.Pod, s.Namespace, s.Name, rec.Record); err != nil {
			k.failed("record", err)
			continue
		}
		delete(k.said, "record")
		k.placed[s.Pod] = rec
		created, list, err := k.cfg.Plugin.Create(ctx, data.Request(pod))
		if unserved(err) {
			k.noPodAPI(ctx, s, rec, err)
			return
		}
		if err != nil {
			k.failed("create", err)
			rec.createErr = err // its job may be there: the backend's next answers say
			k.placed[s.Pod] = rec
			continue
		}
		delete(k.said, "create")
		if list && k.said["create answer"] == "" {
			k.said["create answer"] = "list"
			k.cfg.Log.Warn("the plugin answers a create with a list of jobs, as older plugins did; interLink's plugins answer one object", "pod", s.Namespace+"/"+s.Name)
		}
		rec.id = created.PodJID
		k.placed[s.Pod] = rec
		if created.PodJID != "" && created.PodUID == string(s.Pod) {
			k.annotate(ctx, s.Pod, s.Namespace, s.Name, JobIDAnnotation, created.PodJID)
		}
		k.add(func(c *Count) { c.Started++ })
		k.cfg.Log.Info("a pod's job started on the backend", "pod", s.Namespace+"/"+s.Name, "node", s.Node, "job", created.PodJID)
	}
}

// unserved reports whether err says the plugin serves no such call
// (pingclient.CallError.Unserved).
func unserved(err error) bool {
	u, ok := errors.AsType[interface {
		error
		Unserved() bool
	}](err)
	return ok && u.Unserved()
}

// noPodAPI notes that the plugin serves no pod API (its create answered
// err, 404 or the like): a plugin of the ping alone. The keeper makes no
// job for the rest of its run, and the pods bound to its nodes stay
// Pending, as on a provider that runs none; the record of the create
// that made nothing is written removed, so that a delete of its pod
// completes at once. Said once, in the log.
func (k *Keeper) noPodAPI(ctx context.Context, s confirm.Start, rec job, err error) {
	k.unserved = true
	k.removed(ctx, confirm.Job{Pod: s.Pod, Namespace: s.Namespace, Name: s.Name, Node: s.Node}, rec, "never made")
	k.cfg.Log.Warn("the plugin serves no pod API: no pod of its nodes runs until the provider restarts", "error", err)
}

// pin pins pod, about to be sent to the plugin for node, to node's
// part, if it is a part's and a pin is set ([Config.PinAnnotation]).
func (k *Keeper) pin(pod *corev1.Pod, node string) {
	if k.cfg.PinAnnotation == "" || k.cfg.Part == nil {
		return
	}
	part := k.cfg.Part(node)
	if part == "" {
		return
	}
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	pod.Annotations[k.cfg.PinAnnotation] = strings.TrimSpace(pod.Annotations[k.cfg.PinAnnotation] + " " + k.cfg.PinFlag + part)
}

// publish publishes the confirmation device of each node that has none
// of this provider's: at the first step, it reads which exist (one list
// of the driver's slices); then it creates one for each node it has not
// published for, and again for a node made again (another UID), whose
// slice went with the node before it.
func (k *Keeper) publish(ctx context.Context, nodes []*corev1.Node) {
	if len(k.published) == 0 {
		list, err := k.cfg.Client.ResourceV1().ResourceSlices().List(ctx, metav1.ListOptions{
			FieldSelector: fields.OneTermEqualSelector("spec.driver", k.cfg.Driver).String(),
		})
		if err != nil {
			k.failed("slices", err)
			return
		}
		for _, s := range list.Items {
			for _, o := range s.OwnerReferences {
				if o.Kind == "Node" && s.Spec.NodeName != nil && o.Name == *s.Spec.NodeName {
					k.published[o.Name] = o.UID
				}
			}
		}
	}
	for _, n := range nodes {
		if n.UID == "" || k.published[n.Name] == n.UID {
			continue
		}
		_, err := k.cfg.Client.ResourceV1().ResourceSlices().Create(ctx, confirm.Slice(n, k.cfg.Driver), metav1.CreateOptions{FieldManager: k.cfg.FieldManager})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			k.failed("slice "+n.Name, err)
			continue
		}
		delete(k.said, "slice "+n.Name)
		k.published[n.Name] = n.UID
		k.cfg.Log.Info("the node's confirmation device published", "node", n.Name, "driver", k.cfg.Driver)
	}
}
