package consensus

import (
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
// not know, in batches on up to workers goroutines (0: every CPU), and records the ones that
// verify. It judges nothing: a transaction that fails is simply not cached, and the block's
// connect reports the failure. Callers run it ahead of connecting, while earlier blocks connect.
func (c *SigCache) Preverify(b *types.Block, magic [4]byte, workers int) {
	if c == nil || len(b.Transactions) < 2 {
		return
	}
	c.PreverifyTransactions(b.Transactions[1:], nil, magic, workers)
}

// PreverifyTransactions is Preverify for any transactions (txids[i] the id of txs[i], or nil
// to compute them): those the cache does not know are verified together in batches and the
// ones that verify are recorded. It returns how many were verified here.
func (c *SigCache) PreverifyTransactions(txs []*types.Transaction, txids []types.Hash, magic [4]byte, workers int) int {
	if c == nil || len(txs) == 0 {
		return 0
	}
	todo := make([]*types.Transaction, 0, len(txs))
	ids := make([]types.Hash, 0, len(txs))
	keys := make([]types.Hash, 0, len(txs))
	for i, tx := range txs {
		key := SigCacheKey(tx)
		if c.Has(key) {
			continue
		}
		todo = append(todo, tx)
		keys = append(keys, key)
		if txids != nil {
			ids = append(ids, txids[i])
		} else {
			ids = append(ids, tx.TxID())
		}
	}
	errs := VerifyTransactions(todo, ids, magic, workers)
	for i, key := range keys {
		if errs == nil || errs[i] == nil {
			c.Add(key)
		}
	}
	return len(todo)
}
