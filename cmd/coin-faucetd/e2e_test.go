package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/amount"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/proctest"
	"github.com/cointoolkit/coin/lib/wallet"
)

var hex64 = regexp.MustCompile(`^[0-9a-f]{64}$`)

// TestEndToEnd runs real processes on regtest: a node, a faucet funded by generatetoaddress,
// and the coin-wallet and coin-faucet command lines.
func TestEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test")
	}
	n := startNode(t)
	ctx := context.Background()

	// The faucet's funds: a mnemonic from 'coin-wallet new', funded with 220 coinbases of
	// 50 COIN, plus 100 more blocks for maturity.
	dir := t.TempDir()
	env := []string{"COIN_NETWORK=regtest", "COIN_RPC=" + n.URL()}
	fw := decodeObject(t, mustRun(t, env, "coin-wallet new"))
	mfile := filepath.Join(dir, "faucet-mnemonic")
	if err := os.WriteFile(mfile, []byte(fw["mnemonic"].(string)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	faucetAddr := fw["address"].(string)
	_, burn, _ := wallet.NewMnemonic(12, params.Regtest)
	n.generate(t, 220, faucetAddr)
	n.generate(t, 100, burn)

	dataDir := filepath.Join(dir, "faucet-data")
	f := startFaucetd(t, limitsOff("--network", "regtest", "--rpc", n.URL(), "--data-dir", dataDir, "--mnemonic-file", mfile)...)
	env = append(env, "COIN_FAUCET_URL="+f.url)

	// The faucet's cluster holds all the supply but the burned coinbases, so its coins decay
	// (protocol §8): faucet_balance is what it can pay, its outputs' effective value at the
	// next block, and /api/wallet/balance shows the nominal 11,000 COIN beside it.
	code, st, _ := httpJSON("GET", f.url+"/api/status", "")
	canPay := amount.Format(spendableEffective(t, n, faucetAddr))
	if code != 200 || st["faucet_address"] != faucetAddr || st["block_height"] != 320.0 || st["faucet_balance"] != canPay {
		t.Fatalf("status: %d %v, want faucet_balance %s", code, st, canPay)
	}
	code, fb, _ := httpJSON("GET", f.url+"/api/wallet/balance?address="+faucetAddr, "")
	if code != 200 || fb["balance"] != "11000.00000000" || fb["spendable"] != canPay || fb["utxo_count"] != 220.0 ||
		mustAmount(t, fb["balance"]) <= mustAmount(t, fb["spendable"]) {
		t.Fatalf("faucet's balance: %d %v, want nominal 11000.00000000 above spendable %s", code, fb, canPay)
	}

	// coin-wallet new | coin-faucet claim -> txid
	walletFile := filepath.Join(dir, "w.json")
	out := mustRun(t, env, "coin-wallet new | tee "+walletFile+" | coin-faucet claim")
	claim := decodeObject(t, out)
	txid, _ := claim["txid"].(string)
	if !hex64.MatchString(txid) || claim["amount"] != "100.00000000" {
		t.Fatalf("claim: %s", out)
	}
	b, _ := os.ReadFile(walletFile)
	w := decodeObject(t, string(b))
	userMnemonic, userAddr := w["mnemonic"].(string), w["address"].(string)
	if claim["address"] != userAddr {
		t.Fatalf("claimed for %v, wallet is %s", claim["address"], userAddr)
	}
	if tx, err := n.RPC.GetTransaction(ctx, txid); err != nil || !tx.InMempool {
		t.Fatalf("claim transaction not in the mempool: %+v %v", tx, err)
	}

	// A second claim for that address: 429 with Retry-After, and coin-faucet exits 75
	// (EX_TEMPFAIL).
	code, body, hdr := httpJSON("POST", f.url+"/api/faucet", fmt.Sprintf(`{"address":%q}`, userAddr))
	if code != 429 || hdr.Get("Retry-After") == "" || body["error"].(map[string]any)["code"] != "address_rate_limited" {
		t.Fatalf("second claim: %d %v", code, body)
	}
	if _, errs, c := sh(t, env, "coin-faucet claim "+userAddr); c != 75 || !strings.Contains(errs, "rate limited") {
		t.Fatalf("coin-faucet claim when rate limited: exit %d, %q", c, errs)
	}

	// /api/wallet/derive gives the address of /api/wallet/new; so do coin-wallet derive and
	// the faucet's derive for the coin-wallet mnemonic.
	code, nw, _ := httpJSON("GET", f.url+"/api/wallet/new", "")
	if code != 200 {
		t.Fatalf("wallet/new: %d %v", code, nw)
	}
	code, dv, _ := httpJSON("POST", f.url+"/api/wallet/derive", fmt.Sprintf(`{"mnemonic":%q}`, nw["mnemonic"]))
	if code != 200 || dv["address"] != nw["address"] {
		t.Fatalf("derive %v, new %v", dv, nw)
	}
	if a := strings.TrimSpace(mustRun(t, env, "coin-wallet derive < "+walletFile)); a != userAddr {
		t.Fatalf("coin-wallet derive = %s, want %s", a, userAddr)
	}

	// Send from the funded mnemonic: restore it into a wallet, mine the claim, send, mine,
	// see both balances.
	n.generate(t, 1, burn)
	passFile := filepath.Join(dir, "pass")
	os.WriteFile(passFile, []byte("correct horse battery staple\n"), 0o600)
	wenv := append(env, "COIN_WALLET_DIR="+filepath.Join(dir, "user-wallet"), "COIN_WALLET_PASSPHRASE_FILE="+passFile)
	mustRun(t, wenv, "coin-wallet restore < "+walletFile)
	// 100 COIN is more than 0.1% of the supply: the claim decays too, so the wallet shows
	// what the node says it is worth at the next block.
	bal := decodeObject(t, mustRun(t, wenv, "coin-wallet balance"))
	userEff := confirmedEffective(t, n, userAddr)
	if bal["confirmed"] != amount.Format(userEff) || bal["spendable"] != amount.Format(userEff) {
		t.Fatalf("balance after the claim was mined: %v, want %s", bal, amount.Format(userEff))
	}
	code, ub, _ := httpJSON("GET", f.url+"/api/wallet/balance?address="+userAddr, "")
	if code != 200 || ub["balance"] != "100.00000000" || ub["spendable"] != amount.Format(userEff) {
		t.Fatalf("api balance of the claimant: %d %v, want spendable %s", code, ub, amount.Format(userEff))
	}
	_, recv, _ := wallet.NewMnemonic(12, params.Regtest)
	sent := decodeObject(t, mustRun(t, wenv, "coin-wallet send --json --to "+recv+" --amount 12.5"))
	if !hex64.MatchString(sent["txid"].(string)) || sent["amount"] != "12.50000000" {
		t.Fatalf("send: %v", sent)
	}
	fee, _ := amount.Parse(sent["fee"].(string))
	bal = decodeObject(t, mustRun(t, wenv, "coin-wallet balance"))
	change := userEff - 1_250_000_000 - fee // the input counts for its effective value
	// The claim's output is spent by the mempool transaction, so it no longer counts as
	// confirmed (coin-wallet balance reads the pending view); the change is unconfirmed.
	if bal["confirmed"] != "0.00000000" || bal["unconfirmed"] != amount.Format(change) {
		t.Fatalf("balance with the send in the mempool: %v (fee %d), want confirmed 0 and unconfirmed %s", bal, fee, amount.Format(change))
	}
	n.generate(t, 1, burn)
	bal = decodeObject(t, mustRun(t, wenv, "coin-wallet balance"))
	if want := amount.Format(confirmedEffective(t, n, userAddr)); bal["confirmed"] != want || bal["unconfirmed"] != "0.00000000" {
		t.Fatalf("balance after the send was mined: %v, want %s", bal, want)
	}
	if code, ub, _ := httpJSON("GET", f.url+"/api/wallet/balance?address="+userAddr, ""); code != 200 || ub["balance"] != amount.Format(change) {
		t.Fatalf("api balance of the sender: %d %v, want nominal %s", code, ub, amount.Format(change))
	}
	code, rb, _ := httpJSON("GET", f.url+"/api/wallet/balance?address="+recv, "")
	if code != 200 || rb["balance"] != "12.50000000" || rb["spendable"] != "12.50000000" || rb["utxo_count"] != 1.0 {
		t.Fatalf("receiver balance: %d %v", code, rb)
	}
	utxos := mustRun(t, wenv, "coin-wallet utxos")
	if !strings.Contains(utxos, sent["txid"].(string)) {
		t.Fatalf("utxos do not list the change: %s", utxos)
	}
	// The same through the API: a transfer from the mnemonic.
	code, tr, _ := httpJSON("POST", f.url+"/api/wallet/send", fmt.Sprintf(`{"mnemonic":%q,"to":%q,"amount":2.25}`, userMnemonic, recv))
	if code != 200 || tr["from"] != userAddr || tr["to"] != recv || tr["amount"] != "2.25000000" || !hex64.MatchString(tr["txid"].(string)) {
		t.Fatalf("api send: %d %v", code, tr)
	}

	// 100 concurrent claims for distinct addresses: all succeed, all confirm within the
	// next blocks, with no conflict.
	const claims = 100
	addrs := make([]string, claims)
	for i := range addrs {
		_, addrs[i], _ = wallet.NewMnemonic(12, params.Regtest)
	}
	txids := make([]string, claims)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range addrs {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			code, body, _ := httpJSON("POST", f.url+"/api/faucet", fmt.Sprintf(`{"address":%q}`, addrs[i]))
			if code != 200 {
				t.Errorf("claim %d: %d %v", i, code, body)
				return
			}
			txids[i], _ = body["txid"].(string)
		}(i)
	}
	wg.Wait()
	if t.Failed() {
		t.Fatalf("faucetd log:\n%s", f.Out.String())
	}
	distinct := map[string]bool{}
	for _, id := range txids {
		distinct[id] = true
	}
	t.Logf("%d concurrent claims paid in %v by %d transactions", claims, time.Since(start).Round(time.Millisecond), len(distinct))
	for i := 0; i < 3; i++ {
		if mi, err := n.RPC.GetMempoolInfo(ctx); err != nil || mi.Size == 0 {
			break
		}
		n.generate(t, 1, burn)
	}
	if mi, _ := n.RPC.GetMempoolInfo(ctx); mi.Size != 0 {
		t.Fatalf("%d transactions still in the mempool after 3 blocks", mi.Size)
	}
	for id := range distinct {
		tx, err := n.RPC.GetTransaction(ctx, id)
		if err != nil || tx.Confirmations == 0 {
			t.Fatalf("claim transaction %s: %+v %v", id, tx, err)
		}
	}
	for _, a := range addrs {
		us, err := n.RPC.GetUtxosByAddress(ctx, a, false)
		if err != nil || len(us) != 1 || us[0].Value != 100*amount.Coin {
			t.Fatalf("claimant %s: %+v %v", a, us, err)
		}
	}

	// Malformed requests get 4xx JSON errors, not 500.
	for _, c := range []struct{ method, path, body string }{
		{"POST", "/api/faucet", "{"}, {"POST", "/api/faucet", `{"address":"tcoin1nope"}`},
		{"POST", "/api/wallet/derive", `{"mnemonic":"not a mnemonic"}`},
		{"POST", "/api/wallet/send", `{"mnemonic":"x","to":"y","amount":"z"}`},
		{"GET", "/api/wallet/balance?address=zz", ""}, {"GET", "/nope", ""}, {"PUT", "/api/status", ""},
	} {
		code, body, _ := httpJSON(c.method, f.url+c.path, c.body)
		e, _ := body["error"].(map[string]any)
		if code < 400 || code >= 500 || e["code"] == nil || e["message"] == nil {
			t.Errorf("%s %s %s: %d %v", c.method, c.path, c.body, code, body)
		}
	}

	// coin-faucet status.
	stOut := decodeObject(t, mustRun(t, env, "coin-faucet status"))
	if stOut["faucet_address"] != faucetAddr || stOut["mempool_size"] != 0.0 {
		t.Fatalf("coin-faucet status: %v", stOut)
	}

	// faucetd restarted: the rate limit still holds. This time its funds come from a
	// coin-wallet directory holding the same mnemonic.
	fenv := []string{"COIN_NETWORK=regtest", "COIN_WALLET_DIR=" + filepath.Join(dir, "faucet-wallet"), "COIN_WALLET_PASSPHRASE=faucet pass"}
	mustRun(t, fenv, "coin-wallet restore --mnemonic-file "+mfile)
	t.Setenv("COIN_WALLET_PASSPHRASE", "faucet pass") // inherited by coin-faucetd
	f.restart(t, limitsOff("--network", "regtest", "--rpc", n.URL(), "--data-dir", dataDir, "--wallet-dir", filepath.Join(dir, "faucet-wallet"))...)
	if _, st, _ := httpJSON("GET", f.url+"/api/status", ""); st["faucet_address"] != faucetAddr {
		t.Fatalf("faucet address from the wallet dir: %v", st["faucet_address"])
	}
	code, body, _ = httpJSON("POST", f.url+"/api/faucet", fmt.Sprintf(`{"address":%q}`, addrs[0]))
	if code != 429 {
		t.Fatalf("claim after a restart: %d %v", code, body)
	}
	if _, _, c := sh(t, env, "coin-faucet claim "+userAddr); c != 75 {
		t.Fatalf("coin-faucet claim after a restart: exit %d", c)
	}
	// ... and new addresses are still paid.
	out = mustRun(t, env, "coin-wallet new | coin-faucet claim")
	if !hex64.MatchString(decodeObject(t, out)["txid"].(string)) {
		t.Fatalf("claim after a restart: %s", out)
	}
	// The faucet keeps paying while its coins decay: 210 more blocks mined to it in three
	// rounds of 70, each followed by claims that the engine pays before it has seen the
	// blocks (its coins decayed 70 blocks more than it counted: the node's refusal makes it
	// read them again); every claim confirms, and faucet_balance follows the node's
	// effective values.
	var late []string
	for round := 0; round < 3; round++ {
		n.generate(t, 70, faucetAddr)
		var mu sync.Mutex
		var wg sync.WaitGroup
		for i := 0; i < 5; i++ { // the first round spends the faucet's last mature coins
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, a, _ := wallet.NewMnemonic(12, params.Regtest)
				code, body, _ := httpJSON("POST", f.url+"/api/faucet", fmt.Sprintf(`{"address":%q}`, a))
				if code != 200 {
					t.Errorf("claim after %d blocks to the faucet: %d %v", 70*(round+1), code, body)
					return
				}
				mu.Lock()
				late = append(late, body["txid"].(string))
				mu.Unlock()
			}()
		}
		wg.Wait()
		if t.Failed() {
			t.Fatalf("faucetd log:\n%s", f.Out.Tail(40))
		}
	}
	for i := 0; i < 3; i++ {
		if mi, err := n.RPC.GetMempoolInfo(ctx); err != nil || mi.Size == 0 {
			break
		}
		n.generate(t, 1, burn)
	}
	for _, id := range late {
		if tx, err := n.RPC.GetTransaction(ctx, id); err != nil || tx.Confirmations == 0 {
			t.Fatalf("claim transaction %s after blocks to the faucet: %+v %v", id, tx, err)
		}
	}
	waitFaucetBalance(t, f, n, faucetAddr)
	code, fb, _ = httpJSON("GET", f.url+"/api/wallet/balance?address="+faucetAddr, "")
	if code != 200 || mustAmount(t, fb["balance"]) <= mustAmount(t, fb["spendable"]) {
		t.Fatalf("faucet's balance after the blocks: %d %v", code, fb)
	}

	// The access log has one line per request and no mnemonic.
	logText := f.Out.String()
	if !strings.Contains(logText, "method=POST path=/api/faucet status=200") || strings.Contains(logText, strings.Fields(userMnemonic)[0]+" "+strings.Fields(userMnemonic)[1]) {
		t.Fatalf("faucetd log:\n%s", logText)
	}
}

