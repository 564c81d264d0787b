package mempool

import (
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/miner"
	"github.com/cointoolkit/coin/lib/types"
)

func TestAcceptValidTransfer(t *testing.T) {
	f := newFixture(t, Options{})
	in := f.take(1)[0]
	tx := f.transfer([]coin{in}, 5_000, 3)
	f.mustAccept(tx)
	f.expect(tx)

	e, ok := f.pool.Get(tx.TxID())
	if !ok || e.Tx != tx || e.Height != f.chain.Tip().Height {
		t.Fatalf("Get: %+v %v", e, ok)
	}
	if id, ok := f.pool.SpentBy(in.op); !ok || id != tx.TxID() {
		t.Fatalf("SpentBy(%s) = %s %v, want %s", in.op, id, ok, tx.TxID())
	}
	if _, ok := f.pool.SpentBy(f.coins[0].op); ok {
		t.Fatal("SpentBy reports an output nobody spends")
	}
	outs := f.pool.OutputsTo(testPKH)
	if len(outs) != 3 {
		t.Fatalf("OutputsTo: %d outputs, want 3", len(outs))
	}
	for _, o := range outs {
		if o.Outpoint.TxID != tx.TxID() || o.Output != tx.Outputs[o.Outpoint.Index] || o.Spent {
			t.Fatalf("OutputsTo: %+v", o)
		}
	}
	if len(f.pool.OutputsTo(otherPKH)) != 0 {
		t.Fatal("OutputsTo lists outputs of another address")
	}

	// A child spending output 1 (paying the other address) marks it spent.
	child := f.transferTo([]coin{out(tx, 1)}, 2_000, 1, otherPKH, 0)
	f.mustAccept(child)
	f.expect(tx, child)
	spent := 0
	for _, o := range f.pool.OutputsTo(testPKH) {
		if o.Spent != (o.Outpoint == out(tx, 1).op) {
			t.Fatalf("OutputsTo: %+v", o)
		}
		if o.Spent {
			spent++
		}
	}
	if spent != 1 {
		t.Fatalf("%d outputs marked spent, want 1", spent)
	}
	if o := f.pool.OutputsTo(otherPKH); len(o) != 1 || o[0].Outpoint.TxID != child.TxID() || o[0].Spent {
		t.Fatalf("OutputsTo(other) = %+v", o)
	}
	if id, ok := f.pool.SpentBy(out(tx, 1).op); !ok || id != child.TxID() {
		t.Fatal("SpentBy does not see the child")
	}
}

