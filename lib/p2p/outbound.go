package p2p

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/cointoolkit/coin/lib/p2p/addrman"
)

// Outbound connections: which peers the node dials, in the manner of Bitcoin Core's
// CConnman::ThreadOpenConnections and ThreadOpenAddedConnections.
//
//   - --connect: only these peers, each kept connected (reconnected with backoff); nothing
//     else is dialled, no seed, no DNS seed.
//   - --addnode and the addnode RPC: each kept connected, in slots of their own
//     (maxAddedConns), besides the other outbound connections.
//   - --seednode: dialled until one connection answers getaddr; then it is closed.
//   - DNS seeds of the network (params.Network.DNSSeeds): asked once when the address
//     manager is (nearly) empty and outbound connections are few.
//   - the rest: MaxOutbound full connections drawn from the address manager, each of a
//     network group no other of them is in (addrman.Candidates), so one range of addresses
//     gets one outbound connection however many addresses it floods us with.

// connKind is why an outbound connection was made.
type connKind int

const (
	connFull    connKind = iota // drawn from the address manager
	connManual                  // --connect
	connAddnode                 // --addnode or addnode "add"
	connOneTry                  // addnode "onetry": dialled once
	connSeed                    // --seednode: ask for addresses, then close
)

// String is Bitcoin Core's connection_type of the kind (getpeerinfo).
func (k connKind) String() string {
	return [...]string{ConnOutbound, ConnManual, ConnManual, ConnManual, ConnAddrFetch}[k]
}

// ConnectionType is Bitcoin Core's connection_type of the connected peer with this id
// (peer.Stats.ID): "inbound", "outbound-full-relay", "manual" (--connect, --addnode,
// addnode onetry) or "addr-fetch" (--seednode); "" for no such peer.
func (s *Server) ConnectionType(id uint64) string {
	for _, c := range s.cm.established() {
		if c.p.ID() == id {
			return c.connType
		}
	}
	return ""
}

const (
	// maxAddedConns bounds the connections to --addnode peers (Core: 8); maxAddedNodes the
	// list itself.
	maxAddedConns = 8
	maxAddedNodes = addrman.MaxAddedNodes
	// seedTimeout closes a seed connection that has not answered getaddr.
	seedTimeout = 30 * time.Second
	// dnsTimeout bounds one DNS seed lookup.
	dnsTimeout = 10 * time.Second
	// Core's DNS seed delays: ask at once when no address is known, after 11 s with a few,
	// after 5 min with many; and only if fewer than dnsMinOutbound full connections are up
	// by then.
	dnsDelaySmall  = 11 * time.Second
	dnsDelayLarge  = 5 * time.Minute
	dnsManyAddrs   = 1000
	dnsMinOutbound = 2
)

// Errors of AddNode and AddedNodeInfo (defined in addrman, so that the RPC layer can tell
// them apart without importing this package).
var (
	ErrAlreadyAdded = addrman.ErrAlreadyAdded
	ErrNotAdded     = addrman.ErrNotAdded
	ErrTooManyAdded = addrman.ErrTooManyAdded
	ErrBadCommand   = addrman.ErrBadCommand
)

// discovery is the state of finding peers: the added and seed nodes (the kind of each
// outbound connection is the connection manager's). Its own mutex; never held while taking
// Server.mu or the connection manager's.
type discovery struct {
	mu     sync.Mutex
	added  []string // --addnode and addnode "add", in order
	oneTry []string // addnode "onetry" waiting to be dialled
	seeds  []string // --seednode not yet answered

	addrRateLimited uint64          // addresses dropped by the per-peer addr token bucket
	selfAddrs       map[string]bool // our listening addresses as we announced them
	dnsAsked        bool
}

func newDiscovery(cfg *Config) *discovery {
	d := &discovery{}
	seen := map[string]bool{}
	for _, a := range cfg.AddNodes {
		if !seen[a] && len(d.added) < maxAddedNodes {
			seen[a] = true
			d.added = append(d.added, a)
		}
	}
	d.seeds = append(d.seeds, cfg.SeedNodes...)
	return d
}

