package jobs

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"

	"github.com/pingnode/pingnode/examples/internal/podapi"
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
		}
		k.cfg.Log.Info("the backend's confirmation written", "claim", a.Claim.String(), "node", a.Node, "pods", fmt.Sprint(a.Pods), "verdict", d.Verdict.String(), "reason", d.Reason)
	}
}

// remove removes each job, once: it remembers the removal, so that the
// job reads as gone until the pod's next job, whatever an answer from
// the plugin's cache says (rule confirm-gone). A job whose create the
// plugin refused is none: no delete is sent for it. A delete the plugin
// answers is done, whatever it answers (interLink's Slurm plugin answers
// 500 when scancel fails on a job that has ended); one it does not answer
// is sent again at the next step.
func (k *Keeper) remove(ctx context.Context, jobs []confirm.Job) {
	for _, j := range jobs {
		rec, known := k.placed[j.Pod]
		if known && rec.refused {
			rec.refused = false // refused once; gone from now on
			k.placed[j.Pod] = rec
			continue
		}
		if err := k.cfg.Plugin.Delete(ctx, stub(j.Pod, j.Namespace, j.Name)); err != nil {
			k.failed("delete", err)
			if !answered(err) {
				continue
			}
		}
		rec.namespace, rec.name, rec.Node, rec.Removed = j.Namespace, j.Name, j.Node, true
		k.placed[j.Pod] = rec
		if p := k.whole(j.Pod, j.Namespace, j.Name, j.Node); p.Spec.Containers != nil { // a pod deleted keeps no record
			if err := k.record(ctx, j.Pod, j.Namespace, j.Name, rec.Record); err != nil {
				k.failed("record", err)
			}
		}
		k.add(func(c *Count) { c.Removed++ })
		k.cfg.Log.Info("a pod's job removed from the backend", "pod", j.Namespace+"/"+j.Name, "node", j.Node, "state", j.State.String())
	}
}

// start creates the job of each pod on the backend, one create a pod as
// interLink sends it, the pod with spec.nodeName set to the node its
// allocation names. It records the job on the pod first (its node and
// when), and makes it only once the record is written, so that a keeper
// that restarts finds it. A create the plugin answers with an error made
// no job: the pod is refused on its node at the next step, and no delete
// is sent for it. A create it does not answer is not sent again blindly:
// the job it may have made is recorded as made, so that the next steps
// ask the backend first, and the pod is started again only once the
// backend's answers, newer than the create, show no job of it.
func (k *Keeper) start(ctx context.Context, starts []confirm.Start, asked map[types.UID]*corev1.Pod) {
	for _, s := range starts {
		p := asked[s.Pod]
		if p == nil || p.Spec.Containers == nil {
			p, _ = k.cfg.Waiting.Pods(s.Namespace).Get(s.Name) // a pod of an allocation the informer had not listed then
		}
		if p == nil || p.UID != s.Pod {
			continue // gone, or another of its name: nothing to start
		}
		pod := p.DeepCopy()
		pod.Spec.NodeName = s.Node
		k.pin(pod, s.Node)
		rec := job{namespace: s.Namespace, name: s.Name, Record: Record{Node: s.Node, Made: k.cfg.Now()}}
		if err := k.record(ctx, s.Pod, s.Namespace, s.Name, rec.Record); err != nil {
			k.failed("record", err)
			continue
		}
		delete(k.said, "record")
		k.placed[s.Pod] = rec
		created, list, err := k.cfg.Plugin.Create(ctx, podapi.NewCreateRequest(pod))
		if err != nil {
			k.failed("create", err)
			if answered(err) { // it made no job: the pod is refused on the node, and no delete is sent
				rec.Removed, rec.refused = true, true
				k.placed[s.Pod] = rec
				if err := k.record(ctx, s.Pod, s.Namespace, s.Name, rec.Record); err != nil {
					k.failed("record", err)
				}
				if p.Spec.NodeName != "" { // bound: no other node will take it, and it will not run
					k.fail(ctx, p, err)
				}
			}
			continue
		}
		delete(k.said, "create")
		if list && k.said["create answer"] == "" {
			k.said["create answer"] = "list"
			k.cfg.Log.Warn("the plugin answers a create with a list of jobs, as older plugins did; interLink's plugins answer one object", "pod", s.Namespace+"/"+s.Name)
		}
		rec.id = created.PodJID
		k.placed[s.Pod] = rec
		k.add(func(c *Count) { c.Started++ })
		k.cfg.Log.Info("a pod's job started on the backend, the pod waiting for it", "pod", s.Namespace+"/"+s.Name, "node", s.Node, "job", created.PodJID)
	}
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
