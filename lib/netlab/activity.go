package netlab

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"net/netip"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/cointoolkit/coin/lib/rpcapi"
)

// Mined is a block a lab miner made.
type Mined struct {
	Hash string
	Node int
	At   time.Time     // when generatetoaddress returned
	Took time.Duration // how long it took (template, proof of work, validation)
}

// Sent is a transfer the load generator handed to a node.
type Sent struct {
	TxID string
	Node int
	At   time.Time
}

// Activity records what the lab's miners and load generator did.
type Activity struct {
	mu        sync.Mutex
	Mined     []Mined
	Sent      []Sent
	MineErrs  int
	SendErrs  int
	LastError string
}

func (a *Activity) addMined(m Mined) { a.mu.Lock(); a.Mined = append(a.Mined, m); a.mu.Unlock() }
func (a *Activity) addSent(s Sent)   { a.mu.Lock(); a.Sent = append(a.Sent, s); a.mu.Unlock() }
func (a *Activity) fail(send bool, err error) {
	a.mu.Lock()
	if send {
		a.SendErrs++
	} else {
		a.MineErrs++
	}
	a.LastError = err.Error()
	a.mu.Unlock()
}

// Snapshot is a copy of the records.
func (a *Activity) Snapshot() ([]Mined, []Sent) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]Mined(nil), a.Mined...), append([]Sent(nil), a.Sent...)
}

// MineOne has node n mine one block paying w (generatetoaddress).
func (l *Lab) MineOne(ctx context.Context, n *Node, addr string) (Mined, error) {
	start := time.Now()
	hs, err := n.RPC.GenerateToAddress(ctx, 1, addr)
	if err != nil {
		return Mined{}, err
	}
	if len(hs) != 1 {
		return Mined{}, fmt.Errorf("generatetoaddress gave %d hashes", len(hs))
	}
	return Mined{Hash: hs[0], Node: n.Index, At: time.Now(), Took: time.Since(start)}, nil
}

// Mine runs the lab's miners until ctx ends: blocks come as a Poisson process with mean
// interval (the whole network's), each from a miner chosen at random among those running
// and allowed (ok nil: all).
func (l *Lab) Mine(ctx context.Context, interval time.Duration, addr string, ok func(*Node) bool, rec *Activity) {
	for {
		wait := time.Duration(-math.Log(1-l.randFloat()) * float64(interval))
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		var miners []*Node
		for _, n := range l.Nodes {
			if n.Miner && n.Running() && (ok == nil || ok(n)) {
				miners = append(miners, n)
			}
		}
		if len(miners) == 0 {
			continue
		}
		n := miners[l.randIntn(len(miners))]
		m, err := l.MineOne(ctx, n, addr)
		if err != nil {
			if ctx.Err() == nil {
				rec.fail(false, fmt.Errorf("node %d: %w", n.Index, err))
			}
			continue
		}
		rec.addMined(m)
	}
}

// Load sends the wallet's transfers at rate per second, round robin through gateways,
// until ctx ends or the wallet runs out.
func (l *Lab) Load(ctx context.Context, rate float64, w *Wallet, gateways []*Node, rec *Activity) {
	if rate <= 0 || len(gateways) == 0 {
		return
	}
	t := time.NewTicker(time.Duration(float64(time.Second) / rate))
	defer t.Stop()
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		g := gateways[i%len(gateways)]
		if !g.Running() {
			continue
		}
		tx := w.NextTransfer()
		if tx == nil {
			return
		}
		txid, err := g.RPC.SendRawTransaction(ctx, hex.EncodeToString(tx.Bytes()))
		if err != nil {
			if ctx.Err() == nil {
				rec.fail(true, fmt.Errorf("node %d: %w", g.Index, err))
			}
			continue
		}
		rec.addSent(Sent{TxID: txid, Node: g.Index, At: time.Now()})
	}
}

func (l *Lab) randFloat() float64 {
	l.randMu.Lock()
	defer l.randMu.Unlock()
	return l.Rand.Float64()
}

func (l *Lab) randIntn(n int) int {
	l.randMu.Lock()
	defer l.randMu.Unlock()
	return l.Rand.IntN(n)
}

// Best is node n's tip hash ("" when it does not answer).
func (n *Node) Best(ctx context.Context) string {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var s rpcapi.SyncStatus
	if err := n.RPC.Call(ctx, "getsyncstatus", nil, &s); err != nil {
		return ""
	}
	return s.BestBlockHash
}

// Height is node n's tip height (0 when it does not answer).
func (n *Node) Height(ctx context.Context) uint64 {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	h, _ := n.RPC.GetBlockCount(ctx)
	return h
}

// ErrNotConverged: the nodes did not agree on one tip in time.
var ErrNotConverged = errors.New("netlab: nodes did not converge on one tip")

