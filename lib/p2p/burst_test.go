package p2p

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/chaingen"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/p2p/wire"
	"github.com/cointoolkit/coin/lib/types"
)

// TestTxBurstVerifiedTogether: the transactions of one getdata are held until the burst is
// complete (the last one arrived or was not found), their signatures verified together into
// the signature cache, and then accepted in arrival order: a parent and its 40 children all
// enter the mempool, a child with a bad signature does not and gets its sender banned.
func TestTxBurstVerifiedTogether(t *testing.T) {
	w := newWallet(6)
	n := startNode(t, "N", nodeOpts{})
	blocks := n.mine(w, 101)
	r, err := dialRaw(t, n.addr(), "")
	if err != nil {
		t.Fatal(err)
	}
	if err := r.handshake(rawVersion(0, 78)); err != nil {
		t.Fatal(err)
	}
	const kids = 40
	parent := w.gen.Spend(chaingen.OutputOf(blocks[0].Transactions[0], 0)).Fee(10_000).Change(w.pkh, kids+2).SignedBy(w.Wallet).Tx()
	txs := []*types.Transaction{parent}
	for i := 0; i < kids; i++ {
		txs = append(txs, w.spend(parent, uint32(i), 1_000))
	}
	missing := w.spend(parent, kids, 1_000) // announced, then not found
	bad := w.spend(parent, kids+1, 1_000)
	bad.Inputs[0].Signature[40] ^= 1
	all := append(append([]*types.Transaction(nil), txs...), missing, bad)

	inv := make([]wire.InvVect, len(all))
	for i, tx := range all {
		inv[i] = wire.InvVect{Type: wire.InvTx, Hash: tx.TxID()}
	}
	if err := r.send(&wire.MsgInv{Inv: inv}); err != nil {
		t.Fatal(err)
	}
	for {
		m, err := r.recv(5 * time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if gd, ok := m.(*wire.MsgGetData); ok {
			if len(gd.Inv) != len(all) {
				t.Fatalf("getdata for %d transactions, want %d", len(gd.Inv), len(all))
			}
			break
		}
	}
	// Children first: the burst is accepted in arrival order, so they wait as orphans for the
	// parent that comes after them.
	for _, tx := range append(append(txs[1:], bad), parent) {
		if err := r.send(&wire.MsgTx{Tx: tx}); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(100 * time.Millisecond)
	if inPool(n, parent.TxID()) {
		t.Fatal("the burst was accepted before it was complete")
	}
	if err := r.send(&wire.MsgNotFound{Inv: []wire.InvVect{{Type: wire.InvTx, Hash: missing.TxID()}}}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the burst in the mempool", func() bool {
		for _, tx := range txs {
			if !inPool(n, tx.TxID()) {
				return false
			}
		}
		return true
	})
	if !n.log.Contains("transaction burst: signatures verified together") || !n.log.Contains("verified=42") {
		t.Fatalf("no log line of the burst verified together:\n%s", n.log.String())
	}
	if inPool(n, bad.TxID()) || inPool(n, missing.TxID()) {
		t.Fatal("the bad or the missing transaction is in the mempool")
	}
	cache := n.n.Chain().SigCache()
	if !cache.Has(consensus.SigCacheKey(txs[kids])) || cache.Has(consensus.SigCacheKey(bad)) {
		t.Fatal("the signature cache does not hold exactly the good transactions")
	}
	if !r.closed(10 * time.Second) {
		t.Fatal("the peer that sent a bad signature was not dropped")
	}
	_, err = n.n.Mempool().Accept(context.Background(), bad)
	if !errors.Is(err, consensus.ErrBadSignature) {
		t.Fatalf("the bad transaction: %v", err)
	}
}
