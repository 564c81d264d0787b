package sha256d

import (
	"crypto/sha256"
	"encoding/binary"
	"runtime"
	"testing"
	"time"
)

// The benchmarks scan fixedHeader with an all-zero target, which is never
// met, so a scan runs to the end (its first word 0 still exercises the
// early-exit test). ns/op is nanoseconds per nonce.
//
// Besides wall-clock nonces/s they report nonces/cpu-s where the OS gives a
// thread's CPU time (Linux): on a machine shared with other work that is the
// figure to compare, as it leaves out the time the thread was not running.

// reportRate reports nonces per wall-clock second, and per CPU second of
// this thread when cpu > 0.
func reportRate(b *testing.B, nonces uint64, cpu time.Duration) {
	if s := b.Elapsed().Seconds(); s > 0 {
		b.ReportMetric(float64(nonces)/s, "nonces/s")
	}
	if cpu > 0 {
		b.ReportMetric(float64(nonces)/cpu.Seconds(), "nonces/cpu-s")
	}
}

// benchScanWith scans b.N nonces with scan on a locked thread.
func benchScanWith(b *testing.B, scan func(s *Scanner, start, count uint64) (uint64, [32]byte, bool, uint64)) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var target [32]byte
	s := NewScanner(fixedHeader(), &target)
	b.ReportAllocs()
	c0 := threadCPU()
	b.ResetTimer()
	_, _, _, hashed := scan(s, 0, uint64(b.N))
	b.StopTimer()
	cpu := threadCPU() - c0
	if c0 == 0 {
		cpu = 0
	}
	reportRate(b, hashed, cpu)
}

func BenchmarkScanPortable(b *testing.B) {
	ForcePortable(true)
	defer ForcePortable(false)
	benchScanWith(b, (*Scanner).Scan)
}

// BenchmarkScanParallel runs Scan on GOMAXPROCS goroutines, each with its
// own Scanner; nonces/s is the total.
func BenchmarkScanParallel(b *testing.B) {
	var target [32]byte
	hdr := fixedHeader()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		s := NewScanner(hdr, &target)
		var start, n uint64
		const chunk = 256
		for pb.Next() { // one nonce per iteration, scanned in chunks
			n++
			if n == chunk {
				s.Scan(start, chunk)
				start += chunk
				n = 0
			}
		}
		s.Scan(start, n)
	})
	reportRate(b, uint64(b.N), 0)
}

// BenchmarkStdlibSHA256d is crypto/sha256 on the full 88 bytes (three
// compressions per nonce, no midstate): the naive way to mine.
func BenchmarkStdlibSHA256d(b *testing.B) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	h := *fixedHeader()
	b.ReportAllocs()
	var sink byte
	c0 := threadCPU()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		binary.LittleEndian.PutUint64(h[NonceOffset:], uint64(i))
		first := sha256.Sum256(h[:])
		second := sha256.Sum256(first[:])
		sink ^= second[0]
	}
	b.StopTimer()
	cpu := threadCPU() - c0
	if c0 == 0 {
		cpu = 0
	}
	reportRate(b, uint64(b.N), cpu)
	_ = sink
}
