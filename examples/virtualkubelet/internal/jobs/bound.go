package jobs

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/pingnode/pingnode/examples/internal/podapi"
	"github.com/pingnode/pingnode/nodeapply/dra/confirm"
)

// boundStarts goes over the pods bound to nodes: it takes the record of a
// job it does not know from the pod (a job made before a restart or a
// takeover), and returns a start, on its node, for each pod that has no
// job and is neither being deleted nor done, with those pods by UID: a
// pod that did not ask for confirmation gets its job when it binds. A
// pod has no job when none is known nor recorded, or when the backend
// refused its last (a create that made none), for another try; a pod the
// backend refused [Config.Refusals] times fails instead, with its words.
func (k *Keeper) boundStarts(ctx context.Context, nodes []*corev1.Node) ([]confirm.Start, map[types.UID]*corev1.Pod) {
	var starts []confirm.Start
	pods := map[types.UID]*corev1.Pod{}
	if k.unserved {
		return nil, pods
	}
	for _, n := range nodes {
		for _, p := range k.cfg.Bound(n.Name) {
			j, known := k.placed[p.UID]
			if !known {
				if r, ok := RecordOf(p); ok {
					k.placed[p.UID] = job{namespace: p.Namespace, name: p.Name, Record: r, seen: r.Made, id: p.Annotations[JobIDAnnotation]}
					continue
				}
				if r, ok := adopted(p, n.Name); ok {
					k.adopt(ctx, p, r)
					continue
				}
			}
			if known && (!j.Removed || j.Node != n.Name || j.state != confirm.JobRefused) {
				continue // its job, or one it had, ended
			}
			if p.DeletionTimestamp != nil || done(p) {
				continue
			}
			if j.Refusals >= k.cfg.Refusals {
				k.fail(ctx, p, j.Refusal)
				continue
			}
			starts = append(starts, confirm.Start{Namespace: p.Namespace, Name: p.Name, Pod: p.UID, Node: n.Name})
			pods[p.UID] = p
		}
	}
	return starts, pods
}

// adopt takes the job of pod, made by another provider (r, [adopted]),
// as one the keeper made: it writes its record first, so that a removal
// is recorded, and a restart finds it; a record it cannot write is tried
// again at the next step.
func (k *Keeper) adopt(ctx context.Context, pod *corev1.Pod, r Record) {
	if err := k.record(ctx, pod.UID, pod.Namespace, pod.Name, r); err != nil {
		k.failed("record", err)
		return
	}
	k.placed[pod.UID] = job{namespace: pod.Namespace, name: pod.Name, Record: r, seen: k.cfg.Now(), id: pod.Annotations[JobIDAnnotation]}
	k.cfg.Log.Info("a pod's job adopted: another provider made it", "pod", pod.Namespace+"/"+pod.Name, "node", r.Node, "job", pod.Annotations[JobIDAnnotation])
}

// ending returns remove with the job of each pod being deleted on its
// job's node, which the step kept (a pod's delete completes once its job
// has ended: [Stopped]), and each job whose delete's outcome is not known
// yet, whatever the step says of it: every delete ends. It writes again
// the record of a removal the API server refused, for a pod being
// deleted.
func (k *Keeper) ending(ctx context.Context, remove, jobs []confirm.Job, asked map[types.UID]*corev1.Pod) []confirm.Job {
	removing := map[types.UID]bool{}
	for _, j := range remove {
		removing[j.Pod] = true
	}
	for _, j := range jobs {
		p, rec := asked[j.Pod], k.placed[j.Pod]
		if rec.deleting != nil && !removing[j.Pod] {
			remove, removing[j.Pod] = append(remove, j), true
			continue
		}
		if p.DeletionTimestamp == nil || p.Spec.NodeName != j.Node {
			continue
		}
		switch {
		case j.State != confirm.JobGone && !removing[j.Pod]:
			remove = append(remove, j)
		case rec.Removed && !Stopped(p):
			if err := k.record(ctx, j.Pod, j.Namespace, j.Name, rec.Record); err != nil {
				k.failed("record", err)
			}
		}
	}
	return remove
}

