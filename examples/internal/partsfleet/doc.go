// Package partsfleet generates a backend of many parts: a fleet of
// identical machines whose free cpus change as jobs start and end on them,
// each machine a part of a ping reply, and which runs pods as jobs. The
// sample plugin serves it with -parts-generate, and the provider's fleet
// benchmark (TestPartsScale in examples/virtualkubelet) pings it, so that
// both load a provider with the same fleet. [Config] says what the fleet
// is, [New] makes it, and [Fleet.Next] moves it on by one reply;
// [Fleet.Freeze] stops its churn, for a benchmark that waits for the
// nodes to catch up.
//
// # Native jobs and pods
//
// A machine's cpus are used by two kinds of jobs, kept apart: its native
// jobs, which the backend runs for its own users and which never pass
// through Kubernetes (the churn), and the pods created on it with
// [Fleet.Create]. Its free cpus, those a reply sends, are its cpus less
// both. The rules of the pods:
//
//  1. A pod's machine is the machine whose name is its node name's
//     suffix after the last '-', or its whole node name when it has none:
//     node "slurm-cn001" and node "cn001" are both on machine cn001.
//  2. A pod's cpus are the sum of its containers' cpu requests (the
//     limit, for a container that has no request), rounded up to whole
//     cpus ([JobOf]); init containers are not counted.
//  3. A pod is created once, by its UID: a second [Fleet.Create] of the
//     same UID returns the same job and changes nothing.
//  4. A pod whose node names no machine, or which asks more cpus than a
//     machine has, is refused at once: its job stays, [Refused], until it
//     is deleted.
//  5. Each machine runs its pods first come, first served: a pod starts
//     at once when its machine has the cpus free and no pod queues there
//     before it, and queues otherwise ([Queued]). A queued pod does not
//     start before those queued ahead of it, even when it would fit.
//  6. [Fleet.Next] replies with the fleet as it is, and then moves it on,
//     as if between pings: the native churn moves each machine (a native
//     job starts, taking from 1 to all its free cpus, or one ends, giving
//     back from 1 to all the native jobs use), then the queued pods of
//     each machine start, in order, while they fit. So a reply says what
//     was free at the ping, and a native job can take a machine before
//     the next: the race of a shared backend. A fleet where no pod was
//     ever created gives, for a seed, the fleet as New made it, then the
//     replies it gave before it ran pods.
//  7. A pod runs until it is deleted ([Fleet.Delete]); deleting it frees
//     its cpus, and the pods queued on its machine start if they fit.
//  8. [Fleet.Freeze] stops the native churn only: queued pods still start
//     when a deletion frees room.
//
// A [Config] with Unbounded set is a backend without machines to queue
// on, the sample plugin's one node or its -parts file: every pod starts
// at once, whatever its node name and cpus, and runs until deleted. It is
// the same table of jobs, without the room.
//
// [JobStatus.PodStatus] is a job as interLink's plugin API reports it
// (podapi.PodStatus): a queued job's containers are waiting (reason
// "Queued"), a running job's are running since it started, and a refused
// job's are terminated (reason "Refused", exit code 1) without having
// started.
package partsfleet
