package mempool

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/types"
)

// burst is a relay burst with a bit of everything: independent transfers, a parent and its
// child, a bad signature (on input 1 of a two-input transfer), a duplicate, a double spend
// and a coinbase.
func burst(f *fixture) (txs []*types.Transaction, bad *types.Transaction) {
	for _, c := range f.take(150) {
		txs = append(txs, f.transfer([]coin{c}, 500, 1))
	}
	parent := f.transfer(f.take(1), 500, 2)
	child := f.transfer([]coin{out(parent, 1)}, 500, 1)
	two := f.take(2)
	bad = f.transfer(two, 500, 1)
	bad.Inputs[1].Signature[40] ^= 8
	same := f.take(1)
	first := f.transfer(same, 500, 1)
	conflict := f.transfer(same, 900, 1)
	cb := &types.Transaction{Version: consensus.TxVersion, Kind: types.KindCoinbase,
		Outputs: []types.TxOutput{{Value: 1, PubKeyHash: testPKH}}}
	txs = append(txs[:40], append([]*types.Transaction{child, parent, bad, txs[3], first, conflict, cb}, txs[40:]...)...)
	txs = append(txs, parent, child) // the child again, now after its parent
	return txs, bad
}

// TestPreverifiedBurstMatchesAccept: a burst accepted as the node accepts one (its
// signatures verified together into the signature cache, then Accept for each) gives every
// transaction the result Accept gives it without the cache (same error text, same pool); the
// bad signature is named by its input, the accepted transactions are cached and the bad one
// is not, and a second burst of the same transactions verifies nothing again.
func TestPreverifiedBurstMatchesAccept(t *testing.T) {
	f := newFixture(t, Options{})
	txs, bad := burst(f)

	seq := New(f.chain, testNet.Magic, Options{})
	want := make([]error, len(txs))
	for i, tx := range txs {
		_, want[i] = seq.Accept(context.Background(), tx)
	}
	cache := consensus.NewSigCache(0)
	acceptBurst := func() *Pool {
		p := New(f.chain, testNet.Magic, Options{SigCache: cache})
		cache.PreverifyTransactions(txs, nil, testNet.Magic, 0)
		for i, tx := range txs {
			id, err := p.Accept(context.Background(), tx)
			if id != tx.TxID() {
				t.Fatalf("txid %d: %s, want %s", i, id, tx.TxID())
			}
			if fmt.Sprint(err) != fmt.Sprint(want[i]) {
				t.Fatalf("transaction %d: after the burst's verification %v, Accept alone %v", i, err, want[i])
			}
			var re *RejectError
			if err != nil && !errors.As(err, &re) {
				t.Fatalf("transaction %d: %T is not a *RejectError", i, err)
			}
		}
		if err := sameIDs(sortedIDs(p.TxIDs()), sortedIDs(seq.TxIDs())); err != nil {
			t.Fatal(err)
		}
		checkPool(t, p)
		return p
	}
	acceptBurst()
	i := indexOf(txs, bad)
	if !errors.Is(want[i], consensus.ErrBadSignature) {
		t.Fatalf("bad signature: %v", want[i])
	}
	if wantText := fmt.Sprintf("transaction %s: input 1: invalid signature", bad.TxID()); !strings.Contains(want[i].Error(), wantText) {
		t.Fatalf("bad signature error %q does not name input 1 (%q)", want[i], wantText)
	}
	if cache.Has(consensus.SigCacheKey(bad)) {
		t.Fatal("the bad signature was cached")
	}
	if !cache.Has(consensus.SigCacheKey(txs[0])) {
		t.Fatal("an accepted transaction was not cached")
	}
	// A second burst of the same transactions: only the bad one is verified again.
	if n := cache.PreverifyTransactions(txs, nil, testNet.Magic, 0); n != 1 {
		t.Fatalf("the second burst verified %d transactions, want 1 (the bad one)", n)
	}
	acceptBurst()
}

func indexOf(txs []*types.Transaction, tx *types.Transaction) int {
	for i := range txs {
		if txs[i] == tx {
			return i
		}
	}
	return -1
}

func sortedIDs(ids []types.Hash) []types.Hash {
	slices.SortFunc(ids, func(a, b types.Hash) int { return bytes.Compare(a[:], b[:]) })
	return ids
}
