package mempool

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/types"
)

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
	f.pool = New(f.chain, testNet.Magic, Options{MaxBytes: 5 * size})
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
	err := f.mustReject(poor, ErrMempoolFull)
	if !strings.HasPrefix(err.Error(), "mempool full") {
		t.Fatalf("message %q", err)
	}
	if err.Error() != "mempool full: fee rate too low to enter a full pool" {
		t.Fatalf("message %q", err) // the RPC sends it as is
	}
	f.expect(m3, m4, m5, h20, h30)
	// Equal rate to the lowest: the newcomer loses the tie.
	f.mustReject(f.atRate(f.take(1), 3, 1), ErrMempoolFull)
	f.expect(m3, m4, m5, h20, h30)
	// A high-paying child of the lowest transaction goes out with it: eviction looks at each
	// transaction's own fee rate, not at packages, so the child is refused and takes its
	// parent with it.
	m3child := f.atRate([]coin{out(m3, 0)}, 100, 1)
	if _, err := f.pool.Accept(context.Background(), m3child); !errors.Is(err, ErrMempoolFull) {
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
