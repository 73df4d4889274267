// Command testenv runs, on loopback and in one process, a real etcd
// (embedded), kube-apiserver, kube-scheduler and kube-controller-manager
// (all built from k8s.io/kubernetes), for pingnode's end-to-end tests and
// for trying the Virtual Kubelet example by hand. It writes a kubeconfig,
// prints "ready <kubeconfig>" once every component answers its health
// check, and serves until SIGINT or SIGTERM, then stops them all and exits.
//
//	go run ./examples/testenv -dir /tmp/pingnode-env
//
// The controller manager runs only [Controllers]: the node lifecycle
// controller (the node.kubernetes.io/not-ready and unreachable taints), the
// taint eviction controller (deletes a Pod from a node with a NoExecute
// taint it does not tolerate, once its tolerationSeconds have passed), the
// garbage collector (deletes an object whose owners are gone, such as the
// Lease of a deleted Node), the serviceaccount controller (the
// "default" ServiceAccount that Pods need), the resource claim
// controller (the ResourceClaim of a Pod's claim made from a
// ResourceClaimTemplate, for Dynamic Resource Allocation) and the device
// taint eviction controller (deletes a Pod whose claim holds a device with
// a NoExecute taint its request does not tolerate), so a Pod created in
// any namespace is scheduled onto a fitting, Ready node.
//
// # Eviction
//
// The node lifecycle controller looks at every node each second (each 5s
// in a real cluster) and puts the NoExecute taint on a node that is not
// Ready within about a second (a real cluster taints at most one node each
// 10s); a node whose status and Lease are not renewed turns Unknown after
// 50s, as in a real cluster. Its zone rules are a real cluster's: while no
// node of the cluster is Ready ("full disruption", taken for a fault of
// the control plane rather than of the nodes) it takes the NoExecute
// taints off and puts none on; in a zone where more than two nodes, and at
// least 55% of its nodes, are not Ready ("partial disruption") it puts
// none on, in a cluster of up to 50 nodes. Nodes without a
// topology.kubernetes.io/zone label make one zone. A test of eviction
// therefore keeps another node Ready for as long as it waits, best in a
// zone of the test's own, where other tests' nodes do not count.
//
// # Access
//
// The administrator authenticates with [Token], a static token of the user
// pingnode-admin in the group system:masters, which is allowed everything
// in either mode below; ServiceAccount tokens minted through the
// TokenRequest API (create serviceaccounts/token) authenticate as
// system:serviceaccount:<namespace>:<name>. The scheduler and the
// controller manager use the administrator's kubeconfig: they do not have
// an identity each, as a real cluster's do.
//
// By default authorization is AlwaysAllow: every request is allowed. With
// -rbac the API server authorizes as a real cluster does
// (--authorization-mode=Node,RBAC) and admits with NodeRestriction beside
// the default admission plugins: a ServiceAccount may do only what the
// Roles and ClusterRoles bound to it allow, and a kubelet (user
// system:node:<name> in the group system:nodes) what the Node authorizer
// and NodeRestriction give it: its own Node and Lease, and the Pods bound
// to it with the Secrets, ConfigMaps and volumes they use, but not another
// node's. Either way, testenv is for tests on this machine only, and
// listens on 127.0.0.1 alone.
//
// With -kubelet-tls the API server checks each kubelet's serving
// certificate (kubectl logs, which it asks of the pod's node) against a
// CA it makes in -dir, whose key is beside it for a test to sign one
// with, and presents a client certificate that CA signs; without it, as
// kubeadm sets a cluster up, it checks none and presents none.
//
// -dir is emptied first only if testenv made it: see [Marker]. A folder
// that is not empty and has no marker is refused with exit status 2. With
// -keep, a folder testenv made is used as it is, etcd's data included: the
// control plane starts again where it stopped (give the same -port and
// -rbac, so that clients find it as it was).
package main