// NormalizeAddr checks a peer address given by an operator: "host:port", or a host alone
// with the network's P2P port.
func NormalizeAddr(a string, defaultPort uint16) (string, error) {
	if _, _, err := addrman.SplitAddr(a); err == nil {
		return a, nil
	}
	if a != "" && !hasPort(a) {
		a = net.JoinHostPort(trimBrackets(a), strconv.Itoa(int(defaultPort)))
		if _, _, err := addrman.SplitAddr(a); err == nil {
			return a, nil
		}
	}
	return "", fmt.Errorf("%w: %q", addrman.ErrInvalidAddr, a)
}

func hasPort(a string) bool {
	_, _, err := net.SplitHostPort(a)
	return err == nil
}

func trimBrackets(a string) string {
	if len(a) > 1 && a[0] == '[' && a[len(a)-1] == ']' {
		return a[1 : len(a)-1]
	}
	return a
}

// startDiscovery pins the operator's addresses and starts the DNS seed lookup (Start).
func (s *Server) startDiscovery() {
	for _, a := range s.cfg.Connect {
		s.addrs.Pin(a, addrman.SourceConnect)
	}
	s.disc.mu.Lock()
	added, seeds := append([]string(nil), s.disc.added...), append([]string(nil), s.disc.seeds...)
	s.disc.mu.Unlock()
	for _, a := range added {
		s.addrs.Pin(a, addrman.SourceAddnode)
	}
	for _, a := range seeds {
		s.addrs.Pin(a, addrman.SourceSeednode)
	}
	if len(s.cfg.Connect) == 0 && !s.cfg.NoDNSSeed && len(s.net.DNSSeeds) > 0 {
		s.goRun(s.dnsSeedLoop)
	}
}

// connectLoop keeps the outbound connections up.
func (s *Server) connectLoop() {
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	for {
		s.connectMore()
		s.closeSeeds()
		select {
		case <-s.ctx.Done():
			return
		case <-t.C:
		case <-s.cm.wake:
		}
	}
}

// wake makes the dialler look for work now.
func (s *Server) wake() { s.cm.signal() }

// skipDial reports whether addr is not to be dialled now: what the connection manager
// refuses (banned, discouraged, dialled or connected already, ourselves). An inbound
// peer's listening address may be dialled: two nodes may be connected once each way, as in
// Bitcoin Core (connmgr.go, nonceKey).
func (s *Server) skipDial(a string) bool { return s.cm.skipDial(a) }

// ready lists the addresses of list whose backoff is over and that skipDial allows, at
// most n.
func (s *Server) ready(list []string, n int) []string {
	now := time.Now()
	var out []string
	for _, a := range list {
		if len(out) >= n {
			break
		}
		if !s.skipDial(a) && !now.Before(s.addrs.NextAttempt(a)) {
			out = append(out, a)
		}
	}
	return out
}

func (s *Server) connectMore() {
	counts, groups, active := s.cm.outboundSlots()
	if !active {
		return
	}
	if len(s.cfg.Connect) > 0 {
		for _, a := range s.ready(s.cfg.Connect, s.cfg.MaxOutbound-counts[connManual]) {
			s.launch(a, connManual)
		}
		return
	}
	s.disc.mu.Lock()
	added := append([]string(nil), s.disc.added...)
	oneTry := s.disc.oneTry
	s.disc.oneTry = nil
	seeds := append([]string(nil), s.disc.seeds...)
	s.disc.mu.Unlock()
	for _, a := range s.ready(added, maxAddedConns-counts[connAddnode]) {
		s.launch(a, connAddnode)
	}
	for _, a := range oneTry {
		if !s.skipDial(a) {
			s.launch(a, connOneTry)
		}
	}
	for _, a := range s.ready(seeds, len(seeds)) { // asked whatever we know (Core's -seednode)
		s.launch(a, connSeed)
	}
	free := s.cfg.MaxOutbound - counts[connFull]
	if free <= 0 {
		return
	}
	for _, a := range s.addrs.Candidates(free, s.skipDial, groups) {
		s.launch(a, connFull)
	}
}

// launch dials a in the background as an outbound connection of kind k, if the connection
// manager gives it a slot (cm.reserveOutbound); the slot is freed when the connection ends.
func (s *Server) launch(a string, k connKind) {
	if !s.cm.reserveOutbound(a, k) {
		return
	}
	s.goRun(func() {
		s.dial(a, k)
		s.cm.releaseOutbound(a)
	})
}

