package partsfleet

import (
	"slices"
	"strconv"
	"strings"
	"time"
)

// Job is a pod to run as a job: what the fleet needs of it.
type Job struct {
	// UID is the pod's UID, by which its job is found: one job a UID.
	UID string
	// Namespace and Name are the pod's, said back in its status.
	Namespace, Name string
	// Node is the pod's node name, which names its machine (but in a
	// Slurm fleet, where it chooses nothing).
	Node string
	// Flags are the sbatch flags of the pod's annotation
	// podapi.SlurmFlags, which in a Slurm fleet may pin the job to a
	// machine (--nodelist, -w).
	Flags string
	// CPUs is the whole cpus the job takes on its machine.
	CPUs int
	// MemoryMi is the memory, in MiB, the job takes on its machine in a
	// Slurm fleet (sbatch's --mem); another fleet counts cpus only.
	MemoryMi int64
	// TimeLimit is the job's time limit in a Slurm fleet (sbatch's
	// --time): a job that runs this long is ended, [TimedOut]; 0 is
	// none, and another fleet has none.
	TimeLimit time.Duration
	// Containers are the names of the pod's containers, each of which has
	// a status.
	Containers []string
	// Sleeps reports whether the pod's first container ends by itself
	// ([JobOf]): its job then ends Sleep after it starts, [Completed] if
	// its exit code, ExitCode, is 0 and [Failed] otherwise. Otherwise the
	// job runs until it is deleted, and ExitCode counts for nothing.
	Sleeps   bool
	Sleep    time.Duration
	ExitCode int32
	// Echoes are the lines the pod's first container writes, each when
	// the job has run its After ([JobOf]; [Fleet.Output]), first first.
	Echoes []Echo
}

// State is where a job is.
type State int

// The states of a job. A job is queued or running on its machine; it
// ends refused, completed, cancelled, timed out or failed.
const (
	Queued    State = iota + 1 // waits on its machine, or in the backend's queue, for its cpus
	Running                    // runs on its machine, until it completes or is cancelled
	Refused                    // will never run: see JobStatus.Message
	Completed                  // ended by itself (slept its time out), exit code 0 (Slurm's CD)
	Cancelled                  // was deleted, or cancelled from outside ([Fleet.Cancel]), queued or running
	TimedOut                   // ran its time limit out, in a Slurm fleet, and was ended (Slurm's TO)
	Failed                     // ended by itself with a non-zero exit code, Job.ExitCode (Slurm's F, FAILED)
)

// String is the state's name.
func (s State) String() string {
	switch s {
	case Queued:
		return "queued"
	case Running:
		return "running"
	case Refused:
		return "refused"
	case Completed:
		return "completed"
	case Cancelled:
		return "cancelled"
	case TimedOut:
		return "timed out"
	case Failed:
		return "failed"
	}
	return "State(" + strconv.Itoa(int(s)) + ")"
}

// ended reports whether a job in state s has ended: it holds no cpus
// and waits in no queue.
func (s State) ended() bool { return s != Queued && s != Running }

// The messages of a refused job, one for each reason.
const (
	RefusedNoMachine     = "no machine of the backend is the pod's node"
	RefusedTooLarge      = "the pod asks more cpus than its machine has"
	RefusedTooMuchMemory = "the pod asks more memory than its machine has"
	RefusedNoPin         = "the pod's sbatch flags pin it to no machine of the backend"
)

// JobStatus is a job as the fleet has it.
type JobStatus struct {
	Job
	// ID is the job's: "job-" and its number (job-1 is the first job the
	// fleet created), or in a Slurm fleet its number alone, as Slurm's
	// job IDs are.
	ID    string
	State State
	// Machine is the name of the job's machine: "" when no machine is
	// the pod's node, for a job queued in a Slurm fleet's own queue, or
	// in an unbounded fleet.
	Machine string
	// Created is when the fleet created the job; Started, when it started
	// running, zero until then (and for a job that ended without
	// starting); Finished, when it ended (refused, completed, cancelled,
	// timed out or failed), zero until then.
	Created, Started, Finished time.Time
	// Message says why a refused job was refused: RefusedNoMachine,
	// RefusedTooLarge, RefusedTooMuchMemory or RefusedNoPin; "" for
	// another job.
	Message string
	// Deleted reports whether the job was deleted ([Fleet.Delete]): the
	// fleet no longer finds it by its pod's UID.
	Deleted bool
	// Forgotten reports whether Slurm no longer knows the job: it ended
	// Config.MinJobAge or longer ago (never with MinJobAge 0).
	Forgotten bool
}

// job is a job of the fleet: its status, and the index of its machine,
// or -1.
type job struct {
	status  JobStatus
	machine int
	// held is set for a job placed on a stuck machine: it holds its cpus
	// there, and stays queued.
	held bool
	// ends and endsAs are when a running job that ends by itself ends,
	// and in which state: Completed or Failed at the end of its sleep, by
	// its exit code, or TimedOut at its time limit, whichever comes first
	// (see start).
	ends   time.Time
	endsAs State
}

