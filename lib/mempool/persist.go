package mempool

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/cointoolkit/coin/lib/atomicfile"
	"github.com/cointoolkit/coin/lib/bincode"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/types"
)

// The pool outlives a restart (protocol §11): the node writes it to <data-dir>/mempool.dat at a
// clean stop and every few minutes, and loads it at start, every transaction going through
// Accept against the chain as it is then.
//
// mempool.dat, version 1, all bincode (protocol §3):
//
//	magic "COINMEMPOOL\x00" (12 raw bytes) ‖ version u32 (= 1) ‖ network magic [4]u8 ‖
//	count u64 ‖ count × { tx: Vec<u8> (the transaction's bincode, ≤ 100,000 bytes) ‖
//	arrival: u64 (unix nanoseconds) }
//
// Transactions are in arrival order, so a parent comes before its children. Each
// transaction is length-prefixed, so one that does not decode is skipped and the rest are
// read; a truncated file yields the entries before the cut.

// snapshotMagic starts every mempool.dat.
const snapshotMagic = "COINMEMPOOL\x00"

// SnapshotVersion is the version of mempool.dat this package writes and reads.
const SnapshotVersion = 1

// Snapshot errors, matched with errors.Is.
var (
	// ErrSnapshotFormat: not a mempool.dat (magic), another version, or another network.
	ErrSnapshotFormat = errors.New("mempool.dat: not a mempool file of this version and network")
	// ErrSnapshotCorrupt: the file is truncated or damaged after the header; the entries
	// before the damage were read.
	ErrSnapshotCorrupt = errors.New("mempool.dat: truncated or corrupt")
)

// SavedTx is one transaction of a snapshot with the time it entered the pool.
type SavedTx struct {
	Tx      *types.Transaction
	Arrival time.Time
}

// EncodeSnapshot writes txs as a mempool.dat for the network magic.
func EncodeSnapshot(magic [4]byte, txs []SavedTx) []byte {
	w := bincode.NewWriter(make([]byte, 0, 64+len(txs)*300))
	w.Raw([]byte(snapshotMagic))
	w.U32(SnapshotVersion)
	w.Raw(magic[:])
	w.U64(uint64(len(txs)))
	for _, s := range txs {
		w.VarBytes(s.Tx.Bytes())
		var nanos int64
		if !s.Arrival.IsZero() {
			nanos = max(s.Arrival.UnixNano(), 0)
		}
		w.U64(uint64(nanos))
	}
	return w.Bytes()
}

// DecodeSnapshot reads a mempool.dat of the network magic. It returns every entry it could
// read; the error (ErrSnapshotFormat for the header, else ErrSnapshotCorrupt) says what it
// could not. A transaction that does not decode is skipped; reading stops at the first
// damaged length or time.
func DecodeSnapshot(magic [4]byte, b []byte) ([]SavedTx, error) {
	var out []SavedTx
	_, err := decodeSnapshot(magic, b, func(n int) { out = make([]SavedTx, 0, n) }, func(s SavedTx) bool {
		out = append(out, s)
		return true
	})
	return out, err
}

// decodeSnapshot reads b entry by entry as DecodeSnapshot does: start learns the count of
// entries the header announces, visit gets each entry that decodes, in order, and stops the
// reading by returning false. It returns the announced count and what could not be read.
func decodeSnapshot(magic [4]byte, b []byte, start func(n int), visit func(SavedTx) bool) (int, error) {
	r := bincode.NewReader(b)
	var m [len(snapshotMagic)]byte
	r.Raw(m[:])
	version := r.U32()
	var net [4]byte
	r.Raw(net[:])
	switch {
	case r.Err() != nil:
		return 0, fmt.Errorf("%w: header: %v", ErrSnapshotFormat, r.Err())
	case string(m[:]) != snapshotMagic:
		return 0, fmt.Errorf("%w: bad magic", ErrSnapshotFormat)
	case version != SnapshotVersion:
		return 0, fmt.Errorf("%w: version %d, want %d", ErrSnapshotFormat, version, SnapshotVersion)
	case net != magic:
		return 0, fmt.Errorf("%w: network magic %x, want %x", ErrSnapshotFormat, net, magic)
	}
	// The smallest entry is a transaction of at least a few bytes and a time; Len checks
	// the count against the bytes left before anything is allocated.
	n := r.Len(2)
	if r.Err() != nil {
		return 0, fmt.Errorf("%w: count: %v", ErrSnapshotCorrupt, r.Err())
	}
	start(n)
	var errs []error
	for i := 0; i < n; i++ {
		raw := r.VarBytes(consensus.MaxTxSize)
		nanos := r.U64()
		if r.Err() != nil {
			errs = append(errs, fmt.Errorf("%w: entry %d of %d: %v", ErrSnapshotCorrupt, i, n, r.Err()))
			return n, errors.Join(errs...)
		}
		tx, err := types.DecodeTransaction(raw)
		if err != nil {
			errs = append(errs, fmt.Errorf("%w: entry %d: %v", ErrSnapshotCorrupt, i, err))
			continue
		}
		var at time.Time
		if nanos > 0 && nanos < 1<<62 {
			at = time.Unix(0, int64(nanos))
		}
		if !visit(SavedTx{Tx: tx, Arrival: at}) {
			return n, errors.Join(errs...)
		}
	}
	if err := r.Finish(); err != nil {
		errs = append(errs, fmt.Errorf("%w: %v", ErrSnapshotCorrupt, err))
	}
	return n, errors.Join(errs...)
}

