package events

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/chainfollow"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/proctest"
	"github.com/cointoolkit/coin/lib/wallet"
)

// BenchmarkBlockToSubscribers1000 measures event delivery from the block: a real regtest
// coin-node, the source fed by the chain follower, and 1,000 SSE subscribers over real HTTP
// on loopback. Each iteration registers an agent (its pending event reaches everyone first),
// then mines a block with generatetoaddress; the clock starts just before that call, so the
// delay counts the node's mining, validation and connection of the block, its stream (or
// the poll), the follower's reads, the source's decoding, the store's write and the fan-out,
// until each subscriber has read the confirmed agent_registered line. Reported over all
// deliveries: block-p50/p99/max-ms from the block, obs-p99-ms from the source's observation
// (the event's time, what BenchmarkEventFanout measures), toobs-p50/p99-ms from the block to
// that observation (the follower's part: the stream or the poll, and its reads). Sub-benchmarks: "stream" (the
// node's push stream, as coin-faucetd runs) and "poll100ms" (no stream, the follower asking
// every 100 ms as the event source did before the follower).
//
//	go test -run '^$' -bench BlockToSubscribers1000 -benchtime 30x ./lib/faucet/events/
func BenchmarkBlockToSubscribers1000(b *testing.B) {
	b.Run("stream", func(b *testing.B) { benchBlockToSubscribers(b, false) })
	b.Run("poll100ms", func(b *testing.B) { benchBlockToSubscribers(b, true) })
}

func benchBlockToSubscribers(b *testing.B, poll bool) {
	const subscribers = 1000
	net := params.Regtest
	bin := filepath.Join(proctest.Build(b, "./cmd/coin-node"), "coin-node")
	node := proctest.StartNode(b, bin, "--listen=false")
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)

	// One funded key per iteration, its two coinbases matured.
	m, _, err := wallet.NewMnemonic(12, net)
	if err != nil {
		b.Fatal(err)
	}
	ring, err := wallet.KeyringFromMnemonic(m, "", net, 0)
	if err != nil {
		b.Fatal(err)
	}
	keys := make([]wallet.Key, b.N)
	for i := range keys {
		if keys[i], err = ring.Key(uint32(i)); err != nil {
			b.Fatal(err)
		}
		if _, err := node.RPC.GenerateToAddress(ctx, 2, keys[i].Address); err != nil { // a registration stakes 50 COIN
			b.Fatal(err)
		}
	}
	_, burn, err := wallet.NewMnemonic(12, net)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := node.RPC.GenerateToAddress(ctx, 100, burn); err != nil {
		b.Fatal(err)
	}

	h := newTestHub(b, 0, 0)
	src, err := NewSource(SourceConfig{Node: node.RPC, Hub: h, HRP: net.HRP})
	if err != nil {
		b.Fatal(err)
	}
	f := chainfollow.New(node.RPC, chainfollow.Config{Start: src.Position(), Mempool: true, NoStream: poll,
		PollInterval: 100 * time.Millisecond})
	f.Subscribe(src.Apply)
	started := make(chan struct{})
	var once sync.Once
	f.Subscribe(func(context.Context, chainfollow.Update) error { once.Do(func() { close(started) }); return nil })
	done := make(chan struct{})
	go func() { f.Run(ctx); close(done) }()
	b.Cleanup(func() { cancel(); <-done })
	<-started

	srv := httptest.NewServer(h.Handler(HandlerConfig{HRP: net.HRP, MaxSubscribers: 2 * subscribers}))
	b.Cleanup(srv.Close)
	b.Cleanup(h.Close) // first: end the streams, which never go idle, so that Close returns
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2 * subscribers}}
	var blockAt atomic.Int64 // unix ns just before the block's generatetoaddress
	var mu sync.Mutex
	var fromBlock, fromObs, toObs []time.Duration
	pending, confirmed := make(chan struct{}, subscribers*2), make(chan struct{}, subscribers*2)
	for i := 0; i < subscribers; i++ {
		subscribe(b, ctx, client, srv.URL+"?types=agent_registered", func(line []byte, now time.Time) {
			// Only the status and time are read, without a JSON decoder: the subscribers
			// share the 2 CPUs with the faucet they measure.
			if !bytes.Contains(line, []byte(`"status":"confirmed"`)) {
				pending <- struct{}{}
				return
			}
			var obs time.Time
			if i := bytes.Index(line, []byte(`"time":"`)); i >= 0 {
				rest := line[i+8:]
				if j := bytes.IndexByte(rest, '"'); j > 0 {
					obs, _ = time.Parse(time.RFC3339Nano, string(rest[:j]))
				}
			}
			mu.Lock()
			fromBlock = append(fromBlock, now.Sub(time.Unix(0, blockAt.Load())))
			fromObs = append(fromObs, now.Sub(obs))
			toObs = append(toObs, obs.Sub(time.Unix(0, blockAt.Load())))
			mu.Unlock()
			confirmed <- struct{}{}
		})
	}
	for h.Subscribers() < subscribers {
		time.Sleep(10 * time.Millisecond)
	}
	wait := func(ch chan struct{}, what string, i int) {
		for j := 0; j < subscribers; j++ {
			select {
			case <-ch:
			case <-time.After(20 * time.Second):
				b.Fatalf("block %d: %d of %d subscribers read the %s event", i, j, subscribers, what)
			}
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := wallet.SpendAgent(ctx, node.RPC, net, keys[i], wallet.RegisterRequest(keys[i].PKH)); err != nil {
			b.Fatal(err)
		}
		wait(pending, "pending", i)
		blockAt.Store(time.Now().UnixNano())
		if _, err := node.RPC.GenerateToAddress(ctx, 1, burn); err != nil {
			b.Fatal(err)
		}
		wait(confirmed, "confirmed", i)
	}
	b.StopTimer()
	if !poll && !f.Streaming() {
		b.Fatal("the follower did not use the node's stream")
	}
	q := func(ds []time.Duration, p float64) float64 {
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		return float64(ds[int(p*float64(len(ds)-1))].Microseconds()) / 1000
	}
	b.ReportMetric(q(fromBlock, 0.50), "block-p50-ms")
	b.ReportMetric(q(fromBlock, 0.99), "block-p99-ms")
	b.ReportMetric(q(fromBlock, 1), "block-max-ms")
	b.ReportMetric(q(fromObs, 0.99), "obs-p99-ms")
	b.ReportMetric(q(toObs, 0.50), "toobs-p50-ms")
	b.ReportMetric(q(toObs, 0.99), "toobs-p99-ms")
	b.ReportMetric(0, "ns/op")
}
