// Package jobs keeps the backend's jobs of the pods of its nodes: a pod
// bound to one of them gets its job on the plugin (interLink's /create,
// /status and /delete) when it binds, and its status follows its job;
// with -confirm, a pod that asks for the backend's confirmation is held
// at the scheduler's PreBind until the backend runs it, by the device
// binding conditions of Dynamic Resource Allocation
// (nodeapply/dra/confirm). Without -confirm the [Keeper] has no claims
// and no pods that wait ([Config.Claims] and [Config.Waiting] nil), and
// publishes nothing. A plugin of the ping alone, which answers a create
// 404, 405 or 501, serves no pod API: the keeper makes no job for the
// rest of its run, and the pods stay Pending.
//
// After each create it writes the job's ID on the pod, in the annotation
// [JobIDAnnotation] (JobID), as interLink's Virtual Kubelet does, and it
// adopts a pod bound to one of its nodes that has one and no record of
// its own: either provider takes over the other's pods without making a
// job twice.
//
// With -confirm, each node the provider serves publishes one
// confirmation device, in a ResourceSlice of the confirmation driver
// owned by the node (confirm.Slice), so that it goes when the node does;
// the DeviceClass that serves it as an extended resource is created once,
// at the start.
// A pod asks with a classic request of that resource
// (pingnode.io/confirmed: 1 by default), and the scheduler writes its
// claim, gives it a share of a node's device, and waits.
//
// A [Keeper] takes a step after each answered ping of its plugin, apart
// from the ping loop (a step is never run twice at once, and a ping
// during a step asks for one more after it), and while a pod waits for
// its job to start, one of its own every [Config.Pace] (a second), so
// that a pod binds about a second after its job starts, where it would
// wait for the next ping (5 s by default); a plugin that answers its
// status from a cache (interLink's Slurm plugin: 10 s) adds up to the
// cache's age:
//
//  1. It reads the allocations of the confirmation devices of its nodes
//     from the claims' cache (by the index of claims by pool).
//  2. It asks the plugin (interLink's GET /status, with the whole pods,
//     as interLink sends them) about the pods that may have a job: the
//     pods of those allocations, the pods it made a job of, and the pods
//     that ask for confirmation and are not bound yet. With none, it
//     asks nothing: a step with no pod waiting costs no request.
//  3. confirm.Step says of each pending allocation confirm, refuse or
//     wait, which jobs to start and which to remove.
//  4. It writes each outcome to its claim (a server-side apply of the
//     claim's status, one write an allocation an outcome), removes the
//     jobs (POST /delete) and starts the others (POST /create, one pod a
//     create, with spec.nodeName set to the node its allocation names).
//
// # Each job made once, and removed once
//
// interLink's Slurm plugin makes a second job for a second create of the
// same pod, answers the delete of a pod it does not know with no answer
// at all, answers a status from a cache up to 10 s old, and learns that a
// job started only when a refresh of that cache saw it running. So:
//
//   - Before it asks the plugin to make a job, the keeper records it on
//     the pod ([RecordAnnotation]: the node, when, the pod's refusals so
//     far), one pod write a job; a record it cannot write makes no job. A
//     keeper that restarts, or a standby that takes over, reads the
//     records from its cache of pods: a job the backend has, queued, is
//     adopted on the node it was made for, and keeps its place in the
//     backend's queue.
//   - A create that fails, answered with an error (the Slurm plugin: 504
//     when sbatch writes anything on stderr, a warning too, with the job
//     made or not) or not at all, is not sent again: the job is recorded
//     as made, and an answer younger than [Config.StatusAge] (10 s) that
//     does not show it is taken as older than the job. An answer newer
//     than the create that shows it adopts it; one that shows no job of
//     it is a refusal of the pod, and no delete is sent for it.
//   - A job that ended ran, seen running or not (confirm.StateOf): a job
//     of 2 s ends between two refreshes and is answered terminated, with
//     no start, and its own exit code; only a job cancelled before it ran
//     (exit code 15, SIGTERM's) is a refusal.
//   - A pod the backend refused [Config.Refusals] (3) times fails with
//     the backend's words ([ReasonRefused]), as a kubelet fails a pod it
//     cannot run, so that its controller sees it fail; below that, it is
//     started again, on its node once bound, elsewhere while it waits.
//   - A job it removed is recorded so (one pod write a removal), and reads
//     as gone (confirm.JobGone) until the pod's next job, whatever a
//     cached answer still says: it is removed once. A delete is sent only
//     for a job the backend listed or the keeper made, and its outcome is
//     read from the backend's answers newer than it, not from its own
//     answer (the Slurm plugin answers 500 when scancel fails and keeps
//     the job, and may remove a job after its answer timed out): a job
//     gone or ended is removed; one still queued or running is deleted
//     again, after a back-off of 1 s, doubled up to 5 minutes; one the
//     plugin cannot answer about for [Config.LostAfter] while its delete
//     fails (a job Slurm forgot) is recorded removed. Every delete ends.
//   - A pod in a phase it never leaves (Succeeded, Failed) is asked about
//     no more: its job gets one delete, so that the backend frees what
//     it keeps, and is removed whatever the answer.
//   - The pod sent to the plugin carries what it uses from the cluster,
//     as interLink's Virtual Kubelet sends it (internal/poddata): its
//     ConfigMaps, Secrets and projected volumes (its ServiceAccount's
//     token), read as its node, and its environment resolved; and an
//     entry for each of its containers under "container", with what each
//     mounts, which a sidecar reads (interLink's API builds it for one):
//     the Slurm plugin refuses a pod that mounts a ConfigMap or a Secret
//     it does not find there. A pod whose data cannot be read (an object
//     missing, a read refused) gets no job, is told why by a Warning
//     event [ReasonDataUnavailable], and is tried again at the next step,
//     as a kubelet waits for a missing ConfigMap. A pod that waits for
//     confirmation is sent only what it says itself, since the Node
//     authorizer gives its node its data only once it is bound: one that
//     uses a ConfigMap or a Secret gets no job while it waits.
//   - A refused or removed job never holds its pod: the pod, allocated
//     again, gets its next job at once (nodeapply/dra/confirm, rule
//     confirm-gone).
//   - A job that has not started by the deadline (-confirm-deadline) is
//     kept, on a node of its own, while its pod waits for a node again
//     (confirm.Job.Kept, rule confirm-kept): the allocation is refused,
//     as the scheduler's binding timeout asks, the pod is told so
//     ([ReasonQueued], with the job's ID and state), and, allocated on
//     the node again, it adopts the job, which keeps its place in the
//     backend's queue, however long: the deadline counts from each
//     allocation. A part's job is removed at the deadline, so that its
//     pod may go to another part (a machine that never starts its jobs);
//     so is a kept job once its pod goes to another node.
//
// # One pod's trouble
//
// interLink's Slurm plugin answers 500 for a whole status request when
// one pod of it is a job Slurm forgot (MinJobAge, 300 s, after a job
// cancelled or timed out) that wrote no status file; interLink's Virtual
// Kubelet asks one pod a request. The keeper asks the pods it has no
// reason to doubt in one request; when it fails, those pods are told
// apart by halves while the plugin's answer is fresh (one the plugin
// computed, not one it serves again within StatusAge), and a pod whose
// question fails alone is held: asked alone, after a back-off of 1 s
// doubled up to 5 minutes, and told so by a Warning event
// [ReasonStatusFailed] with the plugin's words, said again only when they
// change, then by a Normal one [ReasonStatusAnswered]. The others are
// asked together again at once. A held pod's job reads as last answered
// (no answer is no news), and a job left out of the answers of requests
// that succeeded for [Config.LostAfter] (1 minute) is gone. A failure
// that is no pod's (the plugin not reached) decides nothing: the step
// ends, and the next asks again.
//
// # The pod's life once it binds
//
// Once a pod binds, its job runs on as the job made while it waited: it
// is never made again. At each step the keeper asks the backend about it
// too, and writes its status as its job says ([StatusOf]: Pending while
// queued, Running, then Succeeded or Failed with the exit code; Ready
// while every container runs), a patch of the pod's status when it
// changed, as a kubelet reports its pods. A pod being deleted has its
// job removed, once, at the next step, and the removal recorded on it;
// its delete completes only then ([Stopped], which the provider's
// finisher waits for), as a kubelet deletes a pod once its containers
// have stopped, so that a keeper that restarts in between still finds
// the job on the pod. A pod that does not ask for
// confirmation gets its job when it binds, on its node, recorded as any
// other, and lives the same way.
//
// The job of a part's node is pinned to its part in the plugin's words
// ([Config.PinAnnotation]): interLink's Slurm plugin chooses the machine
// itself (spec.nodeName means nothing to it) unless the pod's annotation
// slurm-job.vk.io/flags holds --nodelist=<machine>, which the pod sent
// to the plugin carries, after the flags the pod has.
//
// A job of a pod deleted while no provider ran is not found again:
// interLink's API lists no jobs but those asked about. Nor is the job of
// a pod deleted with a grace period of 0 (kubectl delete --force), which
// is gone at once, when the provider restarts before its next step: the
// keeper removes that job from what it remembers, not from a record.
package jobs
