package httpapi

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/amount"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/faucet/payout"
	"github.com/cointoolkit/coin/lib/policy"
)

// While the faucet's cluster decays (protocol §8), /api/status's faucet_balance is what it can
// pay out (its spendable outputs at their effective value at the next block),
// /api/wallet/balance shows the nominal balance beside the spendable one, and every payout
// still covers its outputs and the relay fee if it is mined DecayMargin blocks after the
// next block, its inputs then decayed that much more, unconfirmed change included.
func TestEngineDecay(t *testing.T) {
	// The faucet holds 40 of the 140 coinbases mined (the rest are the maturity blocks'):
	// a concentration of 29%, so its cluster decays at nearly R_MAX.
	h := newHarness(t, 40)
	ctx := context.Background()
	ci, err := h.rn.GetClusterInfo(ctx, h.key.Address)
	if err != nil {
		t.Fatal(err)
	}
	rate := ci.RatePerBlock
	if rate < consensus.DecayRateMax*9/10 || rate >= consensus.DecayRateMax {
		t.Fatalf("the faucet's cluster decays at %d per block, want about R_MAX (%d)", rate, consensus.DecayRateMax)
	}
	nominal := uint64(40 * 50 * amount.Coin)
	deadline := time.Now().Add(5 * time.Second)
	// Not synced yet, the engine reports no spendable coins at all: wait for a sync that saw
	// them decay.
	for st := h.engine.Status(); !st.Synced || st.Spendable >= nominal; st = h.engine.Status() {
		if time.Now().After(deadline) {
			t.Fatalf("the engine never saw its coins decay: %+v", h.engine.Status())
		}
		time.Sleep(5 * time.Millisecond)
	}

	// effective is Σ of what the node says the faucet's spendable outputs are worth at the
	// next block (pending view).
	effective := func() uint64 {
		us, err := h.rn.GetUtxosByAddress(ctx, h.key.Address, true)
		if err != nil {
			t.Fatal(err)
		}
		var s uint64
		for _, u := range us {
			if !u.Locked && (!u.IsCoinbase || u.Confirmations >= consensus.CoinbaseMaturity) {
				s += u.EffectiveValue
			}
		}
		return s
	}
	eff := effective()
	if eff >= nominal || eff < nominal-nominal/1000 {
		t.Fatalf("effective %d of nominal %d", eff, nominal)
	}
	r := h.do(t, http.MethodGet, "/api/status", "")
	if r.Body["faucet_balance"] != amount.Format(eff) {
		t.Fatalf("faucet_balance %v, want %s", r.Body["faucet_balance"], amount.Format(eff))
	}
	r = h.do(t, http.MethodGet, "/api/wallet/balance?address="+h.key.Address, "")
	if r.Status != 200 || r.Body["balance"] != amount.Format(nominal) || r.Body["spendable"] != amount.Format(eff) ||
		r.Body["utxo_count"] != 40.0 {
		t.Fatalf("faucet's balance: %s (effective %s)", r.Raw, amount.Format(eff))
	}

	// Claims back to back: each transaction spends the change of the one before.
	for i := 0; i < 5; i++ {
		a, _ := newAddress(t)
		if r := h.do(t, http.MethodPost, "/api/faucet", claimBody(a)); r.Status != 200 {
			t.Fatalf("claim %d: %s", i, r.Raw)
		}
	}
	tip, err := h.rn.GetBlockCount(ctx)
	if err != nil {
		t.Fatal(err)
	}
	later := tip + 1 + payout.DefaultDecayMargin
	pool := h.rn.Node.Mempool()
	ids := pool.TxIDs()
	if len(ids) != 5 {
		t.Fatalf("%d transactions in the mempool, want the 5 payouts", len(ids))
	}
	for _, id := range ids {
		e, ok := pool.Get(id)
		if !ok {
			t.Fatalf("payout %s left the mempool", id)
		}
		tx := e.Tx
		var in, out uint64
		for _, ti := range tx.Inputs {
			op := ti.Outpoint()
			if parent, ok := pool.Get(op.TxID); ok {
				// Mined in the next block at the earliest, so decayed for at most the margin.
				in += consensus.EffectiveValue(parent.Tx.Outputs[op.Index].Value, rate, payout.DefaultDecayMargin)
				continue
			}
			u, ok, err := h.rn.Node.Chain().Utxo(op)
			if err != nil || !ok {
				t.Fatalf("input %v of %s: not in the chain's UTXO set (%v)", op, id, err)
			}
			in += consensus.EffectiveValue(u.Value, rate, later-u.Height)
		}
		for _, o := range tx.Outputs {
			out += o.Value
		}
		if min := out + uint64(tx.SerializeSize())*policy.MinRelayFeePerByte; in < min {
			t.Errorf("transaction %s: inputs worth %d at height %d, below outputs and relay fee %d", id, in, later, min)
		}
	}
	if r := h.do(t, http.MethodGet, "/api/status", ""); r.Body["faucet_balance"] != amount.Format(effective()) {
		t.Fatalf("faucet_balance %v after the claims, want %s", r.Body["faucet_balance"], amount.Format(effective()))
	}
}
