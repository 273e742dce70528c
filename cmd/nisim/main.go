// Command nisim runs nisim's scenarios and its waveform and trace tools.
//
//	nisim list
//	nisim run SCENARIO [--vcd F] [--trace F] [--seed N] [--set key=value]... [--config FILE]
//	nisim config SCENARIO
//	nisim vcd lint FILE
//	nisim trace diff A B
//
// Exit status: 0 on success, 1 when a run fails a check or a checker, or
// two traces differ, or a VCD has errors, 2 for bad usage or bad input
// (unknown scenario or key, unreadable or malformed file, unwritable
// output). Errors are one line on standard error.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// exitError carries an exit status with its message.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }

func usageErr(format string, args ...any) error {
	return &exitError{code: 2, err: fmt.Errorf(format, args...)}
}

func inputErr(err error) error { return &exitError{code: 2, err: err} }

func failErr(err error) error { return &exitError{code: 1, err: err} }

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run executes the command line and returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	cmd := newRoot(stdout, stderr)
	cmd.SetArgs(args)
	err := cmd.Execute()
	if err == nil {
		return 0
	}
	code := 2 // cobra's own errors are usage errors
	var ee *exitError
	if errors.As(err, &ee) {
		code = ee.code
	}
	fmt.Fprintf(stderr, "nisim: %s\n", oneLine(err.Error()))
	return code
}

// oneLine keeps the first line of a message; details go elsewhere.
func oneLine(s string) string {
	for i, c := range s {
		if c == '\n' {
			return s[:i]
		}
	}
	return s
}
