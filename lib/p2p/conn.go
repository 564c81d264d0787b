package p2p

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sort"
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
		victim, why := s.admitInbound(ip)
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
			s.handleConn(conn, true, "")
			s.mu.Lock()
			s.inbound--
			if s.inboundIP[ip]--; s.inboundIP[ip] <= 0 {
				delete(s.inboundIP, ip)
			}
			s.mu.Unlock()
		})
	}
}

// admitInbound decides about a new inbound connection from ip: refused (why says so) when
// ip has MaxInboundPerIP connections already, or when every inbound slot is taken and no
// peer can be evicted; else counted, with the peer to evict to make room, if any.
func (s *Server) admitInbound(ip netip.Addr) (victim *peer.Peer, why string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cfg.MaxInboundPerIP > 0 && s.inboundIP[ip] >= s.cfg.MaxInboundPerIP {
		return nil, "too many connections from this address"
	}
	if s.inbound >= s.cfg.MaxInbound {
		ps := s.evictionVictimLocked()
		if ps == nil {
			return nil, "inbound slots full"
		}
		ps.evicted = true
		victim = ps.p
	}
	s.inbound++
	s.inboundIP[ip]++
	return victim, ""
}

// Inbound eviction, in the manner of Bitcoin Core's AttemptToEvictConnection, simplified:
// when every inbound slot is taken, a newcomer may replace the least useful inbound peer.
// Protected are the evictProtectBlocks peers that most recently sent a block new to us, the
// evictProtectTxs that most recently sent a transaction the mempool accepted, and the
// evictProtectOldest longest-connected of the rest (so a node with few inbound peers evicts
// none). Of the others, the victim is the youngest connection of the network group (IPv4
// /16, IPv6 /32) holding the most of them: an attacker with many addresses in one range
// evicts its own connections first.
const (
	evictProtectBlocks = 4
	evictProtectTxs    = 4
	evictProtectOldest = 8
)

// errEvicted ends an inbound connection evicted to make room for another.
var errEvicted = errors.New("evicted to make room for a new inbound connection")

// evictionVictimLocked picks the inbound peer to evict, or nil (s.mu held).
func (s *Server) evictionVictimLocked() *peerState {
	var cands []*peerState
	for _, ps := range s.peers {
		if ps.p.Inbound() && !ps.evicted {
			cands = append(cands, ps)
		}
	}
	protect := func(n int, recent func(*peerState) time.Time) {
		sort.SliceStable(cands, func(i, j int) bool { return recent(cands[i]).After(recent(cands[j])) })
		k := 0
		for k < n && k < len(cands) && !recent(cands[k]).IsZero() {
			k++
		}
		cands = cands[k:]
	}
	protect(evictProtectBlocks, func(ps *peerState) time.Time { return ps.lastBlock })
	protect(evictProtectTxs, func(ps *peerState) time.Time { return ps.lastTx })
	// Oldest first (peer ids grow with connection order), then protect the oldest.
	sort.Slice(cands, func(i, j int) bool { return cands[i].p.ID() < cands[j].p.ID() })
	if len(cands) <= evictProtectOldest {
		return nil
	}
	cands = cands[evictProtectOldest:]
	groups := map[string][]*peerState{}
	for _, ps := range cands {
		g := netGroup(ps.p.IP())
		groups[g] = append(groups[g], ps)
	}
	var best []*peerState
	for _, g := range groups {
		// The group with the most connections; on a tie the one with the youngest.
		if len(g) > len(best) || (len(g) == len(best) && g[len(g)-1].p.ID() > best[len(best)-1].p.ID()) {
			best = g
		}
	}
	return best[len(best)-1]
}

// netGroup is the network range an address is counted in for eviction: IPv4 /16, IPv6 /32.
func netGroup(ip netip.Addr) string {
	ip = ip.Unmap()
	bits := 32
	if ip.Is4() {
		bits = 16
	}
	if pfx, err := ip.Prefix(bits); err == nil {
		return pfx.String()
	}
	return ip.String()
}

// stallRecord is an IP's handshake stalls: the ban score they add up to and the last one.
type stallRecord struct {
	score int
	last  time.Time
}

// maxStallRecords bounds the IPs whose stalls are remembered.
const maxStallRecords = 10_000

// handshakeStalled charges p's IP for letting the handshake time out: the IP's stall score
// grows by HandshakeStallScore and the connection carries all of it, so at the ban
// threshold the IP is banned (peer.Config.OnBan) like any misbehaving peer.
func (s *Server) handshakeStalled(p *peer.Peer, reason string) {
	ip := p.IP()
	if s.cfg.HandshakeStallScore <= 0 || !ip.IsValid() {
		return
	}
	now := time.Now()
	s.mu.Lock()
	r := s.stallRecordLocked(ip, now)
	if r == nil {
		if len(s.stalls) >= maxStallRecords {
			for k, old := range s.stalls {
				if now.Sub(old.last) > s.cfg.HandshakeStallMemory || len(s.stalls) >= maxStallRecords {
					delete(s.stalls, k)
				}
			}
		}
		r = &stallRecord{}
		s.stalls[ip] = r
	}
	r.score += s.cfg.HandshakeStallScore
	r.last = now
	score := r.score
	s.mu.Unlock()
	s.log.Info("peer stalled the handshake", "peer", p.Addr(), "ban_score", score, "reason", reason)
	p.AddBanScore(score, "handshake stalled: "+reason)
}

// stallRecordLocked is ip's unexpired stall record, or nil (s.mu held).
func (s *Server) stallRecordLocked(ip netip.Addr, now time.Time) *stallRecord {
	r := s.stalls[ip]
	if r != nil && now.Sub(r.last) > s.cfg.HandshakeStallMemory {
		delete(s.stalls, ip)
		return nil
	}
	return r
}

// stallScore is the ban score ip's recent handshake stalls add up to.
func (s *Server) stallScore(ip netip.Addr) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r := s.stallRecordLocked(ip, time.Now()); r != nil {
		return r.score
	}
	return 0
}

// noteUseful records that ps sent a block or a transaction new to us (for eviction).
func (s *Server) noteUseful(ps *peerState, block bool) {
	s.mu.Lock()
	if block {
		ps.lastBlock = time.Now()
	} else {
		ps.lastTx = time.Now()
	}
	s.mu.Unlock()
}

func remoteIP(c net.Conn) netip.Addr {
	if ap, err := netip.ParseAddrPort(c.RemoteAddr().String()); err == nil {
		return ap.Addr().Unmap()
	}
	return netip.Addr{}
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
	ps := &peerState{p: p, dialAddr: dialAddr, notFound: peer.NewKnownSet(1024), bucket: newBucket(100, 500), addrs: s.newPeerAddrs()}
	if inbound && v.ListenPort != 0 && p.IP().IsValid() {
		ps.listenAddr = netip.AddrPortFrom(p.IP(), v.ListenPort).String()
	}
	// An address whose earlier handshakes stalled starts with their ban score.
	if stalled := s.stallScore(p.IP()); inbound && stalled > 0 &&
		p.AddBanScore(stalled, "earlier handshake stalls from this address") {
		s.log.Info("peer rejected: banned for earlier handshake stalls", "peer", p.Addr())
		return
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
	case p.Inbound() && errors.Is(err, peer.ErrTimeout):
		s.handshakeStalled(p, reason)
		return
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
		hash := m.Block.Hash()
		st := s.chain.HeaderState(hash)
		s.onBlock(ps, m.Block, size)
		if !st.HaveBlock && !st.Invalid && p.Err() == nil {
			s.noteUseful(ps, true)
		}
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
