package pingclient

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
)

// watched is a value made from files that may be rewritten while the
// client lives (a token refreshed, a certificate rotated): the files are
// read again at each ping, and when they changed and make a good value,
// it replaces the one in use. Files that cannot be read or parsed (half
// written, deleted, a key that does not match its certificate yet) leave
// the value in use as it is, and the problem is logged once, until the
// files are good again.
type watched[T any] struct {
	// what names the value in messages: "the bearer token".
	what string
	// flags and paths are the files' flags and paths, in the order parse
	// takes them.
	flags, paths []string
	// parse makes the value from the files' contents. Its errors must
	// not hold the contents; one about a single file is a fileProblem.
	parse func(contents [][]byte) (T, error)

	value    T
	contents [][]byte // the files as they were when value was made
	problem  string   // the problem last logged; "" after a good read
}

// load reads and parses the files, at start: an error names the flag.
func (w *watched[T]) load() error {
	contents, err := w.read()
	if err != nil {
		return err
	}
	value, err := w.parse(contents)
	if err != nil {
		return w.named(err)
	}
	w.value, w.contents = value, contents
	return nil
}

// fileProblem is a problem of one of the files, by its index in paths;
// a parse error of another kind is about them all.
type fileProblem struct {
	index int
	err   error
}

func (p fileProblem) Error() string { return p.err.Error() }
func (p fileProblem) Unwrap() error { return p.err }

// named returns err of parse with the flags of the files it is about.
func (w *watched[T]) named(err error) error {
	if p, ok := errors.AsType[fileProblem](err); ok && p.index >= 0 && p.index < len(w.flags) {
		return fmt.Errorf("%s: %w", w.flags[p.index], p.err)
	}
	return fmt.Errorf("%s: %w", strings.Join(w.flags, ", "), err)
}

// refresh reads the files again, and reports whether the value changed.
// A problem is logged once, with what is done instead.
func (w *watched[T]) refresh(log *slog.Logger) bool {
	contents, err := w.read()
	if err == nil && w.same(contents) {
		w.problem = ""
		return false
	}
	var value T
	if err == nil {
		value, err = w.parse(contents)
		if err != nil {
			err = w.named(err)
		}
	}
	if err != nil {
		if problem := err.Error(); problem != w.problem {
			w.problem = problem
			log.Warn("cannot reload "+w.what+"; the last good one stays in use", "problem", problem)
		}
		return false
	}
	w.value, w.contents, w.problem = value, contents, ""
	log.Info("reloaded "+w.what, "files", strings.Join(w.paths, ", "))
	return true
}

// read reads the files; an error names the flag of the file.
func (w *watched[T]) read() ([][]byte, error) {
	contents := make([][]byte, len(w.paths))
	for i, path := range w.paths {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", w.flags[i], err)
		}
		contents[i] = b
	}
	return contents, nil
}

// same reports whether contents are those of the value in use.
func (w *watched[T]) same(contents [][]byte) bool {
	for i := range contents {
		if !bytes.Equal(contents[i], w.contents[i]) {
			return false
		}
	}
	return true
}
