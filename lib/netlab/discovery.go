package netlab

import (
	"context"
	"fmt"
	"time"
)

// outboundTarget is the outbound set a node should reach: its --connect peers in
// ModeConnect, else the --max-peers the lab gives (8), bounded by the other nodes there are.
// Two nodes may be connected once each way (lib/p2p, as in Bitcoin Core), so a node's
// inbound peers do not keep it from dialling them: every node can have min(8, n-1) outbound
// peers, 8 in the full lab of 20 (each in a network group of its own).
func (l *Lab) outboundTarget(n *Node) int {
	if l.Mode == ModeConnect {
		return len(n.Connect)
	}
	return min(8, len(l.Nodes)-1)
}

// Discovery starts every node and measures, for each, the time from its start until it
// has its full outbound set, waiting at most wait (the goal is 60 s).
func (l *Lab) Discovery(ctx context.Context, wait time.Duration) *Result {
	r := &Result{Name: "discovery", Values: map[string]float64{}}
	start := time.Now()
	if err := l.StartAll(ctx); err != nil {
		r.fail("start: %v", err)
		return r
	}
	r.add("%d nodes started in %v (four at a time)", len(l.Nodes), time.Since(start).Round(100*time.Millisecond))
	full := make([]time.Duration, len(l.Nodes))
	for i := range full {
		full[i] = -1
	}
	deadline := time.Now().Add(wait)
	left := len(l.Nodes)
	var outbound []int
	for left > 0 && time.Now().Before(deadline) && ctx.Err() == nil {
		_, outbound = l.Overlay(ctx)
		for i, n := range l.Nodes {
			if full[i] < 0 && outbound[i] >= l.outboundTarget(n) {
				full[i] = time.Since(start)
				left--
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	var ds []time.Duration
	for _, d := range full {
		if d >= 0 {
			ds = append(ds, d)
		}
	}
	switch l.Mode {
	case ModeConnect:
		r.add("peer mode **connect**: coin-node lists no --seednode in this build, so each node was given --connect to %d others (one in its region, the rest across regions); this measures reaching that set, not discovery from one seed", l.Cfg.Outbound)
	default:
		r.add("peer mode **seednode**: every node knew only node 0's address (--seednode); full set = %d outbound peers (--max-peers 8, at most n-1: one connection each way a pair)", l.outboundTarget(l.Nodes[0]))
	}
	r.add("time from the start of the lab until a node has its full outbound set: median %s, slowest %s; %d of %d nodes got there",
		ms(Percentile(ds, 50)), ms(Percentile(ds, 100)), len(ds), len(l.Nodes))
	r.Values["full_s"] = Percentile(ds, 100).Seconds()
	r.goal("discovery: every node has its full outbound set (%s mode)", "≤ 60 s", fmt.Sprintf("%.1f s", Percentile(ds, 100).Seconds()), len(ds) == len(l.Nodes) && Percentile(ds, 100) <= time.Minute, l.Mode)
	if len(ds) < len(l.Nodes) {
		var short []string
		for i, d := range full {
			if d < 0 {
				short = append(short, fmt.Sprintf("node %d: %d of %d", i, outbound[i], l.outboundTarget(l.Nodes[i])))
			}
		}
		r.miss("not every node reached its full outbound set within %s (%v)", wait, short)
	} else if Percentile(ds, 100) > time.Minute {
		r.miss("discovery took %s, over 60 s", ms(Percentile(ds, 100)))
	}
	r.Series = []Series{{"time from the lab's start to a full outbound set", ds}}
	return r
}

// Fund splits k of the wallet's mature coinbases into outputs for the load generator and
// mines them (on node 0).
func (l *Lab) Fund(ctx context.Context, w *Wallet, k int) error {
	n := l.Nodes[0]
	txs, err := w.Split(ctx, n, k)
	if err != nil {
		return err
	}
	if len(txs) == 0 {
		return fmt.Errorf("netlab: the wallet has no mature coinbase to split")
	}
	if _, err := l.MineOne(ctx, n, w.Addr); err != nil {
		return err
	}
	for _, tx := range txs {
		t, err := n.RPC.GetTransaction(ctx, tx.TxID().String())
		if err != nil || t.BlockHash == "" {
			return fmt.Errorf("netlab: split %s not mined: %v", tx.TxID(), err)
		}
		w.AddOutputs(tx)
	}
	if _, _, err := l.WaitConverged(ctx, time.Minute); err != nil {
		return err
	}
	return nil
}

// Gateways is k nodes spread over the regions (the last ones, so that they are not the
// miners) that the load generator sends through.
func (l *Lab) Gateways(k int) []*Node {
	var g []*Node
	for i := len(l.Nodes) - 1; i >= 0 && len(g) < k; i-- {
		if !l.Nodes[i].Miner {
			g = append(g, l.Nodes[i])
		}
	}
	return g
}
