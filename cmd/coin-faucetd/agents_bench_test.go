package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/proctest"
	"github.com/cointoolkit/coin/lib/wallet"
)

// BenchmarkAgentEndpoints measures the latency of the Proof of Conduct endpoints 10 to 13
// (vouch, contract create, contract fulfil, review) with 20 concurrent agents against real
// processes on loopback (coin-node on regtest, coin-faucetd with --ip-rate 0 and its access
// log in a file). The goal (Proof of Conduct issue) is a p99 under 100 ms for each.
//
// Outside the timer the agents are funded by the faucet, registered, and raised above the
// vouching score (700) by contracts with three partners each, fulfilled and reviewed 10
// both ways. Each iteration then has every agent, concurrently, create a contract with
// another agent, have that counterparty fulfil it, review the counterparty and vouch for an
// agent it has not vouched for yet (the first 19 iterations); a block is mined between
// iterations (outside the timer). Run it with
//
//	go test -run '^$' -bench AgentEndpoints -benchtime 10x ./cmd/coin-faucetd
//
// It reports p50 and p99 per endpoint in milliseconds, and the CPU time per call of
// coin-faucetd, coin-node and the benchmark's own clients (proctest's Proc.CPU and
// ProcessCPU), which, unlike the latencies, hardly changes when other work shares the
// machine: the latencies of a burst of 20 calls on 2 cores follow that CPU.
func BenchmarkAgentEndpoints(b *testing.B) {
	const agents = 20
	n := startNode(b)
	dir := b.TempDir()
	m, faucetAddr, _ := wallet.NewMnemonic(12, params.Regtest)
	mfile := filepath.Join(dir, "mnemonic")
	os.WriteFile(mfile, []byte(m), 0o600)
	_, burn, _ := wallet.NewMnemonic(12, params.Regtest)
	n.generate(b, 2*agents+10, faucetAddr) // 50 COIN each; a claim is 100
	n.generate(b, consensus.CoinbaseMaturity, burn)
	f := startFaucetd(b, limitsOff("--network", "regtest", "--rpc", n.URL(), "--data-dir", filepath.Join(dir, "data"),
		"--mnemonic-file", mfile, "--ip-rate", "0", "--access-log", filepath.Join(dir, "access.log"))...)

	call := func(method, path, body string) (map[string]any, time.Duration, error) {
		t0 := time.Now()
		code, m, _ := httpJSON(method, f.url+path, body)
		d := time.Since(t0)
		if code != 200 {
			return m, d, fmt.Errorf("%s %s: %d %v", method, path, code, m)
		}
		return m, d, nil
	}
	must := func(method, path, body string) map[string]any {
		b.Helper()
		m, _, err := call(method, path, body)
		if err != nil {
			b.Fatalf("%v\nfaucetd:\n%s", err, f.Out.Tail(20))
		}
		return m
	}
	type agent struct{ mnemonic, address string }
	as := make([]agent, agents)
	for i := range as {
		w := must("GET", "/api/wallet/new", "")
		as[i] = agent{w["mnemonic"].(string), w["address"].(string)}
		must("POST", "/api/faucet", fmt.Sprintf(`{"address":%q}`, as[i].address))
	}
	body := func(a agent, rest string) string { return fmt.Sprintf(`{"mnemonic":%q%s}`, a.mnemonic, rest) }
	for i := range as {
		must("POST", "/api/agent/register", body(as[i], ""))
	}
	n.generate(b, 1, burn)
	// contract runs endpoints 11 to 13 for initiator x and counterparty y, 10-star reviews
	// both ways when both is set.
	contract := func(x, y agent, both bool) (create, fulfil, review time.Duration, err error) {
		cr, create, err := call("POST", "/api/agent/contract/create", body(x, fmt.Sprintf(`,"counterparty":%q,"value_coin":0.01`, y.address)))
		if err != nil {
			return
		}
		id := fmt.Sprintf(`,"contract_id":%q`, cr["contract_id"])
		if _, fulfil, err = call("POST", "/api/agent/contract/fulfil", body(y, id)); err != nil {
			return
		}
		if _, review, err = call("POST", "/api/agent/review", body(x, fmt.Sprintf(`,"subject_address":%q,"score":10%s`, y.address, id))); err != nil {
			return
		}
		if both {
			_, _, err = call("POST", "/api/agent/review", body(y, fmt.Sprintf(`,"subject_address":%q,"score":10%s`, x.address, id)))
		}
		return
	}
	for k := 1; k <= 3; k++ {
		for i := range as {
			if _, _, _, err := contract(as[i], as[(i+k)%agents], true); err != nil {
				b.Fatalf("setup: %v\nfaucetd:\n%s", err, f.Out.Tail(20))
			}
		}
		n.generate(b, 1, burn)
	}
	for i := range as {
		if s := must("GET", "/api/agent/profile?address="+as[i].address, "")["conduct_score"].(float64); s < 700 {
			b.Fatalf("agent %d has score %v after the setup, below the vouching score", i, s)
		}
	}

	var mu sync.Mutex
	lat := map[string][]time.Duration{}
	record := func(ep string, d time.Duration) {
		mu.Lock()
		lat[ep] = append(lat[ep], d)
		mu.Unlock()
	}
	faucetCPU, nodeCPU, benchCPU := f.CPU(), n.Proc.CPU(), proctest.ProcessCPU()
	b.ResetTimer()
	for iter := 0; iter < b.N; iter++ {
		var wg sync.WaitGroup
		for i := range as {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				p := as[(i+4+iter%15)%agents] // never i itself
				c, fu, r, err := contract(as[i], p, false)
				if err != nil {
					b.Errorf("iteration %d, agent %d: %v", iter, i, err)
					return
				}
				record("create", c)
				record("fulfil", fu)
				record("review", r)
				if iter < agents-1 {
					target := as[(i+1+iter)%agents]
					_, v, err := call("POST", "/api/agent/vouch", body(as[i], fmt.Sprintf(`,"target_address":%q`, target.address)))
					if err != nil {
						b.Errorf("iteration %d, agent %d: %v", iter, i, err)
						return
					}
					record("vouch", v)
				}
			}(i)
		}
		wg.Wait()
		if b.Failed() {
			b.Fatalf("faucetd:\n%s", f.Out.Tail(20))
		}
		b.StopTimer()
		n.generate(b, 1, burn)
		b.StartTimer()
	}
	b.StopTimer()
	calls := 0
	for _, ds := range lat {
		calls += len(ds)
	}
	perCall := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(max(calls, 1)) }
	b.ReportMetric(perCall(f.CPU()-faucetCPU), "faucetd-cpu-ms/call")
	b.ReportMetric(perCall(n.Proc.CPU()-nodeCPU), "node-cpu-ms/call")
	b.ReportMetric(perCall(proctest.ProcessCPU()-benchCPU), "bench-cpu-ms/call")
	var summary []string
	for _, ep := range []string{"vouch", "create", "fulfil", "review"} {
		ds := lat[ep]
		if len(ds) == 0 {
			continue
		}
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		pct := func(p float64) time.Duration { return ds[min(len(ds)-1, int(float64(len(ds))*p))] }
		b.ReportMetric(float64(pct(0.50).Microseconds())/1000, ep+"-p50-ms")
		b.ReportMetric(float64(pct(0.99).Microseconds())/1000, ep+"-p99-ms")
		summary = append(summary, fmt.Sprintf("%s: %d calls, p50 %v, p99 %v, max %v", ep, len(ds), pct(0.50), pct(0.99), ds[len(ds)-1]))
	}
	b.Logf("%d concurrent agents, %d iterations, GOMAXPROCS %d; %v", agents, b.N, runtime.GOMAXPROCS(0), summary)
}
