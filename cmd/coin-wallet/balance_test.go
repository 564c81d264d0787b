package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cointoolkit/coin/lib/amount"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/proctest"
	"github.com/cointoolkit/coin/lib/wallet"
)

// balance through the real executable and a real regtest node: an output spent by a
// mempool transaction no longer counts as confirmed (nor spendable); the transaction's
// change counts as unconfirmed; once mined, the change is confirmed.
func TestBalanceLeavesOutMempoolSpends(t *testing.T) {
	h := startWalletE2E(t, "balance", mnemonic)
	addr, _ := wallet.AddressFromMnemonic(mnemonic, params.Regtest, 0)
	to, _ := wallet.AddressFromMnemonic(mnemonicB, params.Regtest, 0)
	h.mineTo(2, addr)
	h.mine(100) // the coinbases of heights 1 and 2 are mature at the next block

	var bal map[string]any
	h.ok(&bal, "", "balance")
	if coinAmount(t, bal["confirmed_nominal"]) != 100*amount.Coin || bal["unconfirmed"] != "0.00000000" {
		t.Fatalf("balance before the send: %v", bal)
	}
	var sent struct {
		TxID   string `json:"txid"`
		Fee    string `json:"fee"`
		Change string `json:"change"`
		Inputs int    `json:"inputs"`
	}
	h.ok(&sent, "", "send", "--to", to, "--amount", "1", "--json")
	if sent.Inputs != 1 || !h.inMempool(sent.TxID) {
		t.Fatalf("send %+v", sent)
	}
	// One 50 COIN coinbase is spent by the mempool transaction: 50 COIN confirmed, the
	// change unconfirmed and spendable.
	h.ok(&bal, "", "balance")
	change := coinAmount(t, sent.Change)
	if got := coinAmount(t, bal["confirmed_nominal"]); got != 50*amount.Coin {
		t.Fatalf("balance with the send in the mempool: confirmed_nominal %s COIN, want 50 (the spent output counted): %v", amount.Format(got), bal)
	}
	if coinAmount(t, bal["unconfirmed"]) != change || coinAmount(t, bal["spendable_nominal"]) != 50*amount.Coin+change ||
		coinAmount(t, bal["confirmed"]) > 50*amount.Coin || bal["utxo_count"] != float64(2) {
		t.Fatalf("balance with the send in the mempool: %v (change %s)", bal, sent.Change)
	}
	h.mine(1)
	h.ok(&bal, "", "balance")
	if coinAmount(t, bal["confirmed_nominal"]) != 50*amount.Coin+change || bal["unconfirmed"] != "0.00000000" {
		t.Fatalf("balance after the send was mined: %v", bal)
	}
}

// balance (and address, utxos) on a wallet directory that does not exist says there is no
// wallet and creates nothing: neither the directory (goleveldb would make it with its lock
// and log) nor, at the default location, ~/.coin.
func TestBalanceMissingWalletCreatesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: runs the executable")
	}
	bin := filepath.Join(proctest.Build(t, "./cmd/coin-wallet"), "coin-wallet")
	home := t.TempDir()
	missing := filepath.Join(t.TempDir(), "w")
	empty := t.TempDir() // an existing (private) directory without a wallet stays empty
	if err := os.Chmod(empty, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"--wallet-dir", missing, "balance"},
		{"--wallet-dir", missing, "utxos"},
		{"--wallet-dir", missing, "address"},
		{"--wallet-dir", empty, "balance"},
		{"balance"}, // the default location, ~/.coin/regtest/wallet
	} {
		cmd := exec.Command(bin, append([]string{"--network", "regtest", "--rpc", "127.0.0.1:1"}, args...)...)
		cmd.Env = append(os.Environ(), "HOME="+home, "COIN_WALLET_DIR=")
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		var xe *exec.ExitError
		if !errors.As(err, &xe) || xe.ExitCode() != 1 || !strings.Contains(errb.String(), "no wallet in ") {
			t.Fatalf("%v: %v, stdout %q, stderr %q", args, err, out.String(), errb.String())
		}
		if _, err := os.Stat(missing); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%v created %s", args, missing)
		}
		if ents, _ := os.ReadDir(empty); len(ents) != 0 {
			t.Fatalf("%v wrote %d files into an empty directory", args, len(ents))
		}
		if ents, _ := os.ReadDir(home); len(ents) != 0 {
			t.Fatalf("%v created %s in the home directory", args, ents[0].Name())
		}
	}
}
