package miner

import (
	"time"

	"golang.org/x/sys/unix"
)

// threadCPUTime is the CPU time the calling OS thread has used.
func threadCPUTime() (time.Duration, bool) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}
