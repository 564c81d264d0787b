package p2p

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"time"

	"github.com/cointoolkit/coin/lib/p2p/addrman"
	"github.com/cointoolkit/coin/lib/p2p/peer"
	"github.com/cointoolkit/coin/lib/p2p/wire"
)

// Connections: the listeners, the handshake and what the server decides about it,
// misbehaviour, disconnection and the dispatch of a peer's messages. Which peers are dialled
// is outbound.go's; the connection table and its rules are the connection manager's
// (connmgr.go), bans and discouragement the ban manager's (banman.go).

// Errors of the handshake decided by the server.
var (
	errSelf      = errors.New("connected to ourselves (same node nonce)")
	errDuplicate = errors.New("already connected to this node in this direction")
)

// acceptLoop accepts on ln until the server stops; the connection manager admits or
// refuses each connection (cm.admitInbound).
func (s *Server) acceptLoop(ln net.Listener) {
	for {
		conn, err := ln.Accept()
		if err != nil {
			if s.ctx.Err() != nil {
				return
			}
			s.log.Warn("accept failed", "err", err)
			select {
			case <-time.After(100 * time.Millisecond):
			case <-s.ctx.Done():
				return
			}
			continue
		}
		ip := remoteIP(conn)
		victim, discouraged, why := s.cm.admitInbound(ip)
		if why != "" {
			s.log.Debug("refused inbound connection: "+why, "peer", conn.RemoteAddr().String(),
				"max_inbound", s.cfg.MaxInbound, "max_inbound_per_ip", s.cfg.MaxInboundPerIP)
			conn.Close()
			continue
		}
		if victim != nil {
			s.log.Info("evicting inbound peer to make room", "peer", victim.Addr(), "for", conn.RemoteAddr().String(),
				"max_inbound", s.cfg.MaxInbound)
			victim.Disconnect(errEvicted)
		}
		s.goRun(func() {
			s.handleConn(conn, true, "", connFull, discouraged)
			s.cm.releaseInbound(ip)
		})
	}
}

func remoteIP(c net.Conn) netip.Addr {
	if ap, err := netip.ParseAddrPort(c.RemoteAddr().String()); err == nil {
		return ap.Addr().Unmap()
	}
	return netip.Addr{}
}

// versionMsg is our version message, with our tip's height h.
func (s *Server) versionMsg(h uint64) *wire.MsgVersion {
	return &wire.MsgVersion{ProtocolVersion: wire.ProtocolVersion, Magic: s.net.Magic, Genesis: s.net.GenesisHash,
		BestHeight: h, ListenPort: s.ListenPort(), Nonce: s.nonce, UserAgent: s.cfg.UserAgent}
}

// handleConn runs one connection from handshake to disconnection.
// kind is why an outbound connection was made (outbound.go; ignored for an inbound one).
func (s *Server) handleConn(conn net.Conn, inbound bool, dialAddr string, kind connKind, discouraged bool) {
	if s.ctx.Err() != nil {
		conn.Close()
		return
	}
	p := peer.New(conn, inbound, s.cfg.Peer)
	e, ok := s.cm.track(conn, p, inbound, discouraged, dialAddr, kind)
	if !ok {
		conn.Close()
		return
	}
	defer s.cm.untrack(e)
	told, toldHeight := s.sync.tipNow()
	err := p.Handshake(s.versionMsg(toldHeight), func(v *wire.MsgVersion) error { return s.cm.checkNonce(s.nonce, v.Nonce, inbound) })
	if err != nil {
		s.rejected(p, dialAddr, err)
		p.Disconnect(err)
		return
	}
	v := p.Version()
	ps := &peerState{p: p, dialAddr: dialAddr, node: v.Nonce, bucket: newBucket(100, 500), addrs: s.newPeerAddrs()}
	ps.toldTip = told
	if inbound && v.ListenPort != 0 && p.IP().IsValid() {
		ps.listenAddr = netip.AddrPortFrom(p.IP(), v.ListenPort).String()
	}
	if err := s.cm.establish(e, v.Nonce); err != nil {
		s.rejected(p, dialAddr, err)
		p.Disconnect(err)
		return
	}
	// An address whose earlier handshakes stalled starts with their ban score.
	if stalled := s.cm.stallScore(p.IP()); inbound && stalled > 0 &&
		p.AddBanScore(stalled, "earlier handshake stalls from this address") {
		s.log.Info("peer rejected: misbehaving after earlier handshake stalls", "peer", p.Addr())
		return
	}
	s.mu.Lock()
	s.peers[p] = ps
	s.mu.Unlock()
	if !inbound {
		s.addrs.Good(dialAddr, addrman.SourceOutbound)
	}
	s.log.Info("peer connected", "peer", p.Addr(), "inbound", inbound, "height", v.BestHeight,
		"version", v.ProtocolVersion, "agent", v.UserAgent)
	s.onConnect(ps)
	err = p.Run(s)
	s.onDisconnect(ps, err)
}

