package httpapi

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/amount"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/faucet/payout"
	"github.com/cointoolkit/coin/lib/types"
	"github.com/cointoolkit/coin/lib/wallet"
)

// paidTo is the sum of the outputs to pkh in the fake node's chain (its UTXO set: claimants
// never spend).
func (f *fakeNode) paidTo(pkh types.Hash) (sum uint64, outputs int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, e := range f.utxos {
		if e.PubKeyHash == pkh {
			sum += e.Value
			outputs++
		}
	}
	return sum, outputs
}

// mineExternal mines tx in a block of its own without the mempool's checks: a transaction
// of someone else holding the faucet's key (the operator's wallet), or one the faucet's
// node never saw. Mempool transactions that conflict with it leave the mempool with their
// descendants, as a node's do.
func (f *fakeNode) mineExternal(tx *types.Transaction) {
	f.mu.Lock()
	defer f.mu.Unlock()
	id := tx.TxID()
	evicted := map[types.Hash]bool{}
	for _, in := range tx.Inputs {
		if other, ok := f.spends[in.Outpoint()]; ok {
			evicted[other] = true
		}
	}
	for _, pid := range f.order { // parents come first in order
		for _, in := range f.pool[pid].Inputs {
			if evicted[in.PrevTxID] {
				evicted[pid] = true
			}
		}
	}
	order := f.order[:0]
	for _, pid := range f.order {
		if !evicted[pid] {
			order = append(order, pid)
			continue
		}
		for _, in := range f.pool[pid].Inputs {
			delete(f.spends, in.Outpoint())
		}
		delete(f.pool, pid)
		delete(f.depth, pid)
	}
	f.order = order
	h := f.tip() + 1
	for _, in := range tx.Inputs {
		delete(f.utxos, in.Outpoint())
	}
	for j, o := range tx.Outputs {
		f.utxos[types.Outpoint{TxID: id, Index: uint32(j)}] = &consensus.UtxoEntry{Value: o.Value, PubKeyHash: o.PubKeyHash, Height: h}
	}
	f.blocks = append(f.blocks, []string{"coinbase-x", id.String()})
}

func (f *fakeNode) inPool(id types.Hash) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, ok := f.pool[id]
	return ok
}

