// Command virtualkubelet is a Virtual Kubelet provider built on pingnode:
// it registers a virtual node, pings a plugin, and keeps the node's
// capacity, allocatable and taints true to the plugin's replies.
//
//	go run . -kubeconfig /tmp/pingnode-env/kubeconfig -plugin http://127.0.0.1:4000/status
//
// With -dra-driver it publishes the plugin's devices as Dynamic Resource
// Allocation devices, one pool of ResourceSlices a node (see devices.go),
// which the scheduler allocates to pods' claims:
//
//	go run . -kubeconfig /tmp/pingnode-env/kubeconfig -dra-driver gpu.nvidia.com
//
// One process can run a fleet of virtual nodes, each with its own Lease
// and plugin URL ({i} in -plugin is the node's index,
// for a gateway that serves many; without it, one plugin serves all):
//
//	go run . -kubeconfig /tmp/pingnode-env/kubeconfig -nodes 100 -node 'pingnode-virtual-{i}'
//
// With -parts it serves its plugin's parts, the machines or partitions
// its reply lists, each as a node of its own named by the -node template,
// all from one ping of the plugin (see supervisor.go):
//
//	go run . -kubeconfig /tmp/pingnode-env/kubeconfig -parts -node 'slurm-{part}'
//
// Several replicas can run for the same nodes: with -leader-elect they
// elect a leader with a Lease (see internal/election), and only the leader
// serves the nodes and pings. With -metrics-addr, each serves its
// Prometheus metrics (see internal/metrics):
//
//	go run . -kubeconfig /tmp/pingnode-env/kubeconfig -leader-elect -leader-elect-id a -metrics-addr 127.0.0.1:9101
//	go run . -kubeconfig /tmp/pingnode-env/kubeconfig -leader-elect -leader-elect-id b -metrics-addr 127.0.0.1:9102
//
// Its rights are data (see internal/rights): -print-rbac prints the RBAC
// objects the configuration the other flags give needs, bound to
// -service-account, and -print-node-policy the admission policy that
// fences what RBAC cannot name; deploy/ holds them, for a Deployment of
// two replicas:
//
//	go run . -service-account pingnode/pingnode-provider -leader-elect -print-rbac
//
// How it works, concern by concern, is below; README.md is the operator's
// guide: what it does, how to run it, what it costs.
//
// # Files
//
// The files follow the provider's jobs:
//
//	| file | job |
//	|---|---|
//	| `config.go`, `flags.go` | configuration: `Config` and its check, the library's options and the plugin client (built in one place each), the command line's flags (registered in one function, checked once at start) |
//	| `lifecycle.go`, `register.go`, `fleet.go` | start, retry and stop, one lifecycle for a node and a supervisor: `Run`, `RunRetrying`; the node's registration, or its refresh when it is stored; the fleet's configurations, and a supervisor for each of them, with one Lease renewer |
//	| `pinging.go`, `source.go`, `supervisor.go` | the one ping loop, of two kinds of supervisor over what both have (the plugin's client, its pings, the keeper of the jobs): the supervisor of one node, and the feed that hands a node its ping; the supervisor of a plugin's parts, which pings once for every part and asks `nodeapply/parts` what becomes of each node |
//	| `ping.go`, `held.go`, `report.go` | the step at each ping: apply it, what the node's pods hold, a steady node's status report |
//	| `internal/leases` | the one renewer of every node's Lease |
//	| `parts.go`, `partnode.go` | with `-parts`, a node for each of the plugin's parts (see Parts): a part's node, its name and labels, and which nodes are the provider's; the runner of each part's node |
//	| `delivery.go`, `status.go` | the library's patches sent to the API server: the object patch (taints, labels, their ownership annotations), with a precondition; the status patch (resources, conditions), and what it stored |
//	| `internal/caches` | the informers the provider reads its node, its pods, its ResourceSlices and the ResourceClaims from; with `-parts`, the supervisor's, which every part's node reads by its name |
//	| `podfinish.go`, `internal/pods` | the end of a pod deleted on the node: deleted at once (grace period 0), as a kubelet deletes a pod that has stopped (see Pods deleted on the node); `podfinish.go` wires the finisher to the node's caches and its pings |
//	| `devices.go`, `poddevices.go`, `internal/devices` | with `-dra-driver`, its devices (see Devices): the pool read at each ping and handed on when it changed; what each pod bound to the node was given; the ResourceSlice controller that publishes the pool, and the pool's split into slices |
//	| `confirm.go`, `internal/jobs` | with `-confirm`, the backend's confirmation (see internal/jobs): the jobs of the pods that wait before they bind, made, read and removed through the plugin, and each pod confirmed or refused on its claim; the class and each node's confirmation device |
//	| `events.go`, `internal/metrics` | what it tells people: events on the node; Prometheus metrics and the probes `/healthz` and `/readyz` |
//	| `internal/rights`, `rights.go` | its rights, as data: the RBAC rules each configuration needs, each with its reason (`-print-rbac`), and the admission policy that fences what RBAC cannot name (`-print-node-policy`); the `Access` of a configuration |
//	| `internal/election`, `main.go`, `hooks.go` | leader election among replicas, with a Lease; the command; the points at which a test steps a provider or a supervisor |
//	| `deploy/`, `Dockerfile` | manifests to run it in a cluster: two replicas with leader election, as a ServiceAccount with only its rights |
//
// # Pods deleted on the node
//
// A pod bound to a node that someone deletes (`kubectl delete pod`, the
// taint eviction controllers, a Job's controller) stays Terminating until
// its node says it has stopped. This example hands no pod to a backend, so
// the provider deletes such a pod at once, with grace period 0 and the UID
// precondition, as a kubelet does once the pod has stopped, and only while
// the plugin answers: during an outage a pod deleted (or evicted for the
// node's `NoExecute` taints) stays Terminating, and the first answered
// ping ends it (`TestPodDeleteFinished`, `TestOutage`). The queue, its
// backoff and what it logs are `internal/pods`'s documentation. It needs
// `delete` on pods, which `-print-node-policy` fences to the pods of its
// own nodes that are being deleted (see Rights).
//
// # Labels
//
// The plugin's reply may carry `labels` (see pingstatus/doc.go, rules label-valid
// and label-namespace): `nodeapply` keeps the plugin's labels apart from
// everyone else's with the annotation `pingnode.io/plugin-labels`, and the
// provider sends them by the object patch, its own strategic merge patch
// of the node (the taints, the changed labels, null for a removed one, and
// both ownership annotations), with the `resourceVersion` it was computed
// from as a precondition. A label the provider does not allow (outside the
// namespaces, or one of the static node's) changes nothing on the node and
// is said as a Warning event `LabelRefused` and in
// `pingnode_warnings_total{subject="label",action="refused"}`.
//
// The status patch names no label, so a status written after an
// administrator removed a label never puts it back
// (`TestLabelsStatusRace`). The static labels are written at
// registration, and again at each start of a node stored without them
// (`register.go`), as a kubelet does at its start.
//
// # Devices
//
// What is published. Each node's devices are one pool of the driver
// `NAME`, named after the node, in ResourceSlices that carry the node's name
// (`spec.nodeName`: the scheduler offers them on that node alone) and the
// Node as their owner (the garbage collector deletes them with the node). A
// device is named after its group and an index (`a100-0`, `a100-1`) and has
// its group's attributes and capacity; a short name such as `productName` is
// read by Kubernetes in the driver's domain, so a claim selects it as
// `device.attributes['NAME'].productName`. A device a claim holds stays
// published while its group is listed, whatever the count, and keeps its
// name; the free devices are those with the lowest indices (the rules of
// `nodeapply/devicepool`). A pool is split into slices the API server
// takes (`internal/devices`; `TestDriverResourcesSplit`).
//
// Held, as for resources. A claim is allocated when the scheduler
// places its pod, long before a queueing backend starts the pod; until then
// the plugin's free count (the default basis, available) still includes
// that device, as the node's resources still include the pod's share. So
// the pool read back at each ping tells a device held for a pod the
// backend runs (`Device.Running`: Running and started before the ping, by
// `nodeapply.RunsOnBackend`, the one test `-held` counts a pod's resources
// by too) from one held for a pod it has not started: of a reply read as
// available, the devices held for pods not started yet come out of the
// free count; of a reply read as a total (`"basis": "total"`), every held
// device does. A held device is still never dropped while its group is
// listed. With the sample plugin as
// shipped (two A100s free, never decremented: the example runs no pod) and
// two pods each given an A100, the pool stays `a100-0`, `a100-1`: no third
// A100 is published for a third pod to take (`TestDevicesSamplePlugin`
// watches every version of the node's slices over several pings).
//
// Device health. A group of the reply may carry `taints` (key, value,
// effect `None`, `NoSchedule` or `NoExecute`: see pingstatus/doc.go, rule
// device-taints); each device of the group carries them in the slice. The
// scheduler does not give a device with a `NoSchedule` or `NoExecute` taint
// to a claim that does not tolerate it (`TestDevicesTaintNoSchedule`: of
// `a100a` tainted `gpu.nvidia.com/xid=79:NoSchedule` and `a100b`, a claim
// is given `a100b-0`, and a second waits); a `NoExecute` taint makes
// kube-controller-manager's `device-taint-eviction-controller` delete the
// pods whose claims hold the device, and the provider finishes their
// deletion, as for any pod deleted on the node (`TestDevicesTaintNoExecute`:
// the pod on the failing GPU goes, the pod on the healthy one stays, and a
// claim whose request tolerates the taint, `tolerations: [{key:
// gpu.nvidia.com/xid, operator: Exists, effect: NoExecute}]`, is given the
// failing GPU all the same). Taints are per group: a plugin that tells one
// failing GPU from the others sends it as a group of its own.
//
// How. The slices are written by the ResourceSlice controller of
// `k8s.io/dynamic-resource-allocation`, one a node (`internal/devices` says
// how it is run), started at the first reply that carries devices, so that
// a provider that restarts, or a plugin that never sends devices, writes
// nothing and deletes nothing until a reply says what the devices are
// (`TestDevicesUntilNews`). At each ping
// the pool as published is read from the caches (`dra.Pool` over the node's
// slices of the driver and the claims whose allocations name its devices,
// which it marks held), `devicepool.Apply` of it and the ping, the step
// beside `nodeapply.Apply`, gives the pool the reply asks for, and the
// controller is handed it only when it changed (its `Result.Changes` not
// empty), not again while its cache has yet to show the
// last one. The controller writes only the slices that differ, bumps the
// pool's generation when more than one slice changes, and retries what the
// API server refuses. A steady ping writes no slice, and neither does a
// restarted provider whose pool is published already
// (`TestDevicesSteadyCost`: 0 slice writes counted by the API server over
// 20 pings, and over a restart). A node deleted and registered again is
// another owner: its controller is started anew, and the pool is published
// again once the garbage collector has deleted the old slices, within the
// controller's 30 s delay after the event that says so
// (`TestDevicesNodeDeleted`).
//
// Caches. The node's slices of the driver are an informer of each node
// (`spec.driver` and `spec.nodeName`, as the controller selects its own), so
// that each node starts and fails on its own, as with its other caches. The
// claims cannot be selected by the pool their devices come from, so their
// informer holds every claim: one a process, which the nodes of a fleet
// share, indexed by the driver and pool of each device an allocation names,
// so that a ping reads the claims of its pool and scans none. The pods
// bound to the node are the informer `-held` reads, which runs with any
// configuration: the provider finishes their deletion.
//
// Pods. A pod bound to the node is told, by an event on it, once per
// pod and outcome: Normal `DevicesGiven`, naming each device of the pool its
// claims were given and what it is (`given a100-1 (claim gpu, ResourceClaim
// trainer-gpu-x7k2q, request gpu): productName "NVIDIA A100-SXM4-80GB",
// memory 80Gi`: what a real provider forwards to its backend with the pod);
// or Warning `ClaimNotAllowed` for a pod that may not use its claims (a
// claim missing, not allocated, made from a template for another pod, or not
// reserved for it), as the kubelet refuses such a pod
// (`TestDevicesClaimNotAllowed`). The claims are read from the cache; a
// refusal is said only once the claims as stored (a GET of each, as the
// kubelet reads them when it admits a pod) refuse it too, since the cache
// may not hold the scheduler's allocation yet. The claim the scheduler makes
// for a pod's extended resources (below) is read as one of the pod's claims,
// as the kubelet reads it. A provider that restarts tells its pods again.
//
// testdata/gpu.yaml holds a DeviceClass with the attribute names of
// NVIDIA's DRA driver (NVIDIA/k8s-dra-driver-gpu: type, productName,
// cudaComputeCapability, capacity memory), and a claim for a GPU of 40Gi or
// more. With -dra-driver gpu.nvidia.com, the name NVIDIA's driver publishes
// under, the same class and claims select a real node's GPUs and the
// virtual node's; a driver of a domain of your own keeps them apart.
//
// On a node whose plugin says two A100s (80Gi) and another whose plugin says
// two T4s (16Gi), two such pods are each given an A100, and a third stays
// Pending, the scheduler saying `cannot allocate all claims`, whether the
// plugin counts the A100s free now, the default (`TestDevicesSamplePlugin`,
// with the sample plugin: the pods the backend has not started still hold
// theirs, and no third is published), or as a total (`"basis": "total"`,
// `TestDevicesScheduler`).
//
// Classic requests from devices (KEP-5004). A DeviceClass with
// `spec.extendedResourceName` lets the scheduler serve a pod's classic
// request from the class's devices (`DRAExtendedResource`: beta, on by
// default, in Kubernetes 1.36; GA in 1.37): the scheduler makes a claim for
// the pod, names it in the pod's `status.extendedResourceClaimStatus`, and
// allocates it a device of the pool. The node must not advertise the same
// resource in its allocatable, or the scheduler would count the devices
// twice: the plugin sends no accelerator for them (a reply that lists
// devices may not count them as accelerators too). The class of
// testdata/t4.yaml is one.
//
// A pod that asks for `example.com/t4: 1` (requests and limits) lands on the
// node through a T4 and is told which; a pod beyond the free T4s stays
// Pending (`TestDevicesExtendedResource`).
//
// # Parts
//
// One ping for every part. The provider of parts pings its plugin
// once each interval (`supervisor.go`), parses the reply, and asks
// `nodeapply/parts` (`parts.Step`) what becomes of each part's node, given
// the nodes it serves. Each part's node is the node the provider registers
// without `-parts` (its static taints and labels, its Lease, its conditions,
// what its pods hold, its devices as a pool of its own with `-dra-driver`,
// the end of its pods' deletion), run by the same code: a `Provider` whose
// pings its supervisor hands it through its feed (`source.go`). A node of
// its own is served the same way, by a supervisor of one node: one ping
// loop, one lifecycle and one Lease renewer for every node.
//
// Names and labels. A part's node is named by the `-node` template,
// `{part}` read as the part's name, and carries, besides the static node's
// labels, `pingnode.io/part=<part>`, so that a pod can select a machine or
// a partition (`nodeSelector: {pingnode.io/part: gpu01}`), and
// `pingnode.io/parts-of=<-parts-owner>`, which says that the node is this
// provider's. Neither is the plugin's to set. `kubernetes.io/hostname` is
// the node's name, as without `-parts`, unless the name is longer than a
// label value may be (63 characters): such a node has none, and pods select
// it by `pingnode.io/part`.
//
// The lifecycle of a part's node, at each ping:
//
//   - A part the reply lists that no node serves is registered: its node
//     is created with the part's figures, taints and labels, its first ping
//     applied, in one create (`register.go`), at most 64 at once
//     (`registrars`), and its Lease created without a read.
//   - A part the reply lists is pinged with its own patch, as a node of
//     its own is with its reply: its resources, taints, labels and devices.
//   - A reply that lists no parts (a sum, or `"nodes"` absent or refused
//     whole) is no news of them: every part's node stays as it is, and the
//     log says so once. A failed ping (no answer, a timeout, HTTP 503)
//     changes no part either: nothing is registered, left or deleted, and
//     each node's connectivity condition turns False, its Ready as `-grace`
//     and `-unreachable` say, as for a node of its own (`TestPartsPluginDown`).
//   - A part the reply no longer lists has left: its node is tainted
//     `pingnode.io/part-gone:NoSchedule` at once, with the time it left, so no
//     new pod lands (a pod that selects it by its part stays Pending); its
//     running pods stay. A part that comes back within `-part-grace` loses the
//     taint, and keeps its node and its pods.
//   - Once the part has been gone for `-part-grace`, its node turns Ready
//     False (reason `PartGone`): the node lifecycle controller taints it
//     `node.kubernetes.io/not-ready:NoExecute`, and each pod on it is evicted
//     once its toleration runs out (300 s for a pod that sets none, the
//     default admission gives it); the provider finishes each deletion, as a
//     kubelet whose pod has stopped.
//   - Once no pod holds it (none bound that has not succeeded or failed), the
//     node is deleted: the supervisor stops its runner, reads the node
//     and lists its pods from the API server, asks `parts.Step` again, and
//     deletes it with its UID and `resourceVersion` as preconditions, so that
//     a node changed since, or another of its name, is never deleted. Its
//     Lease and its ResourceSlices go with it, deleted by the garbage
//     collector (the node is their owner).
//
// `TestPartsGone` shows it against the real scheduler, node lifecycle
// controller and taint eviction controller: two parts leave; both nodes are
// tainted at once and a new pod for one stays Pending; the other comes back
// within the grace and keeps its pod; the first one's pod, tolerating
// not-ready for 5 s, is evicted after the grace and its toleration, and its
// node is deleted after its pod is gone, never before.
//
// A pod bound to a part's node is a pod for that machine or partition
// of the backend: a provider that runs pods hands it to the backend's part
// (a Slurm partition, a batch queue), as interLink hands a pod to its
// backend. The example runs no pod, so a pod stays Pending on the node, as
// on a node of its own. It holds the part's node: a part that has left is
// deleted only once its pods are gone, evicted by their tolerations.
//
// Restarts and takeovers. What the provider must remember is on the
// nodes: their ownership label, their part's label, and a part's
// `part-gone` taint with the time it left. At each start (and a new leader
// at each takeover) it lists the nodes with its ownership label (a watch,
// selected by it) and serves them as stored, so that a provider SIGKILLed
// and started again carries on with nothing lost: the same nodes, their
// pods still bound, a gone part's time unchanged (`TestPartsRestart`). It
// never touches a node without its ownership label, even one whose name
// its template makes: that part is not served, and the log says so once
// (`not served`); a node that loses the label stops being served.
//
// Logs and metrics. The supervisor's pings and the reply's warnings are
// counted under the template as the node label
// (`pingnode_pings_total{node="slurm-{part}"}`), and logged when they appear
// or change; so are the parts' nodes' writes, conflicts, errors and
// transitions, summed over the parts, so that a provider of 5,000 parts
// has the series of one node (a node's 40 series each would be 200,000, and
// 25 KB of memory a node). A part's allocatable is on its node, not in
// `pingnode_node_allocatable`. `/readyz` waits for every part's node served.
//
// What a part's node costs. Each part's node writes a steady status
// every 5 minutes (its status report), and little more: the process's one renewer renews every node's Lease
// every 10 s (360 Lease writes a node-hour, as a kubelet: one delaying
// queue and 64 workers for all, `internal/leases`); each node reads its
// node and its pods from the supervisor's two watches (the nodes with its
// ownership label; the pods bound to any node, `spec.nodeName!=`, indexed
// by node, with one event handler for all, `internal/caches`; with
// `-dra-driver` each node still watches its own slices), none of them with
// its managed fields, writes through the supervisor's one client, records
// its events through one broadcaster, and makes its queue of pods to
// finish only when a pod on it is being deleted. That client's rate limit is
// 1,500 requests a second, with a burst of 3,000 (`partsQPS`,
// `partnode.go`): the worst case of the fleet the provider is sized for,
// 5,000 parts, which every 10 s renew 5,000 Leases and write at most 5,000
// statuses, each one patch; a
// steady fleet needs about a third of it. client-go's default, 5 a second,
// is what made the supervisor of the version before take 3 minutes 20 to
// register 1,000 parts (one read of each).
//
// A change of figures alone (capacity, allocatable:
// `nodeapply.Result.FiguresOnly`) is held back while the node's status was
// written less than 10 s before, by the pings' times
// (`NodeStatusUpdateFrequency`, the kubelet's `nodeStatusUpdateFrequency`):
// the next ping, applied to the node as it stands, finds the change still
// to make, so several changes in between are one write, and the last one is
// written within two intervals; a taint, a label or a condition (Ready)
// goes at once, with its ping's figures (`TestPartsFiguresHeldBack`).
//
// Measured by `TestPartsScale` against the control plane (a provider
// process of N parts of one plugin, 5 s pings, the sample plugin's own
// fleet, `-parts-generate N -parts-churn 0.02` by default,
// `$PINGNODE_PARTS_CHURN` otherwise; goroutines and heap from the
// provider's `/metrics` and its RSS, above a provider of no part; node and
// Lease writes counted by the API server), the version before built from a
// worktree at the commit before, both in one run:
//
//	cd examples/virtualkubelet && PINGNODE_TESTENV=/tmp/testenv PINGNODE_PARTS_N=1000 PINGNODE_PARTS_WINDOW=3m PINGNODE_PARTS_BEFORE=/tmp/vk-before go test -run 'TestPartsScale$' -v -timeout 60m .
//
//	| per part's node, 1,000 parts | before (each a Lease loop, its own series, a pod queue, managed fields held) | now | now/before |
//	|---|---|---|---|
//	| goroutines | 8.0 | 5.0 | 0.63 |
//	| heap in use | 0.141 MB | 0.070 MB | 0.50 |
//	| RSS | 0.232 MB | 0.134 MB | 0.58 |
//	| CPU, s a node-hour | 0.49 | 0.48 | 0.97 |
//	| status writes a node-hour (`PATCH nodes/status`) | 16.5 | 16.0 | 0.97 |
//	| Lease writes a node-hour | 360.7 | 359.6 | 1.00 |
//	| nodes current two intervals after the churn stops | 100 % | 100 % | |
//	| from the first ping to every node Ready | 21 s | 8 s | |
//
// The version before that one, with a fleet node's own informers, client
// and broadcaster for each part, had 29 goroutines, 0.53 MB of heap and
// 0.89 MB of RSS a node at 1,000 parts, and took 3 minutes 20 to make
// them Ready.
//
// At the target, 5,000 parts for 10 minutes with churn
// (`PINGNODE_PARTS_N=5000 PINGNODE_PARTS_WINDOW=10m`, 16 Lease workers):
// 5.0 goroutines, 0.068 MB of heap and 0.135 MB of RSS a node (675 MB
// above the provider's own, within 1 GiB), 0.24 s of CPU a node-hour (a
// third of a core), every node Ready 59 s after the first ping, 100 %
// current two intervals after the churn stopped; the API server counted
// 19.4 status writes and 6.6 object patches a node-hour (1.4 the
// provider's, the rest the control plane's: field manager `testenv`, the
// binary that runs the controller manager), and 282 Lease writes a
// node-hour: 16 workers renewed every 12.8 s, so the renewer has 64.
// A steady backend (`PINGNODE_PARTS_CHURN=0`, 5,000 parts, 10 minutes,
// 64 Lease workers): 5.0 goroutines, 0.074 MB of heap and 0.131 MB of RSS
// a node, 0.22 s of CPU a node-hour, 10.2 status writes a node-hour (the
// 5-minute reports) and no object patch of the provider's, 5.2 object
// patches a node-hour of the control plane's, 345 Lease writes a
// node-hour. The control plane took about 1.6 cores of the two. A list of 5,000 nodes
// every 50 ms from the test's own wait, read from etcd, was enough to
// make the API server refuse the Leases (429), and the nodes went
// NotReady: the test polls every 2 s from the watch cache.
//
// Since the provider sends the library's status patch itself, with no
// Virtual Kubelet node controller (5,000 parts, churn 0.02, 1 minute,
// the version before measured in the same run,
// `PINGNODE_PARTS_BEFORE`): 1.0 goroutine, 0.027 MB of heap and 0.055 MB
// of RSS a node (5.0, 0.060 and 0.105 before), 0.14 s of CPU a node-hour
// (0.15), the same 21.4 node writes a node-hour, and a third of the node
// reads (the controller read the node before each status patch).
//
// Registration. A new part's node is created with its first ping applied
// (its status, taints and labels; `register.go`), at most 64 at once
// (`registrars`), and its Lease created without a read: a read of the
// node (the supervisor's, to tell another's node of the same name), a
// create of it and a create of its Lease. Before, each node was created
// bare, its status and object patch written at once after, its Lease read
// and then created, and the 5,000 creates of a first ping went together:
// the API server's priority and fairness refused four in five (429), and
// client-go sent them again. Both versions in one run, 5,000 parts
// (`PINGNODE_PARTS_N=5000 PINGNODE_PARTS_WINDOW=30s
// PINGNODE_PARTS_BEFORE=… PINGNODE_SCALE_AFTER=…`, binaries built from
// be2644c and from this version): from the first ping to every node
// Ready, 44 s before and 19 s now (14 s and 17 s in two other runs of
// this version alone); requests the API server counted by then, 13.5 a
// node before (7.3 node reads, 2.8 status patches, 1.75 node creates, 0.7
// Lease reads, 0.8 Lease creates) and 3.8 now (1.1 node reads, 1.0 node
// creates, 1.0 Lease creates, 0.5 of the first Lease renewals). The rest of a node's costs did not
// change (heap 0.65, CPU 0.93, node writes 0.96, Lease writes 1.05 of
// before's).
//
// # Rights
//
// Its rights are data, in package `internal/rights`: for each
// configuration (its nodes, `-held`, `-leader-elect`, `-dra-driver`,
// `-parts`) the least RBAC it runs with, each rule with its reason, and
// the admission policy that fences what RBAC cannot name. `accessFor`
// (`rights.go`) turns the configuration into the package's `Access`;
// `-print-rbac` and `-print-node-policy` print what it gives. The
// package's documentation has each rule and what breaks without it
// (`TestRightsEachNeeded`), what the policy fences, with `-dra-driver`
// and `-parts` too, and how the rights compare with interLink's.
//
// # Tests
//
// With `-short`, `TestMain` neither builds nor starts the control plane, and
// every test that needs it skips (`needsControlPlane`, in `env_test.go`). The
// rest run: the flags and what a flag that cannot work says
// (`flags_test.go`), the printed manifests (`-print-rbac`,
// `-print-node-policy`, and `deploy/`, which must be what they print), the
// rules of `internal/rights`, a stored node's refresh, the
// finisher of pods being deleted (`internal/pods`), and the provider itself, a node under its
// supervisor of one node against a fake clientset
// (`k8s.io/client-go/kubernetes/fake`) and a plugin on `httptest`: its
// pings, one at a time, put the reply's resources, taint and ownership
// annotation on the node, an identical reply writes nothing, a failed ping
// turns the conditions False, and the object patch is read again after a
// conflict and counted as a write error when refused (`pingstep_test.go`);
// the renewer of the Leases (`internal/leases`); and the provider of parts
// (below). 10 to 15 s once compiled (on 2 cores; with `-race`, as CI runs
// it, about 30 s, most of it linking and the flag tests' child processes).
//
// Without `-short`, the tests run the provider against the real control
// plane, which `TestMain` starts once (and builds first, 5 to 13 minutes
// cold, which is why `-timeout` is given: go test's own is 10 minutes):
// every test, none skipped, which CI checks.
//
// The control plane authorizes as a real cluster does (`testenv -rbac`:
// Node and RBAC authorization, the NodeRestriction admission plugin), and
// every provider a test runs, in the test's process or as a child process
// with a kubeconfig, runs as a ServiceAccount of its own bound to exactly
// the rules `internal/rights` gives its configuration (the same `Access` that
// `-print-rbac` prints), with a token minted through the TokenRequest API
// and kept in a file, as a pod's is. The whole suite takes about 8
// minutes once the control plane is built (466 s on 2 shared cores),
// passes when run again on the same control plane (`-count=2`), and cleans
// up what it makes: nodes, their Leases and events, pods, admission
// policies, ServiceAccounts and their rights (`TestMain` fails the run if a
// ServiceAccount, a role, a binding or a policy of the provider's is
// left). `TestRightsEachNeeded` takes each rule away in turn and shows what
// breaks (the table in `internal/rights`); its twelve cases run in
// parallel, in a few seconds.
// `TestDeviceRightsEachNeeded` does the same for the five rules
// `-dra-driver` adds or changes. The tests of devices (`devices_*_test.go`)
// run the real scheduler, resource claim controller and device taint
// eviction controller against the provider's slices, count the slice writes
// on the API server's `apiserver_request_total`, and dry-run create, as
// slices, the pools of 400 drawn replies (`TestDevicesValidity`: none
// refused); `TestDevicesSamplePlugin` builds the sample plugin
// (`examples/plugin`, `go build`, seconds) and runs it as shipped, with
// `-devices examples/plugin/testdata/gpus.json`, on a free port of
// 127.0.0.1.
// The tests of parts (`-run Parts` runs them all, about a minute against
// the control plane): in the unit tier, the parts supervisor against a
// fake clientset, one ping at a time and the part grace on a clock of the
// test's, turns a sequence of replies into registrations, pings, leaves and
// deletions, adopts the node it owned before, never writes another's node
// of a part's name, and registers or deletes nothing at a failed ping or a
// reply without parts (`TestPartsSupervisorFakeClient`); a part's node
// holds back a change of figures alone for 10 s after its last status
// write, a taint goes at once, and the last figure is written after the
// 10 s (`TestPartsFiguresHeldBack`); a provider without
// `-parts` says once that a reply's parts are ignored
// (`TestPartsIgnoredWithoutParts`); the template's checks; and
// `TestPrintedRights`: what `-print-rbac` and `-print-node-policy` print for
// 13 flag sets is what `testdata/print` holds, the ten without `-parts` as
// the provider printed them before it served parts, byte for byte (`-update`
// rewrites only the others). Against the control plane, with the real
// scheduler, node lifecycle controller and taint eviction controller:
// `TestPartsScheduling`, `TestPartsGone`, `TestPartsPluginDown` (each
// stepping the supervisor one ping at a time with the hook before its pings (hooks.go), and
// moving the plugin's clock, not sleeping, for the part grace),
// `TestPartsRestart` (the provider as a process, SIGKILLed and started
// again), `TestPartsSamplePlugin` (the sample plugin as shipped, `-parts
// examples/plugin/testdata/parts.json`), `TestPartsFence` (the policy,
// with the provider's token) and `TestPartsScale` (what a part's node
// costs, below); each fault test ends by checking that nothing was lost.
// To build the control plane once and reuse it:
//
//	cd examples/testenv && go build -o /tmp/testenv .
//	cd ../virtualkubelet && PINGNODE_TESTENV=/tmp/testenv go test -race -timeout 40m -run 'TestTaintsRefused|TestStartErrorReturns' -v ./...
package main