// rejected logs a failed handshake. None of these discourages the address: a client that
// does not speak the protocol, another network's node, an old version or a duplicate is no
// attacker (as in Bitcoin Core). Only repeated inbound handshake stalls add up to
// discouragement (handshakeStalled).
func (s *Server) rejected(p *peer.Peer, dialAddr string, err error) {
	reason := err.Error()
	switch {
	case errors.Is(err, errSelf):
		// The inbound end of a self-connection sees our nonce; the outbound end is the
		// connection from that local address.
		if dialAddr = s.cm.noteSelf(dialAddr, p.Addr()); dialAddr != "" {
			s.addrs.Remove(dialAddr)
		}
		s.log.Info("peer rejected: self-connection", "peer", p.Addr(), "reason", reason)
	case errors.Is(err, errDuplicate):
		s.log.Debug("peer rejected: duplicate connection", "peer", p.Addr(), "reason", reason)
	case errors.Is(err, errBannedNow):
		s.log.Debug("peer rejected: banned during the handshake", "peer", p.Addr())
	case errors.Is(err, peer.ErrObsolete):
		s.log.Info("peer rejected: old protocol version", "peer", p.Addr(), "reason", reason)
	case errors.Is(err, peer.ErrWrongNetwork):
		s.log.Info("peer rejected: wrong network", "peer", p.Addr(), "reason", reason)
	case errors.Is(err, peer.ErrWrongGenesis):
		s.log.Info("peer rejected: wrong genesis hash", "peer", p.Addr(), "reason", reason)
	case peer.NotOurProtocol(err):
		s.log.Debug("closing connection: not our protocol", "peer", p.Addr(), "inbound", p.Inbound(), "reason", reason)
	case p.Inbound() && errors.Is(err, peer.ErrTimeout):
		s.handshakeStalled(p, reason)
	default:
		s.log.Info("peer rejected: handshake failed", "peer", p.Addr(), "reason", reason)
	}
}

// handshakeStalled charges p's IP for letting the handshake time out: the IP's stall score
// grows by HandshakeStallScore; a connection that completes its handshake later starts with
// that score, and at the ban threshold the address is discouraged. A stall is no proof of
// malice (a slow link, a port scanner), so it never leads to more than discouragement.
func (s *Server) handshakeStalled(p *peer.Peer, reason string) {
	ip := p.IP()
	if s.cfg.HandshakeStallScore <= 0 || !ip.IsValid() {
		return
	}
	score := s.cm.addStall(ip)
	s.log.Info("peer stalled the handshake", "peer", p.Addr(), "stall_score", score, "reason", reason)
	if score >= s.cfg.Peer.BanThreshold && score-s.cfg.HandshakeStallScore < s.cfg.Peer.BanThreshold {
		s.discourage(p, "repeated handshake stalls: "+reason)
	}
}

