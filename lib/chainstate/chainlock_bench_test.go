package chainstate

import (
	"context"
	"testing"

	"github.com/cointoolkit/coin/lib/params"
)

// BenchmarkChainLock is what the write semaphore adds to taking the chain's lock, uncontended:
// a writer's lock and unlock (mutex alone, then with the semaphore, then with the semaphore
// under a context) and a scan's read lock on a clean cache (read lock alone, then
// rlockFlushed, which takes and drops the semaphore too).
func BenchmarkChainLock(b *testing.B) {
	ctx := context.Background()
	c, err := Open(ctx, b.TempDir(), params.Regtest, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	b.Run("write/mutex", func(b *testing.B) {
		for b.Loop() {
			c.mu.Lock()
			c.mu.Unlock()
		}
	})
	b.Run("write/semaphore", func(b *testing.B) {
		for b.Loop() {
			c.lock()
			c.unlock()
		}
	})
	b.Run("write/semaphore-ctx", func(b *testing.B) {
		for b.Loop() {
			if err := c.lockCtx(ctx); err != nil {
				b.Fatal(err)
			}
			c.unlock()
		}
	})
	b.Run("scan/rlock", func(b *testing.B) {
		for b.Loop() {
			c.mu.RLock()
			c.mu.RUnlock()
		}
	})
	b.Run("scan/rlockFlushed", func(b *testing.B) {
		for b.Loop() {
			unlock, err := c.rlockFlushed(ctx)
			if err != nil {
				b.Fatal(err)
			}
			unlock()
		}
	})
}
