package netlab

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"sort"
	"strings"
	"time"
)

// Result is one scenario's figures: Markdown lines for the report, the propagation delays
// for its CDF plot, and whether its goals held.
type Result struct {
	Name   string
	Lines  []string
	Series []Series
	Failed []string // checks that did not hold: something is wrong
	Missed []string // performance goals not reached
	Goals  []Goal   // the goals measured, for the report's summary
	Values map[string]float64
}

// Goal is one line of the report's summary.
type Goal struct {
	What, Target, Measured string
	Met                    bool
}

func (r *Result) goal(what, target, measured string, met bool, args ...any) {
	if len(args) > 0 {
		what = fmt.Sprintf(what, args...)
	}
	r.Goals = append(r.Goals, Goal{what, target, measured, met})
}

func (r *Result) miss(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	r.Missed = append(r.Missed, msg)
	r.Lines = append(r.Lines, "**goal not met:** "+msg)
}

func fmtSeconds(d time.Duration) string { return fmt.Sprintf("%.0f s", d.Seconds()) }

func convergeText(took time.Duration, err error) string {
	if err != nil {
		return fmt.Sprintf("not within %.0f s", took.Seconds())
	}
	return fmt.Sprintf("%.1f s", took.Seconds())
}

// Series is one line of a CDF plot: delays, each one (block or transaction, node) pair.
type Series struct {
	Name   string
	Delays []time.Duration
}

func (r *Result) add(format string, args ...any) {
	r.Lines = append(r.Lines, fmt.Sprintf(format, args...))
}
func (r *Result) fail(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	r.Failed = append(r.Failed, msg)
	r.Lines = append(r.Lines, "**not met:** "+msg)
}

func ms(d time.Duration) string {
	if d < 0 {
		return "never"
	}
	return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond))
}

// Flow is mining and load running in the background until Stop.
type Flow struct {
	Rec    *Activity
	cancel context.CancelFunc
	done   chan struct{}
}

// StartFlow starts the miners (mean interval) and the load generator (rate per second
// through gateways); okMiner (nil: all) limits who mines.
func (l *Lab) StartFlow(ctx context.Context, interval time.Duration, rate float64, w *Wallet, gateways []*Node, okMiner func(*Node) bool) *Flow {
	ctx, cancel := context.WithCancel(ctx)
	f := &Flow{Rec: &Activity{}, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(f.done)
		ch := make(chan struct{})
		go func() { l.Load(ctx, rate, w, gateways, f.Rec); close(ch) }()
		l.Mine(ctx, interval, w.Addr, okMiner, f.Rec)
		<-ch
	}()
	return f
}

// Stop ends the flow and waits for it.
func (f *Flow) Stop() { f.cancel(); <-f.done }

// BlockStats are the figures of the main-chain blocks a flow mined.
type BlockStats struct {
	Blocks, Stale  int
	T50, T90, T100 []time.Duration // per block
	Ratios         []float64       // per block: T100 / physical bound
	// Clean is Ratios without the blocks of a race: a block whose height or whose parent's
	// height has another mined block. Nodes on the other side of a race do not relay it (it
	// is not their tip, as in Bitcoin Core), so the bound, which assumes every node relays,
	// does not hold for it.
	Clean                        []float64
	Races                        int             // main-chain blocks left out of Clean
	Ratios3                      []float64       // per block: T100 / the bound with three trips a hop
	All                          []time.Duration // every (block, node) delay
	StaleGaps                    []time.Duration // per stale block: time to its winner
	Unreached                    int             // main-chain blocks some running node never logged
	Validate, BoundMin, BoundMax time.Duration
	Details                      []BlockDetail // per main-chain block reached by every node, with a bound
	Pushed, Requested            int           // first copies at a node: pushed to it, asked for
}

// BlockDetail is where one block's time to every node went: the last node to have it,
// against that node's own shortest path, and how its first copy came.
type BlockDetail struct {
	Height       uint64
	Miner        int
	T100, Bound  time.Duration
	Ratio        float64
	Last         int           // the last node to have it
	LastAt       time.Duration // when (after the miner)
	LastPath     time.Duration // that node's shortest path from the miner (one crossing a hop)
	From         int           // the node that sent the last node its first copy (-1: not known)
	Requested    bool          // that copy was asked for (else pushed)
	StoredOffTip bool          // the last node had the block off its best chain first (a race)
	Race         bool          // another block was mined at its height or its parent's
}

