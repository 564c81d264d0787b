package main

import (
	"context"
	"encoding/hex"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/amount"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/pow"
	"github.com/cointoolkit/coin/lib/types"
	"github.com/cointoolkit/coin/lib/wallet"
)

// coinAmount reads an amount the wallet printed.
func coinAmount(t *testing.T, v any) uint64 {
	t.Helper()
	s, ok := v.(string)
	if !ok {
		t.Fatalf("amount %v (%T) is not a string", v, v)
	}
	n, err := amount.Parse(s)
	if err != nil {
		t.Fatalf("amount %q: %v", s, err)
	}
	return n
}

// mineWithout mines one block on the node's tip whose only transaction is the coinbase (to
// addr), leaving the mempool where it is: a block of a miner that did not take the
// wallet's transaction.
func (h *agentE2E) mineWithout(addr string) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tpl, err := h.node.RPC.GetBlockTemplate(ctx, addr)
	if err != nil {
		h.t.Fatal(err)
	}
	raw, err := hex.DecodeString(tpl.Transactions[0].Data)
	if err != nil {
		h.t.Fatal(err)
	}
	cb, err := types.DecodeTransaction(raw)
	if err != nil {
		h.t.Fatal(err)
	}
	var fees uint64
	for _, tt := range tpl.Transactions[1:] {
		fees += tt.Fee
	}
	cb.Outputs[0].Value -= fees // the template's coinbase collects the fees of the left-out transactions
	prev, err := types.ParseHash(tpl.PrevHash)
	if err != nil {
		h.t.Fatal(err)
	}
	hd := types.BlockHeader{Version: tpl.Version, PrevHash: prev, MerkleRoot: types.MerkleRoot([]types.Hash{cb.TxID()}),
		Timestamp: max(tpl.Timestamp, tpl.MinTime), DifficultyTarget: tpl.DifficultyTarget}
	for pow.CheckProofOfWork(hd.Hash(), hd.DifficultyTarget, params.Regtest.PowLimit) != nil {
		hd.Nonce++
	}
	blk := &types.Block{Header: hd, Transactions: []*types.Transaction{cb}}
	if err := h.node.RPC.SubmitBlock(ctx, hex.EncodeToString(blk.Bytes())); err != nil {
		h.t.Fatalf("submitblock of a coinbase-only block: %v", err)
	}
}

