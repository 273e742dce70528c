//go:build !unix

package regress

import "time"

// CPUTime is not measured on this platform.
func CPUTime() (time.Duration, bool) { return 0, false }
