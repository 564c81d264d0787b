package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/proctest"
	"github.com/cointoolkit/coin/lib/wallet"
)

func TestMain(m *testing.M) {
	code := m.Run()
	proctest.Cleanup()
	os.Exit(code)
}

// cleanEnv is the environment without the tools' own variables: the commands run as typed
// on a machine where none is set.
func cleanEnv(extra ...string) []string {
	var out []string
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "COIN_") {
			out = append(out, e)
		}
	}
	return append(out, extra...)
}

// The project's own examples through the real executables, a regtest coin-node and a
// regtest coin-faucetd, with no COIN_NETWORK set anywhere:
//   - coin-faucetd --mnemonic-file wallet.json, the file 'coin-wallet new > wallet.json'
//     wrote (the JSON, not the bare words), starts and pays from that mnemonic's address;
//   - 'coin-wallet new | tee wallet.json | coin-faucet claim' is paid: new makes a mainnet
//     address (its default network), and claim, which has the mnemonic, claims for that
//     mnemonic's address on the faucet's network, saying so on standard error; the
//     mnemonic appears in no output and no log;
//   - a piped address of the faucet's network is claimed as it is.
func TestPipedClaimEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: starts a node and a faucet")
	}
	bin := proctest.Build(t, "./cmd/coin-node", "./cmd/coin-faucetd", "./cmd/coin-wallet", "./cmd/coin-faucet")
	node := proctest.StartNode(t, filepath.Join(bin, "coin-node"))
	tmp := t.TempDir()

	// The faucet's funds: 'coin-wallet --network regtest new > faucet.json'.
	newCmd := exec.Command(filepath.Join(bin, "coin-wallet"), "--network", "regtest", "new")
	newCmd.Env = cleanEnv()
	fj, err := newCmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	var faucetWallet struct{ Mnemonic, Address string }
	if err := json.Unmarshal(fj, &faucetWallet); err != nil {
		t.Fatalf("new printed %q", fj)
	}
	faucetJSON := filepath.Join(tmp, "faucet.json")
	if err := os.WriteFile(faucetJSON, fj, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := node.RPC.GenerateToAddress(ctx, 101, faucetWallet.Address); err != nil {
		t.Fatal(err)
	}

	listen := fmt.Sprintf("127.0.0.1:%d", proctest.FreePort(t))
	faucetURL := "http://" + listen
	fd := proctest.Start(t, filepath.Join(bin, "coin-faucetd"), "--network", "regtest", "--rpc", node.URL(),
		"--mnemonic-file", faucetJSON, "--data-dir", filepath.Join(tmp, "faucet"), "--listen", listen, "--amount", "10")
	deadline := time.Now().Add(30 * time.Second)
	for {
		var st map[string]any
		resp, err := http.Get(faucetURL + "/api/status")
		if err == nil {
			json.NewDecoder(resp.Body).Decode(&st)
			resp.Body.Close()
		}
		if st["faucet_balance"] != nil && st["faucet_balance"] != "0.00000000" {
			if st["faucet_address"] != faucetWallet.Address || st["network"] != "regtest" {
				t.Fatalf("faucet status %v: want the address %s of faucet.json", st, faucetWallet.Address)
			}
			break
		}
		if fd.Exited() {
			t.Fatalf("coin-faucetd --mnemonic-file faucet.json (the JSON of 'coin-wallet new') exited:\n%s", fd.Out.String())
		}
		if time.Now().After(deadline) {
			t.Fatalf("coin-faucetd not ready (status %v):\n%s", st, fd.Out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}

	sh := func(pipeline string) (string, string, int) {
		t.Helper()
		cmd := exec.Command("sh", "-c", pipeline)
		cmd.Dir = tmp
		cmd.Env = cleanEnv("PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "COIN_FAUCET_URL="+faucetURL)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		var xe *exec.ExitError
		if errors.As(err, &xe) {
			return out.String(), errb.String(), xe.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return out.String(), errb.String(), 0
	}

	// As typed (the faucet's URL aside): no --network anywhere.
	out, errOut, code := sh("coin-wallet new | tee wallet.json | coin-faucet claim")
	wj, err := os.ReadFile(filepath.Join(tmp, "wallet.json"))
	if err != nil {
		t.Fatal(err)
	}
	var user struct{ Mnemonic, Address string }
	if err := json.Unmarshal(wj, &user); err != nil {
		t.Fatalf("wallet.json holds %q", wj)
	}
	want, _ := wallet.AddressFromMnemonic(user.Mnemonic, params.Regtest, 0)
	if !strings.HasPrefix(user.Address, "coin1") {
		t.Fatalf("coin-wallet new without --network printed %s: the test expects mainnet's default", user.Address)
	}
	var res struct{ TxID, Amount, Address string }
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || res.Address != want || len(res.TxID) != 64 || res.Amount != "10.00000000" {
		t.Fatalf("coin-wallet new | coin-faucet claim: exit %d, stdout %q, stderr %q; want a claim for %s", code, out, errOut, want)
	}
	if !strings.Contains(errOut, "claiming for "+want) {
		t.Fatalf("claim did not say which address it claimed for: %q", errOut)
	}
	words := strings.Fields(user.Mnemonic)
	for _, s := range []string{out, errOut, fd.Out.String()} {
		if strings.Contains(s, strings.Join(words[:3], " ")) {
			t.Fatalf("the mnemonic leaked: %q", s)
		}
	}
	us, err := node.RPC.GetUtxosByAddress(ctx, want, true)
	if err != nil || len(us) != 1 || us[0].TxID != res.TxID || us[0].Value != 10*100_000_000 {
		t.Fatalf("the claimant's outputs: %+v, %v", us, err)
	}
	// The same mnemonic, restored for the faucet's network, holds the coins.
	if got, _, code := sh("coin-wallet --network regtest derive < wallet.json"); code != 0 || strings.TrimSpace(got) != want {
		t.Fatalf("derive on regtest = %q (exit %d), want %s", got, code, want)
	}

	// A piped address of the faucet's network is claimed as it is, with nothing to say.
	out, errOut, code = sh("coin-wallet --network regtest new | tee wallet2.json | coin-faucet claim")
	var user2 struct{ Address string }
	b2, _ := os.ReadFile(filepath.Join(tmp, "wallet2.json"))
	_ = json.Unmarshal(b2, &user2)
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || res.Address != user2.Address || errOut != "" {
		t.Fatalf("regtest new | claim: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	// The second claim of the first address is rate limited: exit 75 (EX_TEMPFAIL); a usage
	// error exits 2.
	if _, errOut, code := sh("coin-faucet claim < wallet.json"); code != 75 || !strings.Contains(errOut, "rate limited") {
		t.Fatalf("second claim: exit %d, stderr %q", code, errOut)
	}
	if _, errOut, code := sh("coin-faucet claim tcoin1a tcoin1b"); code != 2 || !strings.Contains(errOut, "at most one ADDRESS") {
		t.Fatalf("two addresses: exit %d, stderr %q", code, errOut)
	}
}
