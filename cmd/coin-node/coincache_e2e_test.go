package main

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// --coin-cache-mb through the executable: a node with the coin cache off (0) and one with a
// small cache (32 MiB) connect the same blocks, spends of stored outputs included (those the
// cache serves), and end with the same UTXO set; a negative size is a usage error that
// touches nothing.
func TestE2ECoinCacheFlag(t *testing.T) {
	bin := filepath.Join(bins(t), "coin-node")
	dir := t.TempDir()
	out, err := exec.Command(bin, "--network", "regtest", "--data-dir", filepath.Join(dir, "x"), "--coin-cache-mb", "-1").CombinedOutput()
	if code := exitCode(err); code != 2 || !strings.Contains(string(out), "--coin-cache-mb -1") {
		t.Fatalf("--coin-cache-mb -1: exit %d, want 2 (a usage error) and the flag named:\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "x")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatal("a refused --coin-cache-mb created the data directory")
	}

	w := newWallet(t, 0)
	a := newProc(t, "A")
	a.Extra = []string{"--log-level", "debug", "--coin-cache-mb", "32"}
	a.Start(t)
	hashes := a.generate(110, w.addr)
	// Spend the first five coinbases: each spend reads a stored output.
	for i := 0; i < 5; i++ {
		_, raw := spendCoinbase(t, w, a, hashes[i], 1000)
		var txid string
		if err := a.RPC.Call(bg, "sendrawtransaction", []any{raw}, &txid); err != nil {
			t.Fatalf("sendrawtransaction %d: %v", i, err)
		}
	}
	last := a.generate(1, w.addr)
	if blk, err := a.RPC.GetBlock(bg, last[0]); err != nil || len(blk.Tx) != 6 {
		t.Fatalf("the block after the spends: %v, err %v; want the coinbase and 5 spends", blk, err)
	}

	b := newProc(t, "B")
	b.Extra = []string{"--log-level", "debug", "--coin-cache-mb", "0", "--connect", a.P2PAddr()}
	b.Start(t)
	waitUntil(t, 60*time.Second, "B to sync", func() bool { return b.height() == a.height() && b.best() == a.best() })
	if ha, hb := a.utxoHash(), b.utxoHash(); ha != hb {
		t.Fatalf("UTXO set hash: A (coin cache 32 MiB) %s, B (none) %s", ha, hb)
	}
}

// exitCode is the exit code of a finished command (0 when err is nil, -1 when it did not run).
func exitCode(err error) int {
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return -1
}