// Stopped reports whether pod has no job left on the backend, as the
// record on it says: none recorded, nor a job ID of another provider's
// ([JobIDAnnotation], a job the keeper adopts), or the one recorded
// removed. A pod being deleted is deleted only then (the provider's
// finisher).
func Stopped(pod *corev1.Pod) bool {
	r, ok := RecordOf(pod)
	if !ok {
		_, made := adopted(pod, pod.Spec.NodeName)
		return !made
	}
	return r.Removed
}

// ReasonRefused is the reason of the status of a pod whose jobs the
// backend refused [Config.Refusals] times: its phase Failed, as a
// kubelet fails a pod it cannot run, with the backend's words.
const ReasonRefused = "BackendRefused"

// fail writes that pod failed: the backend refused its jobs, the last in
// words, as many times as a pod may be refused. A pod bound to a node is
// failed as a kubelet fails it; a pod that waits for a node is failed
// too, so that the scheduler stops placing it and its controller (a Job)
// sees it fail.
func (k *Keeper) fail(ctx context.Context, pod *corev1.Pod, words string) {
	if done(pod) {
		return
	}
	message := fmt.Sprintf("the backend refused the pod %d times; the last: %s", k.cfg.Refusals, words)
	status := map[string]any{"phase": corev1.PodFailed, "reason": ReasonRefused, "message": boundWords(message)}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"uid": pod.UID}, "status": status})
	if err == nil {
		_, err = k.cfg.Client.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.StrategicMergePatchType, patch,
			metav1.PatchOptions{FieldManager: k.cfg.FieldManager}, "status")
	}
	if err != nil {
		k.failed("pod status "+pod.Namespace+"/"+pod.Name, err)
		return
	}
	k.event(pod, corev1.EventTypeWarning, ReasonRefused, message)
	k.cfg.Log.Info("a pod failed: the backend refused it", "pod", pod.Namespace+"/"+pod.Name, "refusals", k.cfg.Refusals, "last", words)
}

// StatusOf returns the status of pod, bound to a node, as its job on the
// backend says it (answer, interLink's status of the pod), and reports
// whether it differs from the pod's: what a kubelet would report of
// containers it ran.
//
//   - Each container of the pod has the state the answer gives it, by
//     name (waiting, reason "ContainerCreating", when the answer has
//     none), ready while it runs.
//   - The phase is Succeeded when every container terminated with exit
//     code 0, Failed when every one terminated and one did not exit 0,
//     Running while one runs or has terminated after it started, and
//     Pending otherwise.
//   - The conditions Initialized, ContainersReady and Ready follow; a
//     condition keeps its time while its status does not change.
//   - The start time is set once, when the pod first runs.
//
// A pod whose phase is Succeeded or Failed is left as it is: a phase
// never goes back. An answer whose containers all have an empty state
// (the backend has no job of the pod) is no news.
func StatusOf(pod *corev1.Pod, answer podapi.PodStatus, now time.Time) (corev1.PodStatus, bool) {
	old := pod.Status
	if old.Phase == corev1.PodSucceeded || old.Phase == corev1.PodFailed || gone(answer.Containers) {
		return old, false
	}
	byName := make(map[string]corev1.ContainerState, len(answer.Containers))
	for _, c := range answer.Containers {
		byName[c.Name] = c.State
	}
	s := *old.DeepCopy()
	s.ContainerStatuses = make([]corev1.ContainerStatus, len(pod.Spec.Containers))
	running, ended, failed := 0, 0, false
	for i, c := range pod.Spec.Containers {
		state, ok := byName[c.Name]
		if !ok || state == (corev1.ContainerState{}) {
			state = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}
		}
		ready := state.Running != nil
		s.ContainerStatuses[i] = corev1.ContainerStatus{Name: c.Name, Image: c.Image, State: state, Ready: ready, Started: &ready}
		switch {
		case state.Running != nil:
			running++
		case state.Terminated != nil:
			ended++
			failed = failed || state.Terminated.ExitCode != 0
			if !state.Terminated.StartedAt.IsZero() {
				running++ // it ran
			}
		}
	}
	all := len(pod.Spec.Containers)
	switch {
	case all > 0 && ended == all && failed:
		s.Phase = corev1.PodFailed
	case all > 0 && ended == all:
		s.Phase = corev1.PodSucceeded
	case running > 0:
		s.Phase = corev1.PodRunning
	default:
		s.Phase = corev1.PodPending
	}
	if s.StartTime == nil && s.Phase != corev1.PodPending {
		s.StartTime = &metav1.Time{Time: now}
	}
	allReady := s.Phase == corev1.PodRunning
	for _, c := range s.ContainerStatuses {
		allReady = allReady && c.Ready
	}
	setCondition(&s, corev1.PodInitialized, true, now)
	setCondition(&s, corev1.ContainersReady, allReady, now)
	setCondition(&s, corev1.PodReady, allReady, now)
	return s, !reflect.DeepEqual(comparable(old), comparable(s))
}

