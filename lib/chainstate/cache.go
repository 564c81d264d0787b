package chainstate

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/cointoolkit/coin/lib/bincode"
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
)

// Rough memory cost of cache entries, for the size bound: map slot, key, entry and pointers.
const (
	utxoCacheCost  = 200
	txCacheCost    = 120
	blockCacheCost = 300
)

// cachedUtxo is the cached state of one outpoint.
type cachedUtxo struct {
	// e is the output; for a spent one, the entry it had on disk (its address-index key is
	// deleted with it). Entries are never modified once made.
	e     *consensus.UtxoEntry
	spent bool
	// fresh: created since the last flush and not on disk, so spending it writes nothing.
	fresh bool
}

type cachedBlock struct {
	n    *Node
	undo []byte
}

type writeCache struct {
	utxos    map[types.Outpoint]cachedUtxo
	clusters map[types.Hash]uint64 // balances of the clusters touched
	txs      map[types.Hash]TxLocation
	blocks   []cachedBlock // connected, in order
	bytes    int
	since    time.Time // when the oldest cached block connected
}

func (wc *writeCache) empty() bool { return len(wc.blocks) == 0 }

func (wc *writeCache) reset() {
	*wc = writeCache{utxos: make(map[types.Outpoint]cachedUtxo), clusters: make(map[types.Hash]uint64),
		txs: make(map[types.Hash]TxLocation)}
}

// spend records that op, holding e, was spent.
func (wc *writeCache) spend(op types.Outpoint, e *consensus.UtxoEntry) {
	if cu, ok := wc.utxos[op]; ok && cu.fresh {
		delete(wc.utxos, op)
		return
	}
	wc.utxos[op] = cachedUtxo{e: e, spent: true}
	wc.bytes += utxoCacheCost
}

// create records a new output. Over a spent output still on disk (the same outpoint again) the
// entry is written over it; it is fresh only when nothing is on disk.
func (wc *writeCache) create(op types.Outpoint, e *consensus.UtxoEntry) {
	cu, ok := wc.utxos[op]
	wc.utxos[op] = cachedUtxo{e: e, fresh: !ok || cu.fresh}
	wc.bytes += utxoCacheCost
}

// chainView is the UTXO view of the chain for connecting blocks: cache first, then the
// database. It takes no lock (the caller holds c.mu).
type chainView struct{ c *Chain }

func (v chainView) Utxo(op types.Outpoint) (*consensus.UtxoEntry, bool, error) {
	return v.c.utxoLocked(op)
}

func (c *Chain) utxoLocked(op types.Outpoint) (*consensus.UtxoEntry, bool, error) {
	if cu, ok := c.wc.utxos[op]; ok {
		if cu.spent {
			return nil, false, nil
		}
		return cu.e, true, nil
	}
	raw, err := c.db.Get(utxoKey(op), nil)
	if errors.Is(err, leveldb.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, storageErr("read utxo", err)
	}
	r := bincode.NewReader(raw)
	e := decodeEntry(r)
	if err := r.Finish(); err != nil {
		return nil, false, storageErr("decode utxo", err)
	}
	return e, true, nil
}

func (c *Chain) clusterLocked(id types.Hash) (uint64, error) {
	if v, ok := c.wc.clusters[id]; ok {
		return v, nil
	}
	raw, err := c.db.Get(hashKey(pfxCluster, id), nil)
	if errors.Is(err, leveldb.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, storageErr("read cluster", err)
	}
	r := bincode.NewReader(raw)
	v := r.U64()
	return v, storageErr("decode cluster", r.Finish())
}

func (c *Chain) txLocationLocked(txid types.Hash) (TxLocation, error) {
	if l, ok := c.wc.txs[txid]; ok {
		return l, nil
	}
	raw, err := c.db.Get(hashKey(pfxTx, txid), nil)
	if errors.Is(err, leveldb.ErrNotFound) {
		return TxLocation{}, ErrNotFound
	}
	if err != nil {
		return TxLocation{}, storageErr("read tx index", err)
	}
	l, err := decodeTxLoc(raw)
	return l, storageErr("decode tx index", err)
}