// WaitConverged waits until every running node has the same tip (polling every 100 ms),
// and returns that tip and the time it took.
func (l *Lab) WaitConverged(ctx context.Context, timeout time.Duration) (string, time.Duration, error) {
	start := time.Now()
	deadline := start.Add(timeout)
	for {
		tips := l.Tips(ctx)
		first, same := "", true
		for _, t := range tips {
			if t == "-" {
				continue
			}
			if first == "" {
				first = t
			}
			if t != first || t == "" {
				same = false
			}
		}
		if same && first != "" {
			return first, time.Since(start), nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return "", time.Since(start), fmt.Errorf("%w within %v: %s", ErrNotConverged, timeout, summarize(tips))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Settle waits until the running nodes agree on one tip; when they do not within 30 s (two
// tips of equal work, which only the next block decides), node 0 mines one block paying w
// and it waits again (a minute).
func (l *Lab) Settle(ctx context.Context, addr string) (string, error) {
	tip, _, err := l.WaitConverged(ctx, 30*time.Second)
	if err == nil {
		return tip, nil
	}
	if _, err := l.MineOne(ctx, l.Nodes[0], addr); err != nil {
		return "", err
	}
	tip, _, err = l.WaitConverged(ctx, time.Minute)
	return tip, err
}

// Tips is each node's tip, "-" for a node that is not running, "" for one that does not
// answer.
func (l *Lab) Tips(ctx context.Context) []string {
	tips := make([]string, len(l.Nodes))
	var wg sync.WaitGroup
	for i, n := range l.Nodes {
		if !n.Running() {
			tips[i] = "-"
			continue
		}
		wg.Add(1)
		go func() { defer wg.Done(); tips[i] = n.Best(ctx) }()
	}
	wg.Wait()
	return tips
}

func summarize(tips []string) string {
	count := map[string]int{}
	for _, t := range tips {
		if len(t) > 12 {
			t = t[:12]
		}
		count[t]++
	}
	var parts []string
	for t, c := range count {
		parts = append(parts, fmt.Sprintf("%d on %q", c, t))
	}
	return strings.Join(parts, ", ")
}

// StateHashes runs the real coin-cli in every running node's namespace for
// gettxoutsetinfo and getconductinfo and returns how many distinct hashes each gave
// (1 and 1: every node agrees).
func (l *Lab) StateHashes(ctx context.Context) (utxo, conduct int, err error) {
	us, cs := map[string]bool{}, map[string]bool{}
	for _, n := range l.Nodes {
		if !n.Running() {
			continue
		}
		for _, m := range []struct {
			method string
			set    map[string]bool
		}{{"gettxoutsetinfo", us}, {"getconductinfo", cs}} {
			c, cancel := context.WithTimeout(ctx, 30*time.Second)
			out, e := exec.CommandContext(c, "ip", "netns", "exec", n.NS, filepath.Join(l.Cfg.BinDir, "coin-cli"),
				"--rpc", fmt.Sprintf("http://127.0.0.1:%d", RPCPort), m.method).Output()
			cancel()
			if e != nil {
				return 0, 0, fmt.Errorf("node %d: coin-cli %s: %w", n.Index, m.method, e)
			}
			m.set[hashField(string(out))] = true
		}
	}
	return len(us), len(cs), nil
}

// hashField is the "hash" value of coin-cli's JSON output (the whole output if none).
func hashField(out string) string {
	i := strings.Index(out, `"hash"`)
	if i < 0 {
		return out
	}
	rest := out[i+6:]
	if j := strings.Index(rest, `"`); j >= 0 {
		rest = rest[j+1:]
		if k := strings.Index(rest, `"`); k >= 0 {
			return rest[:k]
		}
	}
	return out
}

// Overlay is the P2P connection graph (undirected, by node index) from every running
// node's getpeerinfo; outbound[i] counts node i's outbound peers.
func (l *Lab) Overlay(ctx context.Context) (adj map[int]map[int]bool, outbound []int) {
	byIP := map[netip.Addr]int{}
	for _, n := range l.Nodes {
		byIP[n.IP] = n.Index
	}
	adj = map[int]map[int]bool{}
	outbound = make([]int, len(l.Nodes))
	add := func(a, b int) {
		if adj[a] == nil {
			adj[a] = map[int]bool{}
		}
		adj[a][b] = true
	}
	for _, n := range l.Nodes {
		if !n.Running() {
			continue
		}
		var pi rpcapi.PeerInfo
		c, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := n.RPC.Call(c, "getpeerinfo", nil, &pi)
		cancel()
		if err != nil {
			continue
		}
		for _, p := range pi.Peers {
			ap, err := netip.ParseAddrPort(p.Addr)
			if err != nil {
				continue
			}
			if !p.Inbound {
				outbound[n.Index]++
			}
			if j, ok := byIP[ap.Addr().Unmap()]; ok {
				add(n.Index, j)
				add(j, n.Index)
			}
		}
	}
	return adj, outbound
}

// Bound is the physical bound of a block from src: the largest, over the nodes, of the
// shortest path's one-way delay on the overlay plus validate per hop (Dijkstra).
func (l *Lab) Bound(adj map[int]map[int]bool, src int, validate time.Duration) time.Duration {
	return l.boundTrips(adj, src, validate, 1)
}

// boundTrips is Bound with each link crossed trips times per hop (3: a relay that announces
// a block, is asked for it, then sends it).
func (l *Lab) boundTrips(adj map[int]map[int]bool, src int, validate time.Duration, trips int) time.Duration {
	var worst time.Duration
	for _, d := range l.pathDelays(adj, src, validate, trips) {
		worst = max(worst, d)
	}
	return worst
}

// pathDelays is, per node, the shortest path's delay from src on the overlay (each link
// crossed trips times, plus validate per hop; -1: unreachable), by Dijkstra.
func (l *Lab) pathDelays(adj map[int]map[int]bool, src int, validate time.Duration, trips int) []time.Duration {
	N := len(l.Nodes)
	dist := make([]time.Duration, N)
	done := make([]bool, N)
	for i := range dist {
		dist[i] = -1
	}
	dist[src] = 0
	for {
		u := -1
		for i := 0; i < N; i++ {
			if !done[i] && dist[i] >= 0 && (u < 0 || dist[i] < dist[u]) {
				u = i
			}
		}
		if u < 0 {
			break
		}
		done[u] = true
		for v := range adj[u] {
			d := dist[u] + time.Duration(trips)*l.Cfg.regionDelay(l.Nodes[u].Region, l.Nodes[v].Region) + validate
			if dist[v] < 0 || d < dist[v] {
				dist[v] = d
			}
		}
	}
	return dist
}
