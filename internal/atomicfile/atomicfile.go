// Package atomicfile writes output files so that they appear complete or
// not at all: data goes to a temporary file beside the target, which is
// renamed into place on Commit and removed on Abort.
package atomicfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// File is an output file being written.
type File struct {
	*os.File
	path string
	done bool
}

// Create starts writing path. It fails at once, naming the path, if the
// directory does not exist or is not writable, so a run never starts with an
// output it cannot write.
func Create(path string) (*File, error) {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return nil, fmt.Errorf("cannot write %s: %w", path, unwrapPathError(err))
	}
	return &File{File: tmp, path: path}, nil
}

func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
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
	f.Close()
	os.Remove(name)
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
