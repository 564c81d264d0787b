package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// NodeSource is what the node's gauges read at each scrape (lib/node implements it).
type NodeSource interface {
	Height() uint64
	PeerCount() int
	// MempoolInfo is the transaction count and their total size in bytes.
	MempoolInfo() (size, bytes int)
	// SyncState is whether the node is catching up, and the height it is catching up to.
	SyncState() (syncing bool, target uint64)
}

// Node is the node's metrics: gauges read from a NodeSource at each scrape, and the
// counters and histograms lib/node feeds through ObserveRPC and Reject.
type Node struct {
	reg     *prometheus.Registry
	rpc     *prometheus.HistogramVec
	rejects *prometheus.CounterVec
}

// Kinds of rejected objects (the "type" label of coin_node_rejects_total).
const (
	KindBlock       = "block"
	KindTransaction = "transaction"
)

// NewNode registers the node's metrics, the Go runtime's and the process's in a new
// registry.
func NewNode(src NodeSource) *Node {
	reg := prometheus.NewRegistry()
	m := &Node{reg: reg,
		rpc: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: "coin", Subsystem: "node",
			Name: "rpc_duration_seconds", Help: "Time spent answering JSON-RPC calls, by method.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}},
			[]string{"method"}),
		rejects: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "coin", Subsystem: "node",
			Name: "rejects_total", Help: "Blocks and transactions refused, by type (block, transaction) and lib/reason reason (other: none)."},
			[]string{"type", "reason"}),
	}
	gauge := func(name, help string, f func() float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: "coin", Subsystem: "node", Name: name, Help: help}, f)
	}
	reg.MustRegister(m.rpc, m.rejects,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		gauge("height", "Height of the chain tip.", func() float64 { return float64(src.Height()) }),
		gauge("peers", "Connected peers.", func() float64 { return float64(src.PeerCount()) }),
		gauge("mempool_transactions", "Transactions in the mempool.", func() float64 { n, _ := src.MempoolInfo(); return float64(n) }),
		gauge("mempool_bytes", "Total size of the mempool's transactions in bytes.", func() float64 { _, b := src.MempoolInfo(); return float64(b) }),
		gauge("syncing", "1 while the node catches up with its peers, else 0.", func() float64 {
			if s, _ := src.SyncState(); s {
				return 1
			}
			return 0
		}),
		gauge("sync_target_height", "Height the node is syncing toward (the tip's when caught up).", func() float64 {
			_, t := src.SyncState()
			return float64(max(t, src.Height()))
		}),
	)
	return m
}

// Registry is the registry to serve.
func (m *Node) Registry() *prometheus.Registry { return m.reg }

// ObserveRPC records one call's duration (nil receiver: no-op).
func (m *Node) ObserveRPC(method string, d time.Duration) {
	if m != nil {
		m.rpc.WithLabelValues(method).Observe(d.Seconds())
	}
}

// Reject counts a refused block or transaction (kind KindBlock or KindTransaction) by its
// reason; "" counts as "other" (nil receiver: no-op).
func (m *Node) Reject(kind, reason string) {
	if m == nil {
		return
	}
	if reason == "" {
		reason = "other"
	}
	m.rejects.WithLabelValues(kind, reason).Inc()
}
