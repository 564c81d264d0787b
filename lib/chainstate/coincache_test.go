package chainstate

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/cointoolkit/coin/lib/types"
	"github.com/syndtr/goleveldb/leveldb"
)

// checkCoinCache checks that every output the coin cache holds is in the database with the
// same bytes. The cache cannot be listed, so the check asks it for every output a stored
// block created or spent (side branches included). The caller has written the write cache.
func checkCoinCache(t testing.TB, c *Chain) {
	t.Helper()
	settle(t, c)
	c.mu.RLock()
	var hashes []types.Hash
	for n := range c.index.all() {
		if !n.headerOnly && n.Height > 0 {
			hashes = append(hashes, n.Hash)
		}
	}
	c.mu.RUnlock()
	check := func(op types.Outpoint) {
		var k [utxoKeyLen]byte
		utxoKeyTo(k[:], op)
		cached, ok := c.coins.get(k[:])
		if !ok {
			return
		}
		disk, err := c.db.Get(k[:], nil)
		if errors.Is(err, leveldb.ErrNotFound) {
			t.Fatalf("coin cache holds %s:%d, which the database does not", op.TxID, op.Index)
		}
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(cached, disk) {
			t.Fatalf("coin cache holds %x for %s:%d, the database %x", cached, op.TxID, op.Index, disk)
		}
	}
	for _, h := range hashes {
		b, err := c.Block(h)
		if err != nil {
			t.Fatal(err)
		}
		for _, tx := range b.Transactions {
			id := tx.TxID()
			for i := range tx.Outputs {
				check(types.Outpoint{TxID: id, Index: uint32(i)})
			}
			if !tx.IsCoinbase() {
				for i := range tx.Inputs {
					check(tx.Inputs[i].Outpoint())
				}
			}
		}
	}
}

// cachedOutput reports whether the coin cache holds op.
func cachedOutput(c *Chain, op types.Outpoint) bool {
	var k [utxoKeyLen]byte
	utxoKeyTo(k[:], op)
	_, ok := c.coins.get(k[:])
	return ok
}

// The coin cache follows the database through a spend and a reorg that undoes it: an output
// is cached once written, dropped when a written block spends it, cached again when the block
// is disconnected, and an output of the disconnected branch is dropped. Reads through it give
// what the database gives (checkInvariants after every step).
func TestCoinCacheFollowsTheDatabase(t *testing.T) {
	spendAndReorg(t, newHarness(t), true)
}

// Without a coin cache (CoinCacheMiB < 0) the same spend and reorg read the database, and
// nothing is cached.
func TestCoinCacheOff(t *testing.T) {
	h := newHarnessWith(t, Options{CoinCacheMiB: -1})
	if h.c.coins.fc != nil {
		t.Fatal("a coin cache exists with CoinCacheMiB -1")
	}
	spendAndReorg(t, h, false)
}

// spendAndReorg spends a coinbase in a102 and disconnects a102 with a longer branch from
// a101; cached says whether the coin cache is on (the outputs then follow the database).
func spendAndReorg(t *testing.T, h *harness, cached bool) {
	h.Chain("a", "genesis", 101)
	for i := 1; i <= 101; i++ {
		h.accept(fmt.Sprintf("a%d", i), fmt.Sprintf("a%d", i))
	}
	cb := types.Outpoint{TxID: h.Block("a1").Transactions[0].TxID(), Index: 0}
	expect := func(op types.Outpoint, want bool, what string) {
		t.Helper()
		if got := cachedOutput(h.c, op); got != (want && cached) {
			t.Fatalf("%s: cached %v, want %v", what, got, want && cached)
		}
	}
	expect(cb, true, "a written coinbase output")
	spend := h.spendTx("spend", "a1", 0, 1000, 2)
	h.Next("a102", "a101", []*types.Transaction{spend})
	h.accept("a102", "a102")
	made := types.Outpoint{TxID: spend.TxID(), Index: 1}
	expect(cb, false, "an output a written block spent")
	expect(made, true, "an output of a written block")

	// A longer branch from a101 disconnects a102: its spend is undone, its outputs are gone.
	h.Chain("b", "a101", 2)
	h.accept("b1", "a102")
	h.accept("b2", "b2")
	expect(cb, true, "an output restored by a disconnect")
	expect(made, false, "an output of a disconnected block")
	e, ok, err := h.c.Utxo(cb)
	if err != nil || !ok || e.Value == 0 {
		t.Fatalf("Utxo(%v) = %v, %v, %v after the reorg", cb, e, ok, err)
	}
	if _, ok, err := h.c.Utxo(made); err != nil || ok {
		t.Fatalf("Utxo(%v) of the disconnected block = %v, %v", made, ok, err)
	}
}
