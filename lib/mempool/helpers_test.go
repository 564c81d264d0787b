package mempool

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/chainstate"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/miner"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/types"
)

// The fixture is a real chainstate.Chain on a LevelDB in a temporary directory, on regtest,
// with fixtureHeight blocks. The coinbases of blocks 1..splitBlocks are split into splitOutputs
// outputs each, so that 11 × 1,000 coinbase outputs are mature for the next block.
const (
	fixtureHeight = 110
	splitBlocks   = 11
	splitOutputs  = 1_000
)

var (
	testNet  = params.Regtest
	testKey  = ed25519.NewKeyFromSeed(make([]byte, 32))
	testPKH  = types.Blake3(testKey.Public().(ed25519.PublicKey))
	otherKey = ed25519.NewKeyFromSeed([]byte("another key, another pubkey hash"))
	otherPKH = types.Blake3(otherKey.Public().(ed25519.PublicKey))
	// farFuture is the chain's clock: block timestamps never hit the future-drift rule.
	farFuture = func() time.Time { return time.Unix(1<<40, 0) }

	fixtureOnce   sync.Once
	fixtureBlocks []*types.Block
)

// testChain adapts chainstate.Chain to the pool's Chain, as lib/node's poolChain does.
type testChain struct{ *chainstate.Chain }

func (c testChain) NextBlockInfo() (uint64, uint64) {
	t := c.NextBlock()
	return t.Height, t.MedianTimePast
}

func (c testChain) Confirmed(txid types.Hash) bool {
	_, err := c.TxLocation(txid)
	return err == nil
}

// buildBlock builds and solves a block at height on parent paying reward to testPKH in
// outputs equal parts, with txs after the coinbase.
func buildBlock(tb testing.TB, parent *types.Block, height uint64, outputs int, extra string, txs ...*types.Transaction) *types.Block {
	tb.Helper()
	b := miner.NewBlock(miner.Spec{Parent: parent.Hash(), Height: height, Target: testNet.PowLimitBits,
		Timestamp: parent.Header.Timestamp + 60, PayTo: testPKH, Reward: consensus.Subsidy(height),
		Extra: []byte(extra), Txs: txs})
	if outputs > 1 {
		cb := b.Transactions[0]
		part := cb.Outputs[0].Value / uint64(outputs)
		cb.Outputs = cb.Outputs[:0]
		for i := 0; i < outputs; i++ {
			cb.Outputs = append(cb.Outputs, types.TxOutput{Value: part, PubKeyHash: testPKH})
		}
		b.Header.MerkleRoot = types.MerkleRoot(b.TxIDs())
	}
	if err := miner.Solve(b, 1<<20); err != nil {
		tb.Fatal(err)
	}
	return b
}

// baseBlocks are the fixture's blocks 1..fixtureHeight, built once per test binary.
func baseBlocks(tb testing.TB) []*types.Block {
	fixtureOnce.Do(func() {
		parent := testNet.GenesisBlock()
		for h := uint64(1); h <= fixtureHeight; h++ {
			outs := 1
			if h <= splitBlocks {
				outs = splitOutputs
			}
			b := buildBlock(tb, parent, h, outs, "")
			fixtureBlocks = append(fixtureBlocks, b)
			parent = b
		}
	})
	if len(fixtureBlocks) != fixtureHeight {
		tb.Fatal("fixture blocks were not built")
	}
	return fixtureBlocks
}

// coin is a spendable output paying testPKH.
type coin struct {
	op    types.Outpoint
	value uint64
}

type fixture struct {
	tb    testing.TB
	chain *chainstate.Chain
	pool  *Pool
	coins []coin                // mature coinbase outputs not handed out yet
	fees  map[types.Hash]uint64 // fee of every transaction the fixture built
}

