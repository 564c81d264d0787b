package chainstate

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/types"
)

// TestBulkMatchesPerBlockWrites builds a chain with transfers, spends of outputs a few blocks
// old and reorgs (the crash test's worker) on a chain that writes every block, then feeds the
// same blocks in the same order to a chain in bulk mode. After every block both must agree on
// the tip, the stats and every outpoint and transaction the block touches, read from the
// bulk chain's write cache; at the end, after the scans that write the cache, on the whole
// UTXO set, the address index and the reopened database. It runs twice: with the default
// bounds (the cache written only by the scans and Close) and with a cache written in the
// background after every block (WriteCacheAge of 1 ns), each write held until the next block has been
// connected, so that blocks connect while reads find their keys in the pending write.
func TestBulkMatchesPerBlockWrites(t *testing.T) {
	t.Run("one-write", func(t *testing.T) { testBulkMatchesPerBlockWrites(t, false) })
	t.Run("background-writes", func(t *testing.T) { testBulkMatchesPerBlockWrites(t, true) })
}

func testBulkMatchesPerBlockWrites(t *testing.T, background bool) {
	opts := Options{Now: crashClock, Values: consensus.NominalValue{}}
	ref, w := workedChain(t, 7, 300)
	nodes := make([]*BlockNode, 0, ref.index.len())
	for n := range ref.index.all() {
		if n.Height > 0 {
			nodes = append(nodes, n)
		}
	}
	slices.SortFunc(nodes, func(a, b *BlockNode) int { return int(a.seq) - int(b.seq) })

	dir := t.TempDir()

	bulk, err := Open(context.Background(), dir, params.Regtest, opts)
	if err != nil {
		t.Fatal(err)
	}
	gate := make(chan struct{})
	if background {
		bulk.opts.WriteCacheAge = time.Nanosecond
		bulk.testWriteGate = gate
		// Every block's inputs read by fetchInputs, which must see the pending write too.
		defer func(n int) { fetchParallelMin = n }(fetchParallelMin)
		fetchParallelMin = 1
	}
	if err := bulk.SetBulk(true); err != nil {
		t.Fatal(err)
	}
	// ref is replayed block by block too, so that both see the same sequence of tips.
	replay, err := Open(context.Background(), t.TempDir(), params.Regtest, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer replay.Close()
	maxCached, reorgs, pendingSeen := 0, 0, 0
	feed := func(from, to int) {
		for i, n := range nodes[from:to] {
			i += from
			b, err := ref.Block(n.Hash)
			if err != nil {
				t.Fatal(err)
			}
			want, werr := replay.ProcessBlock(context.Background(), b)
			got, gerr := bulk.ProcessBlock(context.Background(), b)
			if bulk.pending != nil && !bulk.pending.ended() {
				pendingSeen++
			}
			select { // let a write held since the block before go on
			case gate <- struct{}{}:
			default:
			}
			if (werr == nil) != (gerr == nil) || want.IsTip != got.IsTip || len(want.Connected) != len(got.Connected) ||
				len(want.Disconnected) != len(got.Disconnected) {
				t.Fatalf("block %d: per-block chain %+v %v, bulk chain %+v %v", i, want, werr, got, gerr)
			}
			if len(got.Disconnected) > 0 {
				reorgs++
			}
			if bulk.Tip().Hash != replay.Tip().Hash || bulk.Stats() != replay.Stats() {
				t.Fatalf("block %d: tips or stats differ: %+v / %+v", i, bulk.Stats(), replay.Stats())
			}
			if replay.Unflushed() != 0 {
				t.Fatalf("block %d: the per-block chain left %d blocks unwritten", i, replay.Unflushed())
			}
			maxCached = max(maxCached, bulk.Unflushed())
			ids := b.TxIDs()
			for k, tx := range b.Transactions {
				ops := make([]types.Outpoint, 0, len(tx.Inputs)+len(tx.Outputs))
				for j := range tx.Inputs {
					ops = append(ops, tx.Inputs[j].Outpoint())
				}
				for j := range tx.Outputs {
					ops = append(ops, types.Outpoint{TxID: ids[k], Index: uint32(j)})
				}
				for _, op := range ops {
					we, wok, werr := replay.Utxo(op)
					ge, gok, gerr := bulk.Utxo(op)
					if wok != gok || werr != nil || gerr != nil || wok && *we != *ge {
						t.Fatalf("block %d: utxo %v: per-block %v %+v, bulk %v %+v", i, op, wok, we, gok, ge)
					}
					if wok {
						wb, _ := replay.ClusterBalance(we.ClusterID)
						gb, _ := bulk.ClusterBalance(we.ClusterID)
						if wb != gb {
							t.Fatalf("block %d: cluster balances differ: %d / %d", i, wb, gb)
						}
					}
				}
				wl, werr := replay.TxLocation(ids[k])
				gl, gerr := bulk.TxLocation(ids[k])
				if wl != gl || (werr == nil) != (gerr == nil) {
					t.Fatalf("block %d: tx %s: per-block %+v %v, bulk %+v %v", i, ids[k], wl, werr, gl, gerr)
				}
			}
		}
	}
	// Most blocks, the scans (which write the cache), the rest, and Close writes those.
	split := len(nodes) * 9 / 10
	feed(0, split)
	if reorgs == 0 || (!background && maxCached < 20) || (background && pendingSeen < 20) {
		t.Fatalf("the bulk chain saw %d reorgs, held at most %d blocks and %d times a pending write: the test lost its point",
			reorgs, maxCached, pendingSeen)
	}
	t.Logf("%d blocks, %d reorgs, up to %d blocks in the write cache, %d blocks connected while a write was pending",
		len(nodes), reorgs, maxCached, pendingSeen)

	for _, pkh := range w.pkhs {
		a, err := replay.UtxosByAddress(pkh)
		if err != nil {
			t.Fatal(err)
		}
		b, err := bulk.UtxosByAddress(pkh)
		if err != nil {
			t.Fatal(err)
		}
		if len(a) != len(b) {
			t.Fatalf("address index: %d / %d outputs", len(a), len(b))
		}
		for i := range a {
			if a[i].Outpoint != b[i].Outpoint || *a[i].Entry != *b[i].Entry {
				t.Fatalf("address index differs at %d", i)
			}
		}
	}
	if bulk.Unflushed() != 0 {
		t.Fatal("a scan of the address index left the write cache unwritten")
	}
	feed(split, len(nodes))
	// (With a write after every block, the last one may have landed already.)
	if !background && bulk.Unflushed() == 0 {
		t.Fatal("nothing left for Close to write")
	}
	wi, _ := replay.UtxoSetInfo(context.Background())
	if err := bulk.Close(); err != nil {
		t.Fatal(err)
	}
	again, err := Open(context.Background(), dir, params.Regtest, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	gi, err := again.UtxoSetInfo(context.Background())
	if err != nil || gi != wi {
		t.Fatalf("reopened bulk chain: %+v %v, per-block chain %+v", gi, err, wi)
	}
	checkInvariants(t, again)
	checkIndexes(t, again, utxoSet(t, again))
}

// TestBulkWritesWhenDue: in bulk mode the write cache is written when it is older than
// WriteCacheAge, and ending bulk mode writes it at once.
func TestBulkWritesWhenDue(t *testing.T) {
	c, err := Open(context.Background(), t.TempDir(), params.Regtest, Options{Now: crashClock, WriteCacheAge: time.Hour, Values: consensus.NominalValue{}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.SetBulk(true); err != nil {
		t.Fatal(err)
	}
	w, err := newCrashWorker(c, 3)
	if err != nil {
		t.Fatal(err)
	}
	for c.Tip().Height < 20 {
		if err := w.step(); err != nil {
			t.Fatal(err)
		}
	}
	if n := c.Unflushed(); n == 0 {
		t.Fatal("bulk mode wrote every block")
	}
	c.opts.WriteCacheAge = time.Nanosecond
	for h := c.Tip().Height; c.Tip().Height == h; {
		if err := w.step(); err != nil {
			t.Fatal(err)
		}
	}
	settle(t, c)
	if n := c.Unflushed(); n != 0 {
		t.Fatalf("%d blocks unwritten past WriteCacheAge", n)
	}
	c.opts.WriteCacheAge = time.Hour
	for c.Unflushed() == 0 {
		if err := w.step(); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.SetBulk(false); err != nil || c.Unflushed() != 0 {
		t.Fatalf("ending bulk mode: %v, %d blocks unwritten", err, c.Unflushed())
	}
}

// TestReadsWhileBulkModeEnds: the write of the cache when bulk mode ends (a whole catch-up's
// blocks) keeps no reader waiting. The write is held until the reads are done; they must
// return meanwhile, from the pending write, and SetBulk(false) only once it has landed.
func TestReadsWhileBulkModeEnds(t *testing.T) {
	src, _ := workedChain(t, 5, 120)
	c, err := Open(context.Background(), t.TempDir(), params.Regtest, Options{Now: crashClock, Values: consensus.NominalValue{}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.SetBulk(true); err != nil {
		t.Fatal(err)
	}
	replayMain(t, src, c)
	if c.Unflushed() == 0 {
		t.Fatal("bulk mode wrote the blocks already: nothing to test")
	}
	writing, release := make(chan struct{}, 1), make(chan struct{})
	var once sync.Once
	defer once.Do(func() { close(release) })
	c.testWriteHook = func() {
		select {
		case writing <- struct{}{}:
		default:
		}
		<-release
	}
	ended := make(chan error, 1)
	go func() { ended <- c.SetBulk(false) }()
	select {
	case <-writing:
	case <-time.After(30 * time.Second):
		t.Fatal("the write of the cache did not start")
	}

	tip := src.Tip()
	read := make(chan error, 1)
	go func() {
		if got := c.Tip(); got.Hash != tip.Hash {
			read <- fmt.Errorf("tip %s, want %s", got.Hash, tip.Hash)
			return
		}
		if st := c.HeaderState(tip.Hash); !st.HaveBlock || !st.MainChain {
			read <- fmt.Errorf("header state of the tip: %+v", st)
			return
		}
		if _, err := c.BlockBytes(tip.Hash); err != nil {
			read <- err
			return
		}
		cb, err := src.Block(tip.Hash)
		if err != nil {
			read <- err
			return
		}
		op := types.Outpoint{TxID: cb.Transactions[0].TxID()}
		if _, ok, err := c.Utxo(op); !ok || err != nil {
			read <- fmt.Errorf("the tip's coinbase output: found %v, %v", ok, err)
			return
		}
		read <- nil
	}()
	select {
	case err := <-read:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("reads waited for the write that ends bulk mode")
	}
	select {
	case err := <-ended:
		t.Fatalf("SetBulk(false) returned (%v) before its write landed", err)
	default:
	}
	once.Do(func() { close(release) })
	if err := <-ended; err != nil {
		t.Fatal(err)
	}
	if n := c.Unflushed(); n != 0 {
		t.Fatalf("%d blocks unwritten after SetBulk(false)", n)
	}
	if err := sameSet(utxoSet(t, src), utxoSet(t, c)); err != nil {
		t.Fatal(err)
	}
}