func claimTxID(t testing.TB, r response) types.Hash {
	t.Helper()
	if r.Status != 200 {
		t.Fatalf("claim: %d %s", r.Status, r.Raw)
	}
	id, err := types.ParseHash(r.Body["txid"].(string))
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// The first report: claims answered 200, then the node loses its mempool and the
// faucet restarts (kill -9 of both). The journal holds the signed transactions, so the
// restarted faucet sends them again before anything else, and every claimant is paid once.
func TestJournalResendsAfterRestart(t *testing.T) {
	h := newHarness(t, 3, withAmount(amount.Coin))
	pkhs := make([]types.Hash, 5)
	ids := map[types.Hash]bool{}
	for i := range pkhs {
		var a string
		a, pkhs[i] = newAddress(t)
		ids[claimTxID(t, h.do(t, http.MethodPost, "/api/faucet", claimBody(a)))] = true
	}
	h.node.dropMempool()
	h.restart(t)
	waitFor(t, func() bool {
		for id := range ids {
			if !h.node.inPool(id) {
				return false
			}
		}
		return true
	})
	h.node.mine(1)
	for i, pkh := range pkhs {
		if sum, n := h.node.paidTo(pkh); sum != amount.Coin || n != 1 {
			t.Fatalf("claimant %d: %d outputs worth %d, want one of %d", i, n, sum, amount.Coin)
		}
	}
}

// A crash between the journal write and the broadcast (here: the node's answer is lost and
// the node never got the transaction, then the faucet restarts): the claim was answered 200
// and its payout is sent from the journal, once.
func TestJournalLostBroadcast(t *testing.T) {
	h := newHarness(t, 2, withAmount(amount.Coin))
	h.node.mu.Lock()
	h.node.sendErr = func(*types.Transaction) (error, bool) { return errors.New("connection reset by peer"), true }
	h.node.mu.Unlock()
	a, pkh := newAddress(t)
	id := claimTxID(t, h.do(t, http.MethodPost, "/api/faucet", claimBody(a)))
	if h.node.inPool(id) {
		t.Fatal("the node got the payout")
	}
	if rec, ok, _ := h.claims.Last(a); !ok || rec.TxID != id {
		t.Fatalf("claim record %+v %v", rec, ok)
	}
	h.restart(t)
	waitFor(t, func() bool { return h.node.inPool(id) })
	h.node.mine(payout.FinalConfirmations)
	if sum, n := h.node.paidTo(pkh); sum != amount.Coin || n != 1 {
		t.Fatalf("claimant: %d outputs worth %d", n, sum)
	}
	// Mined payout.FinalConfirmations deep, the payout leaves the journal.
	waitFor(t, func() bool { ps, _ := h.claims.Payouts(); return len(ps) == 0 && h.engine.Status().Owed == 0 })
}

// A payout that another mined transaction conflicts (here the operator spent the faucet's
// coin with its own wallet while the node had lost the payout), and a payout that spends
// its change, are each paid again exactly once by a new transaction, recorded as such;
// neither a later block nor a restart pays them a third time.
func TestJournalConflictedPaidAgainOnce(t *testing.T) {
	h := newHarness(t, 1, withAmount(amount.Coin))
	a, pa := newAddress(t)
	b, pb := newAddress(t)
	tx1 := claimTxID(t, h.do(t, http.MethodPost, "/api/faucet", claimBody(a)))
	tx2 := claimTxID(t, h.do(t, http.MethodPost, "/api/faucet", claimBody(b)))
	h.node.mu.Lock()
	first := h.node.pool[tx1]
	if h.node.pool[tx2].Inputs[0].PrevTxID != tx1 {
		h.node.mu.Unlock()
		t.Fatal("the second payout does not spend the first one's change")
	}
	h.node.mu.Unlock()
	// More funds for the repayments, then the node loses its mempool and the operator's
	// transaction spending the faucet's coin (tx1's input) is mined.
	h.node.fund(h.key.PKH, 50*amount.Coin, false)
	h.node.dropMempool()
	op := first.Inputs[0].Outpoint()
	_, other := newAddress(t)
	plan, err := wallet.Select(nil, wallet.Request{Payments: []wallet.Payment{{PKH: other, Value: 49 * amount.Coin}},
		Inputs: []wallet.Coin{{Outpoint: op, Value: 50 * amount.Coin, PKH: h.key.PKH}}, Change: h.key.PKH})
	if err != nil {
		t.Fatal(err)
	}
	if err := wallet.Sign(plan, []wallet.Key{h.key}, testNet.Magic); err != nil {
		t.Fatal(err)
	}
	h.node.mineExternal(plan.Tx)
	deadline := time.Now().Add(5 * time.Second)
	for h.engine.Status().Repaid != 2 {
		if time.Now().After(deadline) {
			t.Fatalf("repaid %d, want 2\n%s", h.engine.Status().Repaid, h.log.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	h.node.mine(1)
	for _, pkh := range []types.Hash{pa, pb} {
		if sum, n := h.node.paidTo(pkh); sum != amount.Coin || n != 1 {
			t.Fatalf("claimant: %d outputs worth %d, want one", n, sum)
		}
	}
	cs, err := h.claims.ConflictedPayouts()
	if err != nil || len(cs) != 2 {
		t.Fatalf("conflicted records: %+v %v", cs, err)
	}
	for _, c := range cs {
		if c.TxID != tx1 && c.TxID != tx2 {
			t.Fatalf("conflicted record of %s", c.TxID)
		}
	}
	for _, addr := range []string{a, b} {
		rec, _, _ := h.claims.Last(addr)
		if rec.TxID == tx1 || rec.TxID == tx2 {
			t.Fatalf("claim record of %s still names the conflicted payout", addr)
		}
	}
	// The repayment keeps the claims' entries by time and their client.
	if recent, err := h.claims.Recent(time.Unix(0, 0)); err != nil || len(recent) != 2 ||
		recent[0].Client != "127.0.0.1" || recent[1].Client != "127.0.0.1" {
		t.Fatalf("recent claims after the repayment: %+v %v; want both, of client 127.0.0.1", recent, err)
	}
	h.restart(t)
	h.node.mine(payout.FinalConfirmations)
	deadline = time.Now().Add(5 * time.Second)
	for h.engine.Status().Owed != 0 {
		if time.Now().After(deadline) {
			ps, _ := h.claims.Payouts()
			t.Fatalf("payouts still journaled: %+v\n%s", ps, h.log.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond)
	for _, pkh := range []types.Hash{pa, pb} {
		if sum, n := h.node.paidTo(pkh); sum != amount.Coin || n != 1 {
			t.Fatalf("after a restart: %d outputs worth %d, want one", n, sum)
		}
	}
	if st := h.engine.Status(); st.Repaid != 0 {
		t.Fatalf("repaid again after the restart: %+v", st)
	}
}

// While the node lacks a journaled payout, new payouts never spend its inputs (which the
// node shows unspent), so the faucet makes no conflict of its own.
func TestJournalInputsReserved(t *testing.T) {
	h := newHarness(t, 2, withAmount(amount.Coin))
	a, pa := newAddress(t)
	tx1 := claimTxID(t, h.do(t, http.MethodPost, "/api/faucet", claimBody(a)))
	h.node.dropMempool()
	h.node.mu.Lock()
	h.node.sendErr = func(tx *types.Transaction) (error, bool) {
		if tx.TxID() == tx1 {
			return errors.New("connection refused"), false
		}
		return nil, false
	}
	h.node.mu.Unlock()
	b, pb := newAddress(t)
	claimTxID(t, h.do(t, http.MethodPost, "/api/faucet", claimBody(b)))
	h.node.mu.Lock()
	h.node.sendErr = nil
	h.node.mu.Unlock()
	h.node.mine(1) // the engine sends tx1 again after this block
	waitFor(t, func() bool { return h.node.inPool(tx1) })
	h.node.mine(1)
	for _, pkh := range []types.Hash{pa, pb} {
		if sum, n := h.node.paidTo(pkh); sum != amount.Coin || n != 1 {
			t.Fatalf("claimant: %d outputs worth %d", n, sum)
		}
	}
}
