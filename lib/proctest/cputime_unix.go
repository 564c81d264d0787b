//go:build unix

package proctest

import (
	"syscall"
	"time"
)

// ProcessCPU is the CPU time (user + system) the calling process has used so far. The
// machines that run the benchmarks are shared, so benchmarks report CPU time next to wall
// time.
func ProcessCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
