// Command nisim runs nisim's scenarios and its waveform and trace tools.
//
//	nisim list
//	nisim run SCENARIO [--vcd F] [--trace F] [--seed N] [--set key=value]... [--config FILE]
//	nisim config SCENARIO
//	nisim vcd lint FILE
//	nisim trace diff A B
//
// Exit status: 0 on success, 1 when a run fails a check or a checker
// (a run that measured nothing fails its "measured" check), stops before
// it can report, or two traces differ, or a VCD has errors, 2 for bad
// usage or bad input (unknown command, scenario or key, unreadable or
// malformed file, a directory or a file that is not a trace, unwritable
// output). Errors are one line on standard error: "nisim: ", the
// subcommand path, the message. Interrupted by SIGINT or
// SIGTERM, it removes the temporary files of unfinished outputs and exits
// 130 or 143 (128 plus the signal number, as a shell reports it).
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/nisim/nisim/internal/atomicfile"
	"github.com/spf13/cobra"
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
	stopOnSignal()
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// stopOnSignal makes SIGINT and SIGTERM remove every output still being
// written (atomicfile.RemovePending: no partial file, no hidden temporary)
// and exit 130 or 143. The simulation is a serial engine with no stop
// request between events, so the handler goroutine ends the process itself;
// atomicfile's lock keeps a Commit from renaming after the removal.
func stopOnSignal() {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		sig := <-ch
		atomicfile.RemovePending()
		code := 130 // 128 + SIGINT (2)
		if sig == syscall.SIGTERM {
			code = 143 // 128 + SIGTERM (15)
		}
		fmt.Fprintf(os.Stderr, "nisim: interrupted (%v): unfinished outputs removed\n", sig)
		os.Exit(code)
	}()
}

// run executes the command line and returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	root := newRoot(stdout, stderr)
	root.SetArgs(args)
	cmd, err := root.ExecuteC()
	if err == nil {
		return 0
	}
	code := 2 // cobra's own errors are usage errors
	var ee *exitError
	if errors.As(err, &ee) {
		code = ee.code
	}
	fmt.Fprintln(stderr, errorLine(cmd, err))
	return code
}

// errorLine is the one line an error prints: one "nisim:" prefix, then the
// path of the subcommand that failed (none for the root), then the first
// line of the message.
func errorLine(cmd *cobra.Command, err error) string {
	prefix := "nisim: "
	if cmd != nil && cmd.HasParent() {
		prefix += strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" ") + ": "
	}
	return prefix + oneLine(err.Error())
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
