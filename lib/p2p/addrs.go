package p2p

import (
	"crypto/sha256"
	"math/rand/v2"
	"net/netip"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"github.com/cointoolkit/coin/lib/p2p/addrman"
	"github.com/cointoolkit/coin/lib/p2p/peer"
	"github.com/cointoolkit/coin/lib/p2p/wire"
	"github.com/cointoolkit/coin/lib/types"
)

// Address gossip, as Bitcoin Core's: a node asks each new outbound peer for addresses
// (getaddr), answers an inbound peer's getaddr once with a random sample of its address
// manager, tells every new peer its own listening address (self-announcement), and passes
// the fresh addresses of small addr messages on to a couple of random peers that are not
// known to have them. Each peer has a bounded set of the addresses it sent us or we sent
// it (Core's m_addr_known), so an address crosses each connection at most once each way
// and relaying ends.
// Incoming addresses are rate limited per peer by a token bucket (Core: 0.1 addresses a
// second, a burst of 1,000); the excess is dropped and counted, never punished.

const (
	// defaultAddrRate and defaultAddrBurst are the per-peer addr token bucket (Core's
	// MAX_ADDR_RATE_PER_SECOND and MAX_ADDR_PROCESSING_TOKEN_BUCKET).
	defaultAddrRate  = 0.1
	defaultAddrBurst = 1000
	// getAddrPercent bounds a getaddr answer to this share of the table (Core: 23%).
	getAddrPercent = 23
	// maxRelayAddrs: only addr messages of at most this many addresses are relayed (a
	// getaddr answer is not), and relayRecent is how fresh a relayed address must be.
	maxRelayAddrs = 10
	relayRecent   = 10 * time.Minute
	// relayFanout is how many random peers a fresh address is passed to.
	relayFanout = 2
)

// peerAddrs is a peer's side of address gossip (each part safe for concurrent use).
type peerAddrs struct {
	limiter *rate.Limiter
	known   *peer.KnownSet // addresses the peer sent us or we sent it (addrKey)
	msgs    *atomic.Int64  // addr messages received from the peer
}

// maxKnownAddrs bounds a peer's set of known addresses (Core: 5,000).
const maxKnownAddrs = 5000

// addrKey is the key of an address in a peer's known set.
func addrKey(a string) types.Hash { return types.Hash(sha256.Sum256([]byte(a))) }

func (s *Server) newPeerAddrs() peerAddrs {
	r, b := s.cfg.AddrRate, s.cfg.AddrBurst
	if r <= 0 {
		r = defaultAddrRate
	}
	if b <= 0 {
		b = defaultAddrBurst
	}
	return peerAddrs{limiter: rate.NewLimiter(rate.Limit(r), b), known: peer.NewKnownSet(maxKnownAddrs), msgs: new(atomic.Int64)}
}

// policy is which addresses this network stores and relays.
func (s *Server) policy() addrman.Policy { return addrman.Policy{AllowLocal: s.net.LocalAddrs} }

// sourceOf is the address a peer is known by, whose network group is the source group of
// the addresses it sends: the address dialled, or an inbound peer's listening address,
// or its remote address.
func sourceOf(ps *peerState) string {
	switch {
	case ps.dialAddr != "":
		return ps.dialAddr
	case ps.listenAddr != "":
		return ps.listenAddr
	}
	return ps.p.Addr()
}

// greetAddrs starts the address exchange with a new peer: an outbound one is asked for
// addresses; every peer is told our own address (selfAddr), alone in one addr message.
func (s *Server) greetAddrs(ps *peerState) {
	ps.addrs.known.Add(addrKey(sourceOf(ps))) // never relay a peer's own address to it
	if !ps.p.Inbound() {
		ps.p.TrySend(&wire.MsgGetAddr{})
	}
	ap, ok := s.selfAddr(ps)
	if !ok {
		return
	}
	s.disc.mu.Lock()
	if s.disc.selfAddrs == nil {
		s.disc.selfAddrs = make(map[string]bool)
	}
	if len(s.disc.selfAddrs) < 64 {
		s.disc.selfAddrs[ap.String()] = true
	}
	s.disc.mu.Unlock()
	ps.addrs.known.Add(addrKey(ap.String()))
	ps.p.TrySend(&wire.MsgAddr{Addrs: []wire.NetAddress{wire.NewNetAddress(ap, uint64(time.Now().Unix()))}})
}

// selfAddr is the one address this node announces to ps as its own, as Bitcoin Core's
// GetLocalAddrForPeer picks one: the first --externalip (Config.ExternalIPs) with the
// listen port; else, to an inbound peer, the address it reached us at; else the first
// listener bound to a specific address (--p2p-bind, with its own port), or for a listener
// on every interface this connection's local address with that listener's port. Only an
// address the network's policy takes (so a mainnet node behind NAT without --externalip
// announces nothing, and loopback regtest nodes announce 127.0.0.1:port); false without a
// listener.
func (s *Server) selfAddr(ps *peerState) (netip.AddrPort, bool) {
	port := s.ListenPort()
	if port == 0 {
		return netip.AddrPort{}, false
	}
	pol := s.policy()
	for _, ip := range s.cfg.ExternalIPs {
		if ap := netip.AddrPortFrom(ip.Unmap(), port); pol.Acceptable(ap) {
			return ap, true
		}
	}
	local := ps.p.LocalAddr()
	if ps.p.Inbound() && pol.Acceptable(local) {
		return local, true
	}
	for _, ln := range s.lns {
		lap, err := netip.ParseAddrPort(ln.Addr().String())
		if err != nil {
			continue
		}
		ip := lap.Addr().Unmap()
		if ip.IsUnspecified() {
			if lap.Addr().Is4() && !local.Addr().Is4() {
				continue // an IPv4 listener is not reachable at our IPv6 address
			}
			ip = local.Addr()
		}
		if ap := netip.AddrPortFrom(ip, lap.Port()); pol.Acceptable(ap) {
			return ap, true
		}
	}
	return netip.AddrPort{}, false
}

