package main

import (
	"context"
	"sync/atomic"
)

// hook is a point at which a test steps a provider or a supervisor, one
// ping or one write at a time: it runs the function a test set, and does
// nothing outside tests.
type hook struct {
	f atomic.Pointer[func(context.Context)]
}

// set makes f run at the hook from now on.
func (h *hook) set(f func(context.Context)) { h.f.Store(&f) }

// run runs the function set, if any.
func (h *hook) run(ctx context.Context) {
	if f := h.f.Load(); f != nil {
		(*f)(ctx)
	}
}
