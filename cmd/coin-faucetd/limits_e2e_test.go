package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/wallet"
)

// fundedFaucet starts a node and a faucet (extra arguments after the usual ones) whose
// address holds mature coinbases of 50 COIN.
func fundedFaucet(t testing.TB, coinbases int, extra ...string) (*node, *faucetd, string) {
	t.Helper()
	n := startNode(t)
	dir := t.TempDir()
	m, faucetAddr, err := wallet.NewMnemonic(12, params.Regtest)
	if err != nil {
		t.Fatal(err)
	}
	mfile := filepath.Join(dir, "faucet-mnemonic")
	if err := os.WriteFile(mfile, []byte(m+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, burn, _ := wallet.NewMnemonic(12, params.Regtest)
	n.generate(t, coinbases, faucetAddr)
	n.generate(t, 100, burn)
	f := startFaucetd(t, append([]string{"--network", "regtest", "--rpc", n.URL(), "--data-dir", filepath.Join(dir, "faucet-data"),
		"--mnemonic-file", mfile}, extra...)...)
	return n, f, faucetAddr
}

// claimAtOnce claims n fresh addresses at once from one client and counts the answers:
// "200", or "429 <code> retry-after=<whether the header is there>".
func claimAtOnce(f *faucetd, n int) map[string]int {
	var mu sync.Mutex
	got := map[string]int{}
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, a, _ := wallet.NewMnemonic(12, params.Regtest)
			code, body, hdr := httpJSON("POST", f.url+"/api/faucet", fmt.Sprintf(`{"address":%q}`, a))
			key := fmt.Sprint(code)
			if code == 429 {
				e, _ := body["error"].(map[string]any)
				key += fmt.Sprint(" ", e["code"], " retry-after=", hdr.Get("Retry-After") != "")
			}
			mu.Lock()
			got[key]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	return got
}

// The per-client limit through the real executable, at testnet's default of 5 given in
// COIN_CLAIMS_PER_IP (regtest's default is no limit: TestFaucetdRegtestUnlimited): 12 fresh
// addresses claimed at once from one client get 5 payments and 7 refusals with 429
// client_rate_limited and a Retry-After, and a 13th after a restart of the faucet is refused
// too; a string amount in /api/wallet/send is refused.
func TestFaucetdClientLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test")
	}
	t.Setenv("COIN_CLAIMS_PER_IP", "5")
	_, f, _ := fundedFaucet(t, 20)
	got := claimAtOnce(f, 12)
	if got["200"] != 5 || got["429 client_rate_limited retry-after=true"] != 7 {
		t.Fatalf("12 claims from one client: %v\nfaucetd:\n%s", got, f.Out.Tail(30))
	}
	// A restart does not give the client a fresh hour: the claim records keep its network.
	f.restart(t)
	_, fresh, _ := wallet.NewMnemonic(12, params.Regtest)
	code, body, hdr := httpJSON("POST", f.url+"/api/faucet", fmt.Sprintf(`{"address":%q}`, fresh))
	if e, _ := body["error"].(map[string]any); code != 429 || e["code"] != "client_rate_limited" || hdr.Get("Retry-After") == "" {
		t.Fatalf("a claim after a restart: %d %v", code, body)
	}
	m, _, _ := wallet.NewMnemonic(12, params.Regtest)
	_, to, _ := wallet.NewMnemonic(12, params.Regtest)
	code, body, _ = httpJSON("POST", f.url+"/api/wallet/send", fmt.Sprintf(`{"mnemonic":%q,"to":%q,"amount":"1"}`, m, to))
	if code != 400 {
		t.Fatalf("send with a string amount: %d %v", code, body)
	}
}

// TestFaucetdRegtestUnlimited: on regtest the per-client limit and the hourly budget default
// to off (docs/agents.md's path, wallet_new then faucet_claim, was refused at the sixth
// claim): 12 fresh addresses claimed at once from one client are all paid, and so is a 13th
// after a restart; the start-up line says the limits are off, and --help says so. Testnet
// keeps them (faucet.DefaultLimits, TestDefaultLimits in lib/faucet).
func TestFaucetdRegtestUnlimited(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test")
	}
	for _, v := range []string{"COIN_CLAIMS_PER_IP", "COIN_BUDGET_PER_HOUR"} {
		if _, ok := os.LookupEnv(v); ok {
			t.Setenv(v, "")
			os.Unsetenv(v)
		}
	}
	_, f, _ := fundedFaucet(t, 20, "--amount", "1") // 13 claims, within what 20 coinbases pay
	if got := claimAtOnce(f, 12); got["200"] != 12 {
		t.Fatalf("12 claims from one client on regtest: %v\nfaucetd:\n%s", got, f.Out.Tail(30))
	}
	if out := f.Out.String(); !strings.Contains(out, "claims_per_ip=off") || !strings.Contains(out, "budget_per_hour=off") {
		t.Errorf("the start-up line does not say the limits are off:\n%s", f.Out.Tail(30))
	}
	f.restart(t)
	_, fresh, _ := wallet.NewMnemonic(12, params.Regtest)
	if code, body, _ := httpJSON("POST", f.url+"/api/faucet", fmt.Sprintf(`{"address":%q}`, fresh)); code != 200 {
		t.Fatalf("a claim after a restart: %d %v", code, body)
	}
	help, err := exec.Command(f.Cmd.Path, "--help").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"(default: 5 on testnet, no limit on regtest) [$COIN_CLAIMS_PER_IP]",
		"(default: 100 on testnet, no limit on regtest) [$COIN_BUDGET_PER_HOUR]"} {
		if !strings.Contains(string(help), want) {
			t.Errorf("--help lacks %q", want)
		}
	}
}