func TestAcceptRejections(t *testing.T) {
	f := newFixture(t, Options{})
	base := f.transfer(f.take(1), 10_000, 2)
	f.mustAccept(base)

	t.Run("AlreadyInPool", func(t *testing.T) {
		f.mustReject(base, ErrAlreadyInPool)
	})
	t.Run("Conflict", func(t *testing.T) {
		// Same input as base, different outputs (another txid).
		tx := f.transfer([]coin{{base.Inputs[0].Outpoint(), base.Outputs[0].Value + base.Outputs[1].Value + 10_000}}, 50_000, 1)
		err := f.mustReject(tx, ErrConflict)
		if !strings.HasPrefix(err.Error(), "conflicts with a mempool transaction") {
			t.Fatalf("message %q", err)
		}
		// A second input does not hide the conflict.
		tx = f.transfer([]coin{f.coins[0], {base.Inputs[0].Outpoint(), 5_000_000}}, 50_000, 1)
		f.mustReject(tx, ErrConflict)
		// Nor does spending a pool output that a pool transaction already spends.
		c1 := f.transfer([]coin{out(base, 0)}, 3_000, 1)
		f.mustAccept(c1)
		f.mustReject(f.transfer([]coin{out(base, 0)}, 4_000, 1), ErrConflict)
	})
	t.Run("InsufficientFee", func(t *testing.T) {
		in := f.take(1)
		size := f.transfer(in, 0, 1).SerializeSize()
		err := f.mustReject(f.transfer(in, uint64(size)-1, 1), ErrInsufficientFee)
		if !strings.HasPrefix(err.Error(), "insufficient fee") {
			t.Fatalf("message %q", err)
		}
		f.mustReject(f.transfer(in, 0, 1), ErrInsufficientFee)
		f.mustAccept(f.transfer(in, uint64(size), 1)) // exactly 1 subunit per byte
	})
	t.Run("Dust", func(t *testing.T) {
		in := f.take(1)
		tx := f.transfer(in, 10_000, 2)
		tx.Outputs[0].Value += tx.Outputs[1].Value - (DustLimit - 1)
		tx.Outputs[1].Value = DustLimit - 1
		types.SignInputs(tx, testKey, testNet.Magic)
		f.fees[tx.TxID()] = 10_000
		f.mustReject(tx, ErrDust)
		tx.Outputs[0].Value--
		tx.Outputs[1].Value = DustLimit
		types.SignInputs(tx, testKey, testNet.Magic)
		f.fees[tx.TxID()] = 10_000
		f.mustAccept(tx)
	})
	t.Run("Coinbase", func(t *testing.T) {
		cb := miner.Coinbase(f.chain.Tip().Height+1, testPKH, consensus.Subsidy(1), nil)
		f.mustReject(cb, ErrCoinbase)
		// A mined coinbase too.
		f.mustReject(f.tipBlock().Transactions[0], ErrCoinbase)
	})
	t.Run("MissingInputs", func(t *testing.T) {
		ghost := coin{types.Outpoint{TxID: types.Blake3([]byte("no such transaction")), Index: 0}, 5_000_000}
		err := f.mustReject(f.transfer([]coin{ghost}, 10_000, 1), consensus.ErrMissingInputs)
		if !strings.HasPrefix(err.Error(), "missing inputs") {
			t.Fatalf("message %q", err)
		}
		// An index past the end of a pool transaction's outputs.
		f.mustReject(f.transfer([]coin{{types.Outpoint{TxID: base.TxID(), Index: 7}, 1_000_000}}, 10_000, 1), consensus.ErrMissingInputs)
		// An index past the end of a confirmed transaction's outputs.
		beyond := coin{types.Outpoint{TxID: f.tipBlock().Transactions[0].TxID(), Index: 9}, 1_000_000}
		f.mustReject(f.transfer([]coin{beyond}, 10_000, 1), consensus.ErrMissingInputs)
		// An output already spent in the chain.
		in := f.take(1)
		f.mine(f.transfer(in, 10_000, 1))
		f.mustReject(f.transfer(in, 20_000, 1), consensus.ErrMissingInputs)
	})
	t.Run("BadSignature", func(t *testing.T) {
		tx := f.transfer(f.take(1), 10_000, 1)
		tx.Inputs[0].Signature[5] ^= 0x40
		f.mustReject(tx, consensus.ErrBadSignature)
		// Signed for another network.
		tx = f.transfer(f.take(1), 10_000, 1)
		types.SignInputs(tx, testKey, [4]byte{'x', 'x', 'x', 'x'})
		f.mustReject(tx, consensus.ErrBadSignature)
	})
	t.Run("PubKeyMismatch", func(t *testing.T) {
		tx := f.transfer(f.take(1), 10_000, 1)
		types.SignInputs(tx, otherKey, testNet.Magic)
		f.mustReject(tx, consensus.ErrPubKeyMismatch)
	})
	t.Run("ImmatureCoinbase", func(t *testing.T) {
		// The tip's coinbase matures 100 blocks later.
		cb := f.tipBlock().Transactions[0]
		f.mustReject(f.transfer([]coin{out(cb, 0)}, 10_000, 1), consensus.ErrImmatureCoinbase)
	})
	t.Run("InsufficientFunds", func(t *testing.T) {
		in := f.take(1)[0]
		in.value += 1_000_000 // claim more than the output holds
		f.mustReject(f.transfer([]coin{in}, 10_000, 1), consensus.ErrInsufficientFunds)
	})
	t.Run("NonFinal", func(t *testing.T) {
		next := f.chain.Tip().Height + 1
		_, mtp := testChain{f.chain}.NextBlockInfo()
		for _, lt := range []uint64{next, next + 1, mtp, mtp + 1} {
			err := f.mustReject(f.transferTo(f.take(1), 10_000, 1, testPKH, lt), consensus.ErrNonFinal)
			if !strings.HasPrefix(err.Error(), "non-final transaction") {
				t.Fatalf("message %q", err)
			}
		}
		f.mustAccept(f.transferTo(f.take(1), 10_000, 1, testPKH, next-1))
		f.mustAccept(f.transferTo(f.take(1), 10_000, 1, testPKH, mtp-1))
	})
	t.Run("Sanity", func(t *testing.T) {
		tx := f.transfer(f.take(1), 10_000, 1)
		tx.Version = 2
		types.SignInputs(tx, testKey, testNet.Magic)
		f.mustReject(tx, consensus.ErrTxVersion)
		tx = f.transfer(f.take(1), 10_000, 1)
		tx.Inputs = append(tx.Inputs, tx.Inputs[0])
		types.SignInputs(tx, testKey, testNet.Magic)
		f.mustReject(tx, consensus.ErrDuplicateInput)
	})
	t.Run("AlreadyInChain", func(t *testing.T) {
		tx := f.transfer(f.take(1), 10_000, 2)
		f.mine(tx) // straight into a block, never through the pool
		f.mustReject(tx, ErrAlreadyInChain)
	})
}

