package chainstate

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/chaingen"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/types"
)

// The benchmark block holds 1,000 one-input transfers, each spending one of the 1,000 outputs
// a transaction in block 101 split the (then mature) coinbase of block 1 into, and each paying
// a different address.
var benchBlocks struct {
	once  sync.Once
	chain []*types.Block // heights 1..101
	block *types.Block   // height 102
}

func benchSetup(b *testing.B) {
	benchBlocks.once.Do(func() {
		g := chaingen.New(b, nil)
		g.Chain("a", "genesis", 100)
		miner := g.Miner()
		split := g.Spend(g.Coinbase("a1")).Fee(0).Change(miner.PKH, consensus.MaxTxOutputs).Tx()
		g.Next("a101", "a100", []*types.Transaction{split})
		for h := 1; h <= 101; h++ {
			benchBlocks.chain = append(benchBlocks.chain, g.Block(fmt.Sprintf("a%d", h)))
		}
		txs := make([]*types.Transaction, 0, len(split.Outputs))
		for i, out := range chaingen.OutputsOf(split) {
			var seed [8]byte
			binary.LittleEndian.PutUint64(seed[:], uint64(i))
			txs = append(txs, g.Spend(out).Pay(types.Blake3(seed[:]), out.Value-200).Fee(200).Tx())
		}
		benchBlocks.block = g.Next("a102", "a101", txs)
	})
}

// benchChain is a chain at height 101 with the 1,000 split outputs unspent.
func benchChain(b *testing.B, sigWorkers int) *Chain {
	benchSetup(b)
	return chainWith(b, Options{SigWorkers: sigWorkers, Now: func() time.Time { return time.Unix(1<<40, 0) },
		Values: consensus.NominalValue{}}, benchBlocks.chain)
}

// chainWith is a chain on a fresh database with opts that has processed blocks (closed at
// the end of the benchmark).
func chainWith(b *testing.B, opts Options, blocks []*types.Block) *Chain {
	c, err := Open(context.Background(), b.TempDir(), params.Regtest, opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	for _, blk := range blocks {
		if _, err := c.ProcessBlock(context.Background(), blk); err != nil {
			b.Fatal(err)
		}
	}
	return c
}

// verifyEach returns a function that verifies the signatures of blk's transactions one
// after another, their txids computed beforehand: the signature work of connecting blk on
// one core.
func verifyEach(blk *types.Block) func(b *testing.B) {
	txs := blk.Transactions[1:]
	ids := make([]types.Hash, len(txs))
	for i, tx := range txs {
		ids[i] = tx.TxID()
	}
	magic := params.Regtest.Magic
	return func(b *testing.B) {
		for j, tx := range txs {
			if err := consensus.VerifySignatures(tx, ids[j], magic); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// undoBench disconnects the benchmark block and forgets it, so that ProcessBlock takes it as
// a new block again.
func undoBench(b *testing.B, c *Chain) {
	n := c.Tip()
	if n.Hash != benchBlocks.block.Hash() {
		b.Fatal("the benchmark block is not the tip")
	}
	if _, err := c.disconnectTip(); err != nil {
		b.Fatal(err)
	}
	if err := c.forget(n); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkConnectBlock1000 is ProcessBlock of a new block of 1,000 transfers on the tip: sanity
// checks, storing it, the UTXO checks, 1,000 signatures and the connect batch.
func BenchmarkConnectBlock1000(b *testing.B) {
	for _, bc := range []struct {
		name    string
		workers int
	}{{"SigWorkers=1", 1}, {"SigWorkers=0", 0}} {
		b.Run(bc.name, func(b *testing.B) {
			c := benchChain(b, bc.workers)
			blk := benchBlocks.block
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				res, err := c.ProcessBlock(context.Background(), blk)
				if err != nil || !res.IsTip {
					b.Fatal(err)
				}
				b.StopTimer()
				undoBench(b, c)
				b.StartTimer()
			}
		})
	}
}

// BenchmarkVerify1000Sequential is the signature work alone: the benchmark block's 1,000
// signatures verified one after another (txids computed beforehand).
func BenchmarkVerify1000Sequential(b *testing.B) {
	benchSetup(b)
	verify := verifyEach(benchBlocks.block)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		verify(b)
	}
}

// BenchmarkDisconnectBlock1000 is disconnecting the benchmark block from the tip.
func BenchmarkDisconnectBlock1000(b *testing.B) {
	c := benchChain(b, 0)
	blk := benchBlocks.block
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		if _, err := c.ProcessBlock(context.Background(), blk); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if _, err := c.disconnectTip(); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if err := c.forget(c.NodeByHash(blk.Hash())); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}

// BenchmarkFlush writes a write cache like the one a catching-up node holds after 20 blocks of
// 2,000 transfers: 40,000 new outputs, 40,000 spent outputs that were on disk, 40,000 tx index
// entries. The figure is the pause at the end of a bulk sync.
func BenchmarkFlush(b *testing.B) {
	c, err := Open(context.Background(), b.TempDir(), params.Regtest, Options{Values: consensus.NominalValue{}})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	const n = 40_000
	tip := c.Tip()
	fill := func(round int) {
		c.wc.reset()
		var j blockJournal
		var key [37]byte
		for i := 0; i < n; i++ {
			var id types.Hash
			binary.LittleEndian.PutUint64(id[:], uint64(round)<<32|uint64(i))
			id = types.Blake3(id[:])
			e := &consensus.UtxoEntry{Value: uint64(i), PubKeyHash: types.Blake3(id[:4]), Height: 7}
			utxoKeyTo(key[:], types.Outpoint{TxID: id, Index: 0})
			j.insert(key[:], e)
			// A spent output read from disk while the block was checked (chainView).
			utxoKeyTo(key[:], types.Outpoint{TxID: id, Index: 1})
			s := c.wc.newSlot(key[:])
			s.val, s.disk = e, e
			j.del(key[:])
			j.insert(hashKey(pfxTx, id), TxLocation{Block: tip.Hash, Height: 1, Position: uint32(i)})
		}
		undo, err := c.commit(&j)
		if err != nil {
			b.Fatal(err)
		}
		c.wc.blocks = append(c.wc.blocks, cachedBlock{n: tip, undo: undo})
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		fill(i)
		b.StartTimer()
		c.mu.Lock()
		if err := c.flushLocked(); err != nil {
			b.Fatal(err)
		}
		c.mu.Unlock()
	}
}
