//go:build unix

package regress

import (
	"syscall"
	"time"
)

// CPUTime returns the processor time (user and system) the process used so far.
func CPUTime() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
