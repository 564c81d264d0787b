package chainstate

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/params"
)

// countdownCtx is a context whose Err turns to context.Canceled after a number of calls: a
// cancellation that lands at a chosen point of a long operation, between two of the blocks
// it handles, without depending on timing.
type countdownCtx struct {
	context.Context
	left atomic.Int64
}

func cancelAfter(checks int64) *countdownCtx {
	c := &countdownCtx{Context: context.Background()}
	c.left.Store(checks)
	return c
}

func (c *countdownCtx) Err() error {
	if c.left.Add(-1) < 0 {
		return context.Canceled
	}
	return nil
}

// TestProcessBlockCancelledReorg: a 30-block reorganisation whose context ends after the
// disconnections and 5 of the 31 connections stops there with context.Canceled, the Result
// so far and a consistent chain (stats, UTXO set and supply agree; the tip is the fork's
// fifth block on the new branch). Reopening with an ended context fails cleanly; reopening
// with a live one finishes the reorganisation.
func TestProcessBlockCancelledReorg(t *testing.T) {
	const depth = 30
	h := newHarness(t)
	a := h.Chain("a", "genesis", depth)
	for _, b := range h.Branch(a) {
		if _, err := h.c.ProcessBlock(context.Background(), b); err != nil {
			t.Fatal(err)
		}
	}
	bTip := h.Chain("b", "genesis", depth+1)
	side := h.Branch(bTip)
	for _, b := range side[:depth] { // equal work: stored, the tip stays (first seen)
		if _, err := h.c.ProcessBlock(context.Background(), b); err != nil {
			t.Fatal(err)
		}
	}
	if h.c.Tip().Hash != h.Block(a).Hash() {
		t.Fatal("the side branch took the tip before it had more work")
	}

	// One look before the lock, one before each of the 30 disconnections and 5 connections.
	ctx := cancelAfter(1 + depth + 5)
	res, err := h.c.ProcessBlock(ctx, side[depth])
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("ProcessBlock with a context ending mid-reorganisation: %v", err)
	}
	if res == nil || len(res.Disconnected) != depth || len(res.Connected) != 5 || res.IsTip {
		t.Fatalf("result of the cancelled reorganisation: %+v", res)
	}
	if tip := h.c.Tip(); tip.Hash != h.Block("b5").Hash() || tip.Height != 5 {
		t.Fatalf("tip after the cancelled reorganisation: height %d %s, want b5", tip.Height, tip.Hash)
	}
	checkInvariants(t, h.c)
	if st := h.c.HeaderState(side[depth].Hash()); !st.HaveBlock || st.Invalid || st.Status != StatusStored {
		t.Fatalf("the block that started the reorganisation: %+v", st)
	}

	// A context that ended before the call changes nothing.
	done, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := h.c.ProcessBlock(done, h.Next("b6x", "b5", nil)); !errors.Is(err, context.Canceled) {
		t.Fatalf("ProcessBlock with an ended context: %v", err)
	}
	if h.c.HeaderState(h.Block("b6x").Hash()).Node != nil {
		t.Fatal("a block offered with an ended context was stored")
	}

	opts := h.c.opts
	if err := h.c.Close(); err != nil {
		t.Fatal(err)
	}
	if c, err := Open(done, h.dir, params.Regtest, opts); !errors.Is(err, context.Canceled) {
		if c != nil {
			c.Close()
		}
		t.Fatalf("Open with an ended context: %v", err)
	}
	c, err := Open(context.Background(), h.dir, params.Regtest, opts)
	if err != nil {
		t.Fatal(err)
	}
	h.c = c
	t.Cleanup(func() { c.Close() })
	if tip := c.Tip(); tip.Hash != side[depth].Hash() || tip.Height != depth+1 {
		t.Fatalf("tip after reopening: height %d %s, want b%d", tip.Height, tip.Hash, depth+1)
	}
	checkInvariants(t, c)
}

// TestOpenCancelledReorg: Open finishing a reorganisation a cancelled ProcessBlock left
// stops between blocks when its own context ends, writes what it connected and closes;
// the next Open finishes.
func TestOpenCancelledReorg(t *testing.T) {
	const depth = 12
	h := newHarness(t)
	a := h.Chain("a", "genesis", depth)
	for _, b := range h.Branch(a) {
		if _, err := h.c.ProcessBlock(context.Background(), b); err != nil {
			t.Fatal(err)
		}
	}
	side := h.Branch(h.Chain("b", "genesis", depth+1))
	for _, b := range side[:depth] {
		if _, err := h.c.ProcessBlock(context.Background(), b); err != nil {
			t.Fatal(err)
		}
	}
	// Cancelled before any block moves: the chain stays on a12 with b13 stored.
	if _, err := h.c.ProcessBlock(cancelAfter(1), side[depth]); !errors.Is(err, context.Canceled) {
		t.Fatalf("ProcessBlock: %v", err)
	}
	if h.c.Tip().Hash != h.Block(a).Hash() {
		t.Fatal("the tip moved")
	}
	opts := h.c.opts
	if err := h.c.Close(); err != nil {
		t.Fatal(err)
	}
	// Open: one look while loading the index, then 12 disconnections and 3 connections.
	if c, err := Open(cancelAfter(1+depth+3), h.dir, params.Regtest, opts); !errors.Is(err, context.Canceled) {
		if c != nil {
			c.Close()
		}
		t.Fatalf("Open with a context ending mid-reorganisation: %v", err)
	}
	c, err := Open(cancelAfter(1+2), h.dir, params.Regtest, opts) // resumes at b3, stops after b5
	if !errors.Is(err, context.Canceled) {
		if c != nil {
			c.Close()
		}
		t.Fatalf("second Open: %v", err)
	}
	c, err = Open(context.Background(), h.dir, params.Regtest, opts)
	if err != nil {
		t.Fatal(err)
	}
	h.c = c
	t.Cleanup(func() { c.Close() })
	if tip := c.Tip(); tip.Hash != side[depth].Hash() {
		t.Fatalf("tip after reopening: height %d", tip.Height)
	}
	checkInvariants(t, c)
}

