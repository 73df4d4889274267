// Package dra publishes the devices of a virtual node as Dynamic Resource
// Allocation devices (resource.k8s.io/v1, Kubernetes 1.34 and later), and
// reads back which of them claims hold. It is a module of its own, so that
// the library keeps its oldest Kubernetes (k8s.io/api v0.29.0, which has no
// resource.k8s.io/v1) and only a provider that publishes devices requires
// a newer one. Dynamic Resource Allocation needs no kubelet to allocate a
// node's devices (KEP-4381), so a virtual node can publish its backend's
// devices as a real node's driver does.
//
// A provider's ping with devices:
//
//  1. [Pool] reads the node's pool as published (its ResourceSlices),
//     which devices the claims' allocations name, and which of those are
//     for a pod the backend runs (of the pods bound to the node, at the
//     ping's time, by [nodeapply.RunsOnBackend], the pods and time that
//     [nodeapply.Ping.Held] is summed from).
//  2. [devicepool.Apply] of that pool and the ping gives the pool to
//     publish, [devicepool.Result.Devices], and what changed
//     ([devicepool.Result.Changes]). A device held for a pod the backend
//     has not started is still in the plugin's free count, and is
//     published once.
//  3. When it changed, [Devices] turns it into resource.k8s.io/v1 devices,
//     with their attributes, capacity and taints, for the ResourceSlices
//     of one pool of the provider's driver on the node
//     (k8s.io/dynamic-resource-allocation's resourceslice controller
//     writes them, with the Node as their owner, and bumps the pool's
//     generation). The API server takes at most 128 devices a slice, and
//     at most 64 in a slice with a tainted device. It stamps each taint's
//     TimeAdded; Pool reads a taint back without it, so a steady pool
//     compares equal. Pool copies what it reads from the slices, so
//     devicepool.Apply of a steady pool allocates nothing, and no slice
//     is written.
//
// When a pod bound to the node starts, [PodDevices] says which devices of
// the pool its claims were given, with what they are, and refuses a pod
// whose claim is not reserved for it, as the kubelet refuses one; the
// provider forwards the devices to its backend.
//
// Package [github.com/pingnode/pingnode/nodeapply/dra/confirm], in this
// module, holds a pod before it binds to the node until the backend runs
// it, by the devices' binding conditions.
//
// An attribute or capacity name without a domain ("productName") is
// published as it is: Kubernetes reads it as in the driver's domain, so a
// claim selects it as device.attributes["<driver>"].productName, the same
// CEL that selects a real node's device of that driver.
package dra
