// Package poddata reads what a pod uses from the cluster and gives it to
// the plugin with the pod's create, as interLink's Virtual Kubelet does
// (pkg/virtualkubelet/execute.go at f6321757: remoteExecutionHandleVolumes,
// resolveEnvRefs, resolveEnvFromRefs), so that a plugin that runs the
// pod's job with its files and its environment (interLink's Slurm
// plugin) runs it as a kubelet would: [Of] returns the pod to send and
// its [podapi.Data].
//
// # What is read, and as whom
//
// A kubelet reads a pod's ConfigMaps and Secrets, and asks for its
// ServiceAccount's token, as its node: the Node authorizer lets
// system:node:<name> read only what the pods bound to that node use.
// The provider does the same through constrained impersonation
// (KEP-5284, beta and on by default since Kubernetes 1.36): each read is
// a request impersonating system:node:<node> ([NodeSource]), which the
// API server authorizes twice, once for the provider (may it impersonate
// that node, for a get of a ConfigMap or a Secret, or the create of a
// token) and once for the node (does a pod bound to it use that object).
// So the provider reads no Secret that no pod of its nodes uses, and its
// rights (internal/rights) name no Secret.
//
// A pod not bound yet (a pod that waits for the backend's confirmation)
// is on no node the API server knows, and the Node authorizer gives its
// data to none: such a pod is sent what the pod itself says ([Of] with
// no [Source]), and a pod that uses a ConfigMap or a Secret is not sent
// at all before it binds ([ErrUnbound]).
//
// # The rules
//
//   - A ConfigMap or Secret volume: the object, whole, in Data; one
//     missing is an error ([Missing], in the kubelet's words), unless the
//     volume is optional.
//   - A projected volume: a ConfigMap named as the volume, with a key for
//     each file: a ServiceAccount token (a TokenRequest bound to the pod,
//     with the source's audience and expiry, as a kubelet asks for it;
//     interLink asks for one of 100 years), the keys of a ConfigMap or a
//     Secret (all, or the items given, at their paths), and the downward
//     API's fields. Without a Source, the token, ConfigMaps and Secrets
//     are left out (a sidecar mounts what it finds).
//   - A downward API volume: a map of its fields, named as the volume,
//     and the volume is sent as a projected one, as interLink's Virtual
//     Kubelet sends it, for a sidecar reads projected maps.
//   - The environment, for each container: envFrom's ConfigMaps and
//     Secrets (with their prefix), then env, which wins, each value
//     resolved: fieldRef (the pod's name, namespace, UID, a label or an
//     annotation, its node, its ServiceAccount, its IPs: an Indexed Job's
//     JOB_COMPLETION_INDEX is its annotation), resourceFieldRef (the
//     container's request or limit, divided by the divisor and rounded
//     up, as the kubelet does; a limit not set is the node's allocatable),
//     configMapKeyRef and secretKeyRef (optional ones skipped when
//     missing). The pod sent has no valueFrom and no envFrom left.
//     $(VAR) references are sent as written.
package poddata