// kindOf is the kind of ps's outbound connection; false for an inbound one or one that
// has ended.
func (s *Server) kindOf(ps *peerState) (connKind, bool) {
	if ps.p.Inbound() {
		return 0, false
	}
	e := s.cm.entry(ps.p)
	if e == nil {
		return 0, false
	}
	return e.kind, true
}

// seedAnswered marks a seed connection as done: its addresses arrived; it is closed and
// the seed is not dialled again.
func (s *Server) seedAnswered(ps *peerState) {
	s.disc.mu.Lock()
	for i, a := range s.disc.seeds {
		if a == ps.dialAddr {
			s.disc.seeds = append(s.disc.seeds[:i:i], s.disc.seeds[i+1:]...)
			break
		}
	}
	s.disc.mu.Unlock()
	s.addrs.Unpin(ps.dialAddr) // a node like any other now, in the tried table
	s.log.Info("seed node answered; disconnecting", "peer", ps.dialAddr)
	ps.p.Disconnect(errors.New("seed node answered getaddr"))
}

// closeSeeds closes seed connections that have not answered within seedTimeout (they are
// dialled again after their backoff).
func (s *Server) closeSeeds() {
	for _, ps := range s.peerList() {
		if k, ok := s.kindOf(ps); ok && k == connSeed && time.Since(ps.p.Stats().ConnTime) > seedTimeout {
			s.addrs.Attempt(ps.dialAddr)
			ps.p.Disconnect(fmt.Errorf("seed node did not answer getaddr within %s", seedTimeout))
		}
	}
}

// dial connects to addr and runs the connection (handleConn) until it ends.
func (s *Server) dial(addr string, k connKind) {
	s.addrs.Attempt(addr)
	d := net.Dialer{Timeout: 5 * time.Second}
	conn, err := d.DialContext(s.ctx, "tcp", addr)
	if err != nil {
		if s.ctx.Err() == nil {
			s.log.Debug("connection failed", "peer", addr, "err", err)
		}
		return
	}
	// A host name may resolve to a banned or discouraged address.
	if ban, ok := s.bans.Banned(remoteIP(conn)); ok {
		s.log.Debug("not connecting to banned address", "peer", addr, "subnet", ban.Subnet.String())
		conn.Close()
		return
	}
	if s.bans.Discouraged(remoteIP(conn)) {
		s.log.Debug("not connecting to discouraged address", "peer", addr)
		conn.Close()
		return
	}
	s.handleConn(conn, false, addr, k, false)
}

// dnsSeedLoop asks the network's DNS seeds for addresses once, as Core does: at once when
// no address is known, else after a delay, and only if by then fewer than dnsMinOutbound
// full outbound connections are up.
func (s *Server) dnsSeedLoop() {
	delay := time.Duration(0)
	newCount, triedCount := s.addrs.TableLen() // learned addresses, not the operator's
	if n := newCount + triedCount; n > dnsManyAddrs {
		delay = dnsDelayLarge
	} else if n > 0 {
		delay = dnsDelaySmall
	}
	if s.cfg.DNSSeedDelay != 0 {
		delay = max(s.cfg.DNSSeedDelay, 0)
	}
	select {
	case <-time.After(delay):
	case <-s.ctx.Done():
		return
	}
	if s.fullOutbound() >= dnsMinOutbound {
		s.log.Debug("DNS seeds not asked: enough outbound connections")
		return
	}
	s.disc.mu.Lock()
	s.disc.dnsAsked = true
	s.disc.mu.Unlock()
	res := s.cfg.Resolver
	if res == nil {
		res = net.DefaultResolver
	}
	total := 0
	for _, seed := range s.net.DNSSeeds {
		host, port := seed, s.net.P2PPort
		if h, p, err := addrman.SplitAddr(seed); err == nil {
			host, port = h, p
		}
		ctx, cancel := context.WithTimeout(s.ctx, dnsTimeout)
		ips, err := res.LookupNetIP(ctx, "ip", host)
		cancel()
		if err != nil {
			s.log.Info("DNS seed lookup failed", "seed", host, "err", err)
			continue
		}
		n := 0
		for _, ip := range ips {
			if s.addrs.Add(netip.AddrPortFrom(ip.Unmap(), port).String(), addrman.SourceDNS, "dns:"+host, time.Now()) {
				n++
			}
		}
		total += n
		s.log.Info("DNS seed answered", "seed", host, "addresses", len(ips), "new", n)
	}
	if total > 0 {
		s.wake()
	}
}

