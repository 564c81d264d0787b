package consensus

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// VerifyParallel checks all signatures on up to workers goroutines (0 means every CPU) and
// returns the error of the lowest-indexed failing check, so the result does not depend on
// scheduling.
func VerifyParallel(checks []SigCheck, workers int) error {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	if workers > len(checks)/16 {
		workers = len(checks) / 16
	}
	if workers <= 1 {
		for i := range checks {
			if err := checks[i].Verify(); err != nil {
				return err
			}
		}
		return nil
	}
	var (
		next    atomic.Int64
		failAt  atomic.Int64
		wg      sync.WaitGroup
		mu      sync.Mutex
		failErr error
	)
	failAt.Store(int64(len(checks)))
	const chunk = 8
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				start := int(next.Add(chunk)) - chunk
				if start >= len(checks) || int64(start) > failAt.Load() {
					return
				}
				end := min(start+chunk, len(checks))
				for i := start; i < end; i++ {
					if err := checks[i].Verify(); err != nil {
						mu.Lock()
						if int64(i) < failAt.Load() {
							failAt.Store(int64(i))
							failErr = err
						}
						mu.Unlock()
						break
					}
				}
			}
		}()
	}
	wg.Wait()
	return failErr
}
