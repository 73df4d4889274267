package jobs

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/pingnode/pingnode/nodeapply/dra/confirm"
)

// RecordAnnotation is the pod annotation on which a keeper records the
// job it makes of the pod, before it asks the plugin to make it: the node
// it is made for, when, and, once it removed it, that it did. A keeper
// that restarts, or a standby that takes over, reads it from its cache
// of pods, so that it adopts a job the backend has, where it would make
// it again, and removes a job once.
const RecordAnnotation = "pingnode.io/job"

// JobIDAnnotation is the pod annotation that holds the job's ID, as the
// plugin's create answered it (its podJID), for the pod's UID: interLink's
// Virtual Kubelet writes it after each create
// (pkg/virtualkubelet/execute.go) and, when it starts, takes back every
// pod of its node that has one (RetrievePodsFromCluster). The keeper
// writes it too, and adopts a pod bound to one of its nodes that has one
// and no [RecordAnnotation]: so that either provider takes over the
// other's pods, and no job is made twice.
const JobIDAnnotation = "JobID"

// Record is what [RecordAnnotation] holds, as JSON.
type Record struct {
	// Node is the node the job was made for.
	Node string `json:"node"`
	// Made is when the keeper asked the plugin to make it.
	Made time.Time `json:"made"`
	// Removed says that the keeper removed it, or that the backend said
	// it made none.
	Removed bool `json:"removed,omitempty"`
	// Refusals counts the jobs of the pod the backend refused (a create
	// that made none, a job cancelled before it ran), and Refusal is its
	// words for the last: at [Config.Refusals], the pod fails with them.
	Refusals int    `json:"refusals,omitempty"`
	Refusal  string `json:"refusal,omitempty"`
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

// record writes r on the pod of uid ([Keeper.setAnnotation]).
func (k *Keeper) record(ctx context.Context, uid types.UID, namespace, name string, r Record) error {
	value, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return k.setAnnotation(ctx, uid, namespace, name, RecordAnnotation, string(value))
}

// setAnnotation writes the annotation key on the pod of uid: a merge
// patch of the annotation alone, with the pod's UID as a precondition, so
// that another pod of the same name is never written.
func (k *Keeper) setAnnotation(ctx context.Context, uid types.UID, namespace, name, key, value string) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"uid":         uid,
		"annotations": map[string]string{key: value},
	}})
	if err != nil {
		return err
	}
	_, err = k.cfg.Client.CoreV1().Pods(namespace).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: k.cfg.FieldManager})
	return err
}

// annotate is setAnnotation, its failure logged: what it writes is for
// another provider, and the keeper's own record holds the job.
func (k *Keeper) annotate(ctx context.Context, uid types.UID, namespace, name, key, value string) {
	if err := k.setAnnotation(ctx, uid, namespace, name, key, value); err != nil {
		k.failed("annotation "+key, err)
		return
	}
	delete(k.said, "annotation "+key)
}

// adopted returns the record of the job of pod, bound to node, that
// another provider made and wrote [JobIDAnnotation] for, and reports
// whether it has one: made when the pod was created, so that the
// backend's answers are read at once.
func adopted(pod *corev1.Pod, node string) (Record, bool) {
	if pod.Annotations[JobIDAnnotation] == "" {
		return Record{}, false
	}
	return Record{Node: node, Made: pod.CreationTimestamp.Time}, true
}

