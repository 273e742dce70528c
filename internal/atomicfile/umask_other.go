//go:build !unix

package atomicfile

import "io/fs"

// umask is the conventional 022 where the system has no umask to read.
var umask fs.FileMode = 0o022
