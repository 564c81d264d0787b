package chainstate

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/cointoolkit/coin/lib/chaingen"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/types"
	"github.com/syndtr/goleveldb/leveldb"
)

func TestConnectSpendAndReorg(t *testing.T) {
	h := newHarness(t)
	h.Chain("a", "genesis", 101)
	for i := 1; i <= 101; i++ {
		name := fmt.Sprintf("a%d", i)
		h.accept(name, name)
	}
	// Spend the first coinbase, mature at height 101 (created at 1).
	tx := h.Spend(h.Coinbase("a1")).Fee(1000).Change(h.Miner().PKH, 2).Tx()
	h.Next("a102", "a101", []*types.Transaction{tx})
	h.accept("a102", "a102")
	if _, ok, _ := h.c.Utxo(types.Outpoint{TxID: tx.TxID(), Index: 1}); !ok {
		t.Fatal("spend output missing")
	}
	if _, ok, _ := h.c.Utxo(types.Outpoint{TxID: h.Block("a1").Transactions[0].TxID(), Index: 0}); ok {
		t.Fatal("spent coinbase still unspent")
	}
	if loc, err := h.c.TxLocation(tx.TxID()); err != nil || loc.Height != 102 || loc.Position != 1 {
		t.Fatal(loc, err)
	}
	before := utxoSet(t, h.c)

	// A fork from a100: b101 has less work than a102, stays aside.
	h.Next("b101", "a100", nil)
	h.accept("b101", "a102")
	h.Next("b102", "b101", nil)
	h.accept("b102", "a102") // equal work: first seen stays
	h.Next("b103", "b102", nil)
	h.accept("b103", "b103") // more work: reorg
	if _, err := h.c.TxLocation(tx.TxID()); !errors.Is(err, ErrNotFound) {
		t.Fatal("tx of the losing branch still indexed")
	}
	if err := sameSet(utxoSet(t, h.c), replaySet(t, h.c)); err != nil {
		t.Fatal("after reorg:", err)
	}
	// Switch back: a103, a104 on the first branch.
	h.Next("a103", "a102", nil)
	h.accept("a103", "b103")
	h.Next("a104", "a103", nil)
	h.accept("a104", "a104")
	if err := sameSet(utxoSet(t, h.c), replaySet(t, h.c)); err != nil {
		t.Fatal("after switching back:", err)
	}
	after := utxoSet(t, h.c)
	delete(before, types.Outpoint{}) // no-op; before lacks a103/a104 coinbases
	for op, e := range before {
		if after[op] != e {
			t.Fatalf("output %s changed across the round trip", op)
		}
	}
}

func TestInvalidBranchKeepsBestValidChain(t *testing.T) {
	h := newHarness(t)
	h.Chain("a", "genesis", 3)
	for i := 1; i <= 3; i++ {
		h.accept(fmt.Sprintf("a%d", i), fmt.Sprintf("a%d", i))
	}
	// b2 spends an output that does not exist: valid in isolation, invalid on connect.
	h.Next("b2", "a1", nil)
	h.accept("b2", "a3")
	bogus := &types.Transaction{Version: 1, Kind: types.KindTransfer,
		Inputs:  []types.TxInput{{PrevTxID: types.Blake3([]byte("nothing"))}},
		Outputs: []types.TxOutput{{Value: 1, PubKeyHash: h.Miner().PKH}}}
	h.Next("b3", "b2", []*types.Transaction{bogus})
	h.accept("b3", "a3") // equal work with a3: stays
	h.Next("b4", "b3", nil)
	h.reject("b4", consensus.ErrMissingInputs, "a3") // reorg attempt fails at b3
	if n := h.c.NodeByHash(h.Block("b3").Hash()); n.status != StatusInvalid {
		t.Fatalf("b3 status %s", n.status)
	}
	if n := h.c.NodeByHash(h.Block("b4").Hash()); n.status != StatusInvalidParent {
		t.Fatalf("b4 status %s", n.status)
	}
	h.Next("b5", "b4", nil)
	h.reject("b5", consensus.ErrInvalidAncestor, "a3")
	h.reject("b4", consensus.ErrKnownInvalid, "a3")
	h.reject("a3", consensus.ErrDuplicateBlock, "a3")
}

