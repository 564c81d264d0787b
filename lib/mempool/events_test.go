package mempool

import (
	"errors"
	"testing"

	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/types"
)

// TestOnChange: every transaction entering the pool is told once, and every one leaving with
// its reason: mined (block), spending what a block spent (conflict, descendants too), pushed
// out of a full pool (evicted); TestAccept tells nothing and changes nothing.
func TestOnChange(t *testing.T) {
	var got []Change
	f := newFixture(t, Options{OnChange: func(c Change) { got = append(got, c) }})
	take := func() []Change { g := got; got = nil; return g }
	want := func(what string, w ...Change) {
		t.Helper()
		g := take()
		if len(g) != len(w) {
			t.Fatalf("%s: %+v, want %+v", what, g, w)
		}
		seen := map[Change]int{}
		for _, c := range g {
			seen[c]++
		}
		for _, c := range w {
			if seen[c]--; seen[c] < 0 {
				t.Fatalf("%s: %+v, want %+v", what, g, w)
			}
		}
	}
	added := func(tx *types.Transaction) Change { return Change{TxID: tx.TxID(), Added: true} }
	left := func(tx *types.Transaction, r RemoveReason) Change { return Change{TxID: tx.TxID(), Reason: r} }

	a := f.transfer(f.take(1), 5_000, 2)
	dIn := f.take(1)
	d := f.transfer(dIn, 5_000, 2)
	dChild := f.transfer([]coin{out(d, 0)}, 5_000, 1)
	if id, fee, size, err := f.pool.TestAccept(a); err != nil || id != a.TxID() || fee != 5_000 || size != a.SerializeSize() {
		t.Fatalf("TestAccept: %s %d %d %v", id, fee, size, err)
	}
	want("TestAccept")
	if f.pool.Info().Size != 0 {
		t.Fatal("TestAccept added to the pool")
	}
	f.mustAccept(a, d, dChild)
	want("accepted", added(a), added(d), added(dChild))
	if _, _, _, err := f.pool.TestAccept(a); !errors.Is(err, ErrAlreadyInMempool) {
		t.Fatalf("TestAccept of a pool transaction: %v", err)
	}
	rival := f.transfer(dIn, 9_000, 1)
	f.mine(a, rival)
	want("mined", left(a, RemovedBlock), left(d, RemovedConflict), left(dChild, RemovedConflict))
	if _, _, _, err := f.pool.TestAccept(d); !errors.Is(err, consensus.ErrMissingInputs) {
		t.Fatalf("TestAccept of a conflicted transaction: %v", err)
	}

	// A full pool evicts the lowest fee rate.
	small := newFixture(t, Options{OnChange: func(c Change) { got = append(got, c) }})
	low := small.atRate(small.take(1), 2, 1)
	small.mustAccept(low)
	take()
	small.pool.maxBytes = low.SerializeSize() + 10
	high := small.atRate(small.take(1), 5, 1)
	small.mustAccept(high)
	want("evicted", added(high), left(low, RemovedEvicted))
}