// isSelfAddr reports whether a is one of our own announced addresses.
func (s *Server) isSelfAddr(a string) bool {
	s.disc.mu.Lock()
	defer s.disc.mu.Unlock()
	return s.disc.selfAddrs[a]
}

// onGetAddr answers an inbound peer's first getaddr with a random sample of the address
// manager (at most 1,000 addresses or 23% of it, a small table whole) and the listening
// addresses of our inbound peers. Core ignores getaddr from outbound peers, so that a
// node we chose cannot map what we know; so do we. A repeated getaddr counts as an
// unrequested message.
func (s *Server) onGetAddr(ps *peerState) {
	if !ps.p.Inbound() {
		return
	}
	s.mu.Lock()
	answered := ps.answered
	ps.answered = true
	var listen []string
	for _, o := range s.peers {
		if o != ps && o.listenAddr != "" {
			listen = append(listen, o.listenAddr)
		}
	}
	s.mu.Unlock()
	if answered {
		s.unrequested(ps, "getaddr")
		return
	}
	now := uint64(time.Now().Unix())
	pol := s.policy()
	var out []wire.NetAddress
	seen := make(map[string]bool)
	addOne := func(a string, last uint64) {
		ap, err := netip.ParseAddrPort(a)
		if err != nil || seen[a] || a == ps.listenAddr || len(out) >= maxAddrsPerAnswer || !pol.Acceptable(ap) {
			return
		}
		seen[a] = true
		ps.addrs.known.Add(addrKey(a))
		out = append(out, wire.NewNetAddress(ap, last))
	}
	for _, a := range listen {
		addOne(a, now)
	}
	for _, e := range s.addrs.Sample(maxAddrsPerAnswer, getAddrPercent) {
		addOne(e.Addr, uint64(max(e.LastSeen, 0)))
	}
	ps.p.Send(&wire.MsgAddr{Addrs: out})
}

// onAddr learns addresses: each costs a token of the peer's bucket (the rest are dropped
// and counted); those the policy takes go to the address manager with the peer as their
// source; the fresh ones of a small message are passed on to relayFanout random other
// peers not known to have them. A seed connection is closed once it answered.
func (s *Server) onAddr(ps *peerState, m *wire.MsgAddr) {
	now := time.Now()
	from := sourceOf(ps)
	pol := s.policy()
	var fresh []wire.NetAddress
	dropped := 0
	for _, a := range m.Addrs {
		if !ps.addrs.limiter.AllowN(now, 1) {
			dropped++
			continue
		}
		ap := a.AddrPort()
		if !pol.Acceptable(ap) || s.isSelfAddr(ap.String()) {
			continue
		}
		seen := time.Unix(int64(min(a.LastSeen, 1<<40)), 0)
		if seen.Before(time.Unix(100_000_000, 0)) || seen.After(now.Add(10*time.Minute)) {
			seen = now.Add(-5 * 24 * time.Hour) // Core: an unlikely time counts as five days old
		}
		ps.addrs.known.Add(addrKey(ap.String()))
		s.addrs.Add(ap.String(), addrman.SourceAddr, from, seen)
		if len(m.Addrs) <= maxRelayAddrs && now.Sub(seen) < relayRecent {
			fresh = append(fresh, a)
		}
	}
	if dropped > 0 {
		s.disc.mu.Lock()
		s.disc.addrRateLimited += uint64(dropped)
		s.disc.mu.Unlock()
		s.log.Debug("addresses dropped by the addr rate limit", "peer", ps.p.Addr(), "dropped", dropped, "of", len(m.Addrs))
	}
	if len(fresh) > 0 {
		s.relayAddrs(ps, fresh)
		s.wake()
	}
	// The seed's answer is any addr message but its self-announcement (Core: more than one
	// address; a young seed may know only one, or none). The self-announcement is one
	// address, the seed's first addr message (greetAddrs runs before the seed reads our
	// getaddr): its address as we dialled it, or another (--externalip, a second listener).
	first := ps.addrs.msgs.Add(1) == 1
	selfAnnounce := len(m.Addrs) == 1 && (first || m.Addrs[0].AddrPort().String() == ps.dialAddr)
	if k, ok := s.kindOf(ps); ok && k == connSeed && !selfAnnounce {
		s.seedAnswered(ps)
	}
}

// relayAddrs passes each address learned from src on to relayFanout random other peers
// that are not known to have it.
func (s *Server) relayAddrs(src *peerState, addrs []wire.NetAddress) {
	var others []*peerState
	for _, ps := range s.peerList() {
		if ps != src {
			others = append(others, ps)
		}
	}
	out := make(map[*peerState][]wire.NetAddress)
	for _, a := range addrs {
		k := addrKey(a.AddrPort().String())
		rand.Shuffle(len(others), func(i, j int) { others[i], others[j] = others[j], others[i] })
		sent := 0
		for _, ps := range others {
			if sent == relayFanout {
				break
			}
			if ps.addrs.known.Add(k) { // not known to it: now it is
				out[ps] = append(out[ps], a)
				sent++
			}
		}
	}
	for ps, list := range out {
		ps.p.TrySend(&wire.MsgAddr{Addrs: list})
	}
}
