// Package supervise is the one ping loop of every virtual node, of two
// kinds of supervisor: a [NodeSupervisor] serves one node of its own (a
// fleet's, or the only one), and a [PartsSupervisor] serves a node for
// each part of a plugin's reply (-parts). Each pings its plugin every
// interval, judges the reply once ([nodeapply.Judge]), and hands each node
// it serves that node's ping through the node's feed (package vnode, which
// steps it). What both have is a pinging: the plugin's client, the ping
// itself, and the keeper of the jobs of the pods that wait on its nodes
// for the backend's confirmation (internal/jobs).
//
// The tests named below are the command's (examples/virtualkubelet),
// which run the provider against the real control plane.
//
// # Files
//
//	| file | job |
//	|---|---|
//	| `pinging.go` | what both supervisors have: the plugin's client, the ping, the keeper of the jobs |
//	| `source.go` | the supervisor of one node |
//	| `supervisor.go`, `partnode.go` | the supervisor of a plugin's parts, which asks `nodeapply/parts` what becomes of each node; the runner of each part's node, its registration and its deletion |
//	| `confirm.go` | with Confirm, the backend's confirmation: the keeper of the jobs, the class and each node's confirmation device |
//
// # Parts
//
// One ping for every part. The provider of parts pings its plugin
// once each interval (`supervisor.go`), parses the reply, and asks
// `nodeapply/parts` (`parts.Step`) what becomes of each part's node, given
// the nodes it serves. Each part's node is the node the provider registers
// without `-parts` (its static taints and labels, its Lease, its conditions,
// what its pods hold, its devices as a pool of its own with `-dra-driver`,
// the end of its pods' deletion), run by the same code: a `vnode.Node` whose
// pings its supervisor hands it through its feed (`vnode.Feed`). A node of
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
//     applied, in one create (vnode's `register.go`), at most 64 at once
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
// (`vnode.NodeStatusUpdateFrequency`, the kubelet's `nodeStatusUpdateFrequency`):
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
// (its status, taints and labels; vnode's `register.go`), at most 64 at once
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
package supervise