// TestRejectErrorMessages checks that a rejection reads well: the reason once, then details.
func TestRejectErrorMessages(t *testing.T) {
	f := newFixture(t, Options{})
	in := f.take(1)
	size := f.transfer(in, 0, 1).SerializeSize()
	_, err := f.pool.Accept(f.transfer(in, uint64(size)-1, 1))
	ghost := coin{types.Outpoint{TxID: types.Blake3([]byte("ghost"))}, 5_000_000}
	_, err2 := f.pool.Accept(f.transfer([]coin{ghost}, 10_000, 1))
	for _, e := range []error{err, err2} {
		msg := e.Error()
		for _, reason := range []string{"insufficient fee", "missing inputs"} {
			if strings.Count(msg, reason) > 1 {
				t.Errorf("%q repeats %q", msg, reason)
			}
		}
	}
	if !errors.Is(err, ErrInsufficientFee) || !errors.Is(err2, consensus.ErrMissingInputs) {
		t.Fatal("sentinels lost")
	}
}

func TestLongUnconfirmedChain(t *testing.T) {
	f := newFixture(t, Options{})
	const depth = 600
	prev := f.take(1)[0]
	chain := make([]*types.Transaction, 0, depth)
	for i := 0; i < depth; i++ {
		tx := f.transfer([]coin{prev}, 300, 1)
		chain = append(chain, tx)
		prev = out(tx, 0)
	}
	f.mustAccept(chain[:500]...)
	f.expect(chain[:500]...)
	f.mustAccept(chain[500:]...)
	f.expect(chain...)
	sel := f.pool.Select(consensus.MaxBlockSize)
	if err := sameIDs(ids(sel), txids(chain...)); err != nil {
		t.Fatalf("Select of the chain: %v", err)
	}
	checkSelect(t, f.pool, sel, consensus.MaxBlockSize)
	// A block that mines the first 250 leaves the rest, whose first is now a root.
	f.mine(chain[:250]...)
	f.expect(chain[250:]...)
	if e, _ := f.pool.Get(chain[250].TxID()); len(e.parents) != 0 {
		t.Fatal("the first remaining transaction still has pool parents")
	}
	// A limit of 10 transactions' bytes takes the next 10 in order.
	limit := 0
	for _, tx := range chain[250:260] {
		limit += tx.SerializeSize()
	}
	sel = f.pool.Select(limit)
	if err := sameIDs(ids(sel), txids(chain[250:260]...)); err != nil {
		t.Fatalf("Select(%d): %v", limit, err)
	}
	checkSelect(t, f.pool, sel, limit)
}

