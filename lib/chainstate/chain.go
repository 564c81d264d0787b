package chainstate

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"math/big"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/syndtr/goleveldb/leveldb"
	"github.com/syndtr/goleveldb/leveldb/filter"
	"github.com/syndtr/goleveldb/leveldb/opt"
	"github.com/syndtr/goleveldb/leveldb/util"

	"github.com/cointoolkit/coin/lib/bincode"
	"github.com/cointoolkit/coin/lib/blockfile"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/dblock"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/pow"
	"github.com/cointoolkit/coin/lib/types"
)

// ErrLocked is returned by Open when another process holds the database.
var ErrLocked = errors.New("data directory is in use by another process")

// StorageError is a failure of the database, as opposed to an invalid block.
type StorageError struct {
	Op  string
	Err error
}

func (e *StorageError) Error() string { return "storage: " + e.Op + ": " + e.Err.Error() }
func (e *StorageError) Unwrap() error { return e.Err }

// storageErr translates goleveldb errors in one place; corruption is logged here
// (corruption.go).
func storageErr(op string, err error) error {
	if err == nil {
		return nil
	}
	noteCorruption(op, err)
	return &StorageError{Op: op, Err: err}
}

// BlockNode is one block in the block index (btcd's blockNode). Hash, Header, Height, Work
// and Parent never change and may be read at any time; status, size and txCount change under
// the chain's lock and are unexported so that nothing outside this package can read them
// without it: readers take a HeaderState, a snapshot made under the lock.
//
// A header-only node holds a header accepted by ProcessBlockHeader whose block is not stored
// yet. It lives in memory only, is never on the main chain nor a candidate tip, and its
// children are header-only too (a block is stored only on a stored parent). Its status is
// StatusStored until it or an ancestor fails, and size and txCount are zero until its block
// fills it in. NodeByHash and NodeStatus do not report header-only nodes; HeaderState does.
//
// A BlockNode is kept small (176 bytes, one allocation, no pointers to other heap objects but
// nodes): the index holds one per block of the chain, docs/chain.md ("Scale") projects it
// to millions, and TestIndexBytesPerBlock bounds it. So the work is an inline 256-bit value,
// the children a list through the nodes, and the header leaves out its previous-block hash,
// which is Parent's (BlockHeader puts it back).
type BlockNode struct {
	Hash   types.Hash
	Work   pow.Uint256 // cumulative work up to and including this block
	Header NodeHeader  // the header but its PrevHash (see BlockHeader)
	Parent *BlockNode
	Height uint64
	seq    uint64 // arrival order, for the first-seen tie-break
	// kid is the latest child in the index (header-only ones included), sib the next older
	// child of Parent.
	kid, sib   *BlockNode
	size       uint32
	txCount    uint32
	status     Status
	headerOnly bool // the block is not stored (see above)
}

// NodeHeader is a block header without its previous-block hash: a BlockNode's Parent has it.
type NodeHeader struct {
	MerkleRoot       types.Hash
	Timestamp        uint64
	Nonce            uint64
	Version          uint32
	DifficultyTarget uint32
}

// BlockHeader is the block's header, its PrevHash the parent's hash (zero for the genesis
// block, which has no parent).
func (n *BlockNode) BlockHeader() types.BlockHeader {
	h := types.BlockHeader{Version: n.Header.Version, MerkleRoot: n.Header.MerkleRoot,
		Timestamp: n.Header.Timestamp, DifficultyTarget: n.Header.DifficultyTarget, Nonce: n.Header.Nonce}
	if n.Parent != nil {
		h.PrevHash = n.Parent.Hash
	}
	return h
}

// setHeader sets n's header from h, but its PrevHash (n's Parent holds it).
func (n *BlockNode) setHeader(h *types.BlockHeader) {
	n.Header = NodeHeader{MerkleRoot: h.MerkleRoot, Timestamp: h.Timestamp, Nonce: h.Nonce,
		Version: h.Version, DifficultyTarget: h.DifficultyTarget}
}

// WorkBig is n's cumulative work as a new *big.Int.
func (n *BlockNode) WorkBig() *big.Int { return n.Work.Big() }