func TestLockedDataDir(t *testing.T) {
	dir := t.TempDir()
	c, err := Open(context.Background(), dir, params.Regtest, Options{Values: consensus.NominalValue{}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = Open(context.Background(), dir, params.Regtest, Options{Values: consensus.NominalValue{}})
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("second open: %v", err)
	}
	t.Log(err)
}

func TestReopenResumes(t *testing.T) {
	dir := t.TempDir()
	g := chaingen.New(t, nil)
	c, err := Open(context.Background(), dir, params.Regtest, Options{Values: consensus.NominalValue{}})
	if err != nil {
		t.Fatal(err)
	}
	g.Chain("a", "genesis", 5)
	for i := 1; i <= 5; i++ {
		if _, err := c.ProcessBlock(context.Background(), g.Block(fmt.Sprintf("a%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	s := c.Stats()
	c.Close()
	c, err = Open(context.Background(), dir, params.Regtest, Options{Values: consensus.NominalValue{}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.Stats() != s || c.Tip().Hash != g.Block("a5").Hash() || c.NodeAt(3).Hash != g.Block("a3").Hash() {
		t.Fatal("reopen lost state")
	}
	if _, err := Open(context.Background(), t.TempDir(), params.Testnet, Options{Values: consensus.NominalValue{}}); err != nil {
		t.Fatal(err)
	}
}

// storeOnly writes a block and its index record the way ProcessBlock does before it connects
// anything, and stops there: what a crash between the two batches leaves behind.
func storeOnly(t *testing.T, c *Chain, b *types.Block) {
	t.Helper()
	parent := c.index.get(b.Header.PrevHash)
	c.seq++
	n := &BlockNode{Hash: b.Hash(), Height: parent.Height + 1, status: StatusStored, Parent: parent,
		Work: parent.Work.Add(workOf(b.Header.DifficultyTarget)), size: uint32(b.SerializeSize()),
		txCount: uint32(len(b.Transactions)), seq: c.seq}
	n.setHeader(&b.Header)
	batch := new(leveldb.Batch)
	if err := c.storeBlock(batch, n.Hash, b.Bytes()); err != nil {
		t.Fatal(err)
	}
	batch.Put(hashKey(pfxIndex, n.Hash), indexRecord(n))
	if err := c.db.Write(batch, nil); err != nil {
		t.Fatal(err)
	}
}

// TestReopenConnectsStoredBranch: a block stored but not connected when the process died is
// connected by Open when it has the most work; an invalid one found that way is marked.
func TestReopenConnectsStoredBranch(t *testing.T) {
	h := newHarness(t)
	h.Chain("a", "genesis", 3)
	for i := 1; i <= 3; i++ {
		h.accept(fmt.Sprintf("a%d", i), fmt.Sprintf("a%d", i))
	}
	// Seen first and invalid (the coinbase pays one subunit too much), then a valid sibling
	// with a child.
	h.Next("bad4", "a3", nil, chaingen.CoinbaseValue(consensus.Subsidy(4)+1))
	h.Next("a4", "a3", nil)
	h.Next("a5", "a4", nil)
	for _, name := range []string{"bad4", "a4"} {
		storeOnly(t, h.c, h.Block(name))
	}
	stats := h.c.Stats()
	h.c.Close()
	c, err := Open(context.Background(), h.dir, params.Regtest, h.c.opts)
	if err != nil {
		t.Fatal(err)
	}
	h.c = c
	t.Cleanup(func() { c.Close() })
	h.expectTip("a4")
	if n := c.NodeByHash(h.Block("bad4").Hash()); n == nil || n.status != StatusInvalid {
		t.Fatalf("bad4: %+v", n)
	}
	if c.Stats().Height != stats.Height+1 {
		t.Fatal("a4 not connected")
	}
	h.accept("a5", "a5")
	if err := sameSet(utxoSet(t, c), replaySet(t, c)); err != nil {
		t.Fatal(err)
	}
	checkIndexes(t, c, utxoSet(t, c))
}

// TestNodeIndex checks the hash index against a map through puts, replacements and deletions
// (backward shifts included: keys share their tail, so many share a probe start).
func TestNodeIndex(t *testing.T) {
	x := newNodeIndex()
	ref := make(map[types.Hash]*BlockNode)
	key := func(i int) types.Hash {
		var h types.Hash
		h[0], h[1] = byte(i), byte(i>>8)
		h[24] = byte(i % 7) // few distinct tails: long runs
		return h
	}
	for step := range 20000 {
		i := (step * 7919) % 3000
		h := key(i)
		if step%3 == 2 {
			x.del(h)
			delete(ref, h)
		} else {
			n := &BlockNode{Hash: h}
			x.put(n)
			ref[h] = n
		}
		if step%500 == 0 || step == 19999 {
			if x.len() != len(ref) {
				t.Fatalf("step %d: %d nodes, want %d", step, x.len(), len(ref))
			}
			for j := range 3000 {
				if got := x.get(key(j)); got != ref[key(j)] {
					t.Fatalf("step %d: get(%d) = %p, want %p", step, j, got, ref[key(j)])
				}
			}
			seen := 0
			for n := range x.all() {
				if ref[n.Hash] != n {
					t.Fatalf("step %d: all yields a node not in the index", step)
				}
				seen++
			}
			if seen != len(ref) {
				t.Fatalf("step %d: all yields %d nodes, want %d", step, seen, len(ref))
			}
		}
	}
}

// The address index is bare (no copy of the entry); a database written before holds entries
// with the copy, and UtxosByAddress reads both kinds alike.
func TestAddressIndexReadsEntriesWithAndWithoutCopy(t *testing.T) {
	h := newHarness(t)
	h.Chain("a", "genesis", 3)
	for i := 1; i <= 3; i++ {
		h.accept(fmt.Sprintf("a%d", i), fmt.Sprintf("a%d", i))
	}
	pkh := h.Miner().PKH
	bare, err := h.c.UtxosByAddress(pkh)
	if err != nil || len(bare) != 3 {
		t.Fatalf("%d outputs, %v; want the 3 coinbases", len(bare), err)
	}
	// Give the first entry its copy, as a database written before bare entries holds it.
	k := make([]byte, 69)
	addrKeyTo(k, pkh, bare[0].Outpoint)
	if v, err := h.c.db.Get(k, nil); err != nil || len(v) != 0 {
		t.Fatalf("index entry %x holds %d bytes (%v), want a bare entry", v, len(v), err)
	}
	if err := h.c.db.Put(k, entryBytes(bare[0].Entry), nil); err != nil {
		t.Fatal(err)
	}
	mixed, err := h.c.UtxosByAddress(pkh)
	if err != nil || len(mixed) != len(bare) {
		t.Fatalf("%d outputs, %v", len(mixed), err)
	}
	for i := range bare {
		if mixed[i].Outpoint != bare[i].Outpoint || *mixed[i].Entry != *bare[i].Entry {
			t.Fatalf("output %d: %+v, want %+v", i, mixed[i], bare[i])
		}
	}
}
