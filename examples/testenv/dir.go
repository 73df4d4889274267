package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Marker is the name of the file testenv writes into the folder it works
// in. Its presence is what allows a later run to empty that folder.
const Marker = ".pingnode-testenv"

const markerText = "This folder belongs to pingnode's testenv (examples/testenv).\n" +
	"testenv deletes everything else in it when it starts.\n"

// UnsafeDirError reports a -dir that testenv refuses to use, because
// emptying it could delete files that are not testenv's.
type UnsafeDirError struct {
	Dir    string
	Reason string
}

func (e *UnsafeDirError) Error() string {
	return fmt.Sprintf("refusing -dir %s: %s", e.Dir, e.Reason)
}

// prepareDir makes dir an empty folder that holds only the marker, and
// reports an [*UnsafeDirError] when it cannot do so safely:
//
//  1. A missing folder is created (with its parents).
//  2. An existing empty folder is used.
//  3. An existing folder with the marker is emptied, the marker kept.
//  4. Anything else (a folder with other files and no marker, or something
//     that is not a folder) is refused and left untouched.
//
// Nothing outside dir is removed: its entries are removed one by one, and
// a symbolic link among them is removed, not followed. dir itself stays.
func prepareDir(dir string) error {
	info, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return err
		}
		return writeMarker(dir)
	case err != nil:
		return err
	case !info.IsDir():
		return &UnsafeDirError{Dir: dir, Reason: "it is not a folder"}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	if len(entries) == 0 {
		return writeMarker(dir)
	}
	marker, err := os.Lstat(filepath.Join(dir, Marker))
	if err != nil || !marker.Mode().IsRegular() {
		return &UnsafeDirError{Dir: dir, Reason: fmt.Sprintf(
			"it is not empty and has no %s file, so it was not made by testenv; name a new or empty folder", Marker)}
	}
	for _, e := range entries {
		if e.Name() == Marker {
			continue
		}
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

func writeMarker(dir string) error {
	return os.WriteFile(filepath.Join(dir, Marker), []byte(markerText), 0o600)
}

// reuseDir accepts dir as it is when testenv made it (it carries the
// marker), for a restart on the same data; anything else is refused.
func reuseDir(dir string) error {
	marker, err := os.Lstat(filepath.Join(dir, Marker))
	if err != nil || !marker.Mode().IsRegular() {
		return &UnsafeDirError{Dir: dir, Reason: fmt.Sprintf("-keep needs a folder that testenv made, with its %s file", Marker)}
	}
	return nil
}
