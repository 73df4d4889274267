// Package logcount is a log handler for the provider's tests, which count
// what a log says: how often a line was logged is how the tests hold the
// provider to saying a thing once, when it begins or changes, and not at
// every ping.
package logcount

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"sync/atomic"
)

// Handler writes the records of Info and above to the handler it wraps,
// and counts the records of any level whose message holds its text (the
// ResourceSlice controller's syncs of a pool are at its verbosity 5).
type Handler struct {
	slog.Handler
	text string
	n    *atomic.Int64
}

// New returns a Handler that writes text lines to w and counts the
// records whose message holds text.
func New(w io.Writer, text string) Handler {
	return Wrap(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelInfo}), text)
}

// Wrap returns a Handler that writes to h and counts the records whose
// message holds text.
func Wrap(h slog.Handler, text string) Handler {
	return Handler{Handler: h, text: text, n: new(atomic.Int64)}
}

// Count is how many records held the text so far, of every handler the
// Handler's WithAttrs and WithGroup returned too.
func (h Handler) Count() int64 { return h.n.Load() }

func (h Handler) Enabled(context.Context, slog.Level) bool { return true }

func (h Handler) Handle(ctx context.Context, r slog.Record) error {
	if strings.Contains(r.Message, h.text) {
		h.n.Add(1)
	}
	if r.Level < slog.LevelInfo {
		return nil
	}
	return h.Handler.Handle(ctx, r)
}

func (h Handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	h.Handler = h.Handler.WithAttrs(attrs)
	return h
}

func (h Handler) WithGroup(name string) slog.Handler {
	h.Handler = h.Handler.WithGroup(name)
	return h
}