func TestSelectOrder(t *testing.T) {
	f := newFixture(t, Options{})
	// Parent at 2/byte with a child at 50/byte; independent transactions at 3, 7 and 20.
	parent := f.atRate(f.take(1), 2, 2)
	child := f.atRate([]coin{out(parent, 0)}, 50, 1)
	grandchild := f.atRate([]coin{out(child, 0), out(parent, 1)}, 1, 1)
	x3 := f.atRate(f.take(1), 3, 1)
	x7 := f.atRate(f.take(1), 7, 1)
	x20 := f.atRate(f.take(1), 20, 1)
	f.mustAccept(parent, child, grandchild, x3, x7, x20)
	f.expect(parent, child, grandchild, x3, x7, x20)

	sel := f.pool.Select(consensus.MaxBlockSize)
	want := txids(x20, x7, x3, parent, child, grandchild)
	if err := sameIDs(ids(sel), want); err != nil {
		t.Fatalf("Select: %v", err)
	}
	checkSelect(t, f.pool, sel, consensus.MaxBlockSize)

	// maxBytes: room for x20 and x7 only (x3 and the parent do not fit in what is left).
	limit := x20.SerializeSize() + x7.SerializeSize()
	sel = f.pool.Select(limit)
	if err := sameIDs(ids(sel), txids(x20, x7)); err != nil {
		t.Fatalf("Select(%d): %v", limit, err)
	}
	checkSelect(t, f.pool, sel, limit)
	// A limit below the parent's size never takes its (smaller or not) children.
	limit = parent.SerializeSize() - 1
	sel = f.pool.Select(limit)
	for _, e := range sel {
		if e.TxID == child.TxID() || e.TxID == grandchild.TxID() {
			t.Fatal("Select took a child without its parent")
		}
	}
	checkSelect(t, f.pool, sel, limit)
	if got := f.pool.Select(0); len(got) != 0 {
		t.Fatalf("Select(0) = %d transactions", len(got))
	}
}

// TestSelectRandomDAG checks Select's contract on a pool of random dependent transactions.
func TestSelectRandomDAG(t *testing.T) {
	f := newFixture(t, Options{})
	var spendable []coin
	var all []*types.Transaction
	seed := uint64(0x9e3779b97f4a7c15)
	rnd := func(n int) int {
		seed ^= seed << 13
		seed ^= seed >> 7
		seed ^= seed << 17
		return int(seed % uint64(n))
	}
	for i := 0; i < 150; i++ {
		var ins []coin
		if len(spendable) > 0 && rnd(3) > 0 {
			for k := 0; k < 1+rnd(2) && len(spendable) > 0; k++ {
				j := rnd(len(spendable))
				ins = append(ins, spendable[j])
				spendable = append(spendable[:j], spendable[j+1:]...)
			}
		} else {
			ins = f.take(1)
		}
		tx := f.atRate(ins, uint64(1+rnd(40)), 1+rnd(3))
		f.mustAccept(tx)
		all = append(all, tx)
		for j := range tx.Outputs {
			spendable = append(spendable, out(tx, j))
		}
	}
	f.expect(all...)
	total := f.pool.Info().Bytes
	for _, limit := range []int{consensus.MaxBlockSize, total, total / 2, total / 5, 300, 0} {
		checkSelect(t, f.pool, f.pool.Select(limit), limit)
	}
}