// Options tune a Chain.
type Options struct {
	// Now is the clock for the future-drift rule; nil means time.Now.
	Now func() time.Time
	// SigWorkers verify signatures and read the outputs a block spends (0: every CPU).
	SigWorkers int
	// Sync makes every batch fsync (survives power loss, not only process crashes).
	Sync bool
	// CacheMiB is the leveldb block cache size (default DefaultCacheMiB; negative: none).
	// The write cache's heap bound (WriteCacheHeapMiB) comes on top of it.
	CacheMiB int
	// Values, when set, replaces protocol §8's decay as the effective-value model (tools and
	// tests that want another model); nil is the consensus rule.
	Values consensus.ValueModel
	// SigCache, when set, skips the signature checks of transactions verified before.
	SigCache *consensus.SigCache
	// CoinCacheMiB is the size of the cache of stored unspent outputs (coincache.go; default
	// DefaultCoinCacheMiB, negative: none). It lives outside the Go heap, beside the block
	// cache and the write cache.
	CoinCacheMiB int
	// WriteCacheMiB and WriteCacheAge bound the write cache in bulk mode (see SetBulk):
	// defaults DefaultWriteCacheMiB and DefaultWriteCacheAge.
	WriteCacheMiB int
	WriteCacheAge time.Duration
	// WriteCacheHeapMiB bounds the write cache in bulk mode by the measured heap: the cache
	// is written once the bytes of the process's Go heap objects (runtime/metrics) exceed
	// this many MiB. Default DefaultWriteCacheHeapMiB; negative: no heap bound.
	WriteCacheHeapMiB int
	// MaxHeaders bounds the header-only nodes kept in memory ahead of the stored blocks
	// (default DefaultMaxHeaders).
	MaxHeaders int
}

// Chain is the chain state of one network in one database.
type Chain struct {
	net  *params.Network
	db   *leveldb.DB
	opts Options
	wo   *opt.WriteOptions

	// mu is the chain's lock; excl is the semaphore a writer holds before it locks mu for
	// writing, so that a writer's wait can end with its context (chainlock.go).
	mu    sync.RWMutex
	excl  chan struct{}
	index nodeIndex
	// tips are the valid stored nodes without a valid child: the only ones that can have the
	// most work, so the fork choice looks at them instead of the whole index.
	tips  map[*BlockNode]struct{}
	main  []*BlockNode // main chain by height
	stats Stats
	seq   uint64
	wc    writeCache // connected blocks not written yet (cache.go)
	// blk and rev are the block and undo files (blockstore.go).
	blk, rev *blockfile.Store
	clean    cleanCache // what the database holds for the cluster tables
	coins    coinCache  // outputs the database holds (coincache.go)
	// pending is the write cache being written in the background (bgwrite.go), or nil.
	pending *pendingWrite
	// testWriteGate, set by tests, holds each background write until a send on it.
	testWriteGate chan struct{}
	// testWriteHook, set by tests, runs before each write of the write cache.
	testWriteHook func()
	bulk          bool
	// hdrs are the header-only nodes; bestHdr is the valid node (header-only or stored) with
	// the most work, first seen on a tie (headers.go).
	hdrs    map[*BlockNode]struct{}
	bestHdr *BlockNode
}

// Open opens (or creates) the chain database in dir. Loading the block index and finishing a
// reorganisation a crash interrupted can take long; when ctx ends first, Open stops between
// blocks, writes what it connected (one atomic write, as a flush), closes the database and
// returns ctx's error: the store stays consistent and the next Open resumes.
func Open(ctx context.Context, dir string, net *params.Network, opts Options) (*Chain, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.CacheMiB == 0 {
		opts.CacheMiB = DefaultCacheMiB
	}
	if opts.CoinCacheMiB == 0 {
		opts.CoinCacheMiB = DefaultCoinCacheMiB
	}
	if opts.WriteCacheMiB <= 0 {
		opts.WriteCacheMiB = DefaultWriteCacheMiB
	}
	if opts.WriteCacheAge <= 0 {
		opts.WriteCacheAge = DefaultWriteCacheAge
	}
	if opts.WriteCacheHeapMiB == 0 {
		opts.WriteCacheHeapMiB = DefaultWriteCacheHeapMiB
	}
	if opts.MaxHeaders <= 0 {
		opts.MaxHeaders = DefaultMaxHeaders
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, storageErr("create directory", err)
	}
	db, err := leveldb.OpenFile(dir, dbOptions(opts))
	if err != nil {
		if isLockErr(err) {
			return nil, fmt.Errorf("%w: %s (is another coin-node running on it?)", ErrLocked, filepath.Clean(dir))
		}
		return nil, storageErr("open "+dir, err)
	}
	c := &Chain{net: net, db: db, opts: opts, wo: &opt.WriteOptions{Sync: opts.Sync}, index: newNodeIndex(), tips: make(map[*BlockNode]struct{}),
		hdrs: make(map[*BlockNode]struct{}), coins: newCoinCache(opts.CoinCacheMiB), excl: make(chan struct{}, 1)}
	c.wc.reset()
	if err := c.openBlockFiles(dir); err != nil {
		db.Close()
		return nil, err
	}
	if err := c.load(ctx); err != nil {
		c.closeStorage()
		return nil, err
	}
	// A crash between storing a block and connecting it leaves a stored branch with more work
	// than the tip; connect it now rather than when (and if) a child of it arrives. A rule
	// failure on the way marks the branch as it would have then.
	err = c.activateBestChain(ctx, new(Result), nil)
	if ferr := c.flushLocked(); ferr != nil {
		err = ferr
	}
	if err != nil && !consensus.IsRuleError(err) {
		c.closeStorage()
		return nil, err
	}
	return c, nil
}