// Concentration decay through the real executable and a real regtest node: a wallet that
// mined every block holds the whole supply, so its coins decay. balance shows nominal and
// effective values and the cluster's rate; utxos shows both values of each output, exactly
// as consensus computes them; a send of almost the whole spendable balance pays a decay
// margin and is still mined after three blocks that left it out.
func TestDecayEndToEnd(t *testing.T) {
	h := startWalletE2E(t, "decay", mnemonic)
	node := h.node
	addr, _ := wallet.AddressFromMnemonic(mnemonic, params.Regtest, 0)
	to, _ := wallet.AddressFromMnemonic(mnemonicB, params.Regtest, 0)

	h.mineTo(120, addr)
	// The wallet's cluster is the whole supply: the rate of a concentration of 100%.
	rate := consensus.DecayRate(1_000_000_000, consensus.TierNone)

	var bal map[string]any
	h.ok(&bal, "", "balance")
	for _, k := range []string{"confirmed", "unconfirmed", "spendable", "immature", "locked", "utxo_count"} {
		if _, ok := bal[k]; !ok {
			t.Fatalf("balance lost its field %q: %v", k, bal)
		}
	}
	conf, confNom := coinAmount(t, bal["confirmed"]), coinAmount(t, bal["confirmed_nominal"])
	spend, spendNom := coinAmount(t, bal["spendable"]), coinAmount(t, bal["spendable_nominal"])
	imm, immNom := coinAmount(t, bal["immature"]), coinAmount(t, bal["immature_nominal"])
	// Coinbases of heights 1 to 21 are mature at the next block (121).
	if confNom != 21*50*amount.Coin || spendNom != confNom || immNom != 99*50*amount.Coin ||
		conf >= confNom || spend != conf || imm >= immNom || bal["utxo_count"] != float64(120) {
		t.Fatalf("balance %v", bal)
	}
	wantPct := yearlyPercent(consensus.YearlyDecayPPM(rate))
	clusters, _ := bal["clusters"].([]any)
	if bal["decay_rate_per_block"] != float64(rate) || bal["yearly_decay_percent"] != wantPct || wantPct == "0.0000" || len(clusters) != 1 {
		t.Fatalf("balance decay: %v, want rate %d, %s%% a year", bal, rate, wantPct)
	}
	cl, _ := clusters[0].(map[string]any)
	if addrs, _ := cl["addresses"].([]any); len(addrs) != 1 || addrs[0] != addr || cl["concentration_ppb"] != float64(1_000_000_000) ||
		cl["rate_per_block"] != float64(rate) || cl["yearly_decay_percent"] != wantPct || coinAmount(t, cl["balance"]) != 120*50*amount.Coin {
		t.Fatalf("balance cluster %v", cl)
	}

	// utxos: both values of every output, the effective one exactly consensus's.
	var utxos []utxoJSON
	h.ok(&utxos, "", "utxos")
	var sumEff uint64
	for _, u := range utxos {
		nom, eff := coinAmount(t, u.Amount), coinAmount(t, u.EffectiveValue)
		if nom != 50*amount.Coin || eff != consensus.EffectiveValue(nom, rate, u.Confirmations) || eff >= nom {
			t.Fatalf("utxo %+v: effective %d, want %d", u, eff, consensus.EffectiveValue(nom, rate, u.Confirmations))
		}
		if u.Spendable {
			sumEff += eff
		}
	}
	if len(utxos) != 120 || sumEff != spend {
		t.Fatalf("%d utxos, spendable %d, balance says %d", len(utxos), sumEff, spend)
	}

	// Send all but 0.01 COIN of the spendable balance: 21 inputs, each with its margin.
	var sent struct {
		TxID        string `json:"txid"`
		Amount      string `json:"amount"`
		Fee         string `json:"fee"`
		DecayMargin string `json:"decay_margin"`
		Change      string `json:"change"`
		Size        int    `json:"size"`
		Inputs      int    `json:"inputs"`
	}
	amt := spend - amount.Coin/100
	h.ok(&sent, "", "send", "--to", to, "--amount", amount.Format(amt), "--json")
	fee, margin := coinAmount(t, sent.Fee), coinAmount(t, sent.DecayMargin)
	if sent.Inputs != 21 || margin < 21*1_400*wallet.DecayMarginBlocks || fee != 2*uint64(sent.Size)+margin ||
		coinAmount(t, sent.Amount) != amt || coinAmount(t, sent.Change) != spend-amt-fee {
		t.Fatalf("send printed %+v", sent)
	}
	// Three blocks that leave it out: the inputs decay further, and the node re-values the
	// mempool after each; the margin keeps the transaction in.
	for i := range 3 {
		h.mineWithout(h.miner)
		if n := h.mempool(); n != 1 {
			t.Fatalf("after %d blocks without it the mempool holds %d transactions", i+1, n)
		}
	}
	h.mine(1)
	tx, err := node.RPC.GetTransaction(context.Background(), sent.TxID)
	if err != nil || tx.BlockHeight == nil || *tx.BlockHeight != 124 || tx.Confirmations != 1 {
		t.Fatalf("the send %s after 3 blocks without it: %+v, %v", sent.TxID, tx, err)
	}
	us, err := node.RPC.GetUtxosByAddress(context.Background(), to, false)
	if err != nil || len(us) != 1 || us[0].Value != amt {
		t.Fatalf("the payee's outputs: %+v, %v", us, err)
	}
	// The wallet's change is there beside the coinbases of heights 22 to 25, mature at 125.
	h.ok(&bal, "", "balance")
	if coinAmount(t, bal["confirmed_nominal"]) != 4*50*amount.Coin+spend-amt-fee {
		t.Fatalf("balance after the send: %v", bal)
	}
}
