//go:build unix

package atomicfile

import (
	"io/fs"
	"syscall"
)

// umask is the process's file mode creation mask, read once at start: Umask
// sets it, so it is set straight back to the value read.
var umask = func() fs.FileMode {
	m := syscall.Umask(0o022)
	syscall.Umask(m)
	return fs.FileMode(m) & fs.ModePerm
}()
