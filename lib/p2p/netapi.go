package p2p

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"time"

	"github.com/cointoolkit/coin/lib/chainstate"
	"github.com/cointoolkit/coin/lib/p2p/peer"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/reason"
)

// The server's network controls, for the node's RPC (getnetworkinfo, getpeerinfo,
// disconnectnode, setban, listbanned, clearbanned, getnettotals, setnetworkactive, ping).

// netError is an error of the network controls with the reason kind the RPC sends.
type netError struct {
	kind reason.Reason
	msg  string
}

func (e *netError) Error() string { return e.msg }
func (e *netError) Unwrap() error { return e.kind }

// Errors of the network controls, each with its reason.
var (
	// ErrP2PDisabled: the node runs without a P2P layer.
	ErrP2PDisabled error = &netError{reason.P2PDisabled, "P2P networking is disabled"}
)

// LocalAddress is an address this node may be reached at, with its listen port.
type LocalAddress struct {
	Address string
	Port    uint16
}

// NetworkInfo is the server's side of getnetworkinfo.
type NetworkInfo struct {
	LocalAddresses []LocalAddress
	Inbound        int
	Outbound       int
	Active         bool
	Listening      bool
}

// NetworkInfo describes the server's connections and addresses. The local addresses are
// the --externalip ones, else the specific (not wildcard, not loopback) addresses it
// listens on.
func (s *Server) NetworkInfo() NetworkInfo {
	in, out := s.cm.counts()
	info := NetworkInfo{Inbound: in, Outbound: out, Active: s.cm.active(), Listening: len(s.lns) > 0,
		LocalAddresses: []LocalAddress{}}
	port := s.ListenPort()
	if port == 0 {
		return info
	}
	seen := map[netip.Addr]bool{}
	add := func(a netip.Addr) {
		if a = a.Unmap(); a.IsValid() && !seen[a] {
			seen[a] = true
			info.LocalAddresses = append(info.LocalAddresses, LocalAddress{Address: a.String(), Port: port})
		}
	}
	for _, a := range s.cfg.ExternalIPs {
		add(a)
	}
	if len(info.LocalAddresses) == 0 {
		for _, ln := range s.lns {
			if ap, err := netip.ParseAddrPort(ln.Addr().String()); err == nil &&
				!ap.Addr().IsUnspecified() && !ap.Addr().IsLoopback() {
				add(ap.Addr())
			}
		}
	}
	return info
}

// PeerInfo is one established connection for getpeerinfo.
type PeerInfo struct {
	peer.Stats
	ConnType string // inbound, outbound-full-relay, manual or addr-fetch (ConnInbound, ...)
	// SyncedHeaders is the height of the best header known to be on the peer's chain and
	// SyncedBlocks that of the last block of it we have too; -1 when none is known yet.
	SyncedHeaders int64
	SyncedBlocks  int64
}

// maxSyncedWalk bounds the walk from a peer's best header to the last block we have.
const maxSyncedWalk = 100_000

// PeerInfo lists the established connections, oldest first.
func (s *Server) PeerInfo() []PeerInfo {
	conns := s.cm.established()
	out := make([]PeerInfo, 0, len(conns))
	tip := s.chain.Tip()
	for _, c := range conns {
		pi := PeerInfo{Stats: c.p.Stats(), ConnType: c.connType, SyncedHeaders: -1, SyncedBlocks: -1}
		var n *chainstate.BlockNode
		s.mu.Lock()
		if ps := s.peers[c.p]; ps != nil {
			n = ps.best
		}
		s.mu.Unlock()
		if n != nil {
			pi.SyncedHeaders = int64(n.Height)
			for i := 0; n != nil && i < maxSyncedWalk; i++ {
				if n.Height <= tip.Height && s.chain.HeaderState(n.Hash).HaveBlock {
					pi.SyncedBlocks = int64(n.Height)
					break
				}
				n = n.Parent
			}
		}
		out = append(out, pi)
	}
	return out
}

// NetTotals is the bytes received and sent over every connection since start.
func (s *Server) NetTotals() (recv, sent uint64) { return s.cm.totals() }

// DisconnectNode ends the connection with the peer at addr (its address as getpeerinfo
// shows it, or the address dialled) or, when addr is empty, the peer with id;
// ErrNodeNotConnected when there is none.
func (s *Server) DisconnectNode(addr string, id uint64) error {
	if err := s.cm.disconnectNode(addr, id); err != nil {
		return err
	}
	s.log.Info("peer disconnected by request", "peer", addr, "id", id)
	return nil
}

// SetBan bans subnet until the given time, disconnects its peers at once and saves
// banlist.json.
func (s *Server) SetBan(subnet netip.Prefix, until time.Time, reason string) error {
	if err := s.bans.Ban(subnet, until, reason); err != nil {
		return err
	}
	if n := s.cm.disconnectSubnet(canonicalPrefix(subnet)); n > 0 {
		s.log.Info("disconnected the banned subnet's peers", "subnet", canonicalPrefix(subnet).String(), "peers", n)
	}
	s.saveBans()
	return nil
}

// Unban lifts the ban of subnet and saves banlist.json.
func (s *Server) Unban(subnet netip.Prefix) error {
	if err := s.bans.Unban(subnet); err != nil {
		return err
	}
	s.saveBans()
	return nil
}

// ListBanned is the bans in force.
func (s *Server) ListBanned() []Ban { return s.bans.List() }

// ClearBanned lifts every ban and saves banlist.json.
func (s *Server) ClearBanned() {
	s.bans.Clear()
	s.saveBans()
}

func (s *Server) saveBans() {
	if err := s.bans.Save(); err != nil {
		s.log.Warn("saving banlist.json", "err", err)
	}
}

// SetNetworkActive turns all P2P activity on or off (setnetworkactive).
func (s *Server) SetNetworkActive(on bool) { s.cm.setActive(on) }

// PingPeers sends every peer a ping now; the round trips show in getpeerinfo.
func (s *Server) PingPeers() {
	for _, c := range s.cm.established() {
		c.p.Ping()
	}
}

// ListenAddrs resolves the listening flags into the addresses to listen on: each bind is
// HOST or HOST:PORT (IPv6 in brackets when a port follows), taking port when it has none.
// Without binds a node listens on loopback on regtest (a test network should not face the
// internet by surprise) and on every interface on testnet and mainnet. listen false: none.
func ListenAddrs(binds []string, port uint16, network *params.Network, listen bool) ([]string, error) {
	if !listen {
		return nil, nil
	}
	if len(binds) == 0 {
		if network.Name == params.Regtest.Name {
			return []string{net.JoinHostPort("127.0.0.1", strconv.Itoa(int(port)))}, nil
		}
		return []string{net.JoinHostPort("", strconv.Itoa(int(port)))}, nil
	}
	out := make([]string, 0, len(binds))
	for _, b := range binds {
		host, p := b, strconv.Itoa(int(port))
		if h, ps, err := net.SplitHostPort(b); err == nil {
			n, err := strconv.ParseUint(ps, 10, 16)
			if err != nil {
				return nil, fmt.Errorf("invalid bind address %q: bad port", b)
			}
			host, p = h, strconv.FormatUint(n, 10)
		} else if len(b) > 2 && b[0] == '[' && b[len(b)-1] == ']' {
			host = b[1 : len(b)-1]
		}
		if host != "" {
			if _, err := netip.ParseAddr(host); err != nil {
				return nil, fmt.Errorf("invalid bind address %q: want an IP address, HOST or HOST:PORT", b)
			}
		}
		out = append(out, net.JoinHostPort(host, p))
	}
	return out, nil
}