// blockStats reads the mined blocks against the events: which are in the main chain (as
// node ref sees it), and how long each took to reach 50/90/100% of the nodes counted
// (nodes, nil: all), from the time its miner connected it.
func (l *Lab) blockStats(ctx context.Context, mined []Mined, ev *Events, ref *Node, nodes []int, adj map[int]map[int]bool) BlockStats {
	var st BlockStats
	var took []time.Duration
	for _, m := range mined {
		took = append(took, m.Took)
	}
	st.Validate = Percentile(took, 50)
	byHeight := map[uint64][]Mined{}
	for _, m := range mined {
		byHeight[ev.Height[m.Hash]] = append(byHeight[ev.Height[m.Hash]], m)
	}
	st.BoundMin = time.Hour
	for _, m := range mined {
		h, ok := ev.Height[m.Hash]
		c, cancel := context.WithTimeout(ctx, 5*time.Second)
		main, err := ref.RPC.GetBlockHash(c, h)
		cancel()
		if !ok || err != nil || main != m.Hash {
			st.Stale++
			for _, o := range byHeight[h] {
				if o.Hash != m.Hash && o.Hash == main {
					st.StaleGaps = append(st.StaleGaps, absDur(o.At.Sub(m.At)))
				}
			}
			continue
		}
		st.Blocks++
		ts := ev.Block[m.Hash]
		t0 := ts[m.Node]
		if t0.IsZero() {
			t0 = m.At.Add(-m.Took / 2)
		}
		var sel []time.Time
		if nodes == nil {
			sel = ts
		} else {
			for _, i := range nodes {
				sel = append(sel, ts[i])
			}
		}
		sp := SpreadOf(sel, t0)
		st.All = append(st.All, sp.Delays...)
		st.T50 = append(st.T50, sp.At(0.5))
		st.T90 = append(st.T90, sp.At(0.9))
		t100 := sp.At(1)
		st.T100 = append(st.T100, t100)
		if t100 < 0 {
			st.Unreached++
			continue
		}
		for i, rc := range ev.Recv[m.Hash] {
			if i == m.Node || rc.At.IsZero() || (nodes != nil && !slices.Contains(nodes, i)) {
				continue
			}
			if rc.Requested {
				st.Requested++
			} else {
				st.Pushed++
			}
		}
		if adj != nil {
			b := l.Bound(adj, m.Node, st.Validate)
			st.BoundMin, st.BoundMax = min(st.BoundMin, b), max(st.BoundMax, b)
			if b > 0 {
				st.Ratios = append(st.Ratios, float64(t100)/float64(b))
				if len(byHeight[h]) > 1 || (h > 0 && len(byHeight[h-1]) > 1) {
					st.Races++
				} else {
					st.Clean = append(st.Clean, float64(t100)/float64(b))
				}
				st.Ratios3 = append(st.Ratios3, float64(t100)/float64(l.boundTrips(adj, m.Node, st.Validate, 3)))
				d := l.blockDetail(adj, m, ev, sel, nodes, t0, t100, b, st.Validate)
				d.Race = len(byHeight[h]) > 1 || (h > 0 && len(byHeight[h-1]) > 1)
				st.Details = append(st.Details, d)
			}
		}
	}
	if st.BoundMin == time.Hour {
		st.BoundMin = 0
	}
	return st
}

