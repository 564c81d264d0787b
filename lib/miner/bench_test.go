package miner

import (
	"context"
	"fmt"
	"sync"
	"testing"
)

// BenchmarkHashrate measures the miner's hashing threads (chunked nonce space, shared
// counter, lib/sha256d kernel) on the fixed benchmark header: b.N nonces (rounded up to
// whole chunks) shared by 1 and 2 threads. ns/op is wall-clock nanoseconds per nonce for
// all threads together; hashes/s is the total rate per wall-clock second and hashes/cpu-s
// the sum of each thread's hashes per second of its CPU time (what the threads do when they
// have a core: the basis `openssl speed` uses too).
//
//	go test -run '^$' -bench BenchmarkHashrate -benchtime 5s ./lib/miner
func BenchmarkHashrate(b *testing.B) {
	for _, threads := range []int{1, 2} {
		b.Run(fmt.Sprintf("threads=%d", threads), func(b *testing.B) {
			chunks := (uint64(b.N) + ChunkSize - 1) / ChunkSize
			w := &Work{Header: BenchmarkHeader()}
			h := newHasher(threads)
			h.measureCPU = true
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var wg sync.WaitGroup
			b.ReportAllocs()
			b.ResetTimer()
			h.board.set(newJob(1, w, nil, w.Header.Timestamp, chunks))
			h.run(ctx, &wg)
			<-h.exhausted
			h.board.close()
			wg.Wait()
			b.StopTimer()
			if s := b.Elapsed().Seconds(); s > 0 {
				b.ReportMetric(float64(h.total())/s, "hashes/s")
			}
			if h.cpuOK.Load() {
				r := BenchResult{ThreadHashes: h.perThread(), ThreadCPU: h.cpu}
				b.ReportMetric(r.CPURate(), "hashes/cpu-s")
			}
		})
	}
}