func TestEviction(t *testing.T) {
	f := newFixture(t, Options{})
	// Five transactions of one size: a parent at 2/byte with a child at 50/byte, then 3, 4, 5.
	// (Coins with one-byte output indexes keep every size equal.)
	low := f.atRate(f.take(1), 2, 1)
	lowChild := f.atRate([]coin{out(low, 0)}, 50, 1)
	m3 := f.atRate(f.take(1), 3, 1)
	m4 := f.atRate(f.take(1), 4, 1)
	m5 := f.atRate(f.take(1), 5, 1)
	size := low.SerializeSize()
	for _, tx := range []*types.Transaction{lowChild, m3, m4, m5} {
		if tx.SerializeSize() != size {
			t.Fatalf("sizes differ: %d and %d", size, tx.SerializeSize())
		}
	}
	f.pool = New(testChain{f.chain}, testNet.Magic, Options{MaxBytes: 5 * size})
	f.mustAccept(low, lowChild, m3, m4, m5)
	f.expect(low, lowChild, m3, m4, m5)

	// A sixth at 20/byte evicts the lowest rate, and with it its high-paying child.
	h20 := f.atRate(f.take(1), 20, 1)
	f.mustAccept(h20)
	f.expect(m3, m4, m5, h20)
	if _, ok := f.pool.SpentBy(low.Inputs[0].Outpoint()); ok {
		t.Fatal("the evicted transaction's input is still marked spent")
	}
	// One more fits without eviction.
	h30 := f.atRate(f.take(1), 30, 1)
	f.mustAccept(h30)
	f.expect(m3, m4, m5, h20, h30)

	// The pool is full: the minimum relay fee (1/byte) is the lowest rate, so it is refused.
	poor := f.atRate(f.take(1), 1, 1)
	err := f.mustReject(poor, ErrPoolFull)
	if !strings.HasPrefix(err.Error(), "mempool full") {
		t.Fatalf("message %q", err)
	}
	f.expect(m3, m4, m5, h20, h30)
	// Equal rate to the lowest: the newcomer loses the tie.
	f.mustReject(f.atRate(f.take(1), 3, 1), ErrPoolFull)
	f.expect(m3, m4, m5, h20, h30)
	// A high-paying child of the lowest transaction goes out with it: eviction looks at each
	// transaction's own fee rate, not at packages, so the child is refused and takes its
	// parent with it.
	m3child := f.atRate([]coin{out(m3, 0)}, 100, 1)
	if _, err := f.pool.Accept(m3child); !errors.Is(err, ErrPoolFull) {
		t.Fatalf("child of the lowest-rate transaction into a full pool: %v", err)
	}
	f.expect(m4, m5, h20, h30)
	// The evicted transactions can come back when there is room again (and pay enough).
	f.mustAccept(f.atRate(f.take(1), 6, 1))
	if f.pool.Info().Size != 5 {
		t.Fatalf("pool has %d transactions, want 5", f.pool.Info().Size)
	}
	checkPool(t, f.pool)
}

func TestBlockConnected(t *testing.T) {
	f := newFixture(t, Options{})
	a := f.transfer(f.take(1), 5_000, 2)
	aChild := f.transfer([]coin{out(a, 0)}, 5_000, 1)
	c := f.transfer(f.take(1), 5_000, 1)
	dIn := f.take(1)
	d := f.transfer(dIn, 5_000, 2)
	dChild := f.transfer([]coin{out(d, 1)}, 5_000, 1)
	dGrandchild := f.transfer([]coin{out(dChild, 0), out(aChild, 0)}, 5_000, 1)
	f.mustAccept(a, aChild, c, d, dChild, dGrandchild)
	f.expect(a, aChild, c, d, dChild, dGrandchild)

	// The block mines a and spends d's input in another transaction.
	rival := f.transfer(dIn, 9_000, 1)
	f.mine(a, rival)
	// a is gone (mined), d and its descendants are gone (conflict); aChild and c stay.
	f.expect(aChild, c)
	if e, _ := f.pool.Get(aChild.TxID()); len(e.parents) != 0 {
		t.Fatal("aChild still links to its mined parent")
	}
	for _, in := range []coin{dIn[0], out(d, 1), out(dChild, 0)} {
		if _, ok := f.pool.SpentBy(in.op); ok {
			t.Fatalf("%s is still marked spent by the pool", in.op)
		}
	}
	if _, err := f.pool.Accept(a); !errors.Is(err, ErrAlreadyInChain) {
		t.Fatalf("mined transaction again: %v", err)
	}
	if _, err := f.pool.Accept(d); !errors.Is(err, consensus.ErrMissingInputs) {
		t.Fatalf("conflicted transaction again: %v", err)
	}
	sel := f.pool.Select(consensus.MaxBlockSize)
	checkSelect(t, f.pool, sel, consensus.MaxBlockSize)

	// Mining everything empties the pool.
	f.mine(aChild, c)
	f.expect()
	// A block unrelated to the pool changes nothing.
	e := f.transfer(f.take(1), 5_000, 1)
	f.mustAccept(e)
	f.mine()
	f.expect(e)
}

