package chainstate

import (
	"cmp"
	"context"
	"encoding/binary"
	"math"
	"runtime/metrics"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cointoolkit/coin/lib/bincode"
	"github.com/cointoolkit/coin/lib/blockfile"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/types"
	"github.com/syndtr/goleveldb/leveldb"
)

// The write cache holds what connecting blocks changed (UTXOs with their address index,
// cluster balances, the tx index, undo data, the height and header index records and the
// stats) until it is written to the database in one batch. Outside bulk mode that is at the end
// of every ProcessBlock, so each call's blocks are written atomically. In bulk mode (a node
// catching up, see SetBulk) the cache spans many blocks, as Bitcoin Core's dbcache does
// during initial block download: an output created and spent between two writes never
// touches the database, and the database takes one large batch instead of one per block.
//
// Crash safety does not depend on the cache: blocks themselves are written when they arrive
// (ProcessBlock stores a block before connecting it), and the stats record written with each
// flush names the tip of the state on disk. After a kill -9 the database holds a consistent
// state at the last flush, and Open connects the stored blocks past it again.

// Defaults of the write cache's bounds in bulk mode.
const (
	DefaultWriteCacheMiB = 256
	DefaultWriteCacheAge = time.Minute
	// DefaultWriteCacheHeapMiB bounds the bytes of the Go heap's objects (the whole
	// process's, garbage not yet collected included) while the cache grows, so that the
	// syncing node stays within 1 GiB of RSS.
	DefaultWriteCacheHeapMiB = 256
	// DefaultCacheMiB is goleveldb's block cache: it holds the index and filter blocks of
	// every table of a chain of a million transfers and the data blocks last read (at 32 MiB
	// the scale sync re-read index and filter blocks for a tenth of its CPU).
	DefaultCacheMiB = 96
)

// The heap bound reads the runtime's own figures (runtime/metrics, no stop of the world):
// the bytes of heap objects (live ones and garbage not yet swept: an upper bound of the live
// heap that needs no collection to be current) and the number of collections so far.
var heapSamples = [2]metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/gc/cycles/total:gc-cycles"}}

// heapBoundMinCache is the cache size (by its estimate) below which the heap bound writes it
// only after a collection: right after a write the heap still holds what it freed, and
// without this floor every block would be written alone until the next collection.
const heapBoundMinCache = 16 << 20

// readHeap returns the heap objects' bytes and the collection count.
func readHeap() (objects, cycles uint64) {
	s := heapSamples // a copy: concurrent chains do not share the samples' values
	metrics.Read(s[:])
	if s[0].Value.Kind() == metrics.KindUint64 {
		objects = s[0].Value.Uint64()
	}
	if s[1].Value.Kind() == metrics.KindUint64 {
		cycles = s[1].Value.Uint64()
	}
	return objects, cycles
}

// Rough memory cost of cache entries, for the size bound: map slot, key, value and pointers.
const (
	slotCacheCost  = 200
	blockCacheCost = 300
)

type cachedBlock struct {
	n      *BlockNode
	undo   []byte
	undone bool // disconnected again before the flush: its undo data is deleted
}

// writeCache holds the journaled state changed since the last flush, by key, and the blocks
// connected since then.
type writeCache struct {
	slots  map[string]*slot
	slab   []slot // backing store of slots, allocated in chunks
	gen    uint64
	blocks []cachedBlock // connected, in order
	// undone lists the undo records to delete with the next flush (blocks disconnected).
	undone [][]byte
	dirty  bool // a slot changed since the last flush
	bytes  int
	since  time.Time // when the oldest cached block connected
	// gcAtFlush is the collection count when the cache was last written (see
	// heapBoundMinCache).
	gcAtFlush uint64
}

func (wc *writeCache) empty() bool { return !wc.dirty && len(wc.blocks) == 0 && len(wc.undone) == 0 }

func (wc *writeCache) reset() {
	gen := wc.gen
	_, cycles := readHeap()
	*wc = writeCache{slots: make(map[string]*slot), gen: gen, gcAtFlush: cycles}
}

// chainView is the UTXO view of the chain for connecting blocks: cache first, then the
// database; what it reads from the database stays in the cache, so that the block's journal
// finds the entries it spends without reading them again. The caller holds c.mu for writing.
type chainView struct{ c *Chain }

