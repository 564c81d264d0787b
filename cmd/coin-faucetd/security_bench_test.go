package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/faucet/events"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/wallet"
)

// BenchmarkStatusUnderStreamsAndReplays measures what docs/security.md promises: ordinary
// requests stay fast while one client holds its share of event streams (4) and resumes
// from Last-Event-ID 0 as fast as the faucet lets it, against an event log of 100,000
// events (the retention; about 19 MB). Another client asks GET /api/status one request after
// another; the benchmark reports its p50 and p99 latency and the replayed bytes and 429s of
// the replaying client. Run it with
//
//	go test -run '^$' -bench StatusUnderStreamsAndReplays -benchtime 1x ./cmd/coin-faucetd
//
// COIN_BENCH_REQUESTS (default 1000) sets the /api/status requests.
func BenchmarkStatusUnderStreamsAndReplays(b *testing.B) {
	requests := envInt("COIN_BENCH_REQUESTS", 1000)
	n := startNode(b)
	dir := b.TempDir()
	m, faucetAddr, _ := wallet.NewMnemonic(12, params.Regtest)
	mfile := filepath.Join(dir, "mnemonic")
	os.WriteFile(mfile, []byte(m), 0o600)
	n.generate(b, 101, faucetAddr)
	// A full event log, written before the faucet starts.
	st, err := events.OpenStore(filepath.Join(dir, "data", "events"), 0)
	if err != nil {
		b.Fatal(err)
	}
	_, addr, _ := wallet.NewMnemonic(12, params.Regtest)
	for i := 0; i < events.DefaultRetention; i += 1000 {
		evs := make([]events.Event, 1000)
		for j := range evs {
			evs[j] = events.Event{Type: events.TypeContractCreated, Status: "pending", Time: time.Now().UTC().Format(time.RFC3339Nano),
				TxID: strings.Repeat("ab", 32), ContractID: strings.Repeat("ab", 32), Actor: addr, Initiator: addr, Counterparty: addr,
				ValueCoin: "1.00000000", ExpiryBlocks: 1440}
		}
		if _, err := st.Append(evs, nil); err != nil {
			b.Fatal(err)
		}
	}
	st.Close()
	f := startFaucetd(b, "--network", "regtest", "--rpc", n.URL(), "--data-dir", filepath.Join(dir, "data"),
		"--mnemonic-file", mfile, "--access-log", "off", "--requests-per-second", "0")

	from := func(ip string) *http.Client {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
		return &http.Client{Transport: &http.Transport{DialContext: d.DialContext, MaxIdleConnsPerHost: 16}}
	}
	attacker, user := from("127.0.0.2"), from("127.0.0.3")
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var replayed, refused, streams atomic.Int64
	// The attacker's share of streams: three held live, the fourth resuming from 0 again and
	// again (each connection reads for 300 ms, the replay and then live, and closes).
	for i := 0; i < 3; i++ {
		resp, err := attacker.Get(f.url + "/api/agent/events")
		if err != nil || resp.StatusCode != 200 {
			b.Fatalf("a held stream: %v %v", resp, err)
		}
		streams.Add(1)
		go func() { <-stop; resp.Body.Close() }()
		go io.Copy(io.Discard, resp.Body)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			req, _ := http.NewRequest(http.MethodGet, f.url+"/api/agent/events", nil)
			req.Header.Set("Last-Event-ID", "0")
			resp, err := attacker.Do(req)
			if err != nil {
				continue
			}
			if resp.StatusCode != 200 {
				refused.Add(1)
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				continue // at once: the refusals are part of the load
			}
			t := time.AfterFunc(300*time.Millisecond, func() { resp.Body.Close() })
			nb, _ := io.Copy(io.Discard, resp.Body)
			t.Stop()
			resp.Body.Close()
			replayed.Add(nb)
		}
	}()
	time.Sleep(time.Second) // the streams are open and replaying
	lat := make([]time.Duration, 0, requests)
	b.ResetTimer()
	for i := 0; i < requests; i++ {
		start := time.Now()
		resp, err := user.Get(f.url + "/api/status")
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatalf("/api/status: %d", resp.StatusCode)
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	close(stop)
	wg.Wait()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	p := func(q float64) time.Duration { return lat[int(q*float64(len(lat)-1))] }
	b.ReportMetric(float64(p(0.50).Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(p(0.99).Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(replayed.Load())/1e6, "replayed-MB")
	b.ReportMetric(float64(refused.Load()), "replays-429")
	fmt.Fprintf(os.Stderr, "status p50 %v p99 %v max %v over %d requests; attacker: %d held streams, %.1f MB replayed, %d refused\n",
		p(0.5), p(0.99), lat[len(lat)-1], len(lat), streams.Load(), float64(replayed.Load())/1e6, refused.Load())
}