// Snapshot lists the pool's transactions in arrival order (parents first) with their
// arrival times.
func (p *Pool) Snapshot() []SavedTx {
	p.mu.RLock()
	es := make([]*Entry, 0, len(p.txs))
	for _, e := range p.txs {
		es = append(es, e)
	}
	p.mu.RUnlock()
	sortBySeq(es)
	out := make([]SavedTx, len(es))
	for i, e := range es {
		out[i] = SavedTx{Tx: e.Tx, Arrival: e.Time}
	}
	return out
}

// Save writes the pool to path atomically: a temporary file in the same directory (mode
// 0600), fsync, rename over path, fsync of the directory. A crash at any point leaves
// either the previous file or the new one. It returns the number of transactions written.
func (p *Pool) Save(path string) (int, error) {
	txs := p.Snapshot()
	if err := atomicfile.Write(path, EncodeSnapshot(p.magic, txs)); err != nil {
		return 0, err
	}
	return len(txs), nil
}

// LoadResult says what Load made of a mempool.dat.
type LoadResult struct {
	Read     int   // entries decoded
	Accepted int   // entries now in the pool
	Dropped  int   // entries refused by Accept (logged one by one)
	Left     int   // entries not offered because Load's context ended (the file's count less those offered)
	Err      error // what could not be read (nil: the whole file), logged too
}

// loadProgressMin is the number of entries from which Load logs its progress, every tenth
// of the file (as Bitcoin Core does): a pool that large takes a while to check.
const loadProgressMin = 1000

// Load reads the mempool.dat at path and offers every transaction to the pool, in the
// file's order, through Accept against the current chain; an accepted one keeps its
// arrival time. Refused transactions are dropped with a log line; a missing file is no
// error; a corrupt or truncated one is logged and what could be read is loaded: the pool is
// a cache, so Load does not fail for the file's sake.
//
// ctx bounds the load: Load looks at it before each entry and, when it has ended, stops
// there and returns its error (wrapped: errors.Is matches it) with what it did so far. Each
// transaction is accepted whole or not at all, so the pool is consistent, and the file is
// only read, never changed: the transactions not offered are still in it. A caller that
// stops a load must not write the partial pool over the file (lib/node does not).
func (p *Pool) Load(ctx context.Context, path string) (LoadResult, error) {
	var res LoadResult
	if err := ctx.Err(); err != nil {
		return res, loadStopped(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			res.Err = err
			p.log.Warn("mempool: mempool.dat not read; starting with an empty pool", "path", path, "err", err)
		}
		return res, nil
	}
	var (
		total   int // entries the file announces
		stopped error
		step    = -1 // entries between two progress lines (-1: none)
		start   = time.Now()
	)
	begin := func(n int) {
		total = n
		if n >= loadProgressMin {
			step = (n + 9) / 10
			p.log.Info("mempool: loading mempool.dat", "path", path, "entries", n)
		}
	}
	_, err = decodeSnapshot(p.magic, b, begin, func(s SavedTx) bool {
		if err := ctx.Err(); err != nil {
			stopped = err
			return false
		}
		txid, err := p.Accept(ctx, s.Tx)
		if cerr := ctx.Err(); err != nil && cerr != nil && errors.Is(err, cerr) {
			stopped = cerr // before the pool took it: not refused, and still in the file
			return false
		}
		res.Read++
		switch {
		case err != nil:
			res.Dropped++
			p.log.Info("mempool: dropped a transaction of mempool.dat", "txid", txid, "err", err)
		case !s.Arrival.IsZero():
			p.mu.Lock()
			if e, ok := p.txs[txid]; ok {
				e.Time = s.Arrival
			}
			p.mu.Unlock()
			fallthrough
		default:
			res.Accepted++
		}
		if step > 0 && res.Read%step == 0 {
			p.log.Info("mempool: loading mempool.dat", "progress", fmt.Sprintf("%d%%", res.Read*100/total),
				"tried", res.Read, "accepted", res.Accepted, "remaining", total-res.Read)
		}
		return true
	})
	if err != nil {
		res.Err = err
		p.log.Warn("mempool: mempool.dat is damaged; loading the transactions that could be read", "path", path,
			"read", res.Read, "err", err)
	}
	if stopped != nil {
		res.Left = max(total-res.Read, 0)
		p.log.Info("mempool: loading mempool.dat stopped; the file keeps every entry", "path", path,
			"accepted", res.Accepted, "left", res.Left, "took", time.Since(start).Round(time.Millisecond).String())
		return res, loadStopped(stopped)
	}
	return res, nil
}

// loadStopped is Load's error when its context ended: the context's error, wrapped.
func loadStopped(err error) error {
	return fmt.Errorf("mempool: loading mempool.dat stopped: %w", err)
}
