package chainstate

import (
	"context"
	"fmt"
	"testing"

	"github.com/cointoolkit/coin/lib/bincode"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/types"
	"github.com/syndtr/goleveldb/leveldb"
	"github.com/syndtr/goleveldb/leveldb/util"
)

// toLegacyUndo rewrites the journal undo data of main-chain block n as a version before the
// journal wrote it: the stats before the block and the entries of all its inputs, in order.
func toLegacyUndo(t *testing.T, c *Chain, n *BlockNode) {
	t.Helper()
	raw, _, err := c.undoBytes(n.Hash)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := decodeUndo(raw)
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.Block(n.Hash)
	if err != nil {
		t.Fatal(err)
	}
	prevOf := map[string]any{}
	for _, r := range recs {
		prevOf[r.key] = r.prev
	}
	w := bincode.NewWriter(nil)
	prev := prevOf[keyStats].(Stats)
	prev.encode(w)
	var entries []*consensus.UtxoEntry
	var key [37]byte
	for _, tx := range b.Transactions[1:] {
		for j := range tx.Inputs {
			utxoKeyTo(key[:], tx.Inputs[j].Outpoint())
			e, ok := prevOf[string(key[:])].(*consensus.UtxoEntry)
			if !ok {
				e = &consensus.UtxoEntry{} // spent inside the block: legacy data held it too
			}
			entries = append(entries, e)
		}
	}
	w.Varint(uint64(len(entries)))
	for _, e := range entries {
		encodeEntry(w, e)
	}
	batch := new(leveldb.Batch)
	batch.Delete(hashKey(pfxUndoAt, n.Hash))
	batch.Put(hashKey(pfxUndoLegacy, n.Hash), w.Bytes())
	if err := c.db.Write(batch, nil); err != nil {
		t.Fatal(err)
	}
}

// mergesClusters reports whether a transaction spends the outputs of two addresses.
func mergesClusters(txs []*types.Transaction) bool {
	for _, tx := range txs {
		for j := range tx.Inputs {
			if tx.Inputs[j].PublicKey != tx.Inputs[0].PublicKey {
				return true
			}
		}
	}
	return false
}

// disconnectAndWrite disconnects the tip of each chain and writes the cache.
func disconnectAndWrite(t *testing.T, i int, chains ...*Chain) {
	t.Helper()
	for _, c := range chains {
		c.mu.Lock()
		_, err := c.disconnectTip()
		if err == nil {
			err = c.flushLocked()
		}
		c.mu.Unlock()
		if err != nil {
			t.Fatalf("disconnect %d: %v", i, err)
		}
	}
}

// sameState fails unless a and b hold the same stats and the same state tables.
func sameState(t *testing.T, when string, a, b *Chain) {
	t.Helper()
	if a.Stats() != b.Stats() {
		t.Fatalf("%s: stats %+v and %+v", when, a.Stats(), b.Stats())
	}
	for _, pfx := range []byte{pfxUtxo, pfxAddr, pfxCluster, pfxTx, pfxHeight, keyStats[0]} {
		if ra, rb := rawTable(t, a, pfx), rawTable(t, b, pfx); fmt.Sprint(ra) != fmt.Sprint(rb) {
			t.Fatalf("%s: table %q differs (%d records and %d)", when, pfx, len(ra), len(rb))
		}
	}
}

// rawTable is every stored record under a prefix.
func rawTable(t *testing.T, c *Chain, pfx byte) map[string]string {
	t.Helper()
	out := map[string]string{}
	it := c.db.NewIterator(util.BytesPrefix([]byte{pfx}), nil)
	defer it.Release()
	for it.Next() {
		out[string(it.Key())] = string(it.Value())
	}
	return out
}

// TestLegacyUndoDisconnects disconnects blocks whose undo data a version before the keyed
// journal wrote, and checks every table against a chain that disconnects the same blocks
// from journal undo data: a node upgraded in place can still reorg across the upgrade.
func TestLegacyUndoDisconnects(t *testing.T) {
	opts := Options{Now: crashClock, Values: consensus.NominalValue{}}
	open := func() *Chain {
		c, err := Open(context.Background(), t.TempDir(), params.Regtest, opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	ref, _ := workedChain(t, 11, 160)
	flushForTest(t, ref)
	old := open()
	replayMain(t, ref, old)
	// Versions before the journal never merged clusters, so their undo data only exists for
	// blocks whose transactions each spend one address's outputs: convert the top blocks
	// up to the first that merges.
	tip := old.Tip().Height
	depth := 0
	for ; depth < 30; depth++ {
		b, err := old.Block(old.NodeAt(tip - uint64(depth)).Hash)
		if err != nil {
			t.Fatal(err)
		}
		if mergesClusters(b.Transactions[1:]) {
			break
		}
	}
	if depth < 3 {
		t.Fatalf("only %d blocks at the tip merge no clusters", depth)
	}
	for h := tip - uint64(depth) + 1; h <= tip; h++ {
		toLegacyUndo(t, old, old.NodeAt(h))
	}
	transfers := 0
	for i := 0; i < depth; i++ {
		b, _ := old.Block(old.Tip().Hash)
		transfers += len(b.Transactions) - 1

		disconnectAndWrite(t, i, ref, old)
		sameState(t, fmt.Sprintf("after %d disconnects (the second chain from legacy undo data)", i+1), ref, old)
	}
	if n := len(rawTable(t, old, pfxUndoLegacy)); n != 0 {
		t.Fatalf("%d legacy undo records left after disconnecting their blocks", n)
	}
	if transfers == 0 {
		t.Fatal("the disconnected blocks held no transfers: the test proves nothing")
	}
	checkInvariants(t, old)
}
