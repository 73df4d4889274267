package rights

import "strings"

// Jobs names what running the pods of its nodes as jobs on the backend
// writes: the pod annotations on which it records each job (the record
// of the job it makes, and the job's ID, as interLink's Virtual Kubelet
// writes it), and the reasons of the events it records on pods about
// their jobs. Nil: it runs no pod.
type Jobs struct {
	Annotations, EventReasons []string
}

// jobRights are the rules of running the pods bound to its nodes, beside
// watching and deleting them.
func (a Access) jobRights() []Rule {
	return []Rule{
		rule("", "pods", nil, "record on a pod the job it makes of it, before it makes it, the job's ID once made, and that it removed it (the annotations "+strings.Join(a.Jobs.Annotations, " and ")+"), so that a provider that restarts, a standby, or interLink's Virtual Kubelet adopts the job and removes it once, where it would make it again (RBAC cannot select pods by spec.nodeName, so every pod; -print-node-policy fences the change to those annotations)", "patch"),
		rule("", "pods/status", nil, "write the status of a pod bound to one of its nodes as its job on the backend says it (Pending, Running, then Succeeded or Failed), as a kubelet reports its pods' (RBAC cannot select pods by spec.nodeName, so every pod; -print-node-policy fences it to the pods of its nodes)", "patch"),
	}
}

// dataRights are the rules of reading, as its nodes' kubelets, what the
// pods bound to them use, which their creates carry: constrained
// impersonation (KEP-5284) of the identity system:node:<name>, which the
// Node authorizer lets read only the objects of the pods bound to that
// node.
func (a Access) dataRights() []Rule {
	which := "each of its nodes"
	if a.Parts != nil {
		which = "the node of each part (RBAC cannot name the nodes of parts, so any node: no policy fences a read)"
	}
	const asNode = " (as that node: the Node authorizer allows it only for the pods bound to the node, so RBAC need not name the objects)"
	return []Rule{
		rule("authentication.k8s.io", "nodes", a.Nodes, "read what a pod bound to one of its nodes uses from the cluster as that node's kubelet, system:node:<name>: impersonate "+which+", for the reads below alone", "impersonate:arbitrary-node"),
		rule("", "configmaps", nil, "read a ConfigMap that a pod bound to one of its nodes mounts or reads its environment from, for the pod's create"+asNode, "impersonate-on:arbitrary-node:get"),
		rule("", "secrets", nil, "read a Secret that a pod bound to one of its nodes mounts or reads its environment from, for the pod's create"+asNode, "impersonate-on:arbitrary-node:get"),
		rule("", "serviceaccounts/token", nil, "ask for a token of the ServiceAccount of a pod bound to one of its nodes, bound to the pod, for its projected volume"+asNode, "impersonate-on:arbitrary-node:create"),
	}
}

// podEventReasons are the reasons of the events it records on pods: their
// devices', with a DRA driver, and their jobs'.
func (a Access) podEventReasons() []string {
	var out []string
	if a.DRADriver != "" {
		out = append(out, a.PodEventReasons...)
	}
	if a.Jobs != nil {
		out = append(out, a.Jobs.EventReasons...)
	}
	return out
}

// podEventsWhy says what the events it records on pods tell them.
func (a Access) podEventsWhy() string {
	var what []string
	if a.DRADriver != "" {
		what = append(what, "which devices they were given")
	}
	if a.Jobs != nil {
		what = append(what, "what the backend says of their jobs")
	}
	return strings.Join(what, ", and ")
}
