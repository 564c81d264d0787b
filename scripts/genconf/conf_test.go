package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/confile"
	"github.com/cointoolkit/coin/lib/proctest"
)

// TestConfServesNodeAndClients: a regtest node started with a configuration file and nothing
// else on its command line takes its network, addresses and data directory from the file's
// top and [regtest] section; coin-cli, coin-wallet and coin-miner, given no --rpc and no
// --network, find it through the same file (its rpc-bind), named by --conf, by COIN_CONF, or
// found at ~/.coin/coin.conf. --log-file PATH (the space form) writes PATH.
func TestConfServesNodeAndClients(t *testing.T) {
	bin := bins(t)
	home := isolate(t)
	dataDir := filepath.Join(home, "chain")
	conf := filepath.Join(home, ".coin", "coin.conf")
	if err := os.MkdirAll(filepath.Dir(conf), 0o700); err != nil {
		t.Fatal(err)
	}
	rpcPort, p2pPort := proctest.FreePort(t), proctest.FreePort(t)
	text := fmt.Sprintf(`# one file for the node and its clients
network = regtest
log-level=info

[testnet]
rpc-bind=127.0.0.1:1

[regtest]
rpc-bind=127.0.0.1:%d   # the clients call this
p2p-port=%d
data-dir=%s
max-peers=2
`, rpcPort, p2pPort, dataDir)
	if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	logFile := filepath.Join(home, "node.log")
	node := proctest.Start(t, filepath.Join(bin, "coin-node"), "--conf", conf, "--log-file", logFile)

	run := func(env []string, tool string, args ...string) string {
		t.Helper()
		cmd := exec.Command(filepath.Join(bin, tool), args...)
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.Output()
		if err != nil {
			var stderr []byte
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = ee.Stderr
			}
			t.Fatalf("%s %v: %v\n%s\nnode:\n%s", tool, args, err, stderr, node.Out.Tail(40))
		}
		return strings.TrimSpace(string(out))
	}
	// --rpcwait: wait for the node to listen (a condition, not a sleep).
	if got := run(nil, "coin-cli", "--conf", conf, "--rpcwait", "--rpcwait-timeout", "60s", "getblockcount"); got != "0" {
		t.Fatalf("getblockcount = %q, want 0", got)
	}
	var w struct{ Address string }
	if err := json.Unmarshal([]byte(run(nil, "coin-wallet", "new")), &w); err != nil || !strings.HasPrefix(w.Address, "tcoin1") {
		t.Fatalf("coin-wallet new (regtest from the default file): %q, %v", w.Address, err)
	}
	run([]string{"COIN_CONF=" + conf, "HOME=" + t.TempDir()}, "coin-miner", "--address", w.Address, "--blocks", "2", "--threads", "1")
	if got := run(nil, "coin-cli", "getblockcount"); got != "2" { // ~/.coin/coin.conf
		t.Fatalf("getblockcount after mining 2 = %q", got)
	}
	// The command line beats the file: --rpc elsewhere fails.
	if err := exec.Command(filepath.Join(bin, "coin-cli"), "--rpc", "http://127.0.0.1:1", "getblockcount").Run(); err == nil {
		t.Error("coin-cli --rpc http://127.0.0.1:1 reached the node")
	}
	if _, err := os.Stat(filepath.Join(dataDir, "db")); err != nil {
		t.Errorf("the node did not use the file's data-dir: %v", err)
	}
	run(nil, "coin-cli", "stop")
	if code := node.Wait(t, 60*time.Second); code != 0 {
		t.Fatalf("coin-node exited %d:\n%s", code, node.Out.Tail(40))
	}
	if b, err := os.ReadFile(logFile); err != nil || len(b) == 0 {
		t.Errorf("--log-file %s: %v, %d bytes", logFile, err, len(b))
	}
}

// TestConfFresh fails when deploy/coin.conf.example or lib/confile/known_keys.txt no longer
// match the options of the executables: run make conf (go run ./scripts/genconf).
func TestConfFresh(t *testing.T) {
	files, err := confile.Generate(bins(t))
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range files {
		got, err := os.ReadFile(filepath.Join("..", "..", path))
		if err != nil || string(got) != want {
			t.Errorf("%s is stale: run make conf (go run ./scripts/genconf)", path)
		}
	}
}