func (v chainView) Utxo(op types.Outpoint) (*consensus.UtxoEntry, bool, error) {
	var k [37]byte
	utxoKeyTo(k[:], op)
	s, err := v.c.slotLocked(k[:])
	if err != nil || s.val == nil {
		return nil, false, err
	}
	return s.val.(*consensus.UtxoEntry), true, nil
}

// utxoLocked reads an unspent output through the cache (c.mu held for reading or writing).
func (c *Chain) utxoLocked(op types.Outpoint) (*consensus.UtxoEntry, bool, error) {
	var k [37]byte
	utxoKeyTo(k[:], op)
	v, err := c.getLocked(k[:])
	if err != nil || v == nil {
		return nil, false, err
	}
	return v.(*consensus.UtxoEntry), true, nil
}

func (c *Chain) clusterLocked(id types.Hash) (uint64, error) {
	v, err := c.getLocked(hashKey(pfxCluster, id))
	if err != nil || v == nil {
		return 0, err
	}
	return v.(uint64), nil
}

func (c *Chain) txLocationLocked(txid types.Hash) (TxLocation, error) {
	v, err := c.getLocked(hashKey(pfxTx, txid))
	if err != nil {
		return TxLocation{}, err
	}
	if v == nil {
		return TxLocation{}, ErrNotFound
	}
	return v.(TxLocation), nil
}

// flushItem is one dirty key with its value's bytes (vals[from:to]; absent when del).
type flushItem struct {
	key      string
	from, to int32
	del      bool
}

// indexItem is one write to a secondary index: the key lies in ikeys, the value in vals.
type indexItem struct {
	kfrom, kto int32
	from, to   int32
	del        bool
}

// flushLocked writes the write cache in one batch, after the write in the background, if
// any, has ended. On failure the cache is kept (the next flush tries again) and the database
// still holds the state of the previous flush.
func (c *Chain) flushLocked() error {
	if err := c.settleLocked(); err != nil {
		return err
	}
	wc := &c.wc
	if wc.empty() {
		return nil
	}
	batch, keep := buildBatch(wc, blockRecords(wc))
	if err := c.writeCacheBatch(wc, batch); err != nil {
		return err
	}
	c.keepClean(wc, keep)
	wc.reset()
	return nil
}

// keepClean gives the clean cache the values a write of wc stored (keep: their keys).
func (c *Chain) keepClean(wc *writeCache, keep []string) {
	for _, k := range keep {
		c.clean.keep(k, wc.slots[k])
	}
	c.clean.trim()
}

// blockRecords are the block index records of the blocks wc connected, as they are now
// (their status may change after).
func blockRecords(wc *writeCache) [][]byte {
	recs := make([][]byte, len(wc.blocks))
	for i, cb := range wc.blocks {
		recs[i] = indexRecord(cb.n)
	}
	return recs
}

