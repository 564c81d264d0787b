package netlab

import (
	"bufio"
	"encoding/json"
	"os"
	"sort"
	"time"
)

// Events is what the nodes' JSON logs say happened, all on one clock (every node runs on
// this machine): when each node first connected each block and first accepted each
// transaction, and each reorganisation.
type Events struct {
	Block  map[string][]time.Time // hash → per node (zero: never had it): connected, or stored off the best chain
	Height map[string]uint64
	Tx     map[string][]time.Time // txid → per node, accepted into the mempool
	Reorgs []Reorg
	// Recv is, per block and node, the first copy received from a peer ("block received",
	// a debug line of lib/p2p): from whom, and whether it was asked for or pushed.
	Recv map[string][]Receipt
	// OffTip is, per block and node, when the node stored it off its best chain ("block
	// stored off the best chain", lib/p2p): it had the other block of the height.
	OffTip map[string][]time.Time
	// Peer connections opened and closed ("peer connected", "peer disconnected").
	Connects, Disconnects int
	ConnectTimes          []time.Time // when each "peer connected" was logged
}

// Receipt is a block's first arrival at a node.
type Receipt struct {
	At        time.Time
	Peer      string // the sender's address (host:port)
	Requested bool   // asked for with getdata (else pushed)
}

// Reorg is one "chain reorganised" line.
type Reorg struct {
	Node         int
	At           time.Time
	Disconnected int
}

type logLine struct {
	Time         time.Time `json:"time"`
	Msg          string    `json:"msg"`
	Hash         string    `json:"hash"`
	Height       uint64    `json:"height"`
	TxID         string    `json:"txid"`
	Disconnected int       `json:"disconnected"`
	Peer         string    `json:"peer"`
	Requested    bool      `json:"requested"`
}

// ReadEvents reads the logs of the nodes from since on.
func (l *Lab) ReadEvents(since time.Time) *Events {
	ev := &Events{Block: map[string][]time.Time{}, Height: map[string]uint64{}, Tx: map[string][]time.Time{},
		Recv: map[string][]Receipt{}, OffTip: map[string][]time.Time{}}
	N := len(l.Nodes)
	for i, n := range l.Nodes {
		f, err := os.Open(n.LogPath)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			b := sc.Bytes()
			if len(b) == 0 || b[0] != '{' {
				continue
			}
			var ln logLine
			if json.Unmarshal(b, &ln) != nil || ln.Time.Before(since) {
				continue
			}
			switch ln.Msg {
			case "block stored off the best chain":
				rs := ev.OffTip[ln.Hash]
				if rs == nil {
					rs = make([]time.Time, N)
					ev.OffTip[ln.Hash] = rs
				}
				if rs[i].IsZero() {
					rs[i] = ln.Time
				}
				fallthrough
			case "block connected":
				// A node has a block when it connected it or, having the other block of
				// the height (a race), stored it off its best chain: it connects it when
				// that branch wins, a block interval later, which is no propagation time.
				ts := ev.Block[ln.Hash]
				if ts == nil {
					ts = make([]time.Time, N)
					ev.Block[ln.Hash] = ts
					ev.Height[ln.Hash] = ln.Height
				}
				if ts[i].IsZero() {
					ts[i] = ln.Time
				}
			case "block received":
				rs := ev.Recv[ln.Hash]
				if rs == nil {
					rs = make([]Receipt, N)
					ev.Recv[ln.Hash] = rs
				}
				if rs[i].At.IsZero() {
					rs[i] = Receipt{At: ln.Time, Peer: ln.Peer, Requested: ln.Requested}
				}
			case "transaction accepted":
				ts := ev.Tx[ln.TxID]
				if ts == nil {
					ts = make([]time.Time, N)
					ev.Tx[ln.TxID] = ts
				}
				if ts[i].IsZero() {
					ts[i] = ln.Time
				}
			case "peer connected":
				ev.Connects++
				ev.ConnectTimes = append(ev.ConnectTimes, ln.Time)
			case "peer disconnected":
				ev.Disconnects++
			case "chain reorganised":
				ev.Reorgs = append(ev.Reorgs, Reorg{Node: i, At: ln.Time, Disconnected: ln.Disconnected})
			}
		}
		f.Close()
	}
	return ev
}

// Spread is how long after t0 a share of the nodes had something: the times sorted, and
// the time when q of all nodes had it (-1: fewer did).
type Spread struct {
	Delays []time.Duration // per node that has it, sorted
	Nodes  int
}

// SpreadOf is the delays of ts (per node, zero: never) after t0.
func SpreadOf(ts []time.Time, t0 time.Time) Spread {
	s := Spread{Nodes: len(ts)}
	for _, t := range ts {
		if !t.IsZero() {
			s.Delays = append(s.Delays, max(t.Sub(t0), 0))
		}
	}
	sort.Slice(s.Delays, func(i, j int) bool { return s.Delays[i] < s.Delays[j] })
	return s
}

// At is the time until the share q (0..1] of all nodes had it; -1 when fewer ever did.
func (s Spread) At(q float64) time.Duration {
	k := int(q*float64(s.Nodes)+0.999999) - 1
	if k < 0 {
		k = 0
	}
	if k >= len(s.Delays) {
		return -1
	}
	return s.Delays[k]
}

// Percentile is the p-th percentile (0..100) of ds (sorted in place); 0 for none.
func Percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	k := int(p/100*float64(len(ds)) + 0.999999)
	k = min(max(k-1, 0), len(ds)-1)
	return ds[k]
}