// dbOptions are goleveldb's settings for the chain database, chosen as Bitcoin Core chose
// LevelDB's for its chainstate: the keys are hashes and most values hold hashes, which do not
// compress, so tables are stored uncompressed (snappy cost the scale sync a fifth of its CPU
// for a fifth of the disk); every table has a Bloom filter of 10 bits a key, so that a read
// skips the tables that cannot hold its key (without it, every read of a spent output
// searched each level-0 table); reads do not trigger compactions (goleveldb's seek
// compaction rewrites tables in which random reads missed); and level 0 is compacted at 8
// tables instead of 4 (writes slow down at 16 and stop at 24 instead of 8 and 12). The keys
// are hashes, so every level-0 table overlaps all of level 1 and each compaction of level 0
// rewrites the whole of level 1: twice the tables a compaction halves what that costs a
// byte written (a million-transfer sync: 0.65 CPU-seconds a hundred blocks instead of 0.95).
// The reads this makes dearer (each probes every level-0 table) are mostly outputs, which
// the coin cache serves.
func dbOptions(opts Options) *opt.Options {
	return &opt.Options{
		BlockCacheCapacity:     opts.CacheMiB << 20,
		WriteBuffer:            16 << 20,
		NoSync:                 !opts.Sync,
		Compression:            opt.NoCompression,
		Filter:                 filter.NewBloomFilter(10),
		DisableSeeksCompaction: true,
		CompactionL0Trigger:    8,
		WriteL0SlowdownTrigger: 16,
		WriteL0PauseTrigger:    24,
	}
}

// isLockErr reports whether err, from opening the database in dir, says another process
// holds it (dblock.Held), or fails on dir/LOCK itself.
func isLockErr(err error) bool {
	var pe *os.PathError
	return dblock.Held(err) || (errors.As(err, &pe) && filepath.Base(pe.Path) == "LOCK")
}

// Close writes what the write cache holds and closes the database and the block files.
func (c *Chain) Close() error {
	c.lock()
	defer c.unlock()
	err := c.flushLocked()
	if cerr := c.closeStorage(); err == nil {
		err = cerr
	}
	return err
}

// closeStorage closes the database and the block files.
func (c *Chain) closeStorage() error {
	err := storageErr("close", c.db.Close())
	c.closeBlockFiles()
	c.coins.release()
	return err
}

// SigCache is the signature cache blocks are connected with (nil when none).
func (c *Chain) SigCache() *consensus.SigCache { return c.opts.SigCache }

// Network is the chain's network.
func (c *Chain) Network() *params.Network { return c.net }

// loadCheckEvery is how many index records load reads between looks at its context.
const loadCheckEvery = 1 << 16

