package netlab

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"
)

// Churn kills (kill -9) a random node every few seconds while blocks and transfers flow,
// restarting each after a few seconds; then checks that nothing was lost: every transfer a
// node accepted is mined, every node is on one tip with the same UTXO and conduct hashes.
// Gateways are not killed (a transfer accepted by a node killed before it relayed it would
// be lost by design: the mempool is saved at a clean stop only).
func (l *Lab) Churn(ctx context.Context, dur, interval time.Duration, rate float64, w *Wallet, gateways []*Node) *Result {
	r := &Result{Name: "churn", Values: map[string]float64{}}
	since := time.Now()
	f := l.StartFlow(ctx, interval, rate, w, gateways, nil)
	var cands []*Node
	for _, n := range l.Nodes {
		if !slices.Contains(gateways, n) {
			cands = append(cands, n)
		}
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	kills, restartErrs := 0, 0
	var catchUp []time.Duration
	end := time.Now().Add(dur)
	for time.Now().Before(end) && ctx.Err() == nil {
		sleepCtx(ctx, time.Duration(3+l.randIntn(4))*time.Second)
		n := cands[l.randIntn(len(cands))]
		if !n.Running() {
			continue
		}
		l.Kill(n, true)
		kills++
		down := time.Duration(2+l.randIntn(5)) * time.Second
		wg.Add(1)
		go func() {
			defer wg.Done()
			sleepCtx(ctx, down)
			if err := l.Start(ctx, n); err != nil {
				mu.Lock()
				restartErrs++
				mu.Unlock()
				return
			}
			// Caught up: at least the height node 0 had when it came back.
			target := l.Nodes[0].Height(ctx)
			t0 := time.Now()
			for time.Since(t0) < time.Minute && n.Height(ctx) < target {
				time.Sleep(100 * time.Millisecond)
			}
			mu.Lock()
			catchUp = append(catchUp, time.Since(t0))
			mu.Unlock()
		}()
	}
	wg.Wait()
	f.Stop()
	mined, sent := f.Rec.Snapshot()
	r.add("%v of churn: %d kill -9 of random non-gateway nodes, each down 2 to 6 s, then restarted (%d restarts failed); %d blocks mined, %d transfers sent",
		dur.Round(time.Second), kills, restartErrs, len(mined), len(sent))
	r.add("after a restart, time until the node was back at the height node 0 had when it came back: median %s, slowest %s", ms(Percentile(catchUp, 50)), ms(Percentile(catchUp, 100)))
	if restartErrs > 0 {
		r.fail("%d restarts failed", restartErrs)
	}
	// Mine until every sent transfer is in the chain (at most five blocks), each block on the
	// next gateway: a node restarted with an empty mempool is not sent again the transfers
	// announced while it was down (as in Bitcoin Core, where the sender's wallet rebroadcasts),
	// so node 0, killed itself maybe, need not hold them all; each gateway holds every
	// transfer it accepted.
	missing := len(sent)
	for round := 0; round < 5 && missing > 0; round++ {
		if _, err := l.Settle(ctx, w.Addr); err != nil {
			r.fail("%v", err)
			break
		}
		miner := l.Nodes[0]
		if len(gateways) > 0 {
			miner = gateways[round%len(gateways)]
		}
		if _, err := l.MineOne(ctx, miner, w.Addr); err != nil {
			r.fail("mine: %v", err)
			break
		}
		if _, _, err := l.WaitConverged(ctx, time.Minute); err != nil {
			r.fail("%v", err)
			break
		}
		missing = 0
		for _, s := range sent {
			tx, err := l.Nodes[0].RPC.GetTransaction(ctx, s.TxID)
			if err != nil || tx.BlockHash == "" {
				missing++
			}
		}
	}
	r.Values["lost"] = float64(missing)
	r.goal("churn: accepted transfers lost", "0", fmt.Sprint(missing), missing == 0)
	if missing > 0 {
		r.fail("%d of %d accepted transfers never mined", missing, len(sent))
	} else {
		r.add("every one of the %d accepted transfers is mined: nothing lost", len(sent))
	}
	if u, c, err := l.StateHashes(ctx); err != nil {
		r.fail("state hashes: %v", err)
	} else if u != 1 || c != 1 {
		r.fail("the nodes disagree: %d distinct gettxoutsetinfo hashes, %d getconductinfo hashes", u, c)
	} else {
		r.add("all %d nodes on one tip with equal gettxoutsetinfo and getconductinfo hashes", len(l.Nodes))
	}
	time.Sleep(300 * time.Millisecond)
	ev := l.ReadEvents(since)
	st := l.blockStats(ctx, mined, ev, l.Nodes[0], nil, nil)
	r.add("blocks during churn reached 100%% of nodes (a node down when a block came gets it on restart): median %s, p99 %s; stale %d of %d",
		ms(p(st.T100, 50)), ms(p(st.T100, 99)), st.Stale, len(mined))
	r.Series = []Series{{"blocks during churn", st.All}}
	return r
}
