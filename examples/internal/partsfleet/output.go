package partsfleet

import (
	"slices"
	"time"
)

// Echo is a line that a pod's first container writes (its script's
// echo: [JobOf]), when its job has run After.
type Echo struct {
	After time.Duration
	Text  string
}

// Line is a line that a container wrote: when, by the fleet's clock, and
// its text, without its newline.
type Line struct {
	Time time.Time
	Text string
}

// Output is what a container of a pod's job has written so far, and
// where the job is then (see [Fleet.Output]).
type Output struct {
	// Lines are the lines the container wrote, first first.
	Lines []Line
	// Container reports whether the pod has a container of that name.
	Container bool
	// Started reports whether the container has started: the pod has a
	// container of that name, and its job started. Until then it has no
	// log at all, as a kubelet's container that waits to start, or a job
	// whose script has not made its output file yet.
	Started bool
	// Ended reports whether the job has ended (refused, completed,
	// failed, cancelled or timed out): the container writes no more.
	Ended bool
	// State is the job's state then.
	State State
}

// Output returns what the container named container of the job of the
// pod whose UID is uid has written so far, by the fleet's clock, and
// reports whether the fleet has the job, as [Fleet.Job] finds it: the
// pod's latest, unless it was deleted. Only the first container of a pod
// writes, the lines of its script's echoes (Job.Echoes): each when the
// job has run its Echo.After, if it ran that long, since it started and
// until now or until it ended (a job cancelled or timed out before it
// reached a line never writes it). Every other container writes nothing.
func (f *Fleet) Output(uid, container string) (Output, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.advance()
	j, ok := f.jobs[uid]
	if !ok {
		return Output{}, false
	}
	return j.status.output(container, f.now()), true
}

// output is what the container named container of s has written by now.
func (s *JobStatus) output(container string, now time.Time) Output {
	out := Output{State: s.State, Ended: s.State.ended(), Container: slices.Contains(s.Containers, container)}
	if s.Started.IsZero() || !out.Container {
		return out
	}
	out.Started = true
	if container != s.Containers[0] {
		return out
	}
	until := now
	if out.Ended {
		until = s.Finished
	}
	for _, e := range s.Echoes {
		at := s.Started.Add(e.After)
		if at.After(until) {
			break
		}
		out.Lines = append(out.Lines, Line{Time: at, Text: e.Text})
	}
	return out
}
