// Package atomicfile writes output files so that they appear complete or
// not at all: data goes to a temporary file beside the target, which is
// renamed into place on Commit and removed on Abort.
//
// Files get the mode a plain create would give them (0666 with the process
// umask cleared), not os.CreateTemp's 0600. Every temporary file still open
// is in a process-wide registry, so a signal handler can remove them all
// (RemovePending) before the process exits: an interrupted run leaves
// neither a partial output nor a hidden temporary file.
package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// File is an output file being written.
type File struct {
	*os.File
	path string
	done bool
}

// pending holds the temporary files not yet committed or aborted, by name.
// The mutex also orders Commit against RemovePending: once RemovePending
// has run, no rename can put an output in place.
var (
	mu      sync.Mutex
	pending = map[string]bool{}
	closed  bool // set by RemovePending: no more creates or renames
)

// errStopped is returned by Create and Commit after RemovePending.
var errStopped = errors.New("the process is stopping")

// Mode is the mode new output files get: 0666 without the umask's bits.
func Mode() fs.FileMode { return 0o666 &^ umask }

// Create starts writing path. It fails at once, naming the path, if the
// directory does not exist or is not writable, or if path exists and is not
// a regular file (a device, a directory, a symbolic link: a rename would
// replace it), so a run never starts with an output it cannot write.
func Create(path string) (*File, error) {
	if fi, err := os.Lstat(path); err == nil {
		if why := NotRegular(fi); why != "" {
			return nil, fmt.Errorf("cannot write %s: %s", path, why)
		}
	}
	dir := filepath.Dir(path)
	mu.Lock()
	defer mu.Unlock()
	if closed {
		return nil, fmt.Errorf("cannot write %s: %w", path, errStopped)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return nil, fmt.Errorf("cannot write %s: %w", path, unwrapPathError(err))
	}
	if err := tmp.Chmod(Mode()); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return nil, fmt.Errorf("cannot write %s: %w", path, unwrapPathError(err))
	}
	pending[tmp.Name()] = true
	return &File{File: tmp, path: path}, nil
}

// NotRegular says why an existing file cannot be an output ("" if it can):
// a directory, a symbolic link or any other non-regular file.
func NotRegular(fi fs.FileInfo) string {
	switch m := fi.Mode(); {
	case m&fs.ModeSymlink != 0:
		return "is a symbolic link"
	case m.IsDir():
		return "is a directory"
	case !m.IsRegular():
		return "not a regular file"
	}
	return ""
}

func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}

// Path returns the final path.
func (f *File) Path() string { return f.path }

// Commit closes the temporary file and renames it to the final path.
func (f *File) Commit() error {
	if f.done {
		return nil
	}
	f.done = true
	name := f.Name()
	mu.Lock()
	defer mu.Unlock()
	delete(pending, name)
	if closed {
		f.Close()
		os.Remove(name)
		return fmt.Errorf("writing %s: %w", f.path, errStopped)
	}
	if err := f.Close(); err != nil {
		os.Remove(name)
		return fmt.Errorf("writing %s: %w", f.path, err)
	}
	if err := os.Rename(name, f.path); err != nil {
		os.Remove(name)
		return fmt.Errorf("writing %s: %w", f.path, unwrapPathError(err))
	}
	return nil
}

// Abort closes and removes the temporary file; the final path is untouched.
// It is safe to call after Commit (it then does nothing).
func (f *File) Abort() {
	if f.done {
		return
	}
	f.done = true
	name := f.Name()
	mu.Lock()
	delete(pending, name)
	mu.Unlock()
	f.Close()
	os.Remove(name)
}

// RemovePending removes every temporary file not yet committed or aborted
// and stops further Creates and Commits (they fail). A signal handler calls
// it before exiting; it returns the number of files removed.
func RemovePending() int {
	mu.Lock()
	defer mu.Unlock()
	closed = true
	n := 0
	for name := range pending {
		if os.Remove(name) == nil {
			n++
		}
		delete(pending, name)
	}
	return n
}

// WriteFile writes data to path atomically.
func WriteFile(path string, data []byte) error {
	f, err := Create(path)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Abort()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return f.Commit()
}
