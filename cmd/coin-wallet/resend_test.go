package main

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/amount"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/proctest"
	"github.com/cointoolkit/coin/lib/types"
	"github.com/cointoolkit/coin/lib/wallet"
)

// crashNode kills the node with SIGKILL, removes its mempool.dat and starts it again: a
// node that lost its mempool.
func crashNode(t *testing.T, n *proctest.Node) {
	t.Helper()
	n.Proc.Kill()
	if err := os.Remove(filepath.Join(n.DataDir, "mempool.dat")); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	n.Start(t)
}

func (h *agentE2E) inMempool(txid string) bool {
	h.t.Helper()
	tx, err := h.node.RPC.GetTransaction(context.Background(), txid)
	return err == nil && tx.InMempool
}

func (h *agentE2E) resendJSON() []wallet.ResendResult {
	h.t.Helper()
	var res []wallet.ResendResult
	h.ok(&res, "", "resend", "--json")
	return res
}

// TestResendEndToEnd, through the real executables: a transfer whose node is killed before
// mining and restarted without its mempool is re-sent by the next 'coin-wallet balance'
// (which says so on standard error), gets mined, is kept until 6 confirmations and then
// forgotten; a transfer whose input a mined double spend took is reported conflicted and
// forgotten.
func TestResendEndToEnd(t *testing.T) {
	h := startWalletE2E(t, "resend", mnemonic)
	node := h.node
	addr, _ := wallet.AddressFromMnemonic(mnemonic, params.Regtest, 0)
	to, _ := wallet.AddressFromMnemonic(mnemonicB, params.Regtest, 0)
	h.mineTo(102, addr) // the coinbases of heights 1 and 2 are spendable

	if res := h.resendJSON(); len(res) != 0 {
		t.Fatalf("resend of a wallet that sent nothing: %+v", res)
	}
	txid := strings.TrimSpace(h.ok(nil, "", "send", "--to", to, "--amount", "1"))
	if !h.inMempool(txid) {
		t.Fatal("the send is not in the mempool")
	}
	// The send is in the node's mempool: balance re-sends nothing and says nothing.
	if _, errOut, code := h.run("", "balance"); code != 0 || errOut != "" {
		t.Fatalf("balance before the crash: exit %d, stderr %q", code, errOut)
	}

	crashNode(t, node)
	if h.inMempool(txid) || h.mempool() != 0 {
		t.Fatal("the node kept its mempool through the crash: the test needs it lost")
	}
	out, errOut, code := h.run("", "balance")
	if code != 0 || !strings.Contains(errOut, "resend: "+txid+" re-sent") {
		t.Fatalf("balance after the crash: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	var bal map[string]any
	if err := json.Unmarshal([]byte(out), &bal); err != nil {
		t.Fatalf("balance printed %q with the resend report: %v", out, err)
	}
	if !h.inMempool(txid) {
		t.Fatal("the transaction is not back in the node's mempool")
	}
	h.mine(1)
	if tx, err := node.RPC.GetTransaction(context.Background(), txid); err != nil || tx.Confirmations != 1 {
		t.Fatalf("the re-sent transaction after a block: %+v, %v", tx, err)
	}
	if res := h.resendJSON(); len(res) != 1 || res[0].Action != wallet.ActionConfirming || res[0].Confirmations != 1 {
		t.Fatalf("resend after one confirmation: %+v", res)
	}
	h.mine(wallet.ForgetConfirmations - 1)
	if res := h.resendJSON(); len(res) != 1 || res[0].Action != wallet.ActionMined || !res[0].Forgotten() {
		t.Fatalf("resend after %d confirmations: %+v", wallet.ForgetConfirmations, res)
	}
	if res := h.resendJSON(); len(res) != 0 {
		t.Fatalf("a mined transaction is still kept: %+v", res)
	}

	// Conflicted: the node loses a second send, and before the wallet runs again a double
	// spend of its input (same key, another payee) is mined.
	txid2 := strings.TrimSpace(h.ok(nil, "", "send", "--to", to, "--amount", "2"))
	var hx string
	if err := node.RPC.Call(context.Background(), "getrawtransaction", []any{txid2}, &hx); err != nil {
		t.Fatal(err)
	}
	b, _ := hex.DecodeString(hx)
	sent, err := types.DecodeTransaction(b)
	if err != nil {
		t.Fatal(err)
	}
	crashNode(t, node)
	double := doubleSpend(t, node, sent, to)
	if _, err := node.RPC.SendRawTransaction(context.Background(), hex.EncodeToString(double.Bytes())); err != nil {
		t.Fatalf("the double spend: %v", err)
	}
	h.mine(1)
	if res := h.resendJSON(); len(res) != 1 || res[0].TxID != txid2 || res[0].Action != wallet.ActionConflicted ||
		!strings.Contains(res[0].Detail, "spent by another mined transaction") {
		t.Fatalf("resend after a mined double spend: %+v", res)
	}
	if res := h.resendJSON(); len(res) != 0 {
		t.Fatalf("a conflicted transaction is still kept: %+v", res)
	}
	if h.inMempool(txid2) {
		t.Fatal("the conflicted transaction is in the mempool")
	}
}

// doubleSpend builds, with the test mnemonic's key, a payment to `to` spending the first
// input of tx, at another fee rate (so another txid).
func doubleSpend(t *testing.T, n *proctest.Node, tx *types.Transaction, to string) *types.Transaction {
	t.Helper()
	ring, err := wallet.KeyringFromMnemonic(mnemonic, "", params.Regtest, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer ring.Wipe()
	k, err := ring.Key(0)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	us, err := wallet.ListUTXOs(ctx, n.RPC, []string{k.Address}, true)
	if err != nil {
		t.Fatal(err)
	}
	wallet.AddDecayRates(ctx, n.RPC, us)
	coins, err := wallet.DecayingCoins(us)
	if err != nil {
		t.Fatal(err)
	}
	var mine []wallet.Coin
	for _, c := range coins {
		if c.Outpoint == tx.Inputs[0].Outpoint() {
			mine = append(mine, c)
		}
	}
	if len(mine) != 1 {
		t.Fatalf("the sent transaction's input is not among the wallet's coins after the crash")
	}
	pkh, _ := wallet.DecodeAddress(to, params.Regtest)
	plan, err := wallet.Select(mine, wallet.Request{Payments: []wallet.Payment{{PKH: pkh, Value: 3 * amount.Coin}},
		FeeRate: 5, Change: k.PKH})
	if err != nil {
		t.Fatal(err)
	}
	if err := wallet.Sign(plan, []wallet.Key{k}, params.Regtest.Magic); err != nil {
		t.Fatal(err)
	}
	return plan.Tx
}
