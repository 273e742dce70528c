package scenario

import (
	"fmt"
	"io"
	"io/fs"
	"os"
)

// MaxConfigBytes bounds a --config file. assumed: 1 MiB. The effective
// configuration of the largest scenario, as 'nisim config' prints it with a
// comment per key, is a few KiB and the largest configuration in the tree
// is 611 B, so 1 MiB leaves two orders of magnitude for hand-written
// comments; unknown keys cost 33-173 ns each (BenchmarkConfigureKeys), so a
// file at the limit is decoded or refused in milliseconds, and reading it
// costs a thousandth of MemoryBudget. A multi-GB file or /dev/zero used to
// be read whole into memory before the first key was looked at.
const MaxConfigBytes = 1 << 20

// StdinConfig is the --config path that reads standard input.
const StdinConfig = "-"

// ReadConfig returns the contents of the --config file, at most
// MaxConfigBytes. file "-" (StdinConfig) reads standard input to its end,
// so `nisim config X | nisim run X --config -` works. Any other path must
// be a regular file (after symbolic links): a directory, a device
// (/dev/zero), a FIFO or a socket is refused from its mode before it is
// opened, so a FIFO without a writer cannot block the command; /dev/stdin
// is accepted only when standard input is redirected from a regular file
// (the error of a pipe or a terminal names "-"). A larger file is refused
// from its size without reading it. Every error is one line naming the
// file: "config F: why".
func ReadConfig(file string) ([]byte, error) {
	if file == StdinConfig {
		return readLimited("standard input", os.Stdin)
	}
	fi, err := os.Stat(file)
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", file, unwrapPath(err))
	}
	switch m := fi.Mode(); {
	case m.IsDir():
		return nil, fmt.Errorf("config %s: is a directory", file)
	case !m.IsRegular():
		return nil, fmt.Errorf("config %s: not a regular file (%s); give - to read standard input", file, modeName(m))
	case fi.Size() > MaxConfigBytes:
		return nil, tooLarge(file, fmt.Sprintf("%d bytes", fi.Size()))
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", file, unwrapPath(err))
	}
	defer f.Close()
	// The file may grow between Stat and the read: read with the limit.
	return readLimited(file, f)
}

// readLimited reads r to its end, refusing more than MaxConfigBytes.
func readLimited(name string, r io.Reader) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxConfigBytes+1))
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", name, unwrapPath(err))
	}
	if len(data) > MaxConfigBytes {
		return nil, tooLarge(name, "more")
	}
	return data, nil
}

func tooLarge(name, size string) error {
	return fmt.Errorf("config %s: larger than the limit of %d bytes (%s; a configuration is a few KiB)", name, MaxConfigBytes, size)
}

// modeName says what kind of non-regular file m is.
func modeName(m fs.FileMode) string {
	switch {
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeNamedPipe != 0:
		return "a pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return "mode " + m.String()
}
