package mempool

import (
	"bytes"
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

// TestAcceptManyMatchesAccept: a burst through AcceptMany gives every transaction the result
// Accept gives it one after another (same error text, same pool), the bad signature is named
// by its input, and with a signature cache the accepted transactions are cached and the bad
// one is not.
func TestAcceptManyMatchesAccept(t *testing.T) {
	f := newFixture(t, Options{})
	txs, bad := burst(f)

	seq := New(f.chain, testNet.Magic, Options{})
	want := make([]error, len(txs))
	for i, tx := range txs {
		_, want[i] = seq.Accept(tx)
	}
	cache := consensus.NewSigCache(0)
	for _, opts := range []Options{{}, {SigCache: cache}} {
		p := New(f.chain, testNet.Magic, opts)
		ids, errs := p.AcceptMany(txs)
		if len(ids) != len(txs) || len(errs) != len(txs) {
			t.Fatalf("%d ids, %d errors for %d transactions", len(ids), len(errs), len(txs))
		}
		for i, tx := range txs {
			if ids[i] != tx.TxID() {
				t.Fatalf("txid %d: %s, want %s", i, ids[i], tx.TxID())
			}
			if fmt.Sprint(errs[i]) != fmt.Sprint(want[i]) {
				t.Fatalf("transaction %d: AcceptMany %v, Accept %v", i, errs[i], want[i])
			}
			var re *RejectError
			if errs[i] != nil && !errors.As(errs[i], &re) {
				t.Fatalf("transaction %d: %T is not a *RejectError", i, errs[i])
			}
		}
		if err := sameIDs(sortedIDs(p.TxIDs()), sortedIDs(seq.TxIDs())); err != nil {
			t.Fatal(err)
		}
		checkPool(t, p)
	}
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
	// A second burst of the same transactions: all known to the cache, none verified again.
	p := New(f.chain, testNet.Magic, Options{SigCache: cache})
	_, errs := p.AcceptMany(txs)
	for i := range txs {
		if fmt.Sprint(errs[i]) != fmt.Sprint(want[i]) {
			t.Fatalf("again, transaction %d: AcceptMany %v, Accept %v", i, errs[i], want[i])
		}
	}
	if _, errs := p.AcceptMany(nil); len(errs) != 0 {
		t.Fatal("an empty burst has results")
	}
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
