package consensus

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// VerifyParallel checks all signatures in batches (batch.go) on up to workers goroutines
// (0 means every CPU) and returns the error of the lowest-indexed invalid signature, so the
// result does not depend on scheduling.
func VerifyParallel(checks []SigCheck, workers int) error {
	for _, err := range verifyChecks(checks, workers, false) {
		if err != nil {
			return err
		}
	}
	return nil
}

// batchSize splits n checks for workers goroutines: as few batches of at most BatchSize as
// n needs, or more, smaller ones (of at least minParallelBatch) so that every worker has one;
// the batches are of nearly equal size.
func batchSize(n, workers int) int {
	nb := (n + BatchSize - 1) / BatchSize
	if workers > nb {
		nb = min(workers, n/minParallelBatch)
	}
	nb = max(nb, 1)
	return (n + nb - 1) / nb
}

// verifyChecks verifies checks in batches on up to workers goroutines (0: every CPU). It
// returns nil when every signature is valid; otherwise a slice as long as checks with the error
// of each invalid signature found. With all it finds every invalid signature; without, only
// the lowest-indexed one is sure to be there (batches after it are skipped).
func verifyChecks(checks []SigCheck, workers int, all bool) []error {
	n := len(checks)
	if n == 0 {
		return nil
	}
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	size := batchSize(n, workers)
	batches := (n + size - 1) / size
	workers = min(workers, batches)

	var (
		mu   sync.Mutex
		errs []error
	)
	badAt := func(start int) func(int, error) {
		return func(i int, err error) {
			mu.Lock()
			if errs == nil {
				errs = make([]error, n)
			}
			errs[start+i] = err
			mu.Unlock()
		}
	}
	if workers <= 1 {
		for start := 0; start < n; start += size {
			end := min(start+size, n)
			if !verifyOne(checks[start:end], all, badAt(start)) && !all {
				break
			}
		}
		return errs
	}
	var (
		next   atomic.Int64
		failAt atomic.Int64 // the lowest invalid index found so far (n: none)
		wg     sync.WaitGroup
	)
	failAt.Store(int64(n))
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				start := int(next.Add(1)-1) * size
				// Batches are taken in index order: once one starts past a known failure,
				// so do all the rest.
				if start >= n || (!all && int64(start) > failAt.Load()) {
					return
				}
				end := min(start+size, n)
				verifyOne(checks[start:end], all, func(i int, err error) {
					badAt(start)(i, err)
					for {
						cur := failAt.Load()
						if int64(start+i) >= cur || failAt.CompareAndSwap(cur, int64(start+i)) {
							break
						}
					}
				})
			}
		}()
	}
	wg.Wait()
	return errs
}
