package vnode

import (
	"context"
	"sync/atomic"
)

// A Hook is a point at which a test steps a provider or a supervisor, one
// ping or one write at a time: it runs the function a test set, and does
// nothing outside tests.
type Hook struct {
	f atomic.Pointer[func(context.Context)]
}

// Set makes f run at the hook from now on.
func (h *Hook) Set(f func(context.Context)) { h.f.Store(&f) }

// Run runs the function set, if any.
func (h *Hook) Run(ctx context.Context) {
	if f := h.f.Load(); f != nil {
		(*f)(ctx)
	}
}
