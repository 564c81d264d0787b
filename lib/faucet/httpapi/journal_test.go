package httpapi

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/amount"
	"github.com/cointoolkit/coin/lib/faucet/payout"
	"github.com/cointoolkit/coin/lib/types"
	"github.com/cointoolkit/coin/lib/wallet"
)

// paidOnce fails unless each address has exactly one confirmed output, of amount.Coin
// (claimants never spend).
func (h *harness) paidOnce(t testing.TB, when string, addrs ...string) {
	t.Helper()
	for i, a := range addrs {
		if sum, n := h.rn.PaidTo(t, a); sum != amount.Coin || n != 1 {
			t.Fatalf("%sclaimant %d: %d outputs worth %d, want one of %d", when, i, n, sum, amount.Coin)
		}
	}
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
	addrs := make([]string, 5)
	ids := map[types.Hash]bool{}
	for i := range addrs {
		addrs[i], _ = newAddress(t)
		ids[claimTxID(t, h.do(t, http.MethodPost, "/api/faucet", claimBody(addrs[i])))] = true
	}
	h.rn.Restart(t)
	if n := len(h.rn.Node.Mempool().TxIDs()); n != 0 {
		t.Fatalf("the restarted node kept %d transactions", n)
	}
	h.restart(t)
	waitFor(t, func() bool {
		for id := range ids {
			if h.pooled(id.String()) == nil {
				return false
			}
		}
		return true
	})
	h.mine(1)
	h.paidOnce(t, "", addrs...)
}

// A crash between the journal write and the broadcast (here: the node's answer is lost and
// the node never got the transaction, then the faucet restarts): the claim was answered 200
// and its payout is sent from the journal, once.
func TestJournalLostBroadcast(t *testing.T) {
	h := newHarness(t, 2, withAmount(amount.Coin))
	h.cn.FailSends(errors.New("connection reset by peer"), false)
	a, _ := newAddress(t)
	id := claimTxID(t, h.do(t, http.MethodPost, "/api/faucet", claimBody(a)))
	h.cn.FailSends(nil, false)
	if h.pooled(id.String()) != nil {
		t.Fatal("the node got the payout")
	}
	if rec, ok, _ := h.claims.Last(a); !ok || rec.TxID != id {
		t.Fatalf("claim record %+v %v", rec, ok)
	}
	h.restart(t)
	waitFor(t, func() bool { return h.pooled(id.String()) != nil && h.engine.Status().Synced })
	h.mine(payout.FinalConfirmations)
	h.paidOnce(t, "", a)
	// Mined payout.FinalConfirmations deep, the payout leaves the journal.
	waitFor(t, func() bool { ps, _ := h.claims.Payouts(); return len(ps) == 0 && h.engine.Status().Owed == 0 })
}

// A payout that another mined transaction conflicts (here the operator spent the faucet's
// coin with its own wallet while the node had lost the payout), and a payout that spends
// its change, are each paid again exactly once by a new transaction, recorded as such;
// neither a later block nor a restart pays them a third time.
func TestJournalConflictedPaidAgainOnce(t *testing.T) {
	h := newHarness(t, 1, withAmount(amount.Coin))
	a, _ := newAddress(t)
	b, _ := newAddress(t)
	tx1 := claimTxID(t, h.do(t, http.MethodPost, "/api/faucet", claimBody(a)))
	tx2 := claimTxID(t, h.do(t, http.MethodPost, "/api/faucet", claimBody(b)))
	first, second := h.pooled(tx1.String()), h.pooled(tx2.String())
	if first == nil || second == nil || second.Inputs[0].PrevTxID != tx1 {
		t.Fatal("the second payout does not spend the first one's change")
	}
	// The node loses its mempool (a restart), and the operator's transaction spending the
	// faucet's coin (tx1's input) is mined; its change to the faucet's key (about 41 COIN)
	// funds the repayments.
	op := first.Inputs[0].Outpoint()
	us, err := h.rn.GetUtxosByAddress(context.Background(), h.key.Address, false)
	if err != nil || len(us) != 1 || us[0].TxID != op.TxID.String() || us[0].Index != op.Index {
		t.Fatalf("the faucet's coins %+v %v, want tx1's input only", us, err)
	}
	_, other := newAddress(t)
	plan, err := wallet.Select([]wallet.Coin{{Outpoint: op, Value: us[0].EffectiveValue, Nominal: us[0].Value, PKH: h.key.PKH,
		Confirmations: us[0].Confirmations}}, wallet.Request{Payments: []wallet.Payment{{PKH: other, Value: 9 * amount.Coin}},
		Change: h.key.PKH})
	if err != nil {
		t.Fatal(err)
	}
	if err := wallet.Sign(plan, []wallet.Key{h.key}, testNet.Magic); err != nil {
		t.Fatal(err)
	}
	h.rn.Restart(t)
	if err := h.rn.MineBlock(plan.Tx); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for h.engine.Status().Repaid != 2 {
		if time.Now().After(deadline) {
			t.Fatalf("repaid %d, want 2\n%s", h.engine.Status().Repaid, h.log.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	// A repayment is journaled, counted, then sent: mined once the node has both.
	waitFor(t, func() bool {
		cs, err := h.claims.ConflictedPayouts()
		if err != nil || len(cs) != 2 {
			return false
		}
		for _, c := range cs {
			if h.pooled(c.ReplacedBy.String()) == nil {
				return false
			}
		}
		return true
	})
	h.mine(1)
	h.paidOnce(t, "", a, b)
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
	h.mine(payout.FinalConfirmations)
	deadline = time.Now().Add(5 * time.Second)
	for h.engine.Status().Owed != 0 {
		if time.Now().After(deadline) {
			ps, _ := h.claims.Payouts()
			for _, p := range ps {
				tx, err := h.rn.GetTransaction(context.Background(), p.TxID.String())
				t.Logf("journaled: payout %s (replaces %s), at the node: %+v %v", p.TxID, p.Replaces, tx, err)
			}
			t.Fatalf("%d payouts still journaled\n%s", len(ps), h.log.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond)
	h.mine(1) // what the faucet sent meanwhile is mined too
	h.paidOnce(t, "after a restart: ", a, b)
	if st := h.engine.Status(); st.Repaid != 0 {
		t.Fatalf("repaid again after the restart: %+v", st)
	}
}

// While the node lacks a journaled payout, new payouts never spend its inputs (which the
// node shows unspent), so the faucet makes no conflict of its own.
func TestJournalInputsReserved(t *testing.T) {
	h := newHarness(t, 2, withAmount(amount.Coin))
	a, _ := newAddress(t)
	tx1 := claimTxID(t, h.do(t, http.MethodPost, "/api/faucet", claimBody(a)))
	h.rn.Restart(t)
	h.cn.Intercept(func(tx *types.Transaction) error {
		if tx.TxID() == tx1 {
			return errors.New("connection refused")
		}
		return nil
	})
	b, _ := newAddress(t)
	claimTxID(t, h.do(t, http.MethodPost, "/api/faucet", claimBody(b)))
	h.cn.Intercept(nil)
	h.mine(1) // the engine sends tx1 again after this block
	waitFor(t, func() bool { return h.pooled(tx1.String()) != nil })
	h.mine(1)
	h.paidOnce(t, "", a, b)
}
