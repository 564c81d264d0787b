//go:build !unix

package proctest

import "time"

// ProcessCPU is not measured here: it returns 0, and benchmarks then report no CPU time.
func ProcessCPU() time.Duration { return 0 }