// load reads the header index and the stats, or initialises the database with genesis. It
// stops early, changing nothing on disk, when ctx ends.
func (c *Chain) load(ctx context.Context) error {
	raw, err := c.db.Get([]byte(keyStats), nil)
	if errors.Is(err, leveldb.ErrNotFound) {
		return c.initGenesis()
	}
	if err != nil {
		return storageErr("read stats", err)
	}
	r := bincode.NewReader(raw)
	c.stats.decode(r)
	if err := r.Finish(); err != nil {
		return storageErr("decode stats", err)
	}
	it := c.db.NewIterator(util.BytesPrefix([]byte{pfxIndex}), nil)
	var cerr error
	err = c.indexFrom(func(yield func([]byte) bool) {
		for i := 0; it.Next(); i++ {
			if i%loadCheckEvery == 0 {
				if cerr = ctx.Err(); cerr != nil {
					return
				}
			}
			if !yield(it.Value()) {
				return
			}
		}
	})
	it.Release()
	if err == nil {
		err = cerr
	}
	if err == nil {
		err = storageErr("read index", it.Error())
	}
	if err != nil {
		return err
	}
	tip := c.index.get(c.stats.TipHash)
	if tip == nil || tip.Height != c.stats.Height {
		return fmt.Errorf("database is inconsistent: tip %s not in the header index", c.stats.TipHash)
	}
	c.setMain(tip)
	return nil
}

// loadedNode is a decoded index record: the node and its parent's hash.
type loadedNode struct {
	n    *BlockNode
	prev types.Hash
}

// indexFrom builds the block index from the index records recs yields (Open's load, and
// IndexBytesPerBlock's measure of it).
func (c *Chain) indexFrom(recs iter.Seq[[]byte]) error {
	var nodes []loadedNode
	for raw := range recs {
		n, prev, err := decodeIndexRecord(raw)
		if err != nil {
			return storageErr("decode index", err)
		}
		nodes = append(nodes, loadedNode{n, prev})
	}
	return c.linkIndex(nodes)
}

// linkIndex puts the decoded index records in the block index, lowest first: each gets its
// parent and cumulative work.
func (c *Chain) linkIndex(nodes []loadedNode) error {
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].n.Height < nodes[j].n.Height })
	var bits uint32
	var work pow.Uint256 // of bits
	for _, ln := range nodes {
		n := ln.n
		if n.seq > c.seq {
			c.seq = n.seq
		}
		if b := n.Header.DifficultyTarget; b != bits || work.IsZero() {
			bits, work = b, workOf(b)
		}
		if n.Height == 0 {
			if n.Hash != c.net.GenesisHash {
				return fmt.Errorf("database holds another network's genesis block %s (want %s for %s)", n.Hash, c.net.GenesisHash, c.net.Name)
			}
			n.Work = work
			c.addNode(n)
			continue
		}
		p := c.index.get(ln.prev)
		if p == nil {
			continue // orphaned record; unreachable
		}
		n.Parent = p
		n.Work = p.Work.Add(work)
		c.addNode(n)
	}
	return nil
}

// setMain makes the main chain the path from genesis to tip.
func (c *Chain) setMain(tip *BlockNode) {
	c.main = make([]*BlockNode, tip.Height+1)
	for n := tip; n != nil; n = n.Parent {
		c.main[n.Height] = n
	}
}

func (c *Chain) initGenesis() error {
	g := c.net.GenesisBlock()
	n := &BlockNode{Hash: g.Hash(), Height: 0, status: StatusValid,
		Work: workOf(g.Header.DifficultyTarget), size: uint32(g.SerializeSize()), txCount: 1}
	n.setHeader(&g.Header)
	c.stats = Stats{TipHash: n.Hash, Height: 0, TxCount: 1}
	b := new(leveldb.Batch)
	if err := c.storeBlock(b, n.Hash, g.Bytes()); err != nil {
		return err
	}
	if err := c.blk.Sync(); err != nil {
		return storageErr("write genesis", err)
	}
	b.Put(hashKey(pfxIndex, n.Hash), indexRecord(n))
	b.Put(heightKey(0), n.Hash[:])
	b.Put(hashKey(pfxTx, g.Transactions[0].TxID()), txLocBytes(n.Hash, 0, 0))
	b.Put([]byte(keyStats), c.statsBytes(&c.stats))
	if err := c.writeBatch(b, &opt.WriteOptions{Sync: true}); err != nil {
		return storageErr("write genesis", err)
	}
	c.addNode(n)
	c.main = []*BlockNode{n}
	return nil
}

func (c *Chain) statsBytes(s *Stats) []byte {
	w := bincode.NewWriter(nil)
	s.encode(w)
	return w.Bytes()
}

// Stats returns the chain statistics at the tip.
func (c *Chain) Stats() Stats {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.stats
}