func newFixture(tb testing.TB, opts Options) *fixture {
	tb.Helper()
	c, err := chainstate.Open(tb.TempDir(), testNet, chainstate.Options{Now: farFuture})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })
	f := &fixture{tb: tb, chain: c, fees: map[types.Hash]uint64{}}
	for _, b := range baseBlocks(tb) {
		if _, err := c.ProcessBlock(b); err != nil {
			tb.Fatalf("fixture block: %v", err)
		}
	}
	for _, b := range fixtureBlocks[:splitBlocks] {
		cb := b.Transactions[0]
		id := cb.TxID()
		for i, o := range cb.Outputs {
			f.coins = append(f.coins, coin{types.Outpoint{TxID: id, Index: uint32(i)}, o.Value})
		}
	}
	f.pool = New(testChain{c}, testNet.Magic, opts)
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
	tx := &types.Transaction{Version: 1, Kind: types.KindTransfer, LockTime: lockTime}
	var total uint64
	for _, c := range ins {
		tx.Inputs = append(tx.Inputs, types.TxInput{PrevTxID: c.op.TxID, PrevIndex: c.op.Index})
		total += c.value
	}
	if fee > total {
		f.tb.Fatalf("fee %d exceeds inputs %d", fee, total)
	}
	v := total - fee
	for i := 0; i < outs; i++ {
		part := v / uint64(outs)
		if i == outs-1 {
			part = v - part*uint64(outs-1)
		}
		tx.Outputs = append(tx.Outputs, types.TxOutput{Value: part, PubKeyHash: pkh})
	}
	types.SignInputs(tx, testKey, testNet.Magic)
	f.fees[tx.TxID()] = fee
	return tx
}

// atRate builds a transfer of ins into outs outputs paying rate subunits per byte exactly.
func (f *fixture) atRate(ins []coin, rate uint64, outs int) *types.Transaction {
	f.tb.Helper()
	size := f.transfer(ins, 0, outs).SerializeSize()
	tx := f.transfer(ins, rate*uint64(size), outs)
	if tx.SerializeSize() != size {
		f.tb.Fatalf("size changed with the fee: %d → %d", size, tx.SerializeSize())
	}
	return tx
}

// out is output i of tx as a coin.
func out(tx *types.Transaction, i int) coin {
	return coin{types.Outpoint{TxID: tx.TxID(), Index: uint32(i)}, tx.Outputs[i].Value}
}

func (f *fixture) mustAccept(txs ...*types.Transaction) {
	f.tb.Helper()
	for _, tx := range txs {
		id, err := f.pool.Accept(tx)
		if err != nil {
			f.tb.Fatalf("Accept(%s): %v", tx.TxID(), err)
		}
		if id != tx.TxID() {
			f.tb.Fatalf("Accept returned txid %s, want %s", id, tx.TxID())
		}
	}
}

// mustReject checks that tx is refused with an error matching want (errors.Is), and that the
// pool did not change.
func (f *fixture) mustReject(tx *types.Transaction, want error) error {
	f.tb.Helper()
	before := f.pool.Info()
	_, err := f.pool.Accept(tx)
	if err == nil {
		f.tb.Fatalf("Accept(%s) succeeded, want %v", tx.TxID(), want)
	}
	if !errors.Is(err, want) {
		f.tb.Fatalf("Accept(%s): got %v, want errors.Is %v", tx.TxID(), err, want)
	}
	var re *RejectError
	if !errors.As(err, &re) {
		f.tb.Fatalf("Accept(%s): %T is not a *RejectError", tx.TxID(), err)
	}
	if after := f.pool.Info(); after != before {
		f.tb.Fatalf("a rejected transaction changed the pool: %+v → %+v", before, after)
	}
	checkPool(f.tb, f.pool)
	return err
}

