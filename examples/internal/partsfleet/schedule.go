package partsfleet

import (
	"slices"
	"strings"
	"time"
)

// place starts j, just created, on a machine if it can, and queues or
// refuses it otherwise, with f.mu held: on its node's machine, or in a
// Slurm fleet on the machine its flags pin it to, or, pinned to none, on
// the first machine that has its cpus free.
func (f *Fleet) place(j *job) {
	s := &j.status
	now := s.Created
	if f.config.Unbounded {
		f.start(j, -1, now)
		return
	}
	var i int
	var ok bool
	if !f.config.Slurm {
		if i, ok = f.machineOf(s.Node); !ok {
			f.refuse(j, RefusedNoMachine)
			return
		}
	} else if name, pinned := pinOf(s.Flags); pinned {
		if i, ok = f.byName[name]; !ok {
			f.refuse(j, RefusedNoPin)
			return
		}
	} else { // pinned to none: the backend chooses, or queues it in its own queue
		if s.CPUs > f.config.CPUs || len(f.names) == 0 {
			f.refuse(j, RefusedTooLarge)
			return
		}
		s.State = Queued
		f.waiting = append(f.waiting, j)
		f.startQueued(now)
		return
	}
	s.Machine = f.names[i]
	if s.CPUs > f.config.CPUs {
		f.refuse(j, RefusedTooLarge)
		return
	}
	s.State, j.machine = Queued, i
	f.queues[i] = append(f.queues[i], j)
	f.startQueued(now)
}

// refuse ends j, just created, refused for the reason message.
func (f *Fleet) refuse(j *job, message string) {
	j.status.State, j.status.Message, j.status.Finished = Refused, message, j.status.Created
}

// machineOf returns the index of the machine that node names: the one
// whose name is node's suffix after its last '-', or node itself.
func (f *Fleet) machineOf(node string) (int, bool) {
	i, ok := f.byName[node[strings.LastIndexByte(node, '-')+1:]]
	return i, ok
}

// pinOf returns the machine that the sbatch flags pin a job to, and
// reports whether they pin it: the value of --nodelist=name,
// --nodelist name, -w name or -w=name, the last one given. The value is
// a machine's name as Slurm knows it, cn001, and nothing else: a node
// name (vk-cn001), a list or a range of machines pin the job to no
// machine of the backend.
func pinOf(flags string) (string, bool) {
	words := strings.Fields(flags)
	name, pinned := "", false
	for i, w := range words {
		flag, value, hasValue := strings.Cut(w, "=")
		if flag != "--nodelist" && flag != "-w" {
			continue
		}
		if !hasValue {
			if i+1 == len(words) {
				value = "" // a flag without its value: pinned to nothing
			} else {
				value = words[i+1]
			}
		}
		name, pinned = value, true
	}
	return name, pinned
}

// startQueued starts the queued jobs that fit, at the time at, with f.mu
// held: on each machine, in name order, the jobs queued on it, first
// come first, while the first fits in its free cpus; then the jobs of
// the backend's own queue (Slurm), first come first, each on the first
// machine, in name order, that has its cpus free, while the first has
// one.
func (f *Fleet) startQueued(at time.Time) {
	for i, q := range f.queues {
		n := 0
		for ; n < len(q) && q[n].status.CPUs <= f.free[i]; n++ {
			f.start(q[n], i, at)
		}
		if n > 0 {
			f.queues[i] = slices.Delete(q, 0, n)
		}
	}
	n := 0
	for ; n < len(f.waiting); n++ {
		i := slices.IndexFunc(f.free, func(free int) bool { return f.waiting[n].status.CPUs <= free })
		if i < 0 {
			break
		}
		f.start(f.waiting[n], i, at)
	}
	if n > 0 {
		f.waiting = slices.Delete(f.waiting, 0, n)
	}
}

// start starts j on machine i, or on none (-1) in an unbounded fleet, at
// the time at, with f.mu held; the caller takes it off its queue. On a
// stuck machine j only holds its cpus, and stays queued.
func (f *Fleet) start(j *job, i int, at time.Time) {
	s := &j.status
	if i >= 0 {
		f.free[i] -= s.CPUs
		s.Machine = f.names[i]
	}
	j.machine = i
	if i >= 0 && f.stuck[i] {
		j.held, s.State = true, Queued
		return
	}
	s.State, s.Started = Running, at
	if s.Sleeps { // after those that end before it or with it
		end := j.end()
		k, _ := slices.BinarySearchFunc(f.timed, end, func(t *job, end time.Time) int {
			if t.end().After(end) {
				return 1
			}
			return -1
		})
		f.timed = slices.Insert(f.timed, k, j)
	}
}

// end is when j, running, completes, if it sleeps.
func (j *job) end() time.Time { return j.status.Started.Add(j.status.Sleep) }

// stop ends j, queued or running, in state, at the time at, with f.mu
// held: it leaves its queue, or gives its cpus back. The caller starts
// the queued jobs. f.timed stays ordered by the instant each job ends.
func (f *Fleet) stop(j *job, state State, at time.Time) {
	s := &j.status
	switch {
	case j.held:
		f.free[j.machine] += s.CPUs
	case s.State == Queued && j.machine >= 0:
		f.queues[j.machine] = slices.DeleteFunc(f.queues[j.machine], func(q *job) bool { return q == j })
	case s.State == Queued:
		f.waiting = slices.DeleteFunc(f.waiting, func(q *job) bool { return q == j })
	case s.State == Running:
		if j.machine >= 0 {
			f.free[j.machine] += s.CPUs
		}
		f.timed = slices.DeleteFunc(f.timed, func(t *job) bool { return t == j })
	}
	s.State, s.Finished = state, at
}

// cancel cancels j now, if it is queued or running, and starts the
// queued jobs that then fit, with f.mu held.
func (f *Fleet) cancel(j *job) {
	if j.status.State.ended() {
		return
	}
	now := f.now()
	f.stop(j, Cancelled, now)
	f.startQueued(now)
}

// advance completes the running jobs whose sleep is over by the fleet's
// clock, with f.mu held, each at the instant it was over, earliest
// first (of two at the same instant, the first started): its cpus free
// then, and the queued jobs that fit start then, so that one of them
// that sleeps may be over too.
func (f *Fleet) advance() {
	now := f.now()
	for len(f.timed) > 0 && !f.timed[0].end().After(now) {
		first := f.timed[0]
		end := first.end()
		f.stop(first, Completed, end)
		f.startQueued(end)
	}
}
