package node

import (
	"context"
	"time"

	"github.com/cointoolkit/coin/lib/jsonrpc"
	"github.com/cointoolkit/coin/lib/reason"
)

// The node's Prometheus metrics (lib/metrics), served on Config.MetricsBind: the gauges read
// the node at each scrape (metricsSource); the RPC durations and the rejections are fed by
// small hooks here, called from Run's RPC registration and from SubmitBlock and
// SubmitTransaction.

// metricsSource is the node as lib/metrics' gauges read it.
type metricsSource struct{ n *Node }

func (s metricsSource) Height() uint64 { return s.n.chain.Tip().Height }
func (s metricsSource) PeerCount() int { return len(s.n.net.Peers()) }
func (s metricsSource) MempoolInfo() (int, int) {
	i := s.n.pool.Info()
	return i.Size, int(i.Bytes)
}
func (s metricsSource) SyncState() (bool, uint64) {
	p := s.n.SyncProgress()
	return p.Syncing, p.TargetHeight
}

// MetricsAddr is the address the metrics are served on ("" without Config.MetricsBind).
func (n *Node) MetricsAddr() string {
	if n.metricsSrv == nil {
		return ""
	}
	return n.metricsSrv.Addr().String()
}

// rejected counts a refused block or transaction by its reason (no-op without metrics).
func (n *Node) rejected(kind string, err error) {
	n.metrics.Reject(kind, string(reason.Of(err)))
}

// registerRPC registers the RPC methods on rpc through register, each handler timed into
// the RPC duration histogram when the node has metrics.
func (n *Node) registerRPC(rpc *jsonrpc.Server, register func(*jsonrpc.Server)) {
	if n.metrics == nil {
		register(rpc)
		return
	}
	scratch := jsonrpc.NewServer(jsonrpc.Options{})
	register(scratch)
	for _, m := range scratch.Methods() {
		h, name := m.Handler, m.Name
		m.Handler = func(ctx context.Context, p jsonrpc.Params) (any, error) {
			start := time.Now()
			defer func() { n.metrics.ObserveRPC(name, time.Since(start)) }()
			return h(ctx, p)
		}
		rpc.Register(m)
	}
}
