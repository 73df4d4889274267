package jobs

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/pingnode/pingnode/nodeapply/dra/confirm"
)

// done reports whether pod is in a phase it never leaves, Succeeded or
// Failed: its job has ended, and the backend is not asked about it again
// (a job Slurm forgot may fail the whole question, as interLink's Slurm
// plugin answers it).
func done(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
}

// asked returns the pods to ask the backend about, by UID: the pods
// that ask for confirmation and are not bound yet, those of allocations,
// and those it knows a job of; each whole, as its cache has it, or a
// stub (its UID, namespace and name) when no cache has it: the pod of an
// allocation the informer has not listed yet, which is not asked about
// at this step, or a deleted pod, whose job is removed.
func (k *Keeper) asked(allocations []confirm.Allocation) map[types.UID]*corev1.Pod {
	asked := map[types.UID]*corev1.Pod{}
	if k.confirming() {
		waiting, _ := k.cfg.Waiting.List(labels.Everything()) // a cache lister never fails
		for _, p := range waiting {
			if Asks(p, k.cfg.Resource) {
				asked[p.UID] = p
			}
		}
	}
	for _, a := range allocations {
		for _, p := range a.Pods {
			if asked[p.UID] == nil {
				asked[p.UID] = k.whole(p.UID, a.Claim.Namespace, p.Name, a.Node)
			}
		}
	}
	for uid, j := range k.placed {
		if asked[uid] == nil {
			asked[uid] = k.whole(uid, j.namespace, j.name, j.Node)
		}
	}
	for uid, p := range asked {
		if _, known := k.placed[uid]; !known {
			if r, ok := RecordOf(p); ok { // a job made before a restart or a takeover
				k.placed[uid] = job{namespace: p.Namespace, name: p.Name, Record: r, seen: r.Made}
			}
		}
	}
	return asked
}

// whole returns the pod of uid as a cache has it, waiting or bound to
// node, or a stub.
func (k *Keeper) whole(uid types.UID, namespace, name, node string) *corev1.Pod {
	if p := k.boundPod(uid, node); p != nil {
		return p
	}
	if k.cfg.Waiting != nil {
		if p, _ := k.cfg.Waiting.Pods(namespace).Get(name); p != nil && p.UID == uid {
			return p
		}
	}
	return stub(uid, namespace, name)
}

// boundPod returns the pod of uid if it is bound to node, as its cache
// showed it at the step's first look at node; nil otherwise. One index a
// node a step: a step looks up each pod it knows, and a node may have
// thousands.
func (k *Keeper) boundPod(uid types.UID, node string) *corev1.Pod {
	if node == "" {
		return nil
	}
	index, ok := k.bound[node]
	if !ok {
		pods := k.cfg.Bound(node)
		index = make(map[types.UID]*corev1.Pod, len(pods))
		for _, p := range pods {
			index[p.UID] = p
		}
		k.bound[node] = index
	}
	return index[uid]
}

// withContainers is stub with containers of those names: what the
// backend reads of a deleted pod it is asked about (a plugin answers one
// status for each container of the pod it was sent).
func withContainers(stub *corev1.Pod, names []string) *corev1.Pod {
	p := stub.DeepCopy()
	for _, name := range names {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: name})
	}
	return p
}

// stub is what the backend reads of a pod it is asked about or told to
// delete: its UID, namespace and name.
func stub(uid types.UID, namespace, name string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: uid, Namespace: namespace, Name: name}}
}

// Asks reports whether pod asks for the backend's confirmation: a
// container requests or limits resource.
func Asks(pod *corev1.Pod, resource string) bool {
	name := corev1.ResourceName(resource)
	for _, c := range pod.Spec.Containers {
		if _, ok := c.Resources.Limits[name]; ok {
			return true
		}
		if _, ok := c.Resources.Requests[name]; ok {
			return true
		}
	}
	return false
}

// boundTo reports whether the pod of uid is bound to node, as its cache
// shows.
func (k *Keeper) boundTo(uid types.UID, node string) bool { return k.boundPod(uid, node) != nil }

// seed puts, once, the jobs of the pods that ask and are bound to its
// nodes in placed: their node is theirs.
func (k *Keeper) seed(nodes []*corev1.Node) {
	if k.seeded {
		return
	}
	k.seeded = true
	for _, n := range nodes {
		for _, p := range k.cfg.Bound(n.Name) {
			if Asks(p, k.cfg.Resource) {
				k.placed[p.UID] = job{namespace: p.Namespace, name: p.Name, Record: Record{Node: n.Name}, seen: k.cfg.Now()}
			}
		}
	}
}