// buildBatch is the database batch that writes wc (which it only reads), with the blocks'
// index records recs, and the keys of the clean cache's tables whose values the clean cache
// should take once the batch is written.
func buildBatch(wc *writeCache, recs [][]byte) (batch *leveldb.Batch, keep []string) {
	items := make([]flushItem, 0, len(wc.slots))
	idx := make([]indexItem, 0, len(wc.slots))
	vw := bincode.NewWriter(make([]byte, 0, len(wc.slots)*84))
	ikeys := make([]byte, 0, len(wc.slots)*70)
	for k, s := range wc.slots {
		if cleanTable(k[0]) && (s.dirty || !s.kept) {
			keep = append(keep, k)
		}
		if !s.dirty {
			continue
		}
		t := tables[k[0]]
		from := int32(vw.Len())
		if s.val != nil {
			t.encodeAny(vw, s.val)
		} else if s.disk == nil {
			continue // created and deleted between two flushes: never on disk
		}
		to := int32(vw.Len())
		items = append(items, flushItem{key: k, from: from, to: to, del: s.val == nil})
		// The secondary index: drop the old value's entry unless the new one has the same
		// key, then write the new one.
		var oldKey []byte
		if s.disk != nil {
			kf := len(ikeys)
			var ok bool
			if ikeys, ok = t.indexKeyAny(ikeys, k, s.disk); !ok {
				continue
			}
			oldKey = ikeys[kf:]
			if s.val == nil {
				idx = append(idx, indexItem{kfrom: int32(kf), kto: int32(len(ikeys)), del: true})
				continue
			}
		}
		if s.val == nil {
			continue
		}
		kf := len(ikeys)
		var ok bool
		if ikeys, ok = t.indexKeyAny(ikeys, k, s.val); !ok {
			continue
		}
		if oldKey != nil && string(oldKey) != string(ikeys[kf:]) {
			idx = append(idx, indexItem{kfrom: int32(kf - len(oldKey)), kto: int32(kf), del: true})
		}
		if t.indexBare() {
			idx = append(idx, indexItem{kfrom: int32(kf), kto: int32(len(ikeys))})
		} else {
			idx = append(idx, indexItem{kfrom: int32(kf), kto: int32(len(ikeys)), from: from, to: to})
		}
	}
	vals := vw.Bytes()
	// In key order: the database's in-memory table takes sorted keys about twice as fast.
	// The table keys and the index keys are sorted side by side.
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		slices.SortFunc(items, func(a, b flushItem) int { return compareKeys(a.key, b.key) })
	}()
	slices.SortFunc(idx, func(a, b indexItem) int {
		return compareKeys(ikeys[a.kfrom:a.kto], ikeys[b.kfrom:b.kto])
	})
	wg.Wait()

	const rec = 1 + 2*binary.MaxVarintLen32 // kind and two lengths
	size := 256 + len(vals)*2 + len(ikeys) + (len(items)+len(idx))*rec
	for _, it := range items {
		size += len(it.key)
	}
	// Each block's index record and undo position (storeUndo), and the rev files' end.
	size += len(wc.blocks)*(2*rec+2*33+104+blockfile.PosLen) + rec + 10
	batch = leveldb.MakeBatchWithConfig(&leveldb.BatchConfig{InitialCapacity: size, GrowLimit: math.MaxInt32})
	var key [maxKeyLen]byte
	for _, it := range items {
		k := append(key[:0], it.key...)
		if it.del {
			batch.Delete(k)
		} else {
			batch.Put(k, vals[it.from:it.to])
		}
	}
	for _, it := range idx {
		if it.del {
			batch.Delete(ikeys[it.kfrom:it.kto])
		} else {
			batch.Put(ikeys[it.kfrom:it.kto], vals[it.from:it.to])
		}
	}
	for _, k := range wc.undone {
		batch.Delete(k)
	}
	for i, cb := range wc.blocks {
		if cb.undone { // the undo data of the others goes to the rev files (storeUndo)
			batch.Delete(hashKey(pfxUndoAt, cb.n.Hash))
		}
		batch.Put(hashKey(pfxIndex, cb.n.Hash), recs[i])
	}
	return batch, keep
}

// flushDue writes the cache unless bulk mode lets it grow and it is within its bounds: its
// own size estimate (WriteCacheMiB), its age (WriteCacheAge) and the measured heap
// (WriteCacheHeapMiB).
func (c *Chain) flushDue() error {
	if !c.bulk {
		return c.flushLocked()
	}
	young := time.Since(c.wc.since) < c.opts.WriteCacheAge
	if p := c.pending; p != nil {
		// The heap still holds the pending write, so the heap bound says nothing about the
		// new cache: it may grow to pendingMaxCache while the write runs (storage fast
		// enough never makes it wait), then waits for the write, so that the two together
		// stay near the heap bound however slow the storage.
		if young && !p.ended() && c.wc.bytes < c.pendingMaxCache() {
			return nil
		}
		if err := c.settleLocked(); err != nil {
			return err
		}
	}
	if young && c.wc.bytes < c.opts.WriteCacheMiB<<20 && !c.heapOverBudget() {
		return nil
	}
	return c.flushBackground()
}

// pendingMaxCache is the size (by the cache's estimate, about a third of its heap) the write
// cache may reach while a write is pending: an eighth of the heap bound, or the cache's own
// bound without a heap bound.
func (c *Chain) pendingMaxCache() int {
	if c.opts.WriteCacheHeapMiB < 0 {
		return c.opts.WriteCacheMiB << 20
	}
	return min(c.opts.WriteCacheMiB<<20, c.opts.WriteCacheHeapMiB<<20/8)
}

// heapOverBudget reports whether the heap's objects exceed Options.WriteCacheHeapMiB while
// the cache holds at least heapBoundMinCache or a collection ran since the last write. The
// estimate per entry above misses what the cache's values, the blocks' undo data, the block
// download buffer and the rest of the process really hold; the runtime's figure counts all
// of it.
func (c *Chain) heapOverBudget() bool {
	if c.opts.WriteCacheHeapMiB < 0 {
		return false
	}
	objects, cycles := readHeap()
	// goleveldb's block cache lives on the same heap and has its own bound.
	return objects > uint64(c.opts.WriteCacheHeapMiB+max(c.opts.CacheMiB, 0))<<20 && (c.wc.bytes >= heapBoundMinCache || cycles > c.wc.gcAtFlush)
}

