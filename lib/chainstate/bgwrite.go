package chainstate

import (
	"time"

	"github.com/syndtr/goleveldb/leveldb"
)

// Writing the write cache in the background. In bulk mode, when the cache reaches a bound,
// ProcessBlock does not wait for it to be encoded and written: the cache is frozen as the
// pending write, a goroutine builds its batch and writes it, and blocks go on connecting into
// a new, empty cache. Reads look in the new cache, then the pending one, then the clean
// cache, then the coin cache and the database: what the pending write will store is newer than what the
// database holds until it has. The next write of the cache waits for the pending one first
// (one write in flight at a time, in order), and so does anything that needs the database
// itself up to date (Flush, SetBulk(false), Close, the reads that scan the database, and
// disconnecting a block, whose undo data may be in the pending write). Outside bulk mode each
// ProcessBlock writes its blocks before it returns, as before.
//
// Crash safety is unchanged: the pending batch is one atomic goleveldb write holding the
// stats record that names the tip of the state it writes; a kill -9 before it lands leaves
// the state of the write before, and Open connects the stored blocks past it again.

// pendingWrite is a frozen write cache being written by a goroutine.
type pendingWrite struct {
	wc    *writeCache
	batch *leveldb.Batch
	keep  []string
	err   error
	done  chan struct{} // closed when the write has ended (err tells how)
}

// ended reports whether the pending write has ended (without waiting).
func (p *pendingWrite) ended() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// flushBackground freezes the write cache as the pending write and starts writing it, after
// the write before has ended.
func (c *Chain) flushBackground() error {
	if err := c.settleLocked(); err != nil {
		return err
	}
	if c.wc.empty() {
		return nil
	}
	frozen := new(writeCache)
	*frozen = c.wc
	p := &pendingWrite{wc: frozen, done: make(chan struct{})}
	recs := blockRecords(frozen) // now: a block's status may change while the batch is built
	c.pending = p
	c.wc.reset()
	gate := c.testWriteGate
	go func() {
		defer close(p.done)
		if gate != nil { // tests: hold the write until the next block, or 5 ms
			select {
			case <-gate:
			case <-time.After(5 * time.Millisecond):
			}
		}
		p.batch, p.keep = buildBatch(frozen, recs)
		p.err = c.writeCacheBatch(frozen, p.batch)
	}()
	return nil
}

// settleLocked waits for the pending write, if any, and retires it: the clean cache takes
// what it wrote. A failed write is tried again here, once; when that fails too the pending
// write stays (reads still see it) and the error is returned, as a failed flushLocked does.
func (c *Chain) settleLocked() error {
	p := c.pending
	if p == nil {
		return nil
	}
	<-p.done
	if p.err != nil {
		// The undo data goes to the rev files again: the first try may have failed there.
		// What it appended is not referred to (the batch puts the new positions last).
		if err := c.writeCacheBatch(p.wc, p.batch); err != nil {
			return err
		}
		p.err = nil
	}
	c.keepClean(p.wc, p.keep)
	c.pending = nil
	return nil
}

// pendingSlot is the pending write's slot for key, if it has one.
func (c *Chain) pendingSlot(key string) *slot {
	if c.pending == nil {
		return nil
	}
	return c.pending.wc.slots[key]
}
