package main

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/amount"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/wallet"
)

// fundSmall pays n outputs of v subunits each to addr from the miner's mature coinbases,
// in transactions of at most 600 outputs, and mines them.
func (h *agentE2E) fundSmall(addr string, n int, v uint64) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ring, err := wallet.KeyringFromMnemonic(mnemonicMiner, "", params.Regtest, 0)
	if err != nil {
		h.t.Fatal(err)
	}
	defer ring.Wipe()
	k, err := ring.Key(0)
	if err != nil {
		h.t.Fatal(err)
	}
	to, _ := wallet.DecodeAddress(addr, params.Regtest)
	for n > 0 {
		m := min(n, 600)
		n -= m
		node := rpcNode{h.node.RPC}
		us, err := wallet.ListUTXOs(ctx, node, []string{k.Address}, true)
		if err != nil {
			h.t.Fatal(err)
		}
		wallet.AddDecayRates(ctx, node, us)
		coins, err := wallet.DecayingCoins(us)
		if err != nil {
			h.t.Fatal(err)
		}
		pays := make([]wallet.Payment, m)
		for i := range pays {
			pays[i] = wallet.Payment{PKH: to, Value: v}
		}
		plan, err := wallet.Select(coins, wallet.Request{Payments: pays, Change: k.PKH})
		if err != nil {
			h.t.Fatal(err)
		}
		if err := wallet.Sign(plan, []wallet.Key{k}, params.Regtest.Magic); err != nil {
			h.t.Fatal(err)
		}
		if _, err := h.node.RPC.SendRawTransaction(ctx, hex.EncodeToString(plan.Tx.Bytes())); err != nil {
			h.t.Fatal(err)
		}
	}
	h.mine(1)
}

// A send that needs more inputs than a transaction may have, through the real executable
// and a real regtest node: it fails, saying to run 'coin-wallet consolidate'; consolidate
// merges the wallet's 1,300 outputs of 0.01 COIN into one in two transactions, each within
// the consensus limits with the wallet's fee (rate × size + decay margin), the second
// spending the first's unconfirmed output; the send then goes through and everything is
// mined.
func TestConsolidateEndToEnd(t *testing.T) {
	h := startWalletE2E(t, "consolidate", mnemonic)
	node := h.node
	addr, _ := wallet.AddressFromMnemonic(mnemonic, params.Regtest, 0)
	to, _ := wallet.AddressFromMnemonic(mnemonicB, params.Regtest, 0)
	h.mine(101)
	const outputs = 1300
	h.fundSmall(addr, outputs, amount.Coin/100)

	// 12 COIN needs 1,200 of the 0.01 COIN outputs: more than a transaction may spend.
	out, errOut, code := h.run("", "send", "--to", to, "--amount", "12")
	if code != 1 || out != "" || !strings.Contains(errOut, "too many small outputs") ||
		!strings.Contains(errOut, "run 'coin-wallet consolidate' first") {
		t.Fatalf("send from %d small outputs: exit %d, stdout %q, stderr %q", outputs, code, out, errOut)
	}
	if n := h.mempool(); n != 0 {
		t.Fatalf("the refused send left %d transactions in the mempool", n)
	}

	var txs []struct {
		TxID        string `json:"txid"`
		Inputs      int    `json:"inputs"`
		Value       string `json:"value"`
		Output      string `json:"output"`
		Fee         string `json:"fee"`
		DecayMargin string `json:"decay_margin"`
		Size        int    `json:"size"`
	}
	h.ok(&txs, "", "consolidate")
	maxIn := wallet.MaxInputsPerTx()
	if len(txs) != 2 || txs[0].Inputs != maxIn || txs[1].Inputs != outputs-maxIn+1 {
		t.Fatalf("consolidate printed %+v; want %d then %d inputs", txs, maxIn, outputs-maxIn+1)
	}
	for _, c := range txs {
		fee, margin := coinAmount(t, c.Fee), coinAmount(t, c.DecayMargin)
		if c.Size > consensus.MaxTxSize || fee < 2*uint64(c.Size) || fee != 2*uint64(c.Size)+margin ||
			coinAmount(t, c.Output) != coinAmount(t, c.Value)-fee || !h.inMempool(c.TxID) {
			t.Fatalf("consolidation transaction %+v", c)
		}
	}
	var bal map[string]any
	h.ok(&bal, "", "balance")
	if bal["utxo_count"] != float64(1) || coinAmount(t, bal["spendable"]) != coinAmount(t, txs[1].Output) {
		t.Fatalf("balance after consolidate: %v", bal)
	}
	// Nothing left to merge.
	var none []json.RawMessage
	if h.ok(&none, "", "consolidate"); len(none) != 0 {
		t.Fatalf("a second consolidate sent %d transactions", len(none))
	}

	// The send goes through now, spending the unconfirmed merged output; all is mined.
	txid := strings.TrimSpace(h.ok(nil, "", "send", "--to", to, "--amount", "12"))
	if !h.inMempool(txid) {
		t.Fatalf("send after consolidate printed %q", txid)
	}
	h.mine(1)
	us, err := node.RPC.GetUtxosByAddress(context.Background(), to, false)
	if err != nil || len(us) != 1 || us[0].Value != 12*amount.Coin {
		t.Fatalf("the payee's outputs: %+v, %v", us, err)
	}
}
