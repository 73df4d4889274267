// Package vnode is one virtual node, from the ping its supervisor hands
// it to what it writes: a [Node] registers its node (or refreshes the
// node as stored), applies each ping with the library
// ([nodeapply.Apply]), sends the library's object patch and status patch
// itself, writes a steady node's status report, says what changed in
// events, publishes its devices with a DRA driver, and ends the deletion
// of its pods. Its [Config] is the provider's configuration, checked once
// ([Config.Check]), from which the library's options and the plugin's
// client are built.
//
// It pings nothing: its supervisor (internal/supervise), of one node or of
// a plugin's parts, pings the plugin and hands each node its ping through
// the node's [Feed]; the node's ping loop steps one ping at a time.
//
// The tests named below are the command's (examples/virtualkubelet),
// which run the provider against the real control plane.
//
// # Files
//
//	| file | job |
//	|---|---|
//	| `config.go`, `options.go`, `confirmsetting.go`, `parts.go` | the configuration and its check, and what the nodes of a process share; the library's options and the plugin's client built from it; the settings of the backend's confirmation; with Parts, a part's node: its name, its labels, which nodes are the provider's |
//	| `lifecycle.go`, `feed.go`, `hooks.go` | start, retry and stop ([Node.Run], [Node.RunRetrying], [RunRetrying]); the feed of its pings; the points at which a test steps it |
//	| `register.go` | the node's registration, with its first ping, or its refresh when it is stored |
//	| `ping.go`, `held.go`, `report.go` | the step at each ping: apply it, what the node's pods hold, a steady node's status report |
//	| `delivery.go`, `status.go` | the library's patches sent to the API server: the object patch (taints, labels, their ownership annotations), with a precondition; the status patch (resources, conditions), and what it stored |
//	| `events.go` | events on the node: the reply's warnings, Ready's transitions, the pods' devices |
//	| `devices.go`, `poddevices.go` | with a DRA driver, its devices (see Devices): the pool read at each ping and handed on when it changed; what each pod bound to the node was given |
//	| `podfinish.go` | the end of a pod deleted on the node (see Pods deleted on the node), wired to the node's caches and its pings |
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
// own nodes that are being deleted (see the command's documentation,
// Rights).
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
// (`register.go`, [Node.Run]), as a kubelet does at its start.
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
package vnode
