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
//     node "slurm-cn001" and node "cn001" are both on machine cn001. (In
//     a Slurm fleet, its placement below instead.)
//  2. A pod's cpus are the sum of its containers' cpu requests (the
//     limit, for a container that has no request), rounded up to whole
//     cpus ([JobOf]); init containers are not counted. (In a Slurm
//     fleet, the size its script asks instead, below.)
//  3. A pod is created once, by its UID: a second [Fleet.Create] of the
//     same UID returns the same job and changes nothing. (In a Slurm
//     fleet, its second job below instead.)
//  4. A pod whose node names no machine, or which asks more cpus than a
//     machine has, is refused at once, as sbatch refuses a job at
//     submission: the job is [Refused] among [Fleet.Jobs], and no job of
//     its pod, whose UID names the job it named before, if any. (In a
//     Slurm fleet, its placement below says which are refused.)
//  5. Each machine runs its pods first come, first served: a pod starts
//     at once when its machine has the cpus free and no pod queues there
//     before it, and queues otherwise ([Queued]). A queued pod does not
//     start before those queued ahead of it, even when it would fit.
//  6. [Fleet.Next] replies with the fleet as it is, and then moves it on,
//     as if between pings: the native churn moves each machine (a native
//     job starts, taking from 1 to all its free cpus, or one ends, giving
//     back from 1 to all the native jobs use), then the queued pods
//     start, in order, while they fit: on each machine, in name order,
//     those queued on it, then those of the backend's own queue (a Slurm fleet's).
//     So a reply says what was free at the ping, and a native job can
//     take a machine before the next: the race of a shared backend. A
//     fleet where no pod was ever created gives, for a seed, the fleet as
//     New made it, then the replies it gave before it ran pods.
//     [Fleet.NextSum] is the same reply as one sum, the fleet's free cpus
//     and memory ([Fleet.Sum]), as interLink's Slurm plugin sends it:
//     "0" when the fleet is full.
//  7. A pod runs until it ends by itself (one that sleeps or exits,
//     below) or is deleted ([Fleet.Delete]); deleting it cancels it: a
//     running pod frees its cpus, a queued one leaves its queue, and the
//     queued pods start if they fit. The fleet then no longer finds the job by the pod's UID,
//     and a delete of a pod that has no job (never created, or deleted
//     already) is counted ([Fleet.UnknownDeletes]): interLink's Slurm
//     plugin answers none. [Fleet.Cancel] cancels a job from outside, by
//     its ID, as an operator's scancel: it ends [Cancelled] the same way,
//     but its pod's UID still finds it.
//  8. A pod whose first container only sleeps N seconds (its command
//     then args are sleep N, or a shell's -c with the string "sleep N":
//     [JobOf]) completes N seconds after it started ([Completed], exit
//     code 0), and frees its cpus then. A pod whose first container is a
//     shell's -c with the string "exit N", N from 0 to 255, or "sleep S;
//     exit N" or "sleep S && exit N" ([JobOf]) ends S seconds after it
//     started (at once for exit N alone, as one that sleeps 0) with the
//     exit code N, so that a test can run a Kubernetes Job whose pods
//     fail: [Completed] for 0, and [Failed] for any other, as Slurm ends
//     a job whose script exited with a code other than 0 (state F,
//     FAILED), its status carrying the code (Job.ExitCode). A failed pod
//     frees its cpus as a completed one does. More generally, a pod
//     whose first container is a shell's -c with a script of steps
//     separated by ";" or "&&", each sleep N, echo and plain words, or a
//     last exit N ([JobOf]: sh -c "echo hello; sleep 2; echo bye; exit
//     3"), ends when it has slept all its sleeps, one after the other,
//     with the exit code N (0 without an exit), and writes each echo's
//     line when it has slept the sleeps before it: at the instant its
//     job started plus those sleeps, by the fleet's clock, if the job is
//     still running then (or ends at that instant). [Fleet.Output] says
//     what a container has written so far, by the pod's UID: its first
//     container's lines; any other container writes none. A job that is
//     cancelled or times out before a line never writes it, and a job
//     that never started wrote nothing. The fleet has no timer:
//     each call (Next, Parts, Create, Job, Delete…) first ends, at the
//     fleet's clock (Config.Now), every such pod whose time is over (and
//     in a Slurm fleet every pod past its time limit, below), earliest
//     first, each at the instant it was over, and the queued pods that
//     then fit start at that instant. Any other pod runs until deleted.
//  9. In a Slurm fleet (Config.Slurm) the node name chooses nothing:
//     Slurm places the job. A pod is pinned to a machine only by its
//     annotation podapi.SlurmFlags, sbatch flags, with --nodelist=name,
//     --nodelist name, -w name or -w=name, name a machine as the fleet
//     names them (cn004; a node name such as vk-cn004 names none). A
//     pinned pod queues on its machine, first come, first served, and is refused if
//     no machine has that name ([RefusedNoPin]) or if it asks more cpus
//     than a machine has, as sbatch refuses them. A pod pinned to no
//     machine starts at once on the first machine, in name order, where
//     it fits (its cpus free, and its memory, as a job takes it below), when none queues
//     in the backend's own queue before it; otherwise it waits in that
//     one queue, first come first served, and starts on the first
//     machine, in name order, where it fits once it is first; it is
//     refused if it asks more cpus than a machine has.
//  10. In a Slurm fleet a pod is not created once: a second
//     [Fleet.Create] of the same UID creates a second job, as the Slurm
//     plugin, whose table of jobs by UID is overwritten, does. The UID
//     names the newest job from then on ([Fleet.Job], [Fleet.Delete]);
//     the earlier one keeps running or queuing, holding its cpus, until
//     it completes or is cancelled by its ID. [Fleet.Created] counts
//     every job ever created, and [Fleet.Jobs] and [Fleet.JobsOf] list
//     them, so that a test can say "one job a pod". Job IDs are numbers
//     ("1", "2"), as Slurm's are, where another fleet's are job-1, job-2.
//  11. [Fleet.Freeze] stops the native churn only: queued pods still
//     start when a deletion, a cancel, a completion or a failure frees
//     room.
//  12. A stuck machine (Config.Stuck) looks free and never starts
//     anything, as a machine whose daemon is broken: it replies with
//     every cpu free, runs no native job, and takes the pods placed on
//     it as any machine does, each holding its cpus there, but none
//     starts, a sleeping one neither: each stays [Queued] until it is
//     deleted, which gives its cpus back.
//  13. In a Slurm fleet a job takes its memory (Job.MemoryMi) on its
//     machine as well as its cpus: it starts, or is placed, only where
//     both fit, and is refused when it asks more memory than a machine
//     has ([RefusedTooMuchMemory]). A machine's free memory, which the
//     sum sends, is its memory less its native jobs' (in proportion of
//     their cpus) and less its jobs', as Slurm counts allocated memory;
//     so a machine whose cpus are all taken may still have memory free.
//     A native job never takes memory that jobs hold: it takes fewer
//     cpus. The sample plugin sizes a pod's job as interLink's Slurm
//     plugin writes its script, and sbatch reads it ([SlurmScriptOf]):
//     its cpus and memory from its containers' largest limits, its time
//     limit from its sbatch flags.
//  14. In a Slurm fleet a running job with a time limit (Job.TimeLimit)
//     that has run it out, before it slept its time out if it sleeps,
//     ends [TimedOut] at that instant, its cpus and memory free, as
//     Slurm ends a job at its limit (state TO). A job that sleeps no
//     longer than its limit completes.
//  15. Slurm forgets an ended job Config.MinJobAge after it ended: from
//     then on [JobStatus.Forgotten] reports it, as squeue no longer
//     knows the job. 0 never forgets.
//  16. [Fleet.CreateUnnamed] makes a job as a second create in a Slurm
//     fleet does, but its pod's UID goes on naming the job it named
//     before, or none: a job sbatch made while it wrote a warning, which
//     the Slurm plugin takes for an error and does not record. A status
//     or a delete of the pod is about the earlier job, or finds none;
//     the unnamed job runs, queues or is refused as any, is among
//     [Fleet.Jobs], and ends by itself or by [Fleet.Cancel].
//
// A [Config] with Unbounded set is a backend without machines to queue
// on, the sample plugin's one node or its -parts file: every pod starts
// at once, whatever its node name, its pin and its cpus, and runs until
// it ends by itself (a sleep, or an exit) or is deleted. It is the same table of jobs,
// without the room; with Slurm set too, a second create is a second job,
// a job ends at its time limit, and Slurm forgets ended jobs.
//
// [JobStatus.PodStatus] is a job as interLink's plugin API reports it
// (podapi.PodStatus): a queued job's containers are waiting (reason
// "Queued"), a running job's are running since it started, a refused
// job's (which no pod's UID names) are terminated (reason "Refused", exit
// code 1) without having started, a completed job's are terminated
// (reason "Completed", exit code 0) since it started, a failed job's are
// terminated (reason "Error", as a kubelet says a container that exited
// with a code other than 0, and the job's exit code) since it started, a
// cancelled job's are terminated (reason "Cancelled", exit code 15),
// started or not, and a timed-out job's are terminated with the Slurm
// plugin's reason ("SlurmJobTimeout"), its message and exit code 15. The
// sample plugin's -slurm says them as interLink's Slurm plugin does, from
// what its status refreshes saw.
package partsfleet
