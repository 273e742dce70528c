// Package outpath checks the output paths of a command before it starts
// work, so that a long simulation never ends in an output it cannot write or
// in one that destroys something: a device or symbolic link replaced by a
// rename, an input overwritten, two outputs in one file.
package outpath

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/nisim/nisim/internal/atomicfile"
)

// Stdout is the path that names standard output.
const Stdout = "-"

// Path is one file a command reads or writes, with the flag that named it
// (an argument's name for positional ones). An empty Path is not used.
type Path struct {
	Flag, Path string
}

// pathErr formats the one-line error of an output: "--vcd X: why".
func pathErr(p Path, format string, args ...any) error {
	return fmt.Errorf("%s %s: %s", p.Flag, p.Path, fmt.Sprintf(format, args...))
}

type resolved struct {
	p   Path
	abs string
	fi  fs.FileInfo // nil when the file does not exist
}

// Check validates outs against each other and against ins, then creates the
// missing parent directories of every output (mode 0777 less the umask). It
// refuses, with one line naming the flag and the path:
//   - an existing output that is not a regular file: a directory, a symbolic
//     link (a rename would replace the link, not write its target), a
//     device, a pipe;
//   - the same file named by two outputs (cleaned absolute paths, and
//     os.SameFile for files that exist, which catches hard links);
//   - an output that is the same file as an input;
//   - "-" (standard output) named by two outputs.
//
// Nothing is created when a check fails.
func Check(outs, ins []Path) error {
	var rs []resolved
	var stdout *Path
	for i := range outs {
		o := outs[i]
		if o.Path == "" {
			continue
		}
		if o.Path == Stdout {
			if stdout != nil {
				return pathErr(o, "standard output is already the output of %s", stdout.Flag)
			}
			stdout = &outs[i]
			continue
		}
		r, err := resolve(o)
		if err != nil {
			return err
		}
		if r.fi != nil {
			if why := atomicfile.NotRegular(r.fi); why != "" {
				switch filepath.Clean(o.Path) {
				case "/dev/stdout", "/dev/fd/1", "/proc/self/fd/1":
					why += " (for standard output, use -)"
				}
				return pathErr(o, "%s", why)
			}
		}
		for _, q := range rs {
			if same(r, q) {
				return pathErr(o, "the same file as %s %s", q.p.Flag, q.p.Path)
			}
		}
		rs = append(rs, r)
	}
	for _, in := range ins {
		if in.Path == "" || in.Path == Stdout {
			continue
		}
		ri, err := resolve(in)
		if err != nil {
			return err
		}
		if ri.fi != nil {
			// An input that is a symbolic link is read through it.
			if fi, err := os.Stat(in.Path); err == nil {
				ri.fi = fi
			}
		}
		for _, r := range rs {
			if same(r, ri) {
				return pathErr(r.p, "the same file as the input %s %s", in.Flag, in.Path)
			}
		}
	}
	for _, r := range rs {
		dir := filepath.Dir(r.abs)
		if err := os.MkdirAll(dir, 0o777); err != nil {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = fmt.Errorf("%s: %w", pe.Path, pe.Err)
			}
			return pathErr(r.p, "cannot create its directory: %v", err)
		}
	}
	return nil
}

func resolve(p Path) (resolved, error) {
	abs, err := filepath.Abs(p.Path)
	if err != nil {
		return resolved{}, pathErr(p, "%v", err)
	}
	r := resolved{p: p, abs: filepath.Clean(abs)}
	fi, err := os.Lstat(p.Path)
	switch {
	case err == nil:
		r.fi = fi
	case errors.Is(err, fs.ErrNotExist):
	default:
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return resolved{}, pathErr(p, "%v", err)
	}
	return r, nil
}

func same(a, b resolved) bool {
	if a.abs == b.abs {
		return true
	}
	return a.fi != nil && b.fi != nil && os.SameFile(a.fi, b.fi)
}