func TestReorganized(t *testing.T) {
	f := newFixture(t, Options{})
	fork := f.tipBlock()
	forkHeight := f.chain.Tip().Height
	tx1 := f.transfer(f.take(1), 7_000, 2)
	tx1Child := f.transfer([]coin{out(tx1, 0)}, 3_000, 1) // in the block too
	in2 := f.take(1)
	tx2 := f.transfer(in2, 6_000, 1)
	f.mustAccept(tx1, tx1Child, tx2)
	blockA := f.mine(tx1, tx1Child, tx2)
	f.expect()

	// After A: a child of the confirmed tx2 and an independent transaction.
	tx3 := f.transfer([]coin{out(tx2, 0)}, 4_000, 1)
	tx4 := f.transfer(f.take(1), 8_000, 1)
	f.mustAccept(tx3, tx4)
	f.expect(tx3, tx4)

	// A competing branch: B1 spends tx2's input elsewhere, B2 makes it the longer chain.
	rival := f.transfer(in2, 11_000, 1)
	b1 := buildBlock(t, fork, forkHeight+1, 1, "b1", rival)
	b2 := buildBlock(t, b1, forkHeight+2, 1, "b2")
	if res := f.process(b1); res.IsTip {
		t.Fatal("b1 took the tip from A")
	}
	f.expect(tx3, tx4)
	res := f.process(b2)
	if len(res.Disconnected) != 1 || len(res.Connected) != 2 {
		t.Fatalf("reorganisation: %d disconnected, %d connected", len(res.Disconnected), len(res.Connected))
	}
	// tx1 and its child are back; tx2 conflicts with the rival and tx3 lost its input.
	f.expect(tx1, tx1Child, tx4)
	sel := f.pool.Select(consensus.MaxBlockSize)
	checkSelect(t, f.pool, sel, consensus.MaxBlockSize)
	if e, _ := f.pool.Get(tx1Child.TxID()); len(e.parents) != 1 {
		t.Fatal("tx1Child lost its link to tx1")
	}

	// Back to A's branch: A2, A3 on A. The rival goes back but now conflicts with tx2.
	a2 := buildBlock(t, blockA, forkHeight+2, 1, "a2")
	a3 := buildBlock(t, a2, forkHeight+3, 1, "a3")
	f.process(a2)
	f.expect(tx1, tx1Child, tx4)
	res = f.process(a3)
	if len(res.Disconnected) != 2 || len(res.Connected) != 3 {
		t.Fatalf("second reorganisation: %d disconnected, %d connected", len(res.Disconnected), len(res.Connected))
	}
	// A mined tx1, tx1Child and tx2 again; the rival is invalid; tx4 stays.
	f.expect(tx4)
	if _, err := f.pool.Accept(rival); !errors.Is(err, consensus.ErrMissingInputs) {
		t.Fatalf("rival after the second reorganisation: %v", err)
	}
	f.mustAccept(tx3)
	f.expect(tx3, tx4)
}

