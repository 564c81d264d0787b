package chainstate

import (
	"runtime"
	"sync"

	"github.com/cointoolkit/coin/lib/types"
)

// Two ways the chain avoids waiting for database reads while it connects blocks.
//
// The clean cache keeps, across writes of the write cache, what the database holds for the
// keys of the small tables nearly every transaction reads: the cluster balances and the
// cluster forest's nodes and names (protocol §8; a spend looks up its address's cluster).
// A write of the write cache used to forget them, so the next blocks read the same few
// thousand keys from the database again, each a walk through goleveldb's levels. Only a
// successful write fills the clean cache, with exactly the values it wrote (or found and left
// unchanged), and only the write cache changes these tables on disk, so the clean cache is
// never stale. Its values are immutable (integers, hashes and a struct by value).
//
// fetchInputs reads the outputs a block spends on several goroutines before the block is
// checked (as Bitcoin Core's input fetcher does), instead of one after the other while the
// rules run: goleveldb and the coin cache (coincache.go) serve concurrent reads, and with a
// large UTXO set most spent outputs are stored rather than in the write cache.

// cleanCacheMax bounds the clean cache's entries (about 130 bytes each on the heap); beyond
// it a quarter of the entries are dropped.
const cleanCacheMax = 1 << 18

// cleanTable tells whether the clean cache keeps keys of the table with prefix pfx.
func cleanTable(pfx byte) bool {
	return pfx == pfxCluster || pfx == pfxClusterNode || pfx == pfxClusterName
}

// cleanCache maps a key to its value on disk (nil: absent).
type cleanCache map[string]any

// keep records what the write cache's slot for key holds once it is written.
func (cc *cleanCache) keep(key string, s *slot) {
	if *cc == nil {
		*cc = make(cleanCache)
	}
	(*cc)[key] = s.val
}

// trim drops entries beyond cleanCacheMax (arbitrary ones: map order).
func (cc cleanCache) trim() {
	if len(cc) <= cleanCacheMax {
		return
	}
	for k := range cc {
		delete(cc, k)
		if len(cc) <= cleanCacheMax*3/4 {
			return
		}
	}
}

// fetchParallelMin is the number of outputs to read below which fetchInputs leaves the reads
// to the rules (one goroutine's start costs about as much as a few reads from memory), and
// fetchPerWorker the fewest reads worth a goroutine of their own. A variable for tests.
var fetchParallelMin = 32

const fetchPerWorker = 16

// fetchInputs reads the outputs b spends that neither the write cache nor the pending write
// holds from the coin cache or the database, on up to workers goroutines (0: every CPU),
// into the write cache. Outputs created in the block (inBlock) are skipped: they are not
// stored. A read that fails fails the fetch and
// caches nothing.
func (c *Chain) fetchInputs(b *types.Block, inBlock func(types.Hash) bool, workers int) error {
	var keys [][37]byte
	var k [37]byte
	for _, tx := range b.Transactions {
		if tx.IsCoinbase() {
			continue
		}
		for i := range tx.Inputs {
			in := &tx.Inputs[i]
			if inBlock(in.PrevTxID) {
				continue
			}
			utxoKeyTo(k[:], in.Outpoint())
			if c.wc.slots[string(k[:])] == nil && c.pendingSlot(string(k[:])) == nil {
				keys = append(keys, k)
			}
		}
	}
	if len(keys) < fetchParallelMin {
		return nil
	}
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = max(1, min(workers, len(keys)/fetchPerWorker))
	vals := make([]any, len(keys))
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(keys); i += workers {
				v, err := c.readDB(keys[i][:])
				if err != nil {
					errs[w] = err
					return
				}
				vals[i] = v
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	for i := range keys {
		if c.wc.slots[string(keys[i][:])] == nil { // an output spent twice is read once
			s := c.wc.newSlot(keys[i][:])
			s.val, s.disk = vals[i], vals[i]
		}
	}
	return nil
}
