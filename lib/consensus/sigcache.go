package consensus

import (
	"runtime"
	"sync"

	"github.com/cointoolkit/coin/lib/types"
)

// SigCache remembers transactions whose every input signature verified, keyed by the hash of
// the transaction's full bincode (witness included), so a transaction checked when it entered
// the mempool, or ahead of time while an earlier block connected, is not verified again when
// its block connects. A cache belongs to one network (the magic is part of every signed
// message). It is bounded: when full, an arbitrary entry makes room. Only positive results are
// kept, so a cache can make validation faster but never more permissive: the pubkey-hash,
// value and every other rule are still checked per block.
type SigCache struct {
	mu  sync.RWMutex
	m   map[types.Hash]struct{}
	max int
}

// NewSigCache returns a cache of at most max transactions (100,000 if max ≤ 0, about 8 MB).
func NewSigCache(max int) *SigCache {
	if max <= 0 {
		max = 100_000
	}
	return &SigCache{m: make(map[types.Hash]struct{}, min(max, 4096)), max: max}
}

// SigCacheKey identifies a transaction with its witness.
func SigCacheKey(tx *types.Transaction) types.Hash { return tx.WitnessHash() }

// Has reports whether key was verified.
func (c *SigCache) Has(key types.Hash) bool {
	if c == nil {
		return false
	}
	c.mu.RLock()
	_, ok := c.m[key]
	c.mu.RUnlock()
	return ok
}

// Add records key as verified.
func (c *SigCache) Add(key types.Hash) {
	if c == nil {
		return
	}
	c.mu.Lock()
	if len(c.m) >= c.max {
		for k := range c.m {
			delete(c.m, k)
			break
		}
	}
	c.m[key] = struct{}{}
	c.mu.Unlock()
}

// Len is the number of cached transactions.
func (c *SigCache) Len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.m)
}

// Preverify checks the signatures of a block's non-coinbase transactions that the cache does
// not know, on up to workers goroutines (0: every CPU), and records the ones that verify.
// It judges nothing: a transaction that fails is simply not cached, and the block's connect
// reports the failure. Callers run it ahead of connecting, while earlier blocks connect.
func (c *SigCache) Preverify(b *types.Block, magic [4]byte, workers int) {
	if c == nil || len(b.Transactions) < 2 {
		return
	}
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	txs := b.Transactions[1:]
	var wg sync.WaitGroup
	next := make(chan *types.Transaction)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for tx := range next {
				key := SigCacheKey(tx)
				if c.Has(key) {
					continue
				}
				if VerifySignatures(tx, tx.TxID(), magic) == nil {
					c.Add(key)
				}
			}
		}()
	}
	for _, tx := range txs {
		next <- tx
	}
	close(next)
	wg.Wait()
}