// blockDetail describes block m's last arrival (sel: the arrival times of the nodes
// counted, nodes: their indexes, nil: all).
func (l *Lab) blockDetail(adj map[int]map[int]bool, m Mined, ev *Events, sel []time.Time, nodes []int, t0 time.Time, t100, bound, validate time.Duration) BlockDetail {
	d := BlockDetail{Height: ev.Height[m.Hash], Miner: m.Node, T100: t100, Bound: bound, Ratio: float64(t100) / float64(bound), Last: -1, From: -1}
	for k, t := range sel {
		i := k
		if nodes != nil {
			i = nodes[k]
		}
		if !t.IsZero() && (d.Last < 0 || t.Sub(t0) > d.LastAt) {
			d.Last, d.LastAt = i, t.Sub(t0)
		}
	}
	if d.Last < 0 {
		return d
	}
	d.LastPath = l.pathDelays(adj, m.Node, validate, 1)[d.Last]
	if rs := ev.Recv[m.Hash]; rs != nil {
		rc := rs[d.Last]
		d.Requested = rc.Requested
		if ap, err := netip.ParseAddrPort(rc.Peer); err == nil {
			for _, n := range l.Nodes {
				if n.IP == ap.Addr().Unmap() {
					d.From = n.Index
				}
			}
		}
	}
	d.StoredOffTip = ev.OffTip[m.Hash] != nil && !ev.OffTip[m.Hash][d.Last].IsZero()
	return d
}