// fullOutbound counts the connected full outbound peers.
func (s *Server) fullOutbound() int {
	n := 0
	for _, ps := range s.peerList() {
		if k, ok := s.kindOf(ps); ok && k == connFull {
			n++
		}
	}
	return n
}

// AddNode is the addnode RPC: "add" keeps node connected (besides the other connections),
// "remove" stops that (an open connection stays), "onetry" dials it once.
func (s *Server) AddNode(node, command string) error {
	a, err := NormalizeAddr(node, s.net.P2PPort)
	if err != nil {
		return err
	}
	switch command {
	case "add":
		s.disc.mu.Lock()
		for _, o := range s.disc.added {
			if o == a {
				s.disc.mu.Unlock()
				return fmt.Errorf("%w: %s", ErrAlreadyAdded, a)
			}
		}
		if len(s.disc.added) >= maxAddedNodes {
			s.disc.mu.Unlock()
			return ErrTooManyAdded
		}
		s.disc.added = append(s.disc.added, a)
		s.disc.mu.Unlock()
		if err := s.addrs.Pin(a, addrman.SourceAddnode); err != nil {
			return err
		}
		s.log.Info("node added", "peer", a)
	case "remove":
		s.disc.mu.Lock()
		found := false
		for i, o := range s.disc.added {
			if o == a {
				s.disc.added = append(s.disc.added[:i:i], s.disc.added[i+1:]...)
				found = true
				break
			}
		}
		s.disc.mu.Unlock()
		if !found {
			return fmt.Errorf("%w: %s", ErrNotAdded, a)
		}
		s.addrs.Unpin(a)
		s.log.Info("node removed from the added nodes", "peer", a)
	case "onetry":
		s.disc.mu.Lock()
		if len(s.disc.oneTry) < maxAddedNodes {
			s.disc.oneTry = append(s.disc.oneTry, a)
		}
		s.disc.mu.Unlock()
	default:
		return fmt.Errorf("%w: %q (want add, remove or onetry)", ErrBadCommand, command)
	}
	s.wake()
	return nil
}

// AddedNode is one added node and its connections (getaddednodeinfo).
type AddedNode struct {
	Addr      string
	Connected bool
	// Conns are the connections to it: the remote address and "outbound" or "inbound".
	Conns []AddedConn
}

// AddedConn is one connection to an added node.
type AddedConn struct {
	Addr      string
	Direction string
}

// AddedNodeInfo lists the added nodes (or only node) with their connections.
func (s *Server) AddedNodeInfo(node string) ([]AddedNode, error) {
	s.disc.mu.Lock()
	added := append([]string(nil), s.disc.added...)
	s.disc.mu.Unlock()
	if node != "" {
		a, err := NormalizeAddr(node, s.net.P2PPort)
		if err != nil {
			return nil, err
		}
		found := false
		for _, o := range added {
			if o == a {
				found = true
			}
		}
		if !found {
			return nil, fmt.Errorf("%w: %s", ErrNotAdded, a)
		}
		added = []string{a}
	}
	peers := s.peerList()
	out := make([]AddedNode, 0, len(added))
	for _, a := range added {
		n := AddedNode{Addr: a, Conns: []AddedConn{}}
		for _, ps := range peers {
			switch {
			case !ps.p.Inbound() && ps.dialAddr == a:
				n.Conns = append(n.Conns, AddedConn{Addr: ps.p.Addr(), Direction: "outbound"})
			case ps.p.Inbound() && ps.listenAddr == a:
				n.Conns = append(n.Conns, AddedConn{Addr: ps.p.Addr(), Direction: "inbound"})
			}
		}
		n.Connected = len(n.Conns) > 0
		out = append(out, n)
	}
	return out, nil
}

// NodeAddresses is a random sample of up to count known addresses (all with count 0), for
// getnodeaddresses.
func (s *Server) NodeAddresses(count int) []addrman.Entry {
	return s.addrs.Sample(count, 0)
}

// AddrRateLimited is the number of addresses dropped by the per-peer addr token buckets.
func (s *Server) AddrRateLimited() uint64 {
	s.disc.mu.Lock()
	defer s.disc.mu.Unlock()
	return s.disc.addrRateLimited
}