// expect checks that the pool holds exactly txs, with exact totals.
func (f *fixture) expect(txs ...*types.Transaction) {
	f.tb.Helper()
	want := Info{Size: len(txs)}
	ids := map[types.Hash]bool{}
	for _, tx := range txs {
		id := tx.TxID()
		fee, ok := f.fees[id]
		if !ok {
			f.tb.Fatalf("no fee recorded for %s", id)
		}
		ids[id] = true
		want.Bytes += tx.SerializeSize()
		want.TotalFee += fee
		e, ok := f.pool.Get(id)
		if !ok {
			f.tb.Fatalf("transaction %s is not in the pool", id)
		}
		if e.Fee != fee || e.Size != tx.SerializeSize() {
			f.tb.Fatalf("entry %s: fee %d size %d, want %d and %d", id, e.Fee, e.Size, fee, tx.SerializeSize())
		}
	}
	if got := f.pool.Info(); got != want {
		f.tb.Fatalf("Info() = %+v, want %+v", got, want)
	}
	for _, id := range f.pool.TxIDs() {
		if !ids[id] {
			f.tb.Fatalf("unexpected transaction %s in the pool", id)
		}
	}
	checkPool(f.tb, f.pool)
}

// checkPool checks the pool's internal bookkeeping: totals, the spends index and the
// parent/child links agree with the transactions, and every transaction is valid against
// the chain plus its pool parents.
func checkPool(tb testing.TB, p *Pool) {
	tb.Helper()
	p.mu.RLock()
	defer p.mu.RUnlock()
	bytes, fees, inputs := 0, uint64(0), 0
	for id, e := range p.txs {
		if id != e.TxID || id != e.Tx.TxID() {
			tb.Fatalf("entry keyed %s has txid %s", id, e.TxID)
		}
		bytes += e.Size
		fees += e.Fee
		inputs += len(e.Tx.Inputs)
		parents := map[types.Hash]bool{}
		for i := range e.Tx.Inputs {
			op := e.Tx.Inputs[i].Outpoint()
			if p.spends[op] != e {
				tb.Fatalf("spends[%s] does not point at %s", op, id)
			}
			if _, ok := p.txs[op.TxID]; ok {
				parents[op.TxID] = true
			}
		}
		if len(parents) != len(e.parents) {
			tb.Fatalf("%s has %d pool parents, its links say %d", id, len(parents), len(e.parents))
		}
		for pid, pe := range e.parents {
			if !parents[pid] || p.txs[pid] != pe || pe.children[id] != e {
				tb.Fatalf("%s: broken link to parent %s", id, pid)
			}
		}
		for cid, ce := range e.children {
			if p.txs[cid] != ce || ce.parents[id] != e {
				tb.Fatalf("%s: broken link to child %s", id, cid)
			}
		}
		height, _ := p.chain.NextBlockInfo()
		res, err := consensus.CheckTransactionInputs(e.Tx, height, view{p.chain, p, height})
		if err != nil {
			tb.Fatalf("pool transaction %s is invalid: %v", id, err)
		}
		if res.Fee != e.Fee {
			tb.Fatalf("%s: entry fee %d, inputs say %d", id, e.Fee, res.Fee)
		}
	}
	if len(p.spends) != inputs {
		tb.Fatalf("spends index has %d outpoints, the transactions %d inputs", len(p.spends), inputs)
	}
	if bytes != p.bytes || fees != p.fees {
		tb.Fatalf("totals %d bytes %d fee, transactions say %d and %d", p.bytes, p.fees, bytes, fees)
	}
	if p.bytes > p.maxBytes {
		tb.Fatalf("pool holds %d bytes, bound %d", p.bytes, p.maxBytes)
	}
}

// tipBlock is the main chain's tip block.
func (f *fixture) tipBlock() *types.Block {
	f.tb.Helper()
	b, err := f.chain.Block(f.chain.Tip().Hash)
	if err != nil {
		f.tb.Fatal(err)
	}
	return b
}