// read returns the jobs of the pods asked about, as the backend's
// answers and what it remembers say, and notes in placed what each
// answer said of a job it knows:
//
//   - a job the backend refused at its create (no job after it) reads
//     as refused, once, and a job it removed, or that the backend said
//     it had not, as gone (an answer may be older than the removal);
//   - a job answered reads as the answer says (confirm.StateOf), but
//     one made, or deleted, less than StatusAge ago that the answer does
//     not say started reads as it was, queued for a new one, for the
//     answer may be older than the create or the delete;
//   - a job it knows that no answer speaks of (the pod left out of one,
//     not asked, or in trouble) reads as last answered, queued if never:
//     no answer is no news; but one left out of the answers for
//     [Config.LostAfter] is gone;
//   - a pod not asked about (deleted) whose job it made and did not
//     remove reads as last answered, for the step to remove it;
//   - a pod it knows no job of and that no answer speaks of has none.
func (k *Keeper) read(asked map[types.UID]*corev1.Pod, out answers, now time.Time) []confirm.Job {
	state := make(map[types.UID]confirm.State, len(out.statuses))
	finished := map[types.UID]bool{}
	for _, s := range out.statuses {
		if uid := types.UID(s.UID); asked[uid] != nil {
			state[uid], finished[uid] = confirm.StateOf(s.Containers), ended(s.Containers)
		}
	}
	var jobs []confirm.Job
	for _, uid := range slices.Sorted(maps.Keys(asked)) { // in one order, so that a step's removals are
		p := asked[uid]
		j, known := k.placed[uid]
		s, answered := state[uid]
		switch {
		case !known && !answered:
			continue
		case !known:
		case j.refused:
			s = confirm.JobRefused
		case j.Removed:
			s = confirm.JobGone
		case answered && now.Sub(j.Made) < k.cfg.StatusAge && s != confirm.JobStarted:
			s = j.state // the answer may be older than the job
		case answered && j.deleting != nil && now.Sub(j.deleting.at) < k.cfg.StatusAge:
			s = j.state // the answer may be older than the delete
		case answered:
			j.finished = finished[uid]
			s = k.settle(&j, s, now)
		case out.answered[uid] && now.Sub(j.seen) >= k.cfg.LostAfter:
			s = k.settle(&j, confirm.JobGone, now) // left out for long: the backend has it no more
		default:
			s = j.state // no news
		}
		j.kept = known && k.keeps(p, j)
		if known {
			k.placed[uid] = j
		}
		jobs = append(jobs, confirm.Job{Pod: uid, Namespace: p.Namespace, Name: p.Name, Node: j.Node, State: s, Kept: j.kept})
	}
	return jobs
}

// keeps reports whether the job j of pod is kept for the pod's next
// allocation on its node (confirm.Job.Kept, rule confirm-kept): the pod
// waits for a node, the job is not removed, and its node is one of its
// own, not a part's, so that a pod refused at the deadline there keeps
// its job's place in the backend's queue; a part's job is not kept, so
// that its pod is free to go to another part (a machine that never
// starts anything).
func (k *Keeper) keeps(pod *corev1.Pod, j job) bool {
	waits := pod.Spec.Containers != nil && pod.Spec.NodeName == "" && pod.DeletionTimestamp == nil
	own := k.cfg.Part == nil || k.cfg.Part(j.Node) == ""
	return waits && own && !j.Removed && j.Node != ""
}

// settle notes in j that the backend says s of it now, and returns what
// the job is: a create that failed (answered with an error, or not at
// all) made a job that the backend has, which is adopted, or none, which
// is a refusal; a job the backend cancelled before it ran is a refusal
// too. A refusal is counted on the record, with the backend's words, and
// a refused create reads as refused once, then as gone: no delete is
// sent for it.
func (k *Keeper) settle(j *job, s confirm.State, now time.Time) confirm.State {
	switch {
	case j.createErr != nil && s == confirm.JobGone:
		j.refuse("the backend made no job of the pod: " + j.createErr.Error())
		j.Removed, j.refused, s = true, true, confirm.JobRefused
	case j.createErr != nil:
		j.createErr = nil // the job is there: adopted
	}
	if s == confirm.JobRefused && j.state != confirm.JobRefused && !j.refused {
		j.refuse("the backend cancelled the pod's job before it ran")
	}
	j.state, j.seen = s, now
	return s
}

// ended reports whether containers say the job ended: there are some,
// and each has terminated.
func ended(containers []corev1.ContainerStatus) bool {
	for _, c := range containers {
		if c.State.Terminated == nil {
			return false
		}
	}
	return len(containers) > 0
}

// refuse counts a refusal of the job's pod, in words.
func (j *job) refuse(words string) {
	j.Refusals++
	j.Refusal = boundWords(words)
}

// boundWords is words, at most maxRefusal bytes of it: a record is an
// annotation, and a pod's status message is read by people.
func boundWords(words string) string {
	if len(words) > maxRefusal {
		return strings.ToValidUTF8(words[:maxRefusal], "") + "…"
	}
	return words
}

// forget drops what it knows of a job whose pod nothing asks about any
// more (not waiting, in no allocation, not bound to the job's node) and
// that it removed, or the backend no longer has: no answer will
// concern it again.
func (k *Keeper) forget(allocations []confirm.Allocation, jobs []confirm.Job) {
	wanted := map[types.UID]bool{}
	if k.cfg.Waiting != nil {
		waiting, _ := k.cfg.Waiting.List(labels.Everything())
		for _, p := range waiting {
			wanted[p.UID] = wanted[p.UID] || Asks(p, k.cfg.Resource)
		}
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
		if !wanted[uid] && (j.Removed || !has[uid]) && j.deleting == nil && !k.boundTo(uid, j.Node) {
			delete(k.placed, uid)
		}
	}
}