// Tip is the main chain's last block.
func (c *Chain) Tip() *BlockNode {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.main[len(c.main)-1]
}

// NodeByHash is the block index entry of a stored block, or nil (also for a header-only
// node: see HeaderState).
func (c *Chain) NodeByHash(h types.Hash) *BlockNode {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if n := c.index.get(h); n != nil && !n.headerOnly {
		return n
	}
	return nil
}

// NodeAt is the main-chain block at height, or nil.
func (c *Chain) NodeAt(height uint64) *BlockNode {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if height >= uint64(len(c.main)) {
		return nil
	}
	return c.main[height]
}

// InMainChain reports whether the block is on the main chain.
func (c *Chain) InMainChain(h types.Hash) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	n := c.index.get(h)
	return n != nil && n.Height < uint64(len(c.main)) && c.main[n.Height] == n
}

// Block reads a stored block.
func (c *Chain) Block(h types.Hash) (*types.Block, error) {
	raw, err := c.blockBytes(h)
	if err != nil {
		return nil, err
	}
	b, err := types.DecodeBlock(raw)
	if err != nil {
		return nil, storageErr("decode block", err)
	}
	return b, nil
}

// BlockBytes reads a stored block's bincode.
func (c *Chain) BlockBytes(h types.Hash) ([]byte, error) { return c.blockBytes(h) }

// ErrNotFound is returned for an unknown block, transaction or output.
var ErrNotFound = errors.New("not found")

// Utxo implements consensus.UtxoView over the UTXO set of the main chain's tip.
func (c *Chain) Utxo(op types.Outpoint) (*consensus.UtxoEntry, bool, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	e, ok, err := c.utxoLocked(op)
	if e != nil {
		cp := *e
		e = &cp
	}
	return e, ok, err
}

// AddressUtxo is an unspent output of an address.
type AddressUtxo struct {
	Outpoint types.Outpoint
	Entry    *consensus.UtxoEntry
}

// UtxosByAddress lists the unspent outputs paying pkh, in outpoint order.
func (c *Chain) UtxosByAddress(pkh types.Hash) ([]AddressUtxo, error) {
	unlock, err := c.rlockFlushed(context.Background())
	if err != nil {
		return nil, err
	}
	defer unlock()
	prefix := make([]byte, 33)
	prefix[0] = pfxAddr
	copy(prefix[1:], pkh[:])
	it := c.db.NewIterator(util.BytesPrefix(prefix), nil)
	defer it.Release()
	var out []AddressUtxo
	for it.Next() {
		k := it.Key()
		var op types.Outpoint
		copy(op.TxID[:], k[33:65])
		op.Index = uint32(k[65])<<24 | uint32(k[66])<<16 | uint32(k[67])<<8 | uint32(k[68])
		raw := it.Value()
		if len(raw) == 0 { // a bare entry: the output's own record
			var err error
			var uk [37]byte
			utxoKeyTo(uk[:], op)
			if raw, err = c.db.Get(uk[:], nil); err != nil {
				return nil, storageErr("read output "+op.String()+" of the address index", err)
			}
		}
		r := bincode.NewReader(raw)
		e := decodeEntry(r)
		if err := r.Finish(); err != nil {
			return nil, storageErr("decode address index", err)
		}
		out = append(out, AddressUtxo{op, e})
	}
	return out, storageErr("iterate address index", it.Error())
}

// ClusterBalance is Σ nominal value of the cluster's unspent outputs.
func (c *Chain) ClusterBalance(id types.Hash) (uint64, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.clusterLocked(id)
}

// TxLocation finds a confirmed transaction on the main chain.
func (c *Chain) TxLocation(txid types.Hash) (TxLocation, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.txLocationLocked(txid)
}

// Transaction reads a confirmed transaction and its location.
func (c *Chain) Transaction(txid types.Hash) (*types.Transaction, TxLocation, error) {
	loc, err := c.TxLocation(txid)
	if err != nil {
		return nil, loc, err
	}
	b, err := c.Block(loc.Block)
	if err != nil {
		return nil, loc, err
	}
	if int(loc.Position) >= len(b.Transactions) {
		return nil, loc, storageErr("tx index", fmt.Errorf("position %d out of range", loc.Position))
	}
	return b.Transactions[loc.Position], loc, nil
}