// spendableEffective is what the faucet at addr can pay out as the node sees it: the
// effective value at the next block of its mature, unlocked outputs in the pending view.
func spendableEffective(t *testing.T, n *node, addr string) uint64 {
	t.Helper()
	us, err := n.RPC.GetUtxosByAddress(context.Background(), addr, true)
	if err != nil {
		t.Fatal(err)
	}
	var s uint64
	for i := range us {
		if !us[i].Locked && wallet.Mature(&us[i]) {
			s += us[i].EffectiveValue
		}
	}
	return s
}

// confirmedEffective is the effective value at the next block of addr's confirmed, unlocked
// outputs, as the node reports them.
func confirmedEffective(t *testing.T, n *node, addr string) uint64 {
	t.Helper()
	us, err := n.RPC.GetUtxosByAddress(context.Background(), addr, false)
	if err != nil {
		t.Fatal(err)
	}
	var s uint64
	for i := range us {
		if !us[i].Locked {
			s += us[i].EffectiveValue
		}
	}
	return s
}

// waitFaucetBalance waits until /api/status's faucet_balance is the node's
// spendableEffective (the faucet reads its outputs again after every block it sees).
func waitFaucetBalance(t *testing.T, f *faucetd, n *node, addr string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		want := amount.Format(spendableEffective(t, n, addr))
		_, st, _ := httpJSON("GET", f.url+"/api/status", "")
		if st["faucet_balance"] == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("faucet_balance %v, node says the faucet can pay %s", st["faucet_balance"], want)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// coin-faucetd refuses to run on mainnet: a usage error (exit 2).
func TestFaucetdRefusesMainnet(t *testing.T) {
	bin := buildBinaries(t)
	p := proctest.Start(t, filepath.Join(bin, "coin-faucetd"), "--network", "mainnet", "--mnemonic-file", "/nonexistent")
	if code := p.Wait(t, 20*time.Second); code != 2 || !strings.Contains(p.Out.String(), "mainnet") {
		t.Fatalf("exit %d: %s", code, p.Out.String())
	}
}
