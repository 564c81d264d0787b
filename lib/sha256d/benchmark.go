package sha256d

import (
	"sync"
	"time"
)

// fixedHeader is the header Benchmark hashes: byte i is i*7+3.
func fixedHeader() *[HeaderSize]byte {
	var h [HeaderSize]byte
	for i := range h {
		h[i] = byte(i*7 + 3)
	}
	return &h
}

// Benchmark hashes a fixed header on threads goroutines (at least one) for
// about d and returns each goroutine's rate and their sum, in nonces per
// second of wall-clock time. It uses the kernel KernelName reports. Every
// goroutine has its own Scanner and nonce range and a target no hash meets
// in practice, so the scans never stop early. It is meant for a miner's
// --benchmark mode.
func Benchmark(threads int, d time.Duration) (perThread []float64, total float64) {
	if threads < 1 {
		threads = 1
	}
	hdr := fixedHeader()
	var target [32]byte // met only by an all-zero hash
	perThread = make([]float64, threads)
	// Chunks of 2^14 nonces take about 0.6 ms with the SHA-NI kernel and
	// 8 ms with the portable one: small against d, large against a call.
	const chunk = 1 << 14
	var wg sync.WaitGroup
	start := time.Now()
	deadline := start.Add(d)
	for t := 0; t < threads; t++ {
		wg.Add(1)
		go func(t int) {
			defer wg.Done()
			s := NewScanner(hdr, &target)
			nonce := uint64(t) << 48
			var n uint64
			for {
				_, _, _, hashed := s.Scan(nonce+n, chunk)
				n += hashed
				if !time.Now().Before(deadline) {
					break
				}
			}
			perThread[t] = float64(n) / time.Since(start).Seconds()
		}(t)
	}
	wg.Wait()
	for _, r := range perThread {
		total += r
	}
	return perThread, total
}