// process hands a block to the chain and the result to the pool, as lib/node does.
func (f *fixture) process(b *types.Block) *chainstate.Result {
	f.tb.Helper()
	res, err := f.chain.ProcessBlock(b)
	if err != nil {
		f.tb.Fatalf("block %s rejected: %v", b.Hash(), err)
	}
	for _, c := range res.Connected {
		f.pool.BlockConnected(c.Block, c.TxIDs)
	}
	if len(res.Disconnected) > 0 {
		blocks := make([]*types.Block, 0, len(res.Disconnected))
		for i := len(res.Disconnected) - 1; i >= 0; i-- {
			blocks = append(blocks, res.Disconnected[i].Block)
		}
		f.pool.Reorganized(blocks)
	}
	return res
}

// mine builds a block with txs on the tip and processes it.
func (f *fixture) mine(txs ...*types.Transaction) *types.Block {
	f.tb.Helper()
	tip := f.chain.Tip()
	b := buildBlock(f.tb, f.tipBlock(), tip.Height+1, 1, "", txs...)
	f.process(b)
	if f.chain.Tip().Hash != b.Hash() {
		f.tb.Fatalf("mined block is not the tip")
	}
	return b
}

// higherRate reports whether a pays a higher fee rate than b (exact).
func higherRate(a, b *Entry) bool { return lowerRate(b, a) }

// checkSelect checks Select's contract on sel, the result for maxBytes: parents come
// before children; every chosen transaction had the highest fee rate among those whose
// parents were all chosen before it and that still fitted; the total respects maxBytes.
func checkSelect(tb testing.TB, p *Pool, sel []*Entry, maxBytes int) {
	tb.Helper()
	p.mu.RLock()
	all := make([]*Entry, 0, len(p.txs))
	for _, e := range p.txs {
		all = append(all, e)
	}
	p.mu.RUnlock()
	chosen := map[types.Hash]bool{}
	used := 0
	for i, e := range sel {
		if chosen[e.TxID] {
			tb.Fatalf("Select returned %s twice", e.TxID)
		}
		for pid := range e.parents {
			if !chosen[pid] {
				tb.Fatalf("Select position %d: %s comes before its parent %s", i, e.TxID, pid)
			}
		}
		// No ready transaction that still fits pays more than e.
		for _, o := range all {
			if chosen[o.TxID] || o == e || used+o.Size > maxBytes {
				continue
			}
			ready := true
			for pid := range o.parents {
				ready = ready && chosen[pid]
			}
			if ready && higherRate(o, e) {
				tb.Fatalf("Select position %d: chose %s (%d/%d) while %s (%d/%d) was ready and pays more",
					i, e.TxID, e.Fee, e.Size, o.TxID, o.Fee, o.Size)
			}
		}
		chosen[e.TxID] = true
		used += e.Size
	}
	if used > maxBytes {
		tb.Fatalf("Select used %d bytes, limit %d", used, maxBytes)
	}
	// Nothing left out was both ready and small enough to fit.
	for _, o := range all {
		if chosen[o.TxID] {
			continue
		}
		ready := true
		for pid := range o.parents {
			ready = ready && chosen[pid]
		}
		if ready && used+o.Size <= maxBytes {
			tb.Fatalf("Select left out %s (%d bytes) though it was ready and fitted (%d of %d used)", o.TxID, o.Size, used, maxBytes)
		}
	}
}

func ids(es []*Entry) []types.Hash {
	out := make([]types.Hash, len(es))
	for i, e := range es {
		out[i] = e.TxID
	}
	return out
}

func txids(txs ...*types.Transaction) []types.Hash {
	out := make([]types.Hash, len(txs))
	for i, tx := range txs {
		out[i] = tx.TxID()
	}
	return out
}

func sameIDs(a, b []types.Hash) error {
	if len(a) != len(b) {
		return fmt.Errorf("%d transactions, want %d", len(a), len(b))
	}
	for i := range a {
		if a[i] != b[i] {
			return fmt.Errorf("position %d: %s, want %s", i, a[i], b[i])
		}
	}
	return nil
}
