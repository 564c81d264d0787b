// Package typescript runs the TypeScript SDK's tests (node --test) against real coin-node and
// coin-faucetd processes built from this tree.
package typescript

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
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

// needNode skips (fails under CI=true, where .ci/run installs them) without node and the
// SDK's node_modules.
func needNode(t *testing.T) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(filepath.Join("node_modules", "@noble", "curves", "package.json"))
	}
	if err != nil {
		msg := fmt.Sprintf("the SDK's tests need node and its packages (cd sdk/typescript && npm ci): %v", err)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return node
}

// TestSDK runs node --test test/ with COIN_FAUCET_URL set to a regtest coin-faucetd whose
// node has mature coins for it, and COIN_NODE_RPC to that node (for tests that mine blocks,
// to COIN_MINE_TO).
func TestSDK(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a node and a faucet")
	}
	node := needNode(t)
	bin := proctest.Build(t, "./cmd/coin-node", "./cmd/coin-faucetd")
	n := proctest.StartNode(t, filepath.Join(bin, "coin-node"))
	dir := t.TempDir()
	fm, faucetAddr, err := wallet.NewMnemonic(12, params.Regtest)
	if err != nil {
		t.Fatal(err)
	}
	mfile := filepath.Join(dir, "faucet-mnemonic")
	if err := os.WriteFile(mfile, []byte(fm+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, burn, _ := wallet.NewMnemonic(12, params.Regtest)
	ctx := context.Background()
	if _, err := n.RPC.GenerateToAddress(ctx, 20, faucetAddr); err != nil {
		t.Fatal(err)
	}
	if _, err := n.RPC.GenerateToAddress(ctx, 100, burn); err != nil { // maturity
		t.Fatal(err)
	}
	listen := fmt.Sprintf("127.0.0.1:%d", proctest.FreePort(t))
	f := proctest.Start(t, filepath.Join(bin, "coin-faucetd"), "--listen", listen, "--network", "regtest", "--rpc", n.URL(),
		"--data-dir", filepath.Join(dir, "faucet-data"), "--mnemonic-file", mfile, "--ip-rate", "0",
		"--claims-per-ip", "0", "--budget-per-hour", "0", "--requests-per-second", "0")
	url := "http://" + listen
	waitFunded(t, f, url)

	cctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(cctx, node, "--test", "--test-reporter=spec", "test/")
	cmd.Env = append(os.Environ(), "COIN_FAUCET_URL="+url, "COIN_NETWORK=regtest", "COIN_NODE_RPC="+n.URL(), "COIN_MINE_TO="+burn)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node --test: %v\n%s\ncoin-faucetd:\n%s", err, out, f.Out.Tail(30))
	}
	t.Logf("%s", out)
}

// waitFunded waits until the faucet answers with a non-zero balance.
func waitFunded(t *testing.T, f *proctest.Proc, url string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var st struct {
			Balance string `json:"faucet_balance"`
		}
		if resp, err := http.Get(url + "/api/status"); err == nil {
			_ = json.NewDecoder(resp.Body).Decode(&st)
			resp.Body.Close()
			if st.Balance != "" && st.Balance != "0.00000000" {
				return
			}
		}
		if f.Exited() || time.Now().After(deadline) {
			t.Fatalf("coin-faucetd not ready:\n%s", f.Out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}
