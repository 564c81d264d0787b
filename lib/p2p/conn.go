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

// Connections: the listener and the outbound dialler, the handshake and what the server
// decides about it, ban score, disconnection and the dispatch of a peer's messages.

// Errors of the handshake decided by the server.
var (
	errSelf      = errors.New("connected to ourselves (same node nonce)")
	errDuplicate = errors.New("already connected to this node")
)

func (s *Server) acceptLoop() {
	for {
		conn, err := s.ln.Accept()
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
		if ban, ok := s.addrs.Banned(ip); ok {
			s.log.Debug("refused connection from banned address", "peer", conn.RemoteAddr().String(),
				"until", time.Unix(ban.Until, 0).UTC().Format(time.RFC3339), "reason", ban.Reason)
			conn.Close()
			continue
		}
		s.mu.Lock()
		if s.inbound >= s.cfg.MaxInbound {
			s.mu.Unlock()
			s.log.Debug("refused inbound connection: inbound slots full", "peer", conn.RemoteAddr().String(), "max_inbound", s.cfg.MaxInbound)
			conn.Close()
			continue
		}
		s.inbound++
		s.mu.Unlock()
		s.goRun(func() {
			s.handleConn(conn, true, "")
			s.mu.Lock()
			s.inbound--
			s.mu.Unlock()
		})
	}
}

func remoteIP(c net.Conn) netip.Addr {
	if ap, err := netip.ParseAddrPort(c.RemoteAddr().String()); err == nil {
		return ap.Addr().Unmap()
	}
	return netip.Addr{}
}

// connectLoop keeps the outbound connections up: to the --connect peers, or else to known
// addresses, each with the address manager's backoff.
func (s *Server) connectLoop() {
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	for {
		s.connectMore()
		select {
		case <-s.ctx.Done():
			return
		case <-t.C:
		case <-s.wakeConn:
		}
	}
}

