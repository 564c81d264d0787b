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
	"github.com/cointoolkit/coin/lib/types"
)

// While the faucet's cluster decays (protocol §8), /api/status's faucet_balance is what it can
// pay out (its spendable outputs at their effective value at the next block),
// /api/wallet/balance shows the nominal balance beside the spendable one, and every payout
// still covers its outputs and the relay fee if it is mined DecayMargin blocks after the
// next block, its inputs then decayed that much more, unconfirmed change included.
func TestEngineDecay(t *testing.T) {
	const rate = 300_000 // parts per 10^12 per block: about R_MAX
	h := newHarness(t, 40)
	h.node.mu.Lock()
	h.node.rate = rate
	h.node.mu.Unlock()
	h.node.mine(1) // the engine reads its outputs again, now decaying
	ctx := context.Background()
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
		us, err := h.node.GetUtxosByAddress(ctx, h.key.Address, true)
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
	h.node.mu.Lock()
	next := h.node.tip() + 1
	later := next + payout.DefaultDecayMargin
	for _, id := range h.node.order {
		tx := h.node.pool[id]
		var in, out uint64
		for _, ti := range tx.Inputs {
			op := ti.Outpoint()
			if parent, ok := h.node.pool[op.TxID]; ok {
				// Mined in the next block at the earliest, so decayed for at most the margin.
				in += consensus.EffectiveValue(parent.Outputs[op.Index].Value, rate, payout.DefaultDecayMargin)
				continue
			}
			u := h.node.utxos[op]
			in += consensus.EffectiveValue(u.Value, rate, later-u.Height)
		}
		for _, o := range tx.Outputs {
			out += o.Value
		}
		if min := out + uint64(tx.SerializeSize())*policy.MinRelayFeePerByte; in < min {
			t.Errorf("transaction %s: inputs worth %d at height %d, below outputs and relay fee %d", types.Hash(id), in, later, min)
		}
	}
	h.node.mu.Unlock()
	if r := h.do(t, http.MethodGet, "/api/status", ""); r.Body["faucet_balance"] != amount.Format(effective()) {
		t.Fatalf("faucet_balance %v after the claims, want %s", r.Body["faucet_balance"], amount.Format(effective()))
	}
}
