// Package jobs keeps the backend's jobs of the pods that wait for its
// confirmation (-confirm): a pod that asks for it is held at the
// scheduler's PreBind until the backend runs it, by the device binding
// conditions of Dynamic Resource Allocation (nodeapply/dra/confirm).
//
// Each node the provider serves publishes one confirmation device, in a
// ResourceSlice of the confirmation driver owned by the node
// (confirm.Slice), so that it goes when the node does; the DeviceClass
// that serves it as an extended resource is created once, at the start.
// A pod asks with a classic request of that resource
// (pingnode.io/confirmed: 1 by default), and the scheduler writes its
// claim, gives it a share of a node's device, and waits.
//
// A [Keeper] takes a step after each answered ping of its plugin, apart
// from the ping loop (a step is never run twice at once, and a ping
// during a step asks for one more after it):
//
//  1. It reads the allocations of the confirmation devices of its nodes
//     from the claims' cache (by the index of claims by pool).
//  2. It asks the plugin (interLink's GET /status, with the pods) about
//     the pods that may have a job: the pods of those allocations, the
//     pods it started a job for, and the pods that ask for confirmation
//     and are not bound yet. With none, it asks nothing: a step with no
//     pod waiting costs no request.
//  3. confirm.Step says of each pending allocation confirm, refuse or
//     wait, which jobs to start and which to remove.
//  4. It writes each outcome to its claim (a server-side apply of the
//     claim's status, one write an allocation an outcome), removes the
//     jobs (POST /delete) and starts the others (POST /create, the pod
//     with spec.nodeName set to the node its allocation names).
//
// What a step must remember is on the claims and on the backend, and in
// the node of each job it started, which it keeps in memory: a job is
// created for a node, and the backend's status does not say which. A
// provider that restarts knows the node of the jobs of the pods bound to
// its nodes (theirs), but not of the jobs of pods still waiting: such a
// job is on no node it knows, so it is removed and started again, never
// confirmed. The job of a pod deleted while no provider ran is not found
// again: interLink's API lists no jobs but those asked about.
package jobs