// stallScore is the ban score ip's recent handshake stalls add up to.
func (s *Server) stallScore(ip netip.Addr) int { return s.cm.stallScore(ip) }

// onMisbehaving is the peers' OnMisbehaving: a peer's ban score reached the threshold
// (consensus-invalid data, a flood): its address is discouraged and every connection from
// it dropped, unless it is exempt (loopback, --whitelist), which only loses this
// connection.
func (s *Server) onMisbehaving(p *peer.Peer, reason string) { s.discourage(p, reason) }

func (s *Server) discourage(p *peer.Peer, reason string) {
	ip := p.IP()
	if !s.bans.Discourage(ip, p.Addr(), reason) {
		return
	}
	s.cm.disconnectWhere(func(e *connEntry) bool { return e.p != p && e.ip == ip },
		fmt.Errorf("%w: address discouraged: %s", peer.ErrMisbehaving, reason))
}

// misbehave adds ban score; at the threshold the peer is dropped and its address
// discouraged (onMisbehaving).
func (s *Server) misbehave(ps *peerState, score int, reason string) {
	if ps != nil {
		ps.p.AddBanScore(score, reason)
	}
}

func (s *Server) onDisconnect(ps *peerState, err error) {
	p := ps.p
	s.mu.Lock()
	delete(s.peers, p)
	s.mu.Unlock()
	s.sync.peerGone(ps)
	if s.ctx.Err() == nil {
		s.log.Info("peer disconnected", "peer", p.Addr(), "inbound", p.Inbound(), "reason", err)
	}
	s.cm.signal()
}

// HandleMessage dispatches a peer's message (peer.Handler).
func (s *Server) HandleMessage(p *peer.Peer, m wire.Message, size int) {
	s.mu.Lock()
	ps := s.peers[p]
	s.mu.Unlock()
	if ps == nil {
		return
	}
	switch m := m.(type) {
	case *wire.MsgGetAddr:
		s.onGetAddr(ps)
	case *wire.MsgAddr:
		s.onAddr(ps, m)
	case *wire.MsgInv:
		s.onInv(ps, m)
	case *wire.MsgGetData:
		s.onGetData(ps, m)
	case *wire.MsgNotFound:
		s.onNotFound(ps, m)
	case *wire.MsgGetHeaders:
		s.onGetHeaders(ps, m)
	case *wire.MsgHeaders:
		s.onHeaders(ps, m)
	case *wire.MsgBlock:
		hash := m.Block.Hash()
		st := s.chain.HeaderState(hash)
		s.onBlock(ps, m.Block, size)
		if !st.HaveBlock && !st.Invalid && p.Err() == nil {
			s.noteUseful(ps, true)
		}
	case *wire.MsgSendBlocks:
		s.sync.onSendBlocks(ps, m)
	case *wire.MsgTx:
		s.onTx(ps, m.Tx) // acceptTx notes the peer useful when the mempool takes the transaction
	}
}

// bucket is a token bucket bounding the unrequested messages a peer may send.
type bucket struct {
	tokens, rate, burst float64
	last                time.Time
}

func newBucket(rate, burst float64) bucket {
	return bucket{tokens: burst, rate: rate, burst: burst, last: time.Now()}
}

func (b *bucket) take() bool {
	now := time.Now()
	b.tokens = min(b.burst, b.tokens+now.Sub(b.last).Seconds()*b.rate)
	b.last = now
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// unrequested charges ps for a message it sent unasked; a flood adds ban score.
func (s *Server) unrequested(ps *peerState, what string) bool {
	s.mu.Lock()
	ok := ps.bucket.take()
	s.mu.Unlock()
	if !ok {
		s.misbehave(ps, 10, "flood of unrequested "+what)
	}
	return ok
}

// noteUseful records that ps sent a block or a transaction new to us (for eviction).
func (s *Server) noteUseful(ps *peerState, block bool) { s.cm.noteUseful(ps.p, block) }