// gone reports whether containers say the backend has no job: there are
// some, and each has an empty state.
func gone(containers []corev1.ContainerStatus) bool {
	for _, c := range containers {
		if c.State != (corev1.ContainerState{}) {
			return false
		}
	}
	return len(containers) > 0
}

// setCondition sets the condition of type t to status ok, its time now
// when its status changes.
func setCondition(s *corev1.PodStatus, t corev1.PodConditionType, ok bool, now time.Time) {
	status := corev1.ConditionFalse
	if ok {
		status = corev1.ConditionTrue
	}
	for i := range s.Conditions {
		if s.Conditions[i].Type == t {
			if s.Conditions[i].Status != status {
				s.Conditions[i].Status, s.Conditions[i].LastTransitionTime = status, metav1.Time{Time: now}
			}
			return
		}
	}
	s.Conditions = append(s.Conditions, corev1.PodCondition{Type: t, Status: status, LastTransitionTime: metav1.Time{Time: now}})
}

// comparable is what of a status StatusOf writes, to tell a change.
func comparable(s corev1.PodStatus) any {
	type condition struct {
		Type   corev1.PodConditionType
		Status corev1.ConditionStatus
	}
	var conditions []condition
	for _, c := range s.Conditions {
		conditions = append(conditions, condition{c.Type, c.Status})
	}
	return struct {
		Phase      corev1.PodPhase
		Conditions []condition
		Containers []corev1.ContainerStatus
		Started    bool
	}{s.Phase, conditions, s.ContainerStatuses, s.StartTime != nil}
}

// follow writes the status of each pod bound to its job's node that the
// backend answered for, as its job says ([StatusOf]): a strategic merge
// patch of the pod's status (the conditions merged by type), with the
// pod's UID as a precondition, written only when it changed. One that
// fails is written at a later step.
func (k *Keeper) follow(ctx context.Context, asked map[types.UID]*corev1.Pod, statuses []podapi.PodStatus, now time.Time) {
	for _, answer := range statuses {
		uid := types.UID(answer.UID)
		pod, rec := asked[uid], k.placed[uid]
		if pod == nil || rec.Removed || pod.Spec.NodeName == "" || pod.Spec.NodeName != rec.Node || pod.DeletionTimestamp != nil {
			continue
		}
		status, changed := StatusOf(pod, answer, now)
		if !changed {
			continue
		}
		patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"uid": uid}, "status": status})
		if err == nil {
			_, err = k.cfg.Client.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.StrategicMergePatchType, patch,
				metav1.PatchOptions{FieldManager: k.cfg.FieldManager}, "status")
		}
		if err != nil {
			k.failed("pod status "+pod.Namespace+"/"+pod.Name, err)
			continue
		}
		delete(k.said, "pod status "+pod.Namespace+"/"+pod.Name)
		k.cfg.Log.Info("a pod's status follows its job", "pod", pod.Namespace+"/"+pod.Name, "phase", string(status.Phase))
	}
}
