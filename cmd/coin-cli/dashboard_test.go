package main

import (
	"context"
	"encoding/json"
	"math"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/keys"
	"github.com/cointoolkit/coin/lib/node/nodetest"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/pow"
	"github.com/cointoolkit/coin/lib/rpcapi"
)

// realNode runs a regtest node in the process with RPC on a free port; its URL.
func realNode(t *testing.T) string {
	t.Helper()
	_, url := nodetest.Run(t, nodetest.Config(t, nil))
	return url
}

// TestDashboardJSON: piped, the dashboard prints one JSON snapshot of a real node and exits;
// its numbers are the node's, and its hashrate is the work of the window's blocks over their
// timespan.
func TestDashboardJSON(t *testing.T) {
	url := realNode(t)
	ctx := context.Background()
	c := rpcapi.NewClient(url)
	defer c.Close()
	seed, _ := keys.SeedFromMnemonic("abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about", "")
	addr, err := keys.EncodeAddress(params.Regtest.HRP, keys.HashPubKey(keys.DeriveAccountKey(seed, params.Regtest.CoinType, 0, 0).PublicKey()))
	if err != nil {
		t.Fatal(err)
	}

	// An empty chain: no hashrate yet, synced.
	r := runApp(t, "", "--rpc", url, "dashboard")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var d Dashboard
	if err := json.Unmarshal([]byte(r.stdout), &d); err != nil {
		t.Fatalf("%v in %q", err, r.stdout)
	}
	if d.Height != 0 || d.Network != "regtest" || d.Sync.Progress != 1 || d.Sync.Syncing || d.Hashrate.HashesPerSecond != 0 || len(d.Errors) != 0 {
		t.Fatalf("empty chain: %+v", d)
	}

	if _, err := c.GenerateToAddress(ctx, 130, addr); err != nil {
		t.Fatal(err)
	}
	r = runApp(t, "", "--rpc", url, "dashboard", "--blocks", "50")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if strings.Count(r.stdout, "\n{") != 0 || strings.Contains(r.stdout, "\x1b") {
		t.Fatalf("not one plain JSON snapshot: %q", r.stdout)
	}
	d = Dashboard{}
	if err := json.Unmarshal([]byte(r.stdout), &d); err != nil {
		t.Fatal(err)
	}
	bc, err := c.GetBlockchainInfo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d.Height != 130 || d.BestBlockHash != bc.BestBlockHash || d.Peers != 0 || d.DecayPool != bc.DecayPoolBalance ||
		d.Mempool.Size != 0 || d.Sync.TargetHeight != 130 || d.Sync.Progress != 1 || len(d.Errors) != 0 {
		t.Fatalf("snapshot %+v, node %+v", d, bc)
	}
	if _, err := time.Parse(time.RFC3339, d.Time); err != nil {
		t.Fatalf("time %q", d.Time)
	}
	// The hashrate, computed again from the node's headers.
	header := func(h uint64) rpcapi.Header {
		hash, err := c.GetBlockHash(ctx, h)
		if err != nil {
			t.Fatal(err)
		}
		var hd rpcapi.Header
		if err := c.Call(ctx, "getblockheader", []any{hash}, &hd); err != nil {
			t.Fatal(err)
		}
		return hd
	}
	first, work := header(80), new(big.Int)
	last := first
	for h := uint64(81); h <= 130; h++ {
		last = header(h)
		work.Add(work, pow.Work(last.DifficultyTarget))
	}
	if d.Hashrate.Blocks != 50 || d.Hashrate.Seconds != last.Timestamp-first.Timestamp {
		t.Fatalf("hashrate window %+v (timestamps %d..%d)", d.Hashrate, first.Timestamp, last.Timestamp)
	}
	if d.Hashrate.Seconds > 0 {
		want, _ := new(big.Float).Quo(new(big.Float).SetInt(work), big.NewFloat(float64(d.Hashrate.Seconds))).Float64()
		if math.Abs(d.Hashrate.HashesPerSecond-want) > want*1e-9 || d.Hashrate.Formatted == "" {
			t.Fatalf("hashrate %+v, want %v H/s", d.Hashrate, want)
		}
	}
	t.Logf("dashboard: %s", r.stdout)

	// The terminal screen of the same snapshot.
	screen := renderDashboard(&d, url, time.Second)
	for _, want := range []string{"height:", "130", "peers:", "mempool:", "sync:", "[##############################] 100.00%  synced",
		"hashrate:", "decay pool:", "agents:"} {
		if !strings.Contains(screen, want) {
			t.Errorf("screen without %q:\n%s", want, screen)
		}
	}
	if got := progressBar(0.5, 10); got != "[#####-----]" {
		t.Errorf("progressBar(0.5) %q", got)
	}

	// Bad options are refused before any call.
	if r := runApp(t, "", "--rpc", url, "dashboard", "--blocks", "0"); r.code == 0 || !strings.Contains(r.stderr, "--blocks") {
		t.Fatalf("--blocks 0: %+v", r)
	}
	// A node that does not answer is an error.
	if r := runApp(t, "", "--rpc", closedURL(), "dashboard"); r.code == 0 || !strings.Contains(r.stderr, "connection refused") {
		t.Fatalf("closed port: %+v", r)
	}
}
