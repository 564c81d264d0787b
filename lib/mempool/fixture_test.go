package mempool

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/chaingen"
	"github.com/cointoolkit/coin/lib/chainstate"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/types"
)

// The fixture is a real chainstate.Chain on a LevelDB in a temporary directory, on regtest,
// with fixtureHeight blocks built by lib/chaingen. The coinbases of blocks 1..splitBlocks are
// split into splitOutputs outputs each, so that 11 × 1,000 coinbase outputs are mature for the
// next block.
const (
	fixtureHeight = 110
	splitBlocks   = 11
	splitOutputs  = 1_000
)

var (
	testNet     = params.Regtest
	testWallet  = chaingen.NewWallet("test")
	otherWallet = chaingen.NewWallet("other")
	testKey     = testWallet.Key
	testPKH     = testWallet.PKH
	otherKey    = otherWallet.Key
	otherPKH    = otherWallet.PKH
	// farFuture is the chain's clock: block timestamps never hit the future-drift rule.
	farFuture = func() time.Time { return time.Unix(1<<40, 0) }

	fixtureOnce   sync.Once
	fixtureBlocks []*types.Block
)

// baseName is the generator's name of the fixture's block at height h.
func baseName(h int) string { return fmt.Sprintf("h%d", h) }

// baseBlocks are the fixture's blocks 1..fixtureHeight paying testWallet, built once per test
// binary.
func baseBlocks(tb testing.TB) []*types.Block {
	fixtureOnce.Do(func() {
		g := chaingen.New(nil, testNet)
		g.SetMiner(testWallet)
		parent := "genesis"
		for h := 1; h <= fixtureHeight; h++ {
			var split []chaingen.Munger
			if h <= splitBlocks {
				split = append(split, chaingen.SplitCoinbase(splitOutputs))
			}
			fixtureBlocks = append(fixtureBlocks, g.Next(baseName(h), parent, nil, split...))
			parent = baseName(h)
		}
	})
	if len(fixtureBlocks) != fixtureHeight {
		tb.Fatal("fixture blocks were not built")
	}
	return fixtureBlocks
}

// coin is a spendable output.
type coin = chaingen.Output

type fixture struct {
	tb    testing.TB
	g     *chaingen.Generator // knows every block of the chain by name
	chain *chainstate.Chain
	pool  *Pool
	coins []coin                // mature coinbase outputs not handed out yet
	fees  map[types.Hash]uint64 // fee of every transaction the fixture built
	mined int                   // blocks mined by the fixture, for their names
	spare []coin                // coins a test keeps for a second spend
}

func newFixture(tb testing.TB, opts Options) *fixture {
	tb.Helper()
	return newFixtureValued(tb, opts, consensus.NominalValue{})
}

// newFixtureValued is newFixture with a value model for the chain (nil: protocol §8's decay, in
// which the test wallet, holding the whole supply, decays at the highest rate).
func newFixtureValued(tb testing.TB, opts Options, values consensus.ValueModel) *fixture {
	tb.Helper()
	c, err := chainstate.Open(context.Background(), tb.TempDir(), testNet, chainstate.Options{Now: farFuture, Values: values})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })
	g := chaingen.New(tb, testNet)
	g.SetMiner(testWallet)
	g.AddWallet(otherWallet)
	f := &fixture{tb: tb, g: g, chain: c, fees: map[types.Hash]uint64{}}
	parent := "genesis"
	for i, b := range baseBlocks(tb) {
		g.Put(baseName(i+1), parent, b)
		parent = baseName(i + 1)
		if _, err := c.ProcessBlock(context.Background(), b); err != nil {
			tb.Fatalf("fixture block: %v", err)
		}
	}
	f.coins = g.Spendable(parent, testWallet)
	if len(f.coins) != splitBlocks*splitOutputs {
		tb.Fatalf("fixture has %d mature coins, want %d", len(f.coins), splitBlocks*splitOutputs)
	}
	f.pool = New(c, testNet.Magic, opts)
	return f
}

// take hands out n unused mature coins.
func (f *fixture) take(n int) []coin {
	f.tb.Helper()
	if len(f.coins) < n {
		f.tb.Fatalf("fixture has %d coins left, want %d", len(f.coins), n)
	}
	out := f.coins[:n:n]
	f.coins = f.coins[n:]
	return out
}

// transfer spends ins to testPKH in outs equal outputs, leaving fee, signed with testKey.
func (f *fixture) transfer(ins []coin, fee uint64, outs int) *types.Transaction {
	return f.transferTo(ins, fee, outs, testPKH, 0)
}

func (f *fixture) transferTo(ins []coin, fee uint64, outs int, pkh types.Hash, lockTime uint64) *types.Transaction {
	f.tb.Helper()
	tx := f.g.Spend(ins...).Fee(fee).Change(pkh, outs).LockTime(lockTime).SignedBy(testWallet).Tx()
	f.fees[tx.TxID()] = fee
	return tx
}

// atRate builds a transfer of ins into outs outputs paying rate subunits per byte exactly.
func (f *fixture) atRate(ins []coin, rate uint64, outs int) *types.Transaction {
	f.tb.Helper()
	tx := f.g.Spend(ins...).FeeRate(rate).Change(testPKH, outs).SignedBy(testWallet).Tx()
	fee, _ := f.g.Fee(tx)
	if fee != rate*uint64(tx.SerializeSize()) {
		f.tb.Fatalf("fee %d for %d bytes at %d per byte", fee, tx.SerializeSize(), rate)
	}
	f.fees[tx.TxID()] = fee
	return tx
}

// out is output i of tx as a coin.
func out(tx *types.Transaction, i int) coin { return chaingen.OutputOf(tx, i) }

// tipBlock is the main chain's tip block.
func (f *fixture) tipBlock() *types.Block {
	f.tb.Helper()
	b, err := f.chain.Block(f.chain.Tip().Hash)
	if err != nil {
		f.tb.Fatal(err)
	}
	return b
}

// blockOn builds the block name with txs on parent (a block the fixture built).
func (f *fixture) blockOn(name string, parent *types.Block, txs ...*types.Transaction) *types.Block {
	f.tb.Helper()
	return f.g.Next(name, f.g.NameOf(parent.Hash()), txs)
}

// process hands a block to the chain and the result to the pool, as lib/node does.
func (f *fixture) process(b *types.Block) *chainstate.Result {
	f.tb.Helper()
	res, err := f.chain.ProcessBlock(context.Background(), b)
	if err != nil {
		f.tb.Fatalf("block %s rejected: %v", b.Hash(), err)
	}
	f.pool.ChainChanged(res)
	return res
}

// mine builds a block with txs on the tip and processes it.
func (f *fixture) mine(txs ...*types.Transaction) *types.Block {
	f.tb.Helper()
	f.mined++
	b := f.blockOn(fmt.Sprintf("mined%d", f.mined), f.tipBlock(), txs...)
	f.process(b)
	if f.chain.Tip().Hash != b.Hash() {
		f.tb.Fatalf("mined block is not the tip")
	}
	return b
}
