package vnode

import (
	"context"
	"sync"

	"github.com/pingnode/pingnode/nodeapply"
	"github.com/pingnode/pingnode/pingstatus"
)

// A Feed is how a supervisor hands a node its pings: the newest waits
// until the node's ping loop takes it, replacing any older one (each
// ping says all there is of the node: one missed changes nothing the
// next does not). It outlives the node's runs.
type Feed struct {
	mu   sync.Mutex
	next *fed
	// run is closed while a run of the node takes its pings (attach),
	// and replaced by an open one when the run ends (detach).
	run  chan struct{}
	wake chan struct{}
}

// fed is a ping handed to a node, with its reply's warnings that the node
// says (a node of its own's; a part's node's are its supervisor's), and
// done, closed once the node has stepped it, or will not.
type fed struct {
	ping     nodeapply.Ping
	warnings []pingstatus.Warning
	done     chan struct{}
}

func newFeed() *Feed { return &Feed{run: make(chan struct{}), wake: make(chan struct{}, 1)} }

// Put hands ping on, with warnings; it never waits. The channel it
// returns is closed once the node has stepped the ping, or once it will
// not: a newer ping replaced it, or the run of the node that would have
// taken it ended.
func (f *Feed) Put(ping nodeapply.Ping, warnings []pingstatus.Warning) <-chan struct{} {
	next := &fed{ping: ping, warnings: warnings, done: make(chan struct{})}
	f.mu.Lock()
	if f.next != nil {
		close(f.next.done) // replaced
	}
	f.next = next
	f.mu.Unlock()
	select {
	case f.wake <- struct{}{}:
	default: // awake already
	}
	return next.done
}

// peek returns the ping waiting to be taken, and leaves it there; false
// if none waits.
func (f *Feed) peek() (nodeapply.Ping, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.next == nil {
		return nodeapply.Ping{}, false
	}
	return f.next.ping, true
}

// Running returns a channel that is closed while a run of the node
// takes its pings.
func (f *Feed) Running() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.run
}

// attach says that a run of the node takes the pings from now on, and
// detach that it takes no more: the ping waiting then is dropped, and
// the next run waits for a ping of its own, not one from before it.
func (f *Feed) attach() {
	f.mu.Lock()
	defer f.mu.Unlock()
	close(f.run)
}

func (f *Feed) detach() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.run = make(chan struct{})
	if f.next != nil {
		close(f.next.done)
		f.next = nil
	}
}

// take returns the next ping of p's node, counted in p's counters, and
// what to call once it has been stepped; false when ctx ended first.
func (f *Feed) take(ctx context.Context, p *Node) (next fed, stepped func(), ok bool) {
	for {
		f.mu.Lock()
		n := f.next
		f.next = nil
		f.mu.Unlock()
		if n != nil {
			p.Count.Pings.Add(1)
			if !n.ping.Reached() {
				p.Count.Failures.Add(1)
			}
			return *n, func() { close(n.done) }, true
		}
		select {
		case <-f.wake:
		case <-ctx.Done():
			return fed{}, nil, false
		}
	}
}