// flushLocked writes the write cache in one batch. On failure the cache is kept (the next
// flush tries again) and the database still holds the state of the previous flush.
func (c *Chain) flushLocked() error {
	wc := &c.wc
	if wc.empty() {
		return nil
	}
	batch := leveldb.MakeBatchWithConfig(&leveldb.BatchConfig{InitialCapacity: wc.batchBytes(), GrowLimit: math.MaxInt32})
	// In key order: the database's in-memory table takes sorted keys about twice as fast.
	// The three orders (UTXOs, address index, tx index) are sorted side by side.
	type item struct {
		op types.Outpoint
		cu cachedUtxo
	}
	items := make([]item, 0, len(wc.utxos))
	for op, cu := range wc.utxos {
		items = append(items, item{op, cu})
	}
	type txItem struct {
		id types.Hash
		l  TxLocation
	}
	txs := make([]txItem, 0, len(wc.txs))
	for id, l := range wc.txs {
		txs = append(txs, txItem{id, l})
	}
	indexes := func() []int32 {
		ix := make([]int32, len(items))
		for i := range ix {
			ix[i] = int32(i)
		}
		return ix
	}
	byKey, byAddr := indexes(), indexes()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		slices.SortFunc(byKey, func(a, b int32) int { return compareOutpoints(&items[a].op, &items[b].op) })
	}()
	go func() {
		defer wg.Done()
		slices.SortFunc(byAddr, func(a, b int32) int {
			x, y := &items[a], &items[b]
			if c := compareHashes(&x.cu.e.PubKeyHash, &y.cu.e.PubKeyHash); c != 0 {
				return c
			}
			return compareOutpoints(&x.op, &y.op)
		})
	}()
	slices.SortFunc(txs, func(a, b txItem) int { return compareHashes(&a.id, &b.id) })
	vals := make([]byte, 0, len(items)*84)
	at := make([]int32, len(items)+1) // item i's entry is vals[at[i]:at[i+1]]; empty when spent
	for i := range items {
		at[i] = int32(len(vals))
		if !items[i].cu.spent {
			w := bincode.NewWriter(vals)
			encodeEntry(w, items[i].cu.e)
			vals = w.Bytes()
		}
	}
	at[len(items)] = int32(len(vals))
	wg.Wait()
	var key [69]byte
	for _, i := range byKey {
		it := &items[i]
		utxoKeyTo(key[:37], it.op)
		if it.cu.spent {
			batch.Delete(key[:37])
		} else {
			batch.Put(key[:37], vals[at[i]:at[i+1]])
		}
	}
	for _, i := range byAddr {
		it := &items[i]
		addrKeyTo(key[:], it.cu.e.PubKeyHash, it.op)
		if it.cu.spent {
			batch.Delete(key[:])
		} else {
			batch.Put(key[:], vals[at[i]:at[i+1]])
		}
	}
	for id, bal := range wc.clusters {
		if bal == 0 {
			batch.Delete(hashKey(pfxCluster, id))
			continue
		}
		w := bincode.NewWriter(nil)
		w.U64(bal)
		batch.Put(hashKey(pfxCluster, id), w.Bytes())
	}
	loc := make([]byte, 0, 48)
	for i := range txs {
		key[0] = pfxTx
		copy(key[1:33], txs[i].id[:])
		l := &txs[i].l
		batch.Put(key[:33], appendTxLoc(loc[:0], l.Block, l.Height, l.Position))
	}
	for _, cb := range wc.blocks {
		batch.Put(hashKey(pfxUndo, cb.n.Hash), cb.undo)
		batch.Put(heightKey(cb.n.Height), cb.n.Hash[:])
		batch.Put(hashKey(pfxIndex, cb.n.Hash), indexRecord(cb.n))
	}
	batch.Put([]byte(keyStats), c.statsBytes(&c.stats))
	if err := c.db.Write(batch, c.wo); err != nil {
		return storageErr("write connected blocks", err)
	}
	wc.reset()
	return nil
}

// compareHashes orders hashes as bytes (first eight at once: hashes rarely share them).
func compareHashes(a, b *types.Hash) int {
	if c := cmp.Compare(binary.BigEndian.Uint64(a[:8]), binary.BigEndian.Uint64(b[:8])); c != 0 {
		return c
	}
	return bytes.Compare(a[8:], b[8:])
}

// compareOutpoints orders outpoints as their keys.
func compareOutpoints(a, b *types.Outpoint) int {
	if c := compareHashes(&a.TxID, &b.TxID); c != 0 {
		return c
	}
	return cmp.Compare(a.Index, b.Index)
}

// batchBytes is about the size of the batch flushLocked writes, so that it is allocated once
// (goleveldb grows a large batch by ever smaller steps, copying it each time).
func (wc *writeCache) batchBytes() int {
	const rec = 1 + 2*binary.MaxVarintLen32 // kind and two lengths
	n := len(wc.utxos)*(2*rec+37+69+2*84) + len(wc.clusters)*(rec+33+8) + len(wc.txs)*(rec+33+44) + 256
	for _, cb := range wc.blocks {
		n += 3*rec + 33 + len(cb.undo) + 9 + 32 + 33 + 104
	}
	return n
}

// flushDue writes the cache unless bulk mode lets it grow and it is within its bounds.
func (c *Chain) flushDue() error {
	if c.bulk && c.wc.bytes < c.opts.WriteCacheMiB<<20 && time.Since(c.wc.since) < c.opts.WriteCacheAge {
		return nil
	}
	return c.flushLocked()
}

// SetBulk turns bulk mode on or off. In bulk mode the blocks ProcessBlock connects are written
// together, when the write cache reaches Options.WriteCacheMiB or Options.WriteCacheAge, when
// a block is disconnected, when a read needs the database (UtxosByAddress, UtxoSetInfo), at
// Flush, at Close, and when bulk mode ends, which writes at once. A node turns it on while it
// catches up with its peers. Reads through the Chain's methods see every connected block in
// either mode.
func (c *Chain) SetBulk(on bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.bulk = on
	if on {
		return nil
	}
	return c.flushLocked()
}

// Flush writes every connected block's changes to the database now.
func (c *Chain) Flush() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.flushLocked()
}

// Unflushed is the number of connected blocks whose changes are not written yet.
func (c *Chain) Unflushed() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.wc.blocks)
}

// rlockFlushed locks the chain for a read that scans the database, after writing the cache if
// it holds anything. It returns the unlock function.
func (c *Chain) rlockFlushed() (func(), error) {
	c.mu.RLock()
	if c.wc.empty() {
		return c.mu.RUnlock, nil
	}
	c.mu.RUnlock()
	c.mu.Lock()
	if err := c.flushLocked(); err != nil {
		c.mu.Unlock()
		return nil, err
	}
	return c.mu.Unlock, nil
}