// slowest is the k blocks of st with the highest ratio, as report lines.
func (l *Lab) slowest(st BlockStats, k int) []string {
	ds := append([]BlockDetail(nil), st.Details...)
	sort.Slice(ds, func(i, j int) bool { return ds[i].Ratio > ds[j].Ratio })
	var out []string
	for _, d := range ds[:min(k, len(ds))] {
		how := "its first copy's sender unknown"
		if d.From >= 0 {
			how = fmt.Sprintf("its first copy pushed by node %d", d.From)
			if d.Requested {
				how = fmt.Sprintf("its first copy asked for from node %d (getdata)", d.From)
			}
		}
		if d.StoredOffTip {
			how += ", stored off its best chain first (it had the other block of the height)"
		}
		if d.Race {
			how += "; a block of a race"
		}
		region := -1
		if d.Last >= 0 {
			region = l.Nodes[d.Last].Region
		}
		out = append(out, fmt.Sprintf("height %d from node %d (region %d): every node after %s, bound %s, ratio %.2f; last node %d (region %d) at %s, its own shortest path %s; %s",
			d.Height, d.Miner, l.Nodes[d.Miner].Region, ms(d.T100), ms(d.Bound), d.Ratio, d.Last, region, ms(d.LastAt), ms(d.LastPath), how))
	}
	return out
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

func p(ds []time.Duration, q float64) time.Duration {
	var ok []time.Duration
	for _, d := range ds {
		if d >= 0 {
			ok = append(ok, d)
		}
	}
	return Percentile(ok, q)
}

func pf(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	k := int(q/100*float64(len(s)) + 0.999999)
	return s[min(max(k-1, 0), len(s)-1)]
}

// SteadyState mines and sends transfers for dur and measures block and transaction
// propagation, the stale rate, bytes per node per block and the physical-bound ratio.
func (l *Lab) SteadyState(ctx context.Context, dur, interval time.Duration, rate float64, w *Wallet, gateways []*Node) *Result {
	r := &Result{Name: "steady state", Values: map[string]float64{}}
	since := time.Now()
	adj, _ := l.Overlay(ctx)
	sent0 := l.sentBytes()
	f := l.StartFlow(ctx, interval, rate, w, gateways, nil)
	sleepCtx(ctx, dur)
	f.Stop()
	tip, err := l.Settle(ctx, w.Addr)
	if err != nil {
		r.fail("%v", err)
	}
	sent1 := l.sentBytes()
	time.Sleep(500 * time.Millisecond) // the last log lines
	ev := l.ReadEvents(since)
	mined, sent := f.Rec.Snapshot()
	st := l.blockStats(ctx, mined, ev, l.Nodes[0], nil, adj)
	r.add("%d blocks mined in %v by %d miners (mean interval %v), tip %s", len(mined), dur.Round(time.Second), l.countMiners(), interval, short(tip))
	r.add("block propagation, time after the miner connected it until 50%% / 90%% / 100%% of the %d nodes had it: median %s / %s / %s, p99 %s / %s / %s",
		len(l.Nodes), ms(p(st.T50, 50)), ms(p(st.T90, 50)), ms(p(st.T100, 50)), ms(p(st.T50, 99)), ms(p(st.T90, 99)), ms(p(st.T100, 99)))
	ratio := pf(st.Clean, 99)
	r.Values["ratio"] = ratio
	r.Values["ratio_all"] = pf(st.Ratios, 99)
	r.Values["t100_p99_ms"] = float64(p(st.T100, 99)) / 1e6
	r.add("physical bound (slowest shortest path's one-way delay on the overlay plus one validation per hop; validation = median generatetoaddress time %s): %s to %s by miner",
		ms(st.Validate), ms(st.BoundMin), ms(st.BoundMax))
	r.add("**goal ratio** (p99 over blocks of time-to-all-nodes / that block's bound): **%.2f** (p95 %.2f, median %.2f, over the %d blocks outside a race; goal ≤ 1.5)", ratio, pf(st.Clean, 95), pf(st.Clean, 50), len(st.Clean))
	r.add("over all %d blocks, races included (%d blocks whose height or parent's height had two mined blocks: the nodes that saw the other block first do not relay this one, so the bound does not hold for it; a node has a block once it connected it or stored it off its best chain): p99 %.2f, p95 %.2f, median %.2f",
		len(st.Ratios), st.Races, pf(st.Ratios, 99), pf(st.Ratios, 95), pf(st.Ratios, 50))
	r.Values["ratio_p95"] = pf(st.Clean, 95)
	if n := st.Pushed + st.Requested; n > 0 {
		r.add("first copy of a block at a node: pushed %d times, asked for (headers, getdata, block) %d times (%.0f%% pushed)", st.Pushed, st.Requested, 100*float64(st.Pushed)/float64(n))
	}
	for _, ln := range l.slowest(st, 3) {
		r.add("slowest: %s", ln)
	}
	r.add("against a bound of three one-way trips per hop (a block announced by a headers message, asked for with getdata, then sent: the relay to a peer that did not ask for pushes, see docs/p2p.md, Block relay), the ratio is %.2f at p99 (median %.2f)", pf(st.Ratios3, 99), pf(st.Ratios3, 50))
	r.goal("block p99 time to every node / physical bound (blocks outside a race)", "≤ 1.5", fmt.Sprintf("%.2f (p95 %.2f; all blocks p99 %.2f)", ratio, pf(st.Clean, 95), pf(st.Ratios, 99)), ratio <= 1.5)
	if ratio > 1.5 {
		r.miss("block p99 time to all nodes is %.2f× the physical bound (goal 1.5×)", ratio)
	}
	if st.Unreached > 0 {
		r.fail("%d main-chain blocks never reached every node", st.Unreached)
	}
	staleRate := 0.0
	if len(mined) > 0 {
		staleRate = float64(st.Stale) / float64(len(mined))
	}
	r.Values["stale"] = staleRate
	r.goal("stale rate (written down with its cause)", "—", fmt.Sprintf("%d of %d", st.Stale, len(mined)), true)
	var sum time.Duration
	for _, d := range st.All {
		sum += d
	}
	expect := 0.0
	if len(st.All) > 0 {
		expect = float64(sum) / float64(len(st.All)) / float64(interval)
	}
	r.add("stale blocks: %d of %d (%.1f%%)%s; expected from propagation about %.1f%% (the chance that another miner finds a block while the last one is still on its way to it: mean delay to a node / interval)",
		st.Stale, len(mined), 100*staleRate, staleCause(st), 100*expect)
	// Transactions.
	var t50, t90, t100, all []time.Duration
	short100 := 0
	for _, s := range sent {
		ts := ev.Tx[s.TxID]
		if ts == nil {
			continue
		}
		t0 := ts[s.Node]
		if t0.IsZero() {
			t0 = s.At
		}
		sp := SpreadOf(ts, t0)
		all = append(all, sp.Delays...)
		t50, t90 = append(t50, sp.At(0.5)), append(t90, sp.At(0.9))
		if d := sp.At(1); d >= 0 {
			t100 = append(t100, d)
		} else {
			short100++
		}
	}
	r.add("transactions: %d sent through %d nodes (%d refused); to 50%% / 90%% / 100%% of nodes: median %s / %s / %s, p99 %s / %s / %s; %d reached some node only in a block",
		len(sent), len(gateways), f.Rec.SendErrs, ms(p(t50, 50)), ms(p(t90, 50)), ms(p(t100, 50)), ms(p(t50, 99)), ms(p(t90, 99)), ms(p(t100, 99)), short100)
	if st.Blocks > 0 {
		per := float64(sent1-sent0) / float64(len(l.Nodes)) / float64(st.Blocks)
		r.Values["bytes_per_node_block"] = per
		r.add("bytes sent per node per block (every frame a node sent during the run, headers included, transactions too): %.1f KB", per/1000)
	}
	lost, cut, over := l.Fwd.Stats()
	r.add("forwarder: %d frames lost by the loss model, %d by partitions, %d by full queues", lost, cut, over)
	r.Series = []Series{{"blocks", st.All}, {"transactions", all}}
	return r
}

func staleCause(st BlockStats) string {
	if st.Stale == 0 {
		return ""
	}
	if len(st.StaleGaps) == 0 {
		return "; each lost to a block of the same height that was not one of ours (or its height is unknown)"
	}
	return fmt.Sprintf("; cause: two miners found a block at the same height %s apart (median), less than the time a block takes to reach every node, so each built on its own tip and one lost", ms(Percentile(st.StaleGaps, 50)))
}

func (l *Lab) countMiners() int {
	c := 0
	for _, n := range l.Nodes {
		if n.Miner {
			c++
		}
	}
	return c
}

func (l *Lab) sentBytes() uint64 {
	var s uint64
	for _, n := range l.Nodes {
		s += n.port.SentBytes.Load()
	}
	return s
}

func short(h string) string {
	if len(h) > 16 {
		return h[:16] + "…"
	}
	return h
}

func sleepCtx(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// Partition (the scenario called name) cuts the regions apart for dur while blocks are
// mined on every side, then deepens the fork (deep[r] more blocks mined at once by a miner of region r, to go past
// one headers message), heals, and measures the time until every node is on one tip, the
// reorg depth, and that every node's UTXO and conduct hashes agree.
func (l *Lab) Partition(ctx context.Context, name string, dur, interval time.Duration, rate float64, w *Wallet, gateways []*Node, deep []int, converge time.Duration) *Result {
	r := &Result{Name: name, Values: map[string]float64{}}
	l.Fwd.SetCut(func(a, b *Port) bool { return a.Region != b.Region })
	cutAt := time.Now()
	f := l.StartFlow(ctx, interval, rate, w, gateways, nil)
	sleepCtx(ctx, dur)
	f.Stop()
	mined, _ := f.Rec.Snapshot()
	// Every side mines at least two blocks of its own, so that each has a fork to lose.
	perSide := make([]int, l.Cfg.Regions)
	for _, m := range mined {
		perSide[l.Nodes[m.Node].Region]++
	}
	for reg := range perSide {
		for _, n := range l.Nodes {
			if perSide[reg] >= 2 {
				break
			}
			if n.Miner && n.Region == reg && n.Running() {
				for perSide[reg] < 2 {
					if _, err := l.MineOne(ctx, n, w.Addr); err != nil {
						r.fail("mining on side %d: %v", reg, err)
						break
					}
					perSide[reg]++
				}
			}
		}
	}
	r.add("regions cut apart for %v; %d blocks mined across the sides by the flow, topped up to at least two a side: %v", dur.Round(time.Second), len(mined), perSide)
	for reg, k := range deep {
		if k <= 0 {
			continue
		}
		var m *Node
		for _, n := range l.Nodes {
			if n.Miner && n.Region == reg && n.Running() {
				m = n
				break
			}
		}
		if m == nil {
			continue
		}
		start := time.Now()
		for done := 0; done < k; {
			c, cancel := context.WithTimeout(ctx, 2*time.Minute)
			hs, err := m.RPC.GenerateToAddress(c, min(100, k-done), w.Addr)
			cancel()
			if err != nil {
				r.fail("deep fork: node %d: %v", m.Index, err)
				break
			}
			done += len(hs)
		}
		deeper := ""
		if k > 2000 {
			deeper = " (a fork deeper than one headers message of 2,000)"
		}
		r.add("region %d: node %d mined %d more blocks at once in %v%s", reg, m.Index, k, time.Since(start).Round(100*time.Millisecond), deeper)
	}
	// Wait for each side to agree within itself, so that the heal measures the cross-side sync.
	sideTips := map[int]string{}
	deadline := time.Now().Add(converge)
	for reg := 0; reg < l.Cfg.Regions; reg++ {
		for time.Now().Before(deadline) {
			tips := map[string]bool{}
			var last string
			for _, n := range l.Nodes {
				if n.Region == reg && n.Running() {
					last = n.Best(ctx)
					tips[last] = true
				}
			}
			if len(tips) == 1 {
				sideTips[reg] = last
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	var heights []string
	for reg := 0; reg < l.Cfg.Regions; reg++ {
		h := uint64(0)
		for _, n := range l.Nodes {
			if n.Region == reg && n.Running() {
				h = n.Height(ctx)
				break
			}
		}
		heights = append(heights, fmt.Sprintf("region %d at height %d", reg, h))
	}
	r.add("before the heal: %s", strings.Join(heights, ", "))
	during := l.ReadEvents(cutAt)
	healAt := time.Now()
	l.Fwd.SetCut(nil)
	// Blocks keep coming after the heal: sides of equal work stay apart until the next block
	// (every node keeps the tip it saw first), as on a real network.
	f2 := l.StartFlow(ctx, interval, rate, w, gateways, nil)
	tip, took, err := l.WaitConverged(ctx, converge)
	f2.Stop()
	afterHeal, _ := f2.Rec.Snapshot()
	r.Values["converge_s"] = took.Seconds()
	r.goal(name+": every node on one tip after the heal", "≤ "+fmtSeconds(2*interval), convergeText(took, err), err == nil && took <= 2*interval)
	if err != nil {
		r.fail("%v", err)
	} else {
		r.add("healed after %v cut, mining on: every node on tip %s after **%.1f s** (%d blocks mined after the heal by then; goal: within two block intervals, %v)",
			healAt.Sub(cutAt).Round(time.Second), short(tip), took.Seconds(), len(afterHeal), 2*interval)
		if took > 2*interval {
			r.miss("convergence took %.1f s, more than two block intervals (%v)", took.Seconds(), 2*interval)
		}
	}
	if _, err := l.Settle(ctx, w.Addr); err != nil && !errors.Is(err, ErrNotConverged) {
		r.fail("%v", err)
	}
	time.Sleep(500 * time.Millisecond)
	ev := l.ReadEvents(healAt)
	depth, nodes := 0, map[int]bool{}
	for _, rg := range ev.Reorgs {
		depth = max(depth, rg.Disconnected)
		nodes[rg.Node] = true
	}
	r.Values["reorg_depth"] = float64(depth)
	r.add("reorganisations after the heal: %d nodes, deepest %d blocks disconnected", len(nodes), depth)
	r.add("peer connections during the cut: %d closed (a peer silent for 30 s is dropped: docs/p2p.md, Liveness), %d opened; after the heal: %d opened, %d closed",
		during.Disconnects, during.Connects, ev.Connects, ev.Disconnects)
	if len(ev.ConnectTimes) > 0 {
		var after []time.Duration
		for _, t := range ev.ConnectTimes {
			after = append(after, t.Sub(healAt))
		}
		r.add("connections opened after the heal: the first %s after it, half of them by %s", ms(Percentile(after, 0)), ms(Percentile(after, 50)))
	}
	if ts, ok := ev.Block[tip]; ok {
		sp := SpreadOf(ts, healAt)
		r.Series = []Series{{"time after the heal until a node is on the final tip", sp.Delays}}
	}
	u, c, herr := l.StateHashes(ctx)
	r.goal(name+": gettxoutsetinfo and getconductinfo hashes equal on every node", "yes", fmt.Sprintf("%d and %d distinct", u, c), herr == nil && u == 1 && c == 1)
	if err := herr; err != nil {
		r.fail("state hashes: %v", err)
	} else if u != 1 || c != 1 {
		r.fail("after the heal the nodes disagree: %d distinct gettxoutsetinfo hashes, %d getconductinfo hashes", u, c)
	} else {
		r.add("gettxoutsetinfo and getconductinfo hashes (read with coin-cli in each namespace): equal on all %d nodes", len(l.Nodes))
	}
	return r
}
