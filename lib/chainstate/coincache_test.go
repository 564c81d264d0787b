package chainstate

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/params"
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
	h := newHarness(t)
	h.Chain("a", "genesis", 101)
	for i := 1; i <= 101; i++ {
		h.accept(fmt.Sprintf("a%d", i), fmt.Sprintf("a%d", i))
	}
	cb := types.Outpoint{TxID: h.Block("a1").Transactions[0].TxID(), Index: 0}
	if !cachedOutput(h.c, cb) {
		t.Fatal("a written coinbase output is not in the coin cache")
	}
	spend := h.spendTx("spend", "a1", 0, 1000, 2)
	h.Next("a102", "a101", []*types.Transaction{spend})
	h.accept("a102", "a102")
	if cachedOutput(h.c, cb) {
		t.Fatal("the coin cache still holds an output a written block spent")
	}
	made := types.Outpoint{TxID: spend.TxID(), Index: 1}
	if !cachedOutput(h.c, made) {
		t.Fatal("an output of a written block is not in the coin cache")
	}

	// A longer branch from a101 disconnects a102: its spend is undone, its outputs are gone.
	h.Chain("b", "a101", 2)
	h.accept("b1", "a102")
	h.accept("b2", "b2")
	if !cachedOutput(h.c, cb) {
		t.Fatal("an output restored by a disconnect is not in the coin cache")
	}
	if cachedOutput(h.c, made) {
		t.Fatal("the coin cache still holds an output of a disconnected block")
	}
	e, ok, err := h.c.Utxo(cb)
	if err != nil || !ok || e.Value == 0 {
		t.Fatalf("Utxo(%v) = %v, %v, %v after the reorg", cb, e, ok, err)
	}
}

// Without a coin cache (CoinCacheMiB < 0) the chain reads the database and nothing is cached.
func TestCoinCacheOff(t *testing.T) {
	c, err := Open(t.TempDir(), params.Regtest, Options{Now: func() time.Time { return time.Unix(1<<40, 0) },
		Values: consensus.NominalValue{}, CoinCacheMiB: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.coins.fc != nil {
		t.Fatal("a coin cache exists with CoinCacheMiB -1")
	}
	var k [utxoKeyLen]byte
	if _, ok := c.coins.get(k[:]); ok {
		t.Fatal("an absent coin cache holds an output")
	}
}
