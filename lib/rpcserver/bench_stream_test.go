package rpcserver_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/rpcapi"
	"github.com/cointoolkit/coin/lib/rpcserver"
)

// BenchmarkStreamBlockLatency100 measures the delay from a block's submission to its
// block_connected event reaching each of 100 followers of the notification stream (each its
// own rpcapi.Client over its own loopback connection through the real listener): the delay
// includes the block's validation and connection, so it is an upper bound of the stream's
// own. It reports the percentiles over every (block, client) pair:
//
//	go test -run '^$' -bench StreamBlockLatency100 -benchtime 200x ./lib/rpcserver/
func BenchmarkStreamBlockLatency100(b *testing.B) {
	const clients = 100
	e := newEnv(b, params.Regtest)
	base := streamServer(b, e, rpcserver.HTTPConfig{})
	var (
		mu      sync.Mutex
		target  string
		t0      time.Time
		got     int
		lats    []time.Duration
		allDone = make(chan struct{}, 1)
	)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	ready := make(chan struct{}, clients)
	for range clients {
		c := rpcapi.NewClient(base)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.Close()
			c.Follow(ctx, rpcapi.FollowOptions{}, func(ev rpcapi.Event) error {
				now := time.Now()
				switch ev.Type {
				case rpcapi.EventHello:
					ready <- struct{}{}
				case rpcapi.EventBlockConnected:
					mu.Lock()
					if ev.Hash == target {
						lats = append(lats, now.Sub(t0))
						if got++; got == clients {
							allDone <- struct{}{}
						}
					}
					mu.Unlock()
				}
				return nil
			})
		}()
	}
	for range clients {
		<-ready
	}
	var submit []time.Duration
	b.ResetTimer()
	for range b.N {
		blk := e.block()
		mu.Lock()
		target, got = blk.Hash().String(), 0
		t0 = time.Now()
		mu.Unlock()
		if _, err := e.node.SubmitBlock(context.Background(), blk); err != nil {
			b.Fatal(err)
		}
		submit = append(submit, time.Since(t0))
		select {
		case <-allDone:
		case <-time.After(10 * time.Second):
			b.Fatalf("only %d of %d clients got block %s in 10 s", got, clients, blk.Hash())
		}
	}
	b.StopTimer()
	cancel()
	wg.Wait()
	slices.Sort(lats)
	slices.Sort(submit)
	pct := func(xs []time.Duration, q float64) float64 {
		return float64(xs[int(q*float64(len(xs)-1))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(lats, 0.50), "p50-ms")
	b.ReportMetric(pct(lats, 0.99), "p99-ms")
	b.ReportMetric(pct(lats, 1), "max-ms")
	b.ReportMetric(pct(submit, 0.50), "submit-p50-ms")
}
