package node

import (
	"context"
	"encoding/json"
	"net/netip"
	"time"

	"github.com/cointoolkit/coin/lib/amount"
	"github.com/cointoolkit/coin/lib/p2p/wire"
	"github.com/cointoolkit/coin/lib/policy"

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

// NetControl is the P2P layer's network controls, for the network RPCs (*p2p.Server). A
// Network without them (none, or a test's) answers those RPCs with p2p.ErrP2PDisabled.
type NetControl interface {
	PeerInfo() []p2p.PeerInfo
	NetworkInfo() p2p.NetworkInfo
	NetTotals() (recv, sent uint64)
	DisconnectNode(addr string, id uint64) error
	SetBan(subnet netip.Prefix, until time.Time, reason string) error
	Unban(subnet netip.Prefix) error
	ListBanned() []p2p.Ban
	ClearBanned()
	SetNetworkActive(on bool)
	PingPeers()
}

var _ NetControl = (*p2p.Server)(nil)

func (n *Node) netControl() (NetControl, error) {
	if c, ok := n.net.(NetControl); ok {
		return c, nil
	}
	return nil, p2p.ErrP2PDisabled
}

// Peers lists connected peers (for RPC), with Bitcoin Core's getpeerinfo fields.
func (n *Node) Peers() []rpcapi.Peer {
	c, err := n.netControl()
	if err != nil {
		stats := n.net.Peers()
		out := make([]rpcapi.Peer, 0, len(stats))
		for _, st := range stats {
			out = append(out, rpcPeer(p2p.PeerInfo{Stats: st, ConnType: p2p.ConnOutbound, SyncedHeaders: -1, SyncedBlocks: -1}))
		}
		return out
	}
	infos := c.PeerInfo()
	out := make([]rpcapi.Peer, 0, len(infos))
	for _, pi := range infos {
		out = append(out, rpcPeer(pi))
	}
	return out
}

func rpcPeer(pi p2p.PeerInfo) rpcapi.Peer {
	st := pi.Stats
	ct := pi.ConnType
	if st.Inbound {
		ct = p2p.ConnInbound
	}
	return rpcapi.Peer{ID: st.ID, Addr: st.Addr, AddrLocal: st.LocalAddr, Inbound: st.Inbound, ConnectionType: ct,
		PingTime: st.PingRTT.Seconds(), MinPing: st.MinPing.Seconds(),
		SyncedHeaders: pi.SyncedHeaders, SyncedBlocks: pi.SyncedBlocks, BytesSent: st.BytesSent, BytesRecv: st.BytesRecv,
		ConnTime: st.ConnTime.Unix(), Version: st.Version, SubVer: st.UserAgent, StartingHeight: st.Height, BanScore: st.BanScore}
}

// NetworkInfo is getnetworkinfo's answer.
func (n *Node) NetworkInfo() (rpcapi.NetworkInfo, error) {
	c, err := n.netControl()
	if err != nil {
		return rpcapi.NetworkInfo{}, err
	}
	ni := c.NetworkInfo()
	out := rpcapi.NetworkInfo{Version: p2p.ClientVersion, SubVersion: n.userAgent(), ProtocolVersion: wire.ProtocolVersion,
		LocalAddresses: make([]rpcapi.LocalAddress, 0, len(ni.LocalAddresses)),
		Connections:    ni.Inbound + ni.Outbound, ConnectionsIn: ni.Inbound, ConnectionsOut: ni.Outbound,
		NetworkActive: ni.Active, RelayFee: json.Number(amount.Format(policy.MinRelayFeePerByte * 1000))}
	for _, a := range ni.LocalAddresses {
		out.LocalAddresses = append(out.LocalAddresses, rpcapi.LocalAddress{Address: a.Address, Port: a.Port})
	}
	return out, nil
}

// userAgent is the user agent the P2P layer sends in its version message.
func (n *Node) userAgent() string {
	if n.cfg.P2P != nil && n.cfg.P2P.UserAgent != "" {
		return n.cfg.P2P.UserAgent
	}
	return p2p.DefaultUserAgent
}

// NetTotals is getnettotals' answer.
func (n *Node) NetTotals() (rpcapi.NetTotals, error) {
	c, err := n.netControl()
	if err != nil {
		return rpcapi.NetTotals{}, err
	}
	recv, sent := c.NetTotals()
	return rpcapi.NetTotals{TotalBytesRecv: recv, TotalBytesSent: sent, TimeMillis: time.Now().UnixMilli()}, nil
}

// DisconnectNode ends a peer's connection (disconnectnode).
func (n *Node) DisconnectNode(addr string, id uint64) error {
	c, err := n.netControl()
	if err != nil {
		return err
	}
	return c.DisconnectNode(addr, id)
}

// SetBan bans a subnet until the given time (setban add).
func (n *Node) SetBan(subnet netip.Prefix, until time.Time) error {
	c, err := n.netControl()
	if err != nil {
		return err
	}
	return c.SetBan(subnet, until, "manual (setban)")
}

// Unban lifts a subnet's ban (setban remove).
func (n *Node) Unban(subnet netip.Prefix) error {
	c, err := n.netControl()
	if err != nil {
		return err
	}
	return c.Unban(subnet)
}

// ListBanned is listbanned's answer.
func (n *Node) ListBanned() ([]rpcapi.Banned, error) {
	c, err := n.netControl()
	if err != nil {
		return nil, err
	}
	now := time.Now().Unix()
	list := c.ListBanned()
	out := make([]rpcapi.Banned, 0, len(list))
	for _, b := range list {
		out = append(out, rpcapi.Banned{Address: b.Subnet.String(), BanCreated: b.Created.Unix(), BannedUntil: b.Until.Unix(),
			BanDuration: b.Until.Unix() - b.Created.Unix(), TimeRemaining: max(b.Until.Unix()-now, 0), Reason: b.Reason})
	}
	return out, nil
}

// ClearBanned lifts every ban (clearbanned).
func (n *Node) ClearBanned() error {
	c, err := n.netControl()
	if err != nil {
		return err
	}
	c.ClearBanned()
	return nil
}

// SetNetworkActive turns P2P activity on or off (setnetworkactive).
func (n *Node) SetNetworkActive(on bool) error {
	c, err := n.netControl()
	if err != nil {
		return err
	}
	c.SetNetworkActive(on)
	return nil
}

// PingPeers pings every peer now (ping).
func (n *Node) PingPeers() error {
	c, err := n.netControl()
	if err != nil {
		return err
	}
	c.PingPeers()
	return nil
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
