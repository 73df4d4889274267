// Package confirm holds a pod before it binds to a virtual node until the
// backend runs it, by Dynamic Resource Allocation's device binding
// conditions (KEP-5007, beta and on by default since Kubernetes 1.36).
//
// A node says what its backend had free at the last ping, and a backend
// shared with jobs that never pass through Kubernetes can fill between a
// ping and a bind. A pod bound then is a job pinned to a machine that
// cannot run it: bound, and never started. The scheduler can wait
// instead. A node publishes one confirmation device ([Device]) with
// bindsToNode, the binding condition [ConditionRuns] and the binding
// failure condition [ConditionRefused]; one device serves many claims
// (allowMultipleAllocations, KEP-5075), each with a share of its own. A
// pod whose claim is given a share of it waits at the scheduler's PreBind
// (event BindingConditionsPending) until the provider writes
// [ConditionRuns] True
// in the claim's status.devices entry for that share, and binds then; when
// the provider writes [ConditionRefused] True, the scheduler deallocates the claim
// and schedules the pod again, on another node when one fits. The
// scheduler gives up on its own after its binding timeout (600 s by
// default).
//
// # How a pod asks
//
// A pod asks with a classic resource request of the extended resource
// that the [Class] serves (KEP-5004, GA in 1.37), [DefaultResource]
// unless the provider names another:
//
//	resources:
//	  limits:
//	    pingnode.io/confirmed: 1
//
// and the scheduler writes a claim for it. A pod that writes its own claim
// asks for a device of the class by its name. A pod that does not ask
// binds as it always did.
//
// # A provider's step
//
// At each ping, the provider:
//
//  1. reads the allocations of the confirmation devices from the claims
//     ([Allocations]);
//  2. asks the backend about each pod that may have a job there: the pods
//     of the allocations, the pods bound to its nodes, and the pods that
//     ask for confirmation and are not bound yet (interLink's GET /status),
//     and reads each answer as a [Job] ([StateOf] the containers);
//  3. calls [Step], which says of each allocation still pending whether to
//     confirm it, refuse it or wait, which jobs to start (interLink's POST
//     /create, with the pod's spec.nodeName set to the allocation's node)
//     and which to remove (POST /delete);
//  4. writes each confirmation and refusal to its claim ([Decision.Patch]),
//     once.
//
// A backend need not create a pod once by its UID (interLink's Slurm
// plugin makes a second job for a second create), so a provider records
// each job it makes where it finds it again (the reference provider: an
// annotation of the pod), and the pod, once bound, runs as the job made
// while it waited, never created again.
//
// # The confirm contract
//
//   - confirm-pure: [Step] never modifies its inputs, keeps no state, reads
//     no clock and does no I/O; what it must remember is on the claims (the
//     allocation, its time, the conditions written) and on the backend (the
//     jobs). A provider that restarts reads both back and carries on.
//   - confirm-device: [Device] is the node's confirmation device: bindsToNode
//     true, the binding condition [ConditionRuns], the binding failure
//     condition [ConditionRefused], allowMultipleAllocations true, and the attribute
//     [Attribute] (a bool, true), by which [Class] selects it among the
//     driver's devices. A provider publishes it in a pool of its own on the
//     node, of a driver of its own ([Slice], [DefaultDriver]), not in the
//     pool of the plugin's devices, which
//     [github.com/pingnode/pingnode/nodeapply/dra.Pool] reads back.
//   - confirm-class: [Class] is the DeviceClass that selects the confirmation
//     devices of one driver and serves them as one extended resource.
//   - confirm-read: [Allocations] reads, from each allocated claim, every
//     result of the driver whose binding conditions include
//     [ConditionRuns], with
//     the node its allocation selects (the "metadata.name" field of its
//     node selector), the time it was allocated, the pods it is reserved for
//     and what the claim's status says of the share: [Confirmed] when
//     [ConditionRuns] is True, [Refused] when [ConditionRefused] is True
//     (failure first), and [Pending] otherwise. Claims not allocated, results of other drivers
//     and results without the condition are passed over; nil claims too.
//   - confirm-runs: An allocation is confirmed only when each of its pods has
//     a job on the allocation's node that the backend has started
//     ([JobStarted]), and none refused. A confirmation is never given for a
//     pod the backend does not run, nor for a job on another node or on a
//     node not known ([Job.Node] empty).
//   - confirm-refused: An allocation is refused ([ReasonRefused]) when the
//     backend refused a job of one of its pods on its node (of several jobs
//     of a pod there, a refused one counts), or when it names no node
//     ([ReasonNoNode]).
//   - confirm-deadline: An allocation not confirmed by the time its
//     allocation is [Options.Deadline] old ([DefaultDeadline] when zero or
//     less) is refused ([ReasonNotStarted]). The deadline is below the
//     scheduler's binding timeout, so that the refusal, and the job's
//     removal, come before the scheduler gives up on its own. An allocation
//     without a time is never refused by the deadline; a time in the future
//     counts as no time passed.
//   - confirm-start: A pod of an allocation that waits, with no live job
//     (queued or started) on any node, is started on the allocation's
//     node ([Result.Start]), once. A pod with a live job elsewhere is not
//     started while that job is there: it is removed (rule
//     confirm-remove), and the pod starts at a later step. A refused job
//     does not hold its pod: the pod of a refused allocation, allocated
//     again, starts on its new node in the step that removes the refused
//     job.
//   - confirm-remove: A job is removed ([Result.Remove]) unless its pod is
//     bound to the job's node, or is a pod of an allocation on the job's node
//     that is confirmed, or pending and not refused by this step. A job of a
//     node not known is kept when its pod is bound, or its allocation
//     confirmed: the job is the one that ran. So no job is left
//     behind for a pod that will not bind to its node: one whose allocation
//     was refused, deallocated, or is on another node, or a pod bound
//     elsewhere. A job of a node not known of a pod that waits is removed,
//     and the pod started again. A gone job is never removed.
//   - confirm-kept: A live job (queued or started) that the caller keeps
//     for its pod ([Job.Kept]), on a node it knows, is not removed by
//     rule confirm-remove until its pod goes elsewhere: bound to another
//     node, or of an allocation on another node that is confirmed, or
//     pending and not refused by this step. So a pod refused at the
//     deadline on a node of its own, where the scheduler can only bring
//     it back, keeps its job and its place in the backend's queue: its
//     next allocation there finds the job live and starts none (rule
//     confirm-start), and its deadline counts from that allocation. A
//     caller keeps no job of a part of a backend, whose pod must be free
//     to go to another part.
//   - confirm-gone: A job the backend says it has not ([JobGone]: a
//     removed job, or one never made, as interLink's Slurm plugin
//     answers them) is no job: it neither holds its pod nor refuses an
//     allocation, and it is not removed, for the plugin does not answer
//     the delete of a pod it does not know. A caller that removed a job
//     gives it as gone until the pod's next job, whatever a status
//     answered from the plugin's cache still says, so that a job is
//     removed once.
//   - confirm-once: [Result.Decisions] has one decision for each pending
//     allocation, in the order given, and none for a confirmed or refused
//     one: each outcome is written to its claim once.
//   - confirm-words: The reason and message of a decision are fixed words
//     ([ReasonRuns], [ReasonRefused], [ReasonNotStarted], [ReasonNoNode]),
//     the same at every step that decides the same way, with no text from
//     the backend.
//   - confirm-state: [StateOf] reads a job from its containers as the backend
//     reports them (interLink's status): started when a container runs,
//     or has terminated after it started, or has terminated with an exit
//     code of its own, whether or not it was seen to start; refused when a
//     container terminated without starting with [ExitCancelled] (15,
//     SIGTERM's number: the exit code of a job the backend cancelled
//     before it ran); gone when each container has an empty state;
//     queued otherwise, an empty list included. A backend that looks at
//     its jobs now and then sees a short job only once it ended
//     (interLink's Slurm plugin records a start only when one of its
//     refreshes, 10 s apart, sees the job running, and answers a job it
//     never saw run with no start time), and a job that ended on its own
//     ran: read as refused, it would be run again, and again. A job
//     cancelled, or killed by its time limit, before the backend saw it
//     run, and a job whose own exit code is 15, read as refused.
package confirm
