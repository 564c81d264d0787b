//go:build !linux

package sha256d

import "time"

// threadCPU is not available here; benchmarks then report wall-clock only.
func threadCPU() time.Duration { return 0 }