// SetBulk turns bulk mode on or off. In bulk mode the blocks ProcessBlock connects are written
// together, when the write cache reaches Options.WriteCacheMiB or Options.WriteCacheAge, when
// the live heap exceeds Options.WriteCacheHeapMiB, when
// a read needs the database (UtxosByAddress, UtxoSetInfo), at
// Flush, at Close, and when bulk mode ends, which writes at once. A node turns it on while it
// catches up with its peers. Reads through the Chain's methods see every connected block in
// either mode.
//
// Turning bulk mode off returns once the cache is written, but writes it as a background
// write (bgwrite.go) and waits without holding the chain's lock: the cache of a whole
// catch-up can take seconds to encode and sync on a busy disk, and meanwhile the node keeps
// answering reads (its peers' block requests, RPC) from the pending write.
func (c *Chain) SetBulk(on bool) error {
	c.lock()
	c.bulk = on
	if on {
		c.unlock()
		return nil
	}
	// A background write under way is waited for outside the lock too.
	if p := c.pending; p != nil {
		c.unlock()
		<-p.done
		c.lock()
	}
	err := c.flushBackground()
	p := c.pending
	c.unlock()
	if err != nil || p == nil {
		return err
	}
	<-p.done
	c.lock()
	defer c.unlock()
	if c.pending != p {
		return nil // retired meanwhile by a writer, which settles only a write that succeeded
	}
	return c.settleLocked()
}

// Flush writes every connected block's changes to the database now, in one atomic batch
// after the background write in progress (if any) has ended. ctx bounds the wait for the
// chain's lock (a reorganisation may hold it) and for that write, and is looked at again
// before the new one: when it ends first, Flush returns its error having written nothing
// of its own, so the database stays as it was and a later Flush (or Close) writes the same
// changes.
func (c *Chain) Flush(ctx context.Context) error {
	if err := c.lockCtx(ctx); err != nil {
		return err
	}
	defer c.unlock()
	if p := c.pending; p != nil {
		select {
		case <-p.done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return c.flushLocked()
}

// Unflushed is the number of connected blocks whose changes are not written yet.
func (c *Chain) Unflushed() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	n := len(c.wc.blocks)
	if p := c.pending; p != nil && (!p.ended() || p.err != nil) {
		n += len(p.wc.blocks)
	}
	return n
}

// rlockFlushed locks the chain for a read that scans the database, after writing the cache if
// it holds anything. It returns the unlock function. It waits for a writer (a
// reorganisation) as a writer does, on the write semaphore, so ctx ends the wait; holding
// the semaphore, it finds the cache as it will scan it, and lets it go once it has the read
// lock (readers of a clean cache still read together).
func (c *Chain) rlockFlushed(ctx context.Context) (func(), error) {
	if err := c.acquireCtx(ctx); err != nil {
		return nil, err
	}
	c.mu.RLock()
	if c.wc.empty() && c.pending == nil {
		<-c.excl
		return c.mu.RUnlock, nil
	}
	c.mu.RUnlock()
	c.mu.Lock()
	if err := c.flushLocked(); err != nil {
		c.unlock()
		return nil, err
	}
	return c.unlock, nil
}

// compareKeys orders keys as bytes, the first eight at once: keys are a prefix and a hash,
// so they rarely share them, and the sort compares one word instead of calling memcmp.
func compareKeys[K string | []byte](a, b K) int {
	if len(a) >= 8 && len(b) >= 8 {
		x := uint64(a[0])<<56 | uint64(a[1])<<48 | uint64(a[2])<<40 | uint64(a[3])<<32 |
			uint64(a[4])<<24 | uint64(a[5])<<16 | uint64(a[6])<<8 | uint64(a[7])
		y := uint64(b[0])<<56 | uint64(b[1])<<48 | uint64(b[2])<<40 | uint64(b[3])<<32 |
			uint64(b[4])<<24 | uint64(b[5])<<16 | uint64(b[6])<<8 | uint64(b[7])
		if x != y {
			return cmp.Compare(x, y)
		}
		a, b = a[8:], b[8:]
	}
	return strings.Compare(string(a), string(b))
}
