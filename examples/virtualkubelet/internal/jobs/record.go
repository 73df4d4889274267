package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/pingnode/pingnode/examples/internal/podapi"
	"github.com/pingnode/pingnode/nodeapply/dra/confirm"
)

// RecordAnnotation is the pod annotation on which a keeper records the
// job it makes of the pod, before it asks the plugin to make it: the node
// it is made for, when, and, once it removed it, that it did. A keeper
// that restarts, or a standby that takes over, reads it from its cache
// of pods, so that it adopts a job the backend has, where it would make
// it again, and removes a job once.
const RecordAnnotation = "pingnode.io/job"

// Record is what [RecordAnnotation] holds, as JSON.
type Record struct {
	// Node is the node the job was made for.
	Node string `json:"node"`
	// Made is when the keeper asked the plugin to make it.
	Made time.Time `json:"made"`
	// Removed says that the keeper removed it.
	Removed bool `json:"removed,omitempty"`
}

// RecordOf returns the record on pod, and reports whether it has one
// that reads.
func RecordOf(pod *corev1.Pod) (Record, bool) {
	value, ok := pod.Annotations[RecordAnnotation]
	if !ok {
		return Record{}, false
	}
	var r Record
	if err := json.Unmarshal([]byte(value), &r); err != nil || r.Node == "" {
		return Record{}, false
	}
	return r, true
}

// answered reports whether err is the failure of a call that the plugin
// answered (pingclient.CallError.Answered): a create it answered with an
// error made no job, and a delete it answered is done, whatever it says.
func answered(err error) bool {
	a, ok := errors.AsType[interface {
		error
		Answered() bool
	}](err)
	return ok && a.Answered()
}

// record writes r on the pod of uid: a merge patch of the annotation
// alone, with the pod's UID as a precondition, so that another pod of the
// same name is never written.
func (k *Keeper) record(ctx context.Context, uid types.UID, namespace, name string, r Record) error {
	value, err := json.Marshal(r)
	if err != nil {
		return err
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"uid":         uid,
		"annotations": map[string]string{RecordAnnotation: string(value)},
	}})
	if err != nil {
		return err
	}
	_, err = k.cfg.Client.CoreV1().Pods(namespace).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: k.cfg.FieldManager})
	return err
}

// read returns the jobs of the pods asked about, as the backend's
// statuses and what it remembers say: a job whose create the plugin
// answered with an error is refused, once; a job it removed is gone (the
// plugin's answer may be older than the removal); one it made less than
// StatusAge ago is queued unless the answer says it started (the answer
// may be older than the job); the job of a pod not asked about (deleted)
// that it made and did not remove is queued on its node, for the step to
// remove it; a pod the backend leaves out has no job.
func (k *Keeper) read(asked map[types.UID]*corev1.Pod, statuses []podapi.PodStatus, now time.Time) []confirm.Job {
	state := make(map[types.UID]confirm.State, len(statuses))
	for _, s := range statuses {
		if asked[types.UID(s.UID)] != nil {
			state[types.UID(s.UID)] = confirm.StateOf(s.Containers)
		}
	}
	var jobs []confirm.Job
	for _, uid := range slices.Sorted(maps.Keys(asked)) { // in one order, so that a step's removals are
		p := asked[uid]
		rec, known := k.placed[uid]
		s, answered := state[uid]
		switch {
		case known && rec.refused:
			s = confirm.JobRefused
		case known && rec.Removed:
			s = confirm.JobGone
		case known && now.Sub(rec.Made) < k.cfg.StatusAge && s != confirm.JobStarted:
			s = confirm.JobQueued
		case known && p.Spec.Containers == nil: // a pod no cache has: deleted
			s = confirm.JobQueued
		case !answered:
			continue
		}
		jobs = append(jobs, confirm.Job{Pod: uid, Namespace: p.Namespace, Name: p.Name, Node: rec.Node, State: s})
	}
	return jobs
}

// forget drops what it knows of a job whose pod nothing asks about any
// more (not waiting, in no allocation, not bound to the job's node) and
// that it removed, or the backend no longer has: no answer will
// concern it again.
func (k *Keeper) forget(allocations []confirm.Allocation, jobs []confirm.Job) {
	wanted := map[types.UID]bool{}
	waiting, _ := k.cfg.Waiting.List(labels.Everything())
	for _, p := range waiting {
		wanted[p.UID] = wanted[p.UID] || Asks(p, k.cfg.Resource)
	}
	for _, a := range allocations {
		for _, p := range a.Pods {
			wanted[p.UID] = true
		}
	}
	has := map[types.UID]bool{}
	for _, j := range jobs {
		has[j.Pod] = has[j.Pod] || j.State != confirm.JobGone
	}
	for uid, j := range k.placed {
		if !wanted[uid] && (j.Removed || !has[uid]) && !k.boundTo(uid, j.Node) {
			delete(k.placed, uid)
		}
	}
}
