package node

import (
	"context"

	"github.com/cointoolkit/coin/lib/chainstate"
	"github.com/cointoolkit/coin/lib/mempool"
	"github.com/cointoolkit/coin/lib/p2p"
	"github.com/cointoolkit/coin/lib/p2p/peer"
	"github.com/cointoolkit/coin/lib/rpcapi"
	"github.com/cointoolkit/coin/lib/types"
)

// The peer-to-peer layer is built from Config.P2P on the node's chain state, mempool and
// block and transaction submission; each side's view of the other is checked here.
var (
	_ Network     = (*p2p.Server)(nil)
	_ p2p.Backend = (*Node)(nil)
	_ p2p.Chain   = (*chainstate.Chain)(nil)
	_ p2p.Mempool = (*mempool.Pool)(nil)
)

// Network is the peer-to-peer layer as the node sees it: lib/p2p's Server when Config.P2P is
// set, none otherwise (until one is plugged in with SetNetwork).
type Network interface {
	Start(ctx context.Context) error
	Stop()
	Peers() []peer.Stats
	Syncing() bool
	// SyncProgress is Syncing with the heights of the tip and of the sync's target.
	SyncProgress() p2p.SyncProgress
	RelayBlock(hash types.Hash)
	RelayTransaction(txid types.Hash)
}

type noNetwork struct{}

func (noNetwork) Start(context.Context) error { return nil }
func (noNetwork) Stop()                       {}
func (noNetwork) Peers() []peer.Stats         { return nil }
func (noNetwork) Syncing() bool               { return false }
func (noNetwork) SyncProgress() p2p.SyncProgress {
	return p2p.SyncProgress{}
}
func (noNetwork) RelayBlock(types.Hash)       {}
func (noNetwork) RelayTransaction(types.Hash) {}

// newNetwork builds the P2P layer of cfg.P2P: it listens on its address, keeps its Connect
// peers (or else the known ones of peers.json) connected, and relays and syncs through the
// node's SubmitBlock and SubmitTransaction. The network, data directory and logger default
// to the node's.
func (n *Node) newNetwork(cfg p2p.Config) (*p2p.Server, error) {
	if cfg.Network == nil {
		cfg.Network = n.cfg.Network
	}
	if cfg.DataDir == "" {
		cfg.DataDir = n.cfg.DataDir
	}
	if cfg.Logger == nil {
		cfg.Logger = n.log
	}
	return p2p.New(cfg, n.chain, n.pool, n)
}

// SetNetwork plugs in a P2P layer (before Run), in place of the one of Config.P2P.
func (n *Node) SetNetwork(net Network) { n.net = net }

// Peers lists connected peers (for RPC).
func (n *Node) Peers() []rpcapi.Peer {
	stats := n.net.Peers()
	out := make([]rpcapi.Peer, 0, len(stats))
	for _, st := range stats {
		out = append(out, rpcapi.Peer{Addr: st.Addr, Inbound: st.Inbound, Height: st.Height, Version: st.Version,
			BanScore: st.BanScore, ConnTime: st.ConnTime.Unix(), BytesSent: st.BytesSent, BytesRecv: st.BytesRecv})
	}
	return out
}

// Syncing reports whether the node is catching up with a peer.
func (n *Node) Syncing() bool { return n.net.Syncing() }

// SyncProgress is the network's sync state with the chain's tip: the target is never below
// the tip.
func (n *Node) SyncProgress() p2p.SyncProgress {
	p := n.net.SyncProgress()
	p.Height = n.chain.Tip().Height
	p.TargetHeight = max(p.TargetHeight, p.Height)
	return p
}

// SyncTarget is the height the node is syncing toward (its tip's when caught up), for
// getsyncstatus's target_height and progress.
func (n *Node) SyncTarget() uint64 { return n.SyncProgress().TargetHeight }
