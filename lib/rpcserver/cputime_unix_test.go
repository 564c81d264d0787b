//go:build unix

package rpcserver_test

import (
	"syscall"
	"time"
)

// processCPU is the CPU time (user + system) the test process has used so far. The machines
// that run the benchmarks are shared, so CPU time per operation is reported next to wall time.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