func (s *Server) connectMore() {
	s.mu.Lock()
	free := s.cfg.MaxOutbound - s.outbound
	s.mu.Unlock()
	if free <= 0 {
		return
	}
	skip := func(a string) bool {
		if ap, err := netip.ParseAddrPort(a); err == nil {
			if _, banned := s.addrs.Banned(ap.Addr()); banned {
				return true
			}
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.dialing[a] || s.self[a]
	}
	var targets []string
	if len(s.cfg.Connect) > 0 {
		now := time.Now()
		for _, a := range s.cfg.Connect {
			if len(targets) < free && !skip(a) && !now.Before(s.addrs.NextAttempt(a)) {
				targets = append(targets, a)
			}
		}
	} else {
		targets = s.addrs.Candidates(free, skip)
	}
	for _, a := range targets {
		s.mu.Lock()
		if s.dialing[a] || s.outbound >= s.cfg.MaxOutbound {
			s.mu.Unlock()
			continue
		}
		s.dialing[a] = true
		s.outbound++
		s.mu.Unlock()
		s.goRun(func() {
			s.dial(a)
			s.mu.Lock()
			delete(s.dialing, a)
			s.outbound--
			s.mu.Unlock()
			select {
			case s.wakeConn <- struct{}{}:
			default:
			}
		})
	}
}

func (s *Server) dial(addr string) {
	s.addrs.Attempt(addr)
	d := net.Dialer{Timeout: 5 * time.Second}
	conn, err := d.DialContext(s.ctx, "tcp", addr)
	if err != nil {
		if s.ctx.Err() == nil {
			s.log.Debug("connection failed", "peer", addr, "err", err)
		}
		return
	}
	if ban, ok := s.addrs.Banned(remoteIP(conn)); ok {
		s.log.Debug("not connecting to banned address", "peer", addr, "reason", ban.Reason)
		conn.Close()
		return
	}
	s.handleConn(conn, false, addr)
}

func (s *Server) versionMsg() *wire.MsgVersion {
	s.mu.Lock()
	h := s.tip.height
	s.mu.Unlock()
	return &wire.MsgVersion{ProtocolVersion: wire.ProtocolVersion, Magic: s.net.Magic, Genesis: s.net.GenesisHash,
		BestHeight: h, ListenPort: s.ListenPort(), Nonce: s.nonce, UserAgent: s.cfg.UserAgent}
}

func (s *Server) verifyVersion(v *wire.MsgVersion) error {
	if v.Nonce == s.nonce {
		return errSelf
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if other, ok := s.nonces[v.Nonce]; ok {
		return fmt.Errorf("%w (as %s)", errDuplicate, other.p.Addr())
	}
	return nil
}

// handleConn runs one connection from handshake to disconnection.
func (s *Server) handleConn(conn net.Conn, inbound bool, dialAddr string) {
	s.mu.Lock()
	if s.ctx.Err() != nil {
		s.mu.Unlock()
		conn.Close()
		return
	}
	s.conns[conn] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.conns, conn)
		s.mu.Unlock()
	}()
	p := peer.New(conn, inbound, s.cfg.Peer)
	if !inbound {
		s.mu.Lock()
		s.outLocal[conn.LocalAddr().String()] = dialAddr
		s.mu.Unlock()
		defer func() {
			s.mu.Lock()
			delete(s.outLocal, conn.LocalAddr().String())
			s.mu.Unlock()
		}()
	}
	err := p.Handshake(s.versionMsg(), s.verifyVersion)
	if err != nil {
		s.rejected(p, dialAddr, err)
		p.Disconnect(err)
		return
	}
	v := p.Version()
	ps := &peerState{p: p, dialAddr: dialAddr, notFound: peer.NewKnownSet(1024), bucket: newBucket(100, 500)}
	if inbound && v.ListenPort != 0 && p.IP().IsValid() {
		ps.listenAddr = netip.AddrPortFrom(p.IP(), v.ListenPort).String()
	}
	s.mu.Lock()
	if other, ok := s.nonces[v.Nonce]; ok {
		s.mu.Unlock()
		err := fmt.Errorf("%w (as %s)", errDuplicate, other.p.Addr())
		s.rejected(p, dialAddr, err)
		p.Disconnect(err)
		return
	}
	s.peers[p] = ps
	s.nonces[v.Nonce] = ps
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

// rejected logs a failed handshake and bans when the peer was at fault.
func (s *Server) rejected(p *peer.Peer, dialAddr string, err error) {
	reason := err.Error()
	switch {
	case errors.Is(err, errSelf):
		// The inbound end of a self-connection sees our nonce; the outbound end is the
		// connection from that local address.
		s.mu.Lock()
		if dialAddr == "" {
			dialAddr = s.outLocal[p.Addr()]
		}
		if dialAddr != "" {
			s.self[dialAddr] = true
		}
		s.mu.Unlock()
		if dialAddr != "" {
			s.addrs.Remove(dialAddr)
		}
		s.log.Info("peer rejected: self-connection", "peer", p.Addr(), "reason", reason)
		return
	case errors.Is(err, errDuplicate):
		s.log.Debug("peer rejected: duplicate connection", "peer", p.Addr(), "reason", reason)
		return
	case errors.Is(err, peer.ErrObsolete):
		s.log.Info("peer rejected: old protocol version", "peer", p.Addr(), "reason", reason)
		return
	case errors.Is(err, peer.ErrWrongNetwork), errors.Is(err, wire.ErrBadMagic):
		s.log.Info("peer rejected: wrong network", "peer", p.Addr(), "reason", reason)
	case errors.Is(err, peer.ErrWrongGenesis):
		s.log.Info("peer rejected: wrong genesis hash", "peer", p.Addr(), "reason", reason)
	default:
		s.log.Info("peer rejected: handshake failed", "peer", p.Addr(), "reason", reason)
	}
	if peer.Misbehaviour(err) {
		p.AddBanScore(s.banThreshold(), reason)
	}
}

func (s *Server) banThreshold() int {
	if s.cfg.Peer.BanThreshold > 0 {
		return s.cfg.Peer.BanThreshold
	}
	return 100
}

func (s *Server) banIP(p *peer.Peer, reason string) {
	if !p.IP().IsValid() {
		return
	}
	s.addrs.Ban(p.IP(), s.cfg.BanDuration, reason)
	s.log.Warn("peer banned", "peer", p.Addr(), "ip", p.IP().String(), "for", s.cfg.BanDuration.String(), "reason", reason)
}

// misbehave adds ban score; at the threshold the peer is dropped and its IP banned (by
// the peer's OnBan, banIP).
func (s *Server) misbehave(ps *peerState, score int, reason string) {
	if ps != nil {
		ps.p.AddBanScore(score, reason)
	}
}

func (s *Server) onDisconnect(ps *peerState, err error) {
	p := ps.p
	s.mu.Lock()
	delete(s.peers, p)
	if v := p.Version(); v != nil && s.nonces[v.Nonce] == ps {
		delete(s.nonces, v.Nonce)
	}
	for h, r := range s.inflight {
		if r.ps == ps {
			delete(s.inflight, h)
		}
	}
	ps.inflight = 0
	ps.headersPending = false
	s.scheduleLocked()
	s.mu.Unlock()
	s.txMu.Lock()
	for h, r := range s.txInflight {
		if r.peer == p.ID() {
			delete(s.txInflight, h)
		}
	}
	s.txMu.Unlock()
	if s.ctx.Err() == nil {
		s.log.Info("peer disconnected", "peer", p.Addr(), "inbound", p.Inbound(), "reason", err)
	}
	select {
	case s.wakeConn <- struct{}{}:
	default:
	}
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
		s.onBlock(ps, m.Block, size)
	case *wire.MsgTx:
		s.onTx(ps, m.Tx)
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