// TestReorganizedDropsSpendsOfDisconnectedCoinbase checks that a pool transaction spending
// the coinbase of a block that a reorganisation takes out of the main chain is dropped.
func TestReorganizedDropsSpendsOfDisconnectedCoinbase(t *testing.T) {
	f := newFixture(t, Options{})
	fork := f.tipBlock()
	h := f.chain.Tip().Height
	a := f.mine()
	// 100 blocks on A make A's coinbase spendable in the next block.
	parent := a
	var branch []*types.Block
	for i := 0; i < 100; i++ {
		b := buildBlock(t, parent, h+2+uint64(i), 1, "")
		f.process(b)
		branch = append(branch, b)
		parent = b
	}
	spendA := f.transfer([]coin{out(a.Transactions[0], 0)}, 10_000, 1)
	other := f.transfer(f.take(1), 10_000, 1)
	f.mustAccept(spendA, other)
	f.expect(spendA, other)
	// A longer branch from the fork point replaces A and everything after it.
	parent = fork
	for i := 0; i < 102; i++ {
		b := buildBlock(t, parent, h+1+uint64(i), 1, "alt")
		if i < 101 {
			if _, err := f.chain.ProcessBlock(b); err != nil {
				t.Fatal(err)
			}
		} else {
			res := f.process(b)
			if len(res.Disconnected) != 101 {
				t.Fatalf("%d blocks disconnected, want 101", len(res.Disconnected))
			}
		}
		parent = b
	}
	f.expect(other)
}

func TestConcurrentAccept(t *testing.T) {
	f := newFixture(t, Options{})
	const workers, each = 8, 40
	batches := make([][]*types.Transaction, workers)
	var all []*types.Transaction
	for w := range batches {
		for i := 0; i < each; i++ {
			// Half independent, half chained within the worker's batch.
			var tx *types.Transaction
			if i%2 == 1 {
				tx = f.transfer([]coin{out(batches[w][i-1], 0)}, 2_000, 1)
			} else {
				tx = f.transfer(f.take(1), 3_000, 2)
			}
			batches[w] = append(batches[w], tx)
			all = append(all, tx)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	stop := make(chan struct{})
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(txs []*types.Transaction) {
			defer wg.Done()
			for _, tx := range txs {
				if _, err := f.pool.Accept(tx); err != nil {
					errs <- err
				}
			}
		}(batches[w])
	}
	// Readers run alongside.
	var rwg sync.WaitGroup
	rwg.Add(1)
	go func() {
		defer rwg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			f.pool.Info()
			f.pool.Select(consensus.MaxBlockSize)
			f.pool.OutputsTo(testPKH)
			f.pool.SpentBy(all[0].Inputs[0].Outpoint())
			f.pool.TxIDs()
		}
	}()
	wg.Wait()
	close(stop)
	rwg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	f.expect(all...)
	// And the same transactions again, concurrently: every one is a duplicate.
	var dup sync.WaitGroup
	for w := 0; w < workers; w++ {
		dup.Add(1)
		go func(txs []*types.Transaction) {
			defer dup.Done()
			for _, tx := range txs {
				if _, err := f.pool.Accept(tx); !errors.Is(err, ErrAlreadyInPool) {
					t.Errorf("duplicate: %v", err)
				}
			}
		}(batches[w])
	}
	dup.Wait()
	f.expect(all...)
}

// TestConcurrentDoubleSpend has goroutines race to spend the same outputs: exactly one
// spend of each output wins, the others get ErrConflict.
func TestConcurrentDoubleSpend(t *testing.T) {
	f := newFixture(t, Options{})
	const workers, outputs = 8, 20
	ins := f.take(outputs)
	var wg sync.WaitGroup
	var mu sync.Mutex
	won := map[types.Outpoint]*types.Transaction{}
	for w := 0; w < workers; w++ {
		txs := make([]*types.Transaction, outputs)
		for i := range txs {
			txs[i] = f.transfer(ins[i:i+1], uint64(2_000+w), 1)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, tx := range txs {
				_, err := f.pool.Accept(tx)
				switch {
				case err == nil:
					mu.Lock()
					op := tx.Inputs[0].Outpoint()
					if won[op] != nil {
						t.Errorf("two spends of %s accepted", op)
					}
					won[op] = tx
					mu.Unlock()
				case !errors.Is(err, ErrConflict):
					t.Errorf("unexpected rejection: %v", err)
				}
			}
		}()
	}
	wg.Wait()
	winners := make([]*types.Transaction, 0, len(won))
	for _, tx := range won {
		winners = append(winners, tx)
	}
	if len(winners) != outputs {
		t.Fatalf("%d spends accepted, want %d", len(winners), outputs)
	}
	f.expect(winners...)
}
