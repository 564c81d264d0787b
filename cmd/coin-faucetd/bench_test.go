package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/keys"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/wallet"
)

// BenchmarkFaucetClaims measures sustained claims per second and the p50/p99 latency of
// claims with 50 concurrent clients against real processes on loopback (coin-node on
// regtest, coin-faucetd with its access log on), claiming for fresh addresses until the
// faucet's funds (or the node's mempool) run out. Run it with
//
//	go test -run '^$' -bench FaucetClaims -benchtime 1x ./cmd/coin-faucetd
//
// COIN_BENCH_CLIENTS (default 50), COIN_BENCH_BLOCKS (coinbases of 50 COIN to the faucet,
// default 200), COIN_BENCH_AMOUNT (COIN per claim, default 1) and COIN_BENCH_MAX_BATCH
// (coin-faucetd --max-batch, default 250; 1 gives one transaction per claim) tune it. After the run
// it mines until the mempool is empty and checks that every claim transaction confirmed.
func BenchmarkFaucetClaims(b *testing.B) {
	clients := envInt("COIN_BENCH_CLIENTS", 50)
	blocks := envInt("COIN_BENCH_BLOCKS", 200)
	amountCOIN := os.Getenv("COIN_BENCH_AMOUNT")
	if amountCOIN == "" {
		amountCOIN = "1"
	}
	n := startNode(b)
	dir := b.TempDir()
	m, faucetAddr, _ := wallet.NewMnemonic(12, params.Regtest)
	mfile := filepath.Join(dir, "mnemonic")
	os.WriteFile(mfile, []byte(m), 0o600)
	_, burn, _ := wallet.NewMnemonic(12, params.Regtest)
	n.generate(b, blocks, faucetAddr)
	n.generate(b, consensus.CoinbaseMaturity, burn)
	f := startFaucetd(b, limitsOff("--network", "regtest", "--rpc", n.URL(), "--data-dir", filepath.Join(dir, "data"),
		"--mnemonic-file", mfile, "--amount", amountCOIN, "--access-log", filepath.Join(dir, "access.log"),
		"--max-batch", fmt.Sprint(envInt("COIN_BENCH_MAX_BATCH", 250)))...)

	var (
		mu        sync.Mutex
		latencies []time.Duration
		txids     = map[string]int{}
		stopWhy   atomic.Value
		lastOK    atomic.Int64
	)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				var pkh [32]byte
				rand.Read(pkh[:])
				addr, _ := keys.EncodeAddress(params.Regtest.HRP, pkh)
				t0 := time.Now()
				code, body, _ := httpJSON("POST", f.url+"/api/faucet", fmt.Sprintf(`{"address":%q}`, addr))
				d := time.Since(t0)
				if code != 200 {
					if ctx.Err() == nil {
						stopWhy.Store(fmt.Sprintf("%d %v", code, body))
					}
					cancel()
					return
				}
				lastOK.Store(int64(time.Since(start)))
				mu.Lock()
				latencies = append(latencies, d)
				txids[body["txid"].(string)]++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	elapsed := time.Duration(lastOK.Load())
	sort.Slice(latencies, func(i, j int) bool { return latencies[i] < latencies[j] })
	ok := len(latencies)
	if ok == 0 {
		b.Fatalf("no claim succeeded: %v\n%s", stopWhy.Load(), f.Out.String())
	}
	pct := func(p float64) time.Duration { return latencies[min(ok-1, int(float64(ok)*p))] }

	// Bytes per claim in blocks: the claim transactions' sizes over the claims they pay.
	var bytes int
	for id := range txids {
		tx, err := n.RPC.GetTransaction(context.Background(), id)
		if err != nil {
			b.Fatalf("claim transaction %s: %v", id, err)
		}
		bytes += tx.Size
	}
	perClaim := float64(bytes) / float64(ok)
	perBlock := float64(consensus.MaxBlockSize-1_000) / perClaim // less header and coinbase
	rate := float64(ok) / elapsed.Seconds()
	b.ReportMetric(rate, "claims/s")
	b.ReportMetric(float64(pct(0.50).Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(pct(0.99).Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(ok)/float64(len(txids)), "claims/tx")
	b.ReportMetric(perClaim, "bytes/claim")
	b.ReportMetric(perBlock/60, "block-claims/min-per-s")
	b.Logf("%d clients, %d claims in %v by %d transactions (stopped by: %v); %.0f claims/s, p50 %v, p99 %v, max %v; "+
		"%.1f bytes per claim, so a 1 MiB block carries %.0f claims, %.1f per second of a 60 s block interval; GOMAXPROCS %d",
		clients, ok, elapsed.Round(time.Millisecond), len(txids), stopWhy.Load(), rate, pct(0.50), pct(0.99), latencies[ok-1],
		perClaim, perBlock, perBlock/60, runtime.GOMAXPROCS(0))

	// Every claim transaction confirms within the next blocks, with no conflict.
	for i := 0; i < 20; i++ {
		if mi, _ := n.RPC.GetMempoolInfo(context.Background()); mi.Size == 0 {
			break
		}
		n.generate(b, 1, burn)
	}
	for id := range txids {
		if tx, err := n.RPC.GetTransaction(context.Background(), id); err != nil || tx.Confirmations == 0 {
			b.Fatalf("claim transaction %s not confirmed: %+v %v", id, tx, err)
		}
	}
}

func envInt(name string, def int) int {
	var v int
	if _, err := fmt.Sscan(os.Getenv(name), &v); err == nil && v > 0 {
		return v
	}
	return def
}
