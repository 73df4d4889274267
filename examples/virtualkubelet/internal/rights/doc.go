// Package rights is the Virtual Kubelet provider's rights, as data: for
// each configuration (its nodes, `-held`, `-leader-elect`, `-dra-driver`,
// `-parts`) the least RBAC it runs with, each rule with its reason
// (`rbac.go`), and the ValidatingAdmissionPolicy that fences what RBAC
// cannot name (`nodepolicy.go`; `partsrights.go` with `-parts`). An
// [Access] is the provider's ServiceAccount and its configuration in
// plain fields (node names, the election's Lease, how the nodes of parts
// are named and labelled), which the provider fills from its own
// configuration (its `accessFor`, the one source of the rights): this
// package cannot import the provider, a command, and so each of the
// provider's names it needs (the provider's own, its events' reasons,
// the labels of its nodes of parts) is defined once, in the provider. The
// tests named below are the provider's end-to-end tests, each of whose
// providers runs as a ServiceAccount bound to exactly the rights an
// [Access] gives its configuration.
//
// The provider's `-print-rbac` prints them, bound to `-service-account`,
// for the configuration its other flags give, and exits (in
// `examples/virtualkubelet`):
//
//	go run . -service-account pingnode/pingnode-provider -nodes 3 -node 'pingnode-virtual-{i}' -print-rbac | kubectl apply -f -
//
// For one node `N` with `-held` (the default) and `-leader-elect` (Lease
// `E` in namespace `ns`), bound to the ServiceAccount by a ClusterRole, a
// Role in each namespace and their bindings, all named
// `namespace:serviceaccount` (so that two installations whose
// ServiceAccounts share a name keep their own):
//
//	| where | resource | verbs | names | why | without it (`TestRightsEachNeeded`) |
//	|---|---|---|---|---|---|
//	| cluster | nodes | create | any | register the node, and again when someone deletes it | the start fails at once: 403 to `POST /api/v1/nodes`, no node |
//	| cluster | nodes | get | `N` | read the node at start, and after a conflict | the start fails at once: 403 to `GET /api/v1/nodes/N` |
//	| cluster | nodes | list, watch | `N` | the node's informer, selected by `metadata.name`, which RBAC authorizes as a request for that name | the start fails at once: the node's cache is refused (it would wait 30 s for a cache that does not sync; a 403 ends the wait) |
//	| cluster | nodes | patch | `N` | the object patch: the plugin's taints and labels and their ownership annotations | the status lands, the plugin's taints and labels never do; `pingnode_node_write_errors_total{kind="object"}` counts each refusal |
//	| cluster | nodes/status | patch | `N` | the status patch: resources and conditions | the node stays as registered (static capacity, no condition of the plugin's); `pingnode_node_write_errors_total{kind="status"}`; the taints still land |
//	| cluster | pods | list, watch | any | the pods bound to the node: to finish their deletion, and with `-held` to count what they hold | the start fails at once: the pods' cache is refused |
//	| cluster | pods | delete | any | finish the deletion of a pod bound to the node: delete it with grace period 0 and its UID as a precondition, as the kubelet does | a pod deleted on the node stays Terminating: 403 to `DELETE /api/v1/namespaces/NS/pods/NAME` |
//	| cluster | pods | patch | any | record on a pod the job it makes of it before it makes it, the job's ID (`JobID`, as interLink's Virtual Kubelet writes it), and its removal: annotations `pingnode.io/job` and `JobID` | no pod runs: the record is refused (403 to `PATCH .../pods/NAME`), and no job is made without it |
//	| cluster | pods/status | patch | any | write a bound pod's status as its job says it, as a kubelet reports its pods' | the job runs, the pod stays Pending: 403 to `PATCH .../pods/NAME/status` |
//	| cluster | nodes (authentication.k8s.io) | impersonate:arbitrary-node | `N` | read what a bound pod uses as its node's kubelet, `system:node:N` (constrained impersonation, KEP-5284) | a pod that uses a ConfigMap, a Secret or its token (every pod, by default) gets no job: 403 to the read, a `DataUnavailable` event |
//	| cluster | configmaps | impersonate-on:arbitrary-node:get | any | as the node, read a ConfigMap a pod bound to it mounts or reads its environment from; the Node authorizer allows only those | as above: 403 to `GET .../configmaps/NAME` |
//	| cluster | secrets | impersonate-on:arbitrary-node:get | any | as the node, the same of a Secret | as above: 403 to `GET .../secrets/NAME` |
//	| cluster | serviceaccounts/token | impersonate-on:arbitrary-node:create | any | as the node, a token of the pod's ServiceAccount bound to the pod, for its projected volume (the Node authorizer and NodeRestriction allow only those) | as above: 403 to `POST .../serviceaccounts/NAME/token` |
//	| kube-node-lease | leases | create | any | the node's Lease, its heartbeat, at the first renewal | the node runs with no Lease (403 to the create); with no heartbeat, the node lifecycle controller would mark it Unknown 50 s after its last status write |
//	| kube-node-lease | leases | get, update | `N` | renew the Lease: read it, then update it | no heartbeat: the Lease of a node registered just now is created without a read, then never renewed (403 to its update, and to the read that follows); a node registered before has no Lease at all (403 to the read) |
//	| cluster | events | create, patch | any | events on the node (a node's events are in `default`) and on its pods, what the backend says of their jobs, in the pods' namespaces (a repeated one is patched) | no event: 403 to `POST .../namespaces/default/events` |
//	| `ns` | leases | create | any | with `-leader-elect`: create the election Lease if no replica has | it never leads, and is not ready |
//	| `ns` | leases | get, update | `E` | take and renew the election Lease | it never leads, and is not ready |
//
// RBAC can name objects for get, update, patch and delete, and for list and
// watch when the request selects `metadata.name`; it cannot for create (the
// object has no name until it exists), nor select pods by `spec.nodeName`.
// So with its token the provider may not read, update or patch another
// node, its status, its taints or its Lease, nor read a Secret or a
// ConfigMap but as one of its nodes, nor delete a node, its own included (`TestRightsFence` shows
// each 403); but it may create a node, or a Lease in kube-node-lease, of
// any name, delete any pod, and it reads every pod of the cluster
// (their specs, and the values of their environment variables) to find its
// own, whose deletion it finishes and, with `-held`, what they hold
// (`-held=false` keeps both pod rules: a pod deleted on the node must still
// end). A kubelet is fenced to its own node by the Node authorizer and the
// NodeRestriction admission plugin, but both apply only to
// `system:node:<name>` identities (a kubelet's client certificate); a
// ServiceAccount gets nothing from them. What fences the creates and the
// deletes is an admission policy on the ServiceAccount's user name:
// `-print-node-policy` prints a ValidatingAdmissionPolicy and its binding
// that let it create only its own nodes, their Leases and its election
// Lease, and events only on its own nodes, and delete only a pod bound to
// one of its nodes that is being deleted already (the pod as stored,
// `oldObject`: `spec.nodeName` and `metadata.deletionTimestamp`), so that
// it finishes the deletions others began on its nodes and begins none,
// change on a pod nothing but the annotations of its job, write the
// status only of a pod bound to one of its nodes, and record on a pod
// only what the backend says of its job, from one of its nodes
// (Kubernetes 1.30 and later, `admissionregistration.k8s.io/v1`;
// `TestConfirmFence` shows the pods' part);
// `TestRightsFence` shows it refuse a node, a Lease and an event of another
// name, and the delete of another node's pod or of a pod of its own node
// that nobody deleted, with 403, and allow the provider's own.
//
// The same policy fences the labels of its nodes, as NodeRestriction fences
// a kubelet's (KEP-279: a node that labels itself freely can capture
// workloads dedicated to other nodes). A create, an update or a status
// update of its node by the provider's token may add, change or remove a
// label only in node-feature-discovery's namespaces and `-label-namespaces`,
// each with its subdomains, and may set the node's static labels
// (`kubernetes.io/hostname`, `kubernetes.io/role`, `type`) to their static
// values; every other label must stay as it was. CEL compares
// `object.metadata.labels` with `oldObject.metadata.labels`: a key added,
// removed or changed counts. `TestLabelFence` shows, with the provider's
// own token, `nvidia.com/gpu.product` (with `-label-namespaces nvidia.com`),
// a subdomain of it and node-feature-discovery's labels accepted, and
// `kubernetes.io/hostname=other`, `node-restriction.kubernetes.io/dedicated`,
// `example.org/x`, an unprefixed key, an administrator's label and the
// removal of a static label refused with 403 by the policy. Shrinking
// `-label-namespaces` and printing the policy again keeps the plugin's
// labels of a namespace no longer allowed on the node: an administrator
// removes them.
//
// # With -dra-driver
//
// Publishing devices adds to the ClusterRole (`TestDeviceRightsEachNeeded`
// takes each rule away in turn and shows what breaks):
//
//	| resource | verbs | why | without it |
//	|---|---|---|---|
//	| resourceslices | list, watch | the node's slices of the driver: its cache, and the ResourceSlice controller's, each selected by `spec.driver` and `spec.nodeName`, which RBAC cannot select, so every slice | the start fails at once: the slices' cache is refused |
//	| resourceslices | create, update, delete | the controller writes the pool's slices, whose names the API server makes up, so RBAC cannot name them | nothing is published: 403 to `POST /apis/resource.k8s.io/v1/resourceslices`, counted in `pingnode_device_publish_errors_total` |
//	| resourceclaims | list, watch | which devices claims hold, and which a pod was given; RBAC cannot select claims by the pool of their devices, so every claim | the start fails at once: the claims' cache is refused |
//	| resourceclaims | get | a pod's claim as stored, read before the pod is told it may not use it, as the kubelet reads it | a pod whose claim is missing is never told so: 403 to `GET .../resourceclaims/NAME` |
//	| pods | list, watch | the pods bound to its nodes, with or without `-held` | as above |
//	| events | create, patch | the same rule, which now also says which devices a pod was given | as above |
//
// No `get` or `patch` of slices: the controller reads them through its
// informer, updates them with the `resourceVersion` it read, and deletes
// them with UID and `resourceVersion` preconditions; and no more of the
// node than before (the provider gives the controller the node's UID).
// RBAC cannot say which slices, so `-print-node-policy` adds to its policy
// what KEP-4381 suggests for a driver's identity: a ResourceSlice that the
// provider creates, updates or deletes must be of its driver and on one of
// its nodes (`spec.driver`, `spec.nodeName`), both as it will be (`object`)
// and as it was (`oldObject`), so that another node's slice can be neither
// made nor taken over; and an event it records on a pod must say the pod's
// devices (`DevicesGiven`, `ClaimNotAllowed`), from one of its nodes
// (`source.host`). `TestDeviceFence` shows, with the provider's own token,
// RBAC alone allowing a slice of another node and one of another driver,
// the policy refusing them with 403 Forbidden (the policy's reason;
// `apierrors.IsForbidden` holds), and an update and a delete of another
// node's slice, and allowing the provider's own. Its token still reads every
// slice and every claim of the cluster (devices and allocations; no
// Secret).
//
// # With -parts
//
// A provider of parts makes its nodes as parts come, named by its template,
// so RBAC cannot name them: its rules of nodes and of their Leases are of
// every node and every Lease in `kube-node-lease` (`-print-rbac` says why
// at each):
//
//	| where | resource | verbs | names | why |
//	|---|---|---|---|---|
//	| cluster | nodes | create | any | register each part's node, and again when someone deletes one |
//	| cluster | nodes | get | any | read each part's node at its start, after a conflict and before each status patch, and a new part's before it registers it, to leave alone a node of that name that is not its own |
//	| cluster | nodes | list, watch | any | watch the nodes with its ownership label, which it serves at start and after a takeover, and each part's node by name |
//	| cluster | nodes | patch | any | each part's node's object patch: the plugin's taints and labels, the part-gone taint, their ownership annotations |
//	| cluster | nodes/status | patch | any | the status patch |
//	| cluster | nodes | delete | any | delete a part's node once its part has been gone for `-part-grace` and no pod holds it, with its UID and `resourceVersion` as preconditions |
//	| kube-node-lease | leases | get, update | any | renew each part's node's Lease |
//
// The pods', the events' and the devices' rules are those of named nodes.
// `-print-node-policy` fences what RBAC cannot name, with the template and
// the ownership label instead of the names: a node the provider creates
// must carry its ownership label and a `pingnode.io/part` label that names
// it by the template (`object`); a node it changes (its object or its
// status) or deletes must have had them (`oldObject`); it may change a
// label of its node only in the allowed namespaces, and set the static
// labels (the part's and the ownership label among them) only to the part's
// values, so it can neither take over another's node nor give its own away;
// its nodes' Leases (now created and renewed), events, pods deleted and
// ResourceSlices must be of a name of the template (CEL's `matches`).
// `TestPartsFence` shows, with the provider's token, each refused with 403
// by the policy and its own allowed. Its token still reads every node of
// the cluster, and renews no Lease but of a name of its template; two
// providers of parts must have templates that no name matches both.
//
// # Beside interLink's
//
// interLink's Helm chart (`interlink-hq/interlink-helm-chart`,
// `interlink/templates/service-account.yaml`, at 0d3288e; interLink's own
// `ci/manifests/service-account.yaml` grants the same on Leases, Secrets,
// ConfigMaps and tokens) binds its Virtual Kubelet's ServiceAccount to one
// ClusterRole, which names no object:
//
//	| interLink's chart grants, cluster-wide, to every object | this provider |
//	|---|---|
//	| leases: get, list, watch, create, update, patch, in every namespace (the control plane's own election Leases in kube-system, every node's Lease) | leases: create in kube-node-lease and in its election's namespace; get and update of its nodes' Leases and its election Lease only |
//	| secrets, configmaps, services, serviceaccounts, namespaces: get, list, watch | secrets, configmaps: get, as one of its nodes (impersonated), which the Node authorizer allows only for those the pods bound to it use |
//	| serviceaccounts/token: create, get, list: a token for any ServiceAccount of the cluster, and so the rights of any | serviceaccounts/token: create, as one of its nodes, only for the ServiceAccounts of the pods bound to it, each token bound to its pod |
//	| pods, services: create, delete, get, list, watch, patch; pods/status: update, patch; apps deployments, networking.k8s.io ingresses: create, delete, list, get | pods: list, watch; delete, fenced by the policy to its nodes' pods being deleted; patch, fenced to the annotations of their jobs; pods/status: patch, fenced to its nodes' pods |
//	| nodes: create, get; nodes/status: update, patch, of every node | nodes: create; get, list, watch, patch and nodes/status patch of its own nodes only |
//	| events: create, patch | events: create, patch, fenced by the policy to its nodes and to its nodes' pods, of their jobs and devices |
//	| a long-lived token Secret (`kubernetes.io/service-account-token`) | the pod's own projected token |
//
// Both send a pod's ConfigMaps, Secrets and token with its create; this
// provider reads them as the pod's node, as a kubelet does, so that the
// Node authorizer, not RBAC, says which (a provider of parts may
// impersonate any node: RBAC cannot name its nodes). interLink's rights
// are fenced by no name, so a leak of that token reads every Secret of
// the cluster, can hold any Lease, a kubelet's or a controller's, and can
// mint the token of any other ServiceAccount.
package rights