// TestFlushCancelled: in bulk mode, a Flush whose context has ended writes nothing and
// leaves the cache for the next Flush, which writes it; the database then reopens at the
// tip.
func TestFlushCancelled(t *testing.T) {
	h := newHarness(t)
	if err := h.c.SetBulk(true); err != nil {
		t.Fatal(err)
	}
	a := h.Chain("a", "genesis", 5)
	for _, b := range h.Branch(a) {
		if _, err := h.c.ProcessBlock(context.Background(), b); err != nil {
			t.Fatal(err)
		}
	}
	before := h.c.Unflushed()
	if before == 0 {
		t.Fatal("bulk mode wrote the blocks at once")
	}
	done, cancel := context.WithCancel(context.Background())
	cancel()
	if err := h.c.Flush(done); !errors.Is(err, context.Canceled) {
		t.Fatalf("Flush with an ended context: %v", err)
	}
	if n := h.c.Unflushed(); n != before {
		t.Fatalf("a cancelled Flush changed the unflushed blocks from %d to %d", before, n)
	}
	if err := h.c.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := h.c.Unflushed(); n != 0 {
		t.Fatalf("%d blocks unflushed after Flush", n)
	}
	checkInvariants(t, h.c)
}

// TestLockWaitEndsWithContext: callers waiting for the chain's lock while a writer holds it
// (as a long reorganisation does) give up as soon as their context ends, with its error,
// and change nothing: ProcessBlock, Flush and the scans UtxoSetInfo and ConductInfo. Once
// the lock is free, the chain takes the same block as if nothing had waited.
func TestLockWaitEndsWithContext(t *testing.T) {
	h := newHarness(t)
	for _, b := range h.Branch(h.Chain("a", "genesis", 3)) {
		if _, err := h.c.ProcessBlock(context.Background(), b); err != nil {
			t.Fatal(err)
		}
	}
	next := h.Next("a4", "a3", nil)
	other := h.Next("x4", "a3", nil)
	before := h.c.Stats()

	h.c.lock() // what a reorganisation holds while it runs
	locked := true
	defer func() {
		if locked {
			h.c.unlock()
		}
	}()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	short, cancelShort := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancelShort()
	type ended struct {
		name string
		err  error
		at   time.Time
	}
	out := make(chan ended, 5)
	wait := func(name string, ctx context.Context, f func(context.Context) error) {
		go func() {
			err := f(ctx)
			out <- ended{name, err, time.Now()}
		}()
	}
	wait("ProcessBlock", ctx, func(ctx context.Context) error { _, err := h.c.ProcessBlock(ctx, next); return err })
	wait("Flush", ctx, h.c.Flush)
	wait("UtxoSetInfo", ctx, func(ctx context.Context) error { _, err := h.c.UtxoSetInfo(ctx); return err })
	wait("ConductInfo", ctx, func(ctx context.Context) error { _, err := h.c.ConductInfo(ctx); return err })
	wait("ProcessBlock (deadline)", short, func(ctx context.Context) error { _, err := h.c.ProcessBlock(ctx, other); return err })

	// The deadline's waiter ends on its own, with DeadlineExceeded, while the others wait.
	select {
	case e := <-out:
		if e.name != "ProcessBlock (deadline)" || !errors.Is(e.err, context.DeadlineExceeded) {
			t.Fatalf("%s returned %v while the lock was held", e.name, e.err)
		}
	case <-time.After(5 * time.Second):
		t.Error("ProcessBlock with a 50 ms deadline still waits for the lock after 5 s")
	}
	time.Sleep(20 * time.Millisecond)
	if len(out) != 0 {
		e := <-out
		t.Fatalf("%s returned %v before its context ended", e.name, e.err)
	}
	cancelled := time.Now()
	cancel()
	var slowest time.Duration
	for range 4 {
		select {
		case e := <-out:
			if !errors.Is(e.err, context.Canceled) {
				t.Errorf("%s: %v, want context.Canceled", e.name, e.err)
			}
			slowest = max(slowest, e.at.Sub(cancelled))
		case <-time.After(5 * time.Second):
			t.Fatalf("waiters still wait for the lock 5 s after their context ended")
		}
	}
	t.Logf("the last waiter returned %.2f ms after its context ended", float64(slowest.Microseconds())/1000)

	h.c.unlock()
	locked = false
	if h.c.Stats() != before || h.c.HeaderState(next.Hash()).Node != nil || h.c.HeaderState(other.Hash()).Node != nil {
		t.Fatalf("the chain changed under callers that gave up: stats %+v, were %+v", h.c.Stats(), before)
	}
	checkInvariants(t, h.c)
	if _, err := h.c.ProcessBlock(context.Background(), next); err != nil {
		t.Fatal(err)
	}
	if h.c.Tip().Hash != next.Hash() {
		t.Fatal("the block given up on was not taken afterwards")
	}
	if err := h.c.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
}
