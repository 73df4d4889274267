package partsfleet

import (
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Job is a pod to run as a job: what the fleet needs of it.
type Job struct {
	// UID is the pod's UID, by which its job is found: one job a UID.
	UID string
	// Namespace and Name are the pod's, said back in its status.
	Namespace, Name string
	// Node is the pod's node name, which names its machine.
	Node string
	// CPUs is the whole cpus the job takes on its machine.
	CPUs int
	// Containers are the names of the pod's containers, each of which has
	// a status.
	Containers []string
}

// JobOf is the job of pod: its UID, namespace, name and node name, its
// containers' names, and its cpus, the sum of its containers' cpu
// requests (a limit for a container that has none), rounded up to whole
// cpus. A sum over [MaxCPUs] is MaxCPUs+1, more than any machine has.
func JobOf(pod *corev1.Pod) Job {
	job := Job{
		UID:        string(pod.UID),
		Namespace:  pod.Namespace,
		Name:       pod.Name,
		Node:       pod.Spec.NodeName,
		Containers: make([]string, len(pod.Spec.Containers)),
	}
	var sum resource.Quantity
	for i, c := range pod.Spec.Containers {
		job.Containers[i] = c.Name
		q, ok := c.Resources.Requests[corev1.ResourceCPU]
		if !ok {
			q, ok = c.Resources.Limits[corev1.ResourceCPU]
		}
		if ok && q.Sign() > 0 {
			sum.Add(q)
		}
	}
	if sum.Cmp(*resource.NewQuantity(MaxCPUs, resource.DecimalSI)) > 0 {
		job.CPUs = MaxCPUs + 1
	} else {
		job.CPUs = int(sum.Value()) // Value rounds up
	}
	return job
}

// State is where a job is.
type State int

// The states of a job. A job is queued or running on its machine, or
// refused; it leaves the fleet only when it is deleted.
const (
	Queued  State = iota + 1 // waits on its machine for its cpus
	Running                  // runs on its machine, until deleted
	Refused                  // will never run: see JobStatus.Message
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
	}
	return "State(" + strconv.Itoa(int(s)) + ")"
}

// The messages of a refused job, one for each reason.
const (
	RefusedNoMachine = "no machine of the backend is the pod's node"
	RefusedTooLarge  = "the pod asks more cpus than its machine has"
)

// JobStatus is a job as the fleet has it.
type JobStatus struct {
	Job
	// ID is the job's, "job-" and its number: job-1 is the first job the
	// fleet created.
	ID    string
	State State
	// Machine is the name of the job's machine: "" when no machine is
	// the pod's node, or in an unbounded fleet.
	Machine string
	// Created is when the fleet created the job (and refused it, for a
	// refused job); Started, when it started running, zero until then.
	Created, Started time.Time
	// Message says why a refused job was refused: RefusedNoMachine or
	// RefusedTooLarge; "" for another job.
	Message string
}

// job is a job of the fleet: its status, and the index of its machine,
// or -1.
type job struct {
	status  JobStatus
	machine int
}

// Create creates job, and returns its ID: the job starts on its machine
// at once if it can, and queues or is refused otherwise (see the
// package's rules). A second Create of the same UID changes nothing and
// returns the first job's ID.
func (f *Fleet) Create(j Job) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if had, ok := f.jobs[j.UID]; ok {
		return had.status.ID
	}
	f.last++
	j.CPUs = max(j.CPUs, 0)
	j.Containers = slices.Clone(j.Containers)
	created := &job{status: JobStatus{Job: j, ID: "job-" + strconv.Itoa(f.last), Created: f.now()}, machine: -1}
	f.jobs[j.UID] = created
	s := &created.status
	i, ok := f.machineOf(j.Node)
	switch {
	case f.config.Unbounded:
		s.State, s.Started = Running, s.Created
	case !ok:
		s.State, s.Message = Refused, RefusedNoMachine
	case j.CPUs > f.config.CPUs:
		s.State, s.Message, s.Machine = Refused, RefusedTooLarge, f.names[i]
	default:
		s.State, s.Machine, created.machine = Queued, f.names[i], i
		f.queues[i] = append(f.queues[i], created)
		f.startQueued(i)
	}
	return s.ID
}

// Job returns the job of the pod whose UID is uid, and reports whether
// the fleet has it.
func (f *Fleet) Job(uid string) (JobStatus, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	j, ok := f.jobs[uid]
	if !ok {
		return JobStatus{}, false
	}
	s := j.status
	s.Containers = slices.Clone(s.Containers)
	return s, true
}

// Delete deletes the job of the pod whose UID is uid, and reports whether
// the fleet had it. A running job gives its cpus back, and the jobs
// queued on its machine start if they fit.
func (f *Fleet) Delete(uid string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	j, ok := f.jobs[uid]
	if !ok {
		return false
	}
	delete(f.jobs, uid)
	i := j.machine
	switch {
	case i < 0:
		return true
	case j.status.State == Running:
		f.free[i] += j.status.CPUs
	case j.status.State == Queued:
		f.queues[i] = slices.DeleteFunc(f.queues[i], func(q *job) bool { return q == j })
	}
	f.startQueued(i)
	return true
}

// machineOf returns the index of the machine that node names: the one
// whose name is node's suffix after its last '-', or node itself.
func (f *Fleet) machineOf(node string) (int, bool) {
	i, ok := f.byName[node[strings.LastIndexByte(node, '-')+1:]]
	return i, ok
}

// startQueued starts the jobs queued on machine i, first come first,
// while the first fits in its free cpus, with f.mu held.
func (f *Fleet) startQueued(i int) {
	q := f.queues[i]
	n := 0
	for ; n < len(q) && q[n].status.CPUs <= f.free[i]; n++ {
		f.free[i] -= q[n].status.CPUs
		q[n].status.State, q[n].status.Started = Running, f.now()
	}
	if n > 0 {
		f.queues[i] = slices.Delete(q, 0, n)
	}
}