// statusOf is j's status, for a caller: its own copy, with Forgotten as
// it is now, with f.mu held.
func (f *Fleet) statusOf(j *job) JobStatus {
	s := j.status
	s.Containers, s.Echoes = slices.Clone(s.Containers), slices.Clone(s.Echoes)
	s.Forgotten = f.config.MinJobAge > 0 && s.State.ended() && !f.now().Before(s.Finished.Add(f.config.MinJobAge))
	return s
}

// Create creates job, and returns its status: the job starts on a
// machine at once if it can, and queues or is refused otherwise (see the
// package's rules). A refused job is no job of its pod, as a job sbatch
// refuses at submission: its UID names the job it named before, if any,
// and the refused one is only among [Fleet.Jobs]. A second Create of the
// same UID changes nothing and returns the first job; in a Slurm fleet it
// creates a second job, which the UID names from then on, and the first
// runs on.
func (f *Fleet) Create(j Job) JobStatus {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.advance()
	if had, ok := f.jobs[j.UID]; ok && !f.config.Slurm {
		return f.statusOf(had)
	}
	created := f.create(j)
	if created.status.State != Refused {
		f.jobs[j.UID] = created
	}
	return f.statusOf(created)
}

// CreateUnnamed creates job as a second [Fleet.Create] in a Slurm fleet
// does, and returns its status, but its pod's UID does not name it: the
// UID names the job it named before, if any, which a status or a delete
// of the pod is about. The job runs, queues or is refused as any other,
// is among [Fleet.Jobs], and ends by itself or by [Fleet.Cancel]: as a
// job sbatch made while the Slurm plugin, told of an error, did not
// record it.
func (f *Fleet) CreateUnnamed(j Job) JobStatus {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.advance()
	return f.statusOf(f.create(j))
}

// create creates j, placing it, with f.mu held; the caller names it.
func (f *Fleet) create(j Job) *job {
	n := len(f.all) + 1
	id := "job-" + strconv.Itoa(n)
	if f.config.Slurm {
		id = strconv.Itoa(n)
	}
	j.CPUs, j.MemoryMi = max(j.CPUs, 0), max(j.MemoryMi, 0)
	j.Containers, j.Echoes = slices.Clone(j.Containers), slices.Clone(j.Echoes)
	created := &job{status: JobStatus{Job: j, ID: id, Created: f.now()}, machine: -1}
	f.all = append(f.all, created)
	f.place(created)
	return created
}

// Job returns the job of the pod whose UID is uid, and reports whether
// the fleet has it: its latest, unless it was deleted.
func (f *Fleet) Job(uid string) (JobStatus, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.advance()
	j, ok := f.jobs[uid]
	if !ok {
		return JobStatus{}, false
	}
	return f.statusOf(j), true
}

// Created returns how many jobs the fleet ever created: a pod created
// twice in a Slurm fleet counts twice.
func (f *Fleet) Created() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.all)
}

// Jobs returns every job the fleet ever created, first created first,
// as each is now: the deleted ones too (Deleted), and in a Slurm fleet
// the earlier jobs of a pod created again, which no UID names any more.
func (f *Fleet) Jobs() []JobStatus {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.advance()
	all := make([]JobStatus, len(f.all))
	for i, j := range f.all {
		all[i] = f.statusOf(j)
	}
	return all
}

// JobsOf returns every job the fleet ever created for the pod whose UID
// is uid, first created first, as [Fleet.Jobs] does.
func (f *Fleet) JobsOf(uid string) []JobStatus {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.advance()
	var of []JobStatus
	for _, j := range f.all {
		if j.status.UID == uid {
			of = append(of, f.statusOf(j))
		}
	}
	return of
}

// Delete deletes the job of the pod whose UID is uid, and reports whether
// the fleet had it. A queued or running job is cancelled: it leaves its
// queue, or gives its cpus back, and the queued jobs start if they fit.
// The job is kept among [Fleet.Jobs], Deleted. A delete of a pod that has
// no job (never created, or deleted already) is counted
// ([Fleet.UnknownDeletes]).
func (f *Fleet) Delete(uid string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.advance()
	j, ok := f.jobs[uid]
	if !ok {
		f.unknownDeletes++
		return false
	}
	delete(f.jobs, uid)
	j.status.Deleted = true
	f.cancel(j)
	return true
}

// UnknownDeletes returns how many deletes were of a pod that had no job
// (never created, or deleted already): each a delete that interLink's
// Slurm plugin answers with nothing at all.
func (f *Fleet) UnknownDeletes() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.unknownDeletes
}

// Cancel cancels the job whose ID is id from outside, as an operator's
// scancel would, and reports whether it was queued or running: it ends,
// Cancelled, its cpus free and the queued jobs start if they fit. Unlike
// [Fleet.Delete] the pod's UID still names the job, and a status says it
// was cancelled. It cancels any job of the fleet, one that no UID names
// any more too.
func (f *Fleet) Cancel(id string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.advance()
	n, err := strconv.Atoi(strings.TrimPrefix(id, "job-"))
	if err != nil || n < 1 || n > len(f.all) || f.all[n-1].status.ID != id || f.all[n-1].status.State.ended() {
		return false
	}
	f.cancel(f.all[n-1])
	return true
}
