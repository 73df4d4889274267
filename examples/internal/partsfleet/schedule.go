package partsfleet

import (
	"slices"
	"strings"
	"time"
)

// place starts j, just created, on a machine if it can, and queues or
// refuses it otherwise, with f.mu held: on its node's machine, or in a
// Slurm fleet on the machine its flags pin it to, or, pinned to none, on
// the first machine where it fits ([Fleet.fits]).
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
		why := f.tooLarge(s)
		if len(f.names) == 0 {
			why = RefusedTooLarge
		}
		if why != "" {
			f.refuse(j, why)
			return
		}
		s.State = Queued
		f.waiting = append(f.waiting, j)
		f.startQueued(now)
		return
	}
	s.Machine = f.names[i]
	if why := f.tooLarge(s); why != "" {
		f.refuse(j, why)
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

// startQueued starts the queued jobs that fit, at the time at, with f.mu
// held: on each machine, in name order, the jobs queued on it, first
// come first, while the first fits; then the jobs of the backend's own
// queue (Slurm), first come first, each on the first machine, in name
// order, where it fits, while the first fits on one.
func (f *Fleet) startQueued(at time.Time) {
	for i, q := range f.queues {
		n := 0
		for ; n < len(q) && f.fits(q[n], i); n++ {
			f.start(q[n], i, at)
		}
		if n > 0 {
			f.queues[i] = slices.Delete(q, 0, n)
		}
	}
	n := 0
	for ; n < len(f.waiting); n++ {
		i := 0
		for i < len(f.free) && !f.fits(f.waiting[n], i) {
			i++
		}
		if i == len(f.free) {
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
// stuck machine j only holds its cpus and memory, and stays queued. A
// job that ends by itself joins f.timed: one that sleeps completes at
// the end of its sleep, or fails there if it then exits with a code
// other than 0, and in a Slurm fleet one with a time limit shorter than
// its sleep, or that does not sleep, times out at its limit.
func (f *Fleet) start(j *job, i int, at time.Time) {
	s := &j.status
	if i >= 0 {
		f.free[i] -= s.CPUs
		f.podMemory[i] += s.MemoryMi
		s.Machine = f.names[i]
	}
	j.machine = i
	if i >= 0 && f.stuck[i] {
		j.held, s.State = true, Queued
		return
	}
	s.State, s.Started = Running, at
	j.endsAs = 0
	if s.Sleeps {
		j.ends, j.endsAs = at.Add(s.Sleep), Completed
		if s.ExitCode != 0 {
			j.endsAs = Failed
		}
	}
	if f.config.Slurm && s.TimeLimit > 0 && (!s.Sleeps || s.Sleep > s.TimeLimit) {
		j.ends, j.endsAs = at.Add(s.TimeLimit), TimedOut
	}
	if j.endsAs != 0 { // after those that end before it or with it
		k, _ := slices.BinarySearchFunc(f.timed, j.ends, func(t *job, end time.Time) int {
			if t.ends.After(end) {
				return 1
			}
			return -1
		})
		f.timed = slices.Insert(f.timed, k, j)
	}
}

// stop ends j, queued or running, in state, at the time at, with f.mu
// held: it leaves its queue, or gives its cpus and memory back. The
// caller starts the queued jobs. f.timed stays ordered by the instant
// each job ends.
func (f *Fleet) stop(j *job, state State, at time.Time) {
	s := &j.status
	switch {
	case j.held:
		f.free[j.machine] += s.CPUs
		f.podMemory[j.machine] -= s.MemoryMi
	case s.State == Queued && j.machine >= 0:
		f.queues[j.machine] = slices.DeleteFunc(f.queues[j.machine], func(q *job) bool { return q == j })
	case s.State == Queued:
		f.waiting = slices.DeleteFunc(f.waiting, func(q *job) bool { return q == j })
	case s.State == Running:
		if j.machine >= 0 {
			f.free[j.machine] += s.CPUs
			f.podMemory[j.machine] -= s.MemoryMi
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

// advance ends the running jobs whose sleep or time limit is over by the
// fleet's clock, with f.mu held, each at the instant it was over,
// completed, failed or timed out, earliest first (of two at the same
// instant, the first started): its cpus free then, and the queued jobs
// that fit start then, so that one of them may be over too.
func (f *Fleet) advance() {
	now := f.now()
	for len(f.timed) > 0 && !f.timed[0].ends.After(now) {
		first := f.timed[0]
		f.stop(first, first.endsAs, first.ends)
		f.startQueued(first.ends)
	}
}
