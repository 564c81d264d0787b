package p2p

import (
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/p2p/wire"
	"github.com/cointoolkit/coin/lib/params"
)

// Finding peers, in process on loopback: gossip, the addr rate limit, --addnode,
// --seednode, --connect and DNS seeds.

// connectedTo reports whether tn has a handshaken connection to (or from) the node
// listening at addr.
func (tn *tnode) connectedTo(addr string) bool {
	for _, ps := range tn.s.peerList() {
		if ps.dialAddr == addr || ps.listenAddr == addr {
			return true
		}
	}
	return false
}

// TestGossipDiscovery: C knows only a seed node (A); B is connected to A with --addnode
// and announced its address to it. C asks A, stores B, leaves A and connects to B.
func TestGossipDiscovery(t *testing.T) {
	a := startNode(t, "A", quiet(nodeOpts{tweak: func(c *Config) { c.MaxOutbound = -1 }}))
	// A and B dial nobody else (B only its added node), so C is the one that dials B.
	b := startNode(t, "B", quiet(nodeOpts{tweak: func(c *Config) { c.AddNodes = []string{a.addr()}; c.MaxOutbound = -1 }}))
	waitFor(t, 5*time.Second, "B connected to A and announced", func() bool {
		_, ok := a.s.Addrman().Get(b.addr())
		return ok && b.connectedTo(a.addr())
	})
	c := startNode(t, "C", quiet(nodeOpts{tweak: func(c *Config) { c.SeedNodes = []string{a.addr()} }}))
	waitFor(t, 10*time.Second, "C connected to B", func() bool {
		for _, ps := range c.s.peerList() {
			if ps.dialAddr == b.addr() {
				return true
			}
		}
		return false
	})
	waitFor(t, 5*time.Second, "C left the seed node", func() bool { return c.log.Contains("seed node answered; disconnecting") })
	if e, ok := c.s.Addrman().Get(b.addr()); !ok || e.From != a.addr() {
		t.Fatalf("C's entry of B: %+v (learned from A?)", e)
	}
	// B's end of C's connection completes its handshake a little after C's end.
	var types map[string]bool
	waitFor(t, 5*time.Second, "connection types manual, inbound and outbound-full-relay", func() bool {
		types = map[string]bool{}
		for _, st := range c.s.Peers() {
			types[c.s.ConnectionType(st.ID)] = true
		}
		for _, st := range b.s.Peers() {
			types[b.s.ConnectionType(st.ID)] = true
		}
		return types["manual"] && types["inbound"] && types["outbound-full-relay"]
	})
	info, err := b.s.AddedNodeInfo("")
	if err != nil || len(info) != 1 || info[0].Addr != a.addr() || !info[0].Connected || info[0].Conns[0].Direction != "outbound" {
		t.Fatalf("B's added nodes %+v (%v)", info, err)
	}
}

// TestAddnodeKeepsConnectedAndOthers: an --addnode peer is reconnected after it restarts,
// and the node makes other outbound connections besides it; with --connect it dials
// nothing else, added node included.
func TestAddnodeKeepsConnectedAndOthers(t *testing.T) {
	a := startNode(t, "A", quiet(nodeOpts{tweak: func(c *Config) { c.MaxOutbound = -1 }}))
	other := startNode(t, "O", quiet(nodeOpts{tweak: func(c *Config) { c.MaxOutbound = -1 }}))
	aAddr := a.addr()
	n := startNode(t, "N", quiet(nodeOpts{tweak: func(c *Config) { c.AddNodes = []string{aAddr} }}))
	waitFor(t, 5*time.Second, "N connected to A", func() bool { return n.connectedTo(aAddr) })
	// N learns O's address and dials it in a full outbound slot, the added node besides.
	n.s.Addrman().Add(other.addr(), "addr", "127.0.0.1:9", time.Now())
	n.s.wake()
	waitFor(t, 5*time.Second, "N connected to O too", func() bool { return n.connectedTo(other.addr()) })

	a.stop()
	waitFor(t, 5*time.Second, "N lost A", func() bool { return !n.connectedTo(aAddr) })
	a2 := startNode(t, "A-restarted", quiet(nodeOpts{listen: aAddr, tweak: func(c *Config) { c.MaxOutbound = -1 }}))
	waitFor(t, 10*time.Second, "N reconnected to the restarted A", func() bool { return n.connectedTo(a2.addr()) })

	// --connect: only these peers.
	x := startNode(t, "X", quiet(nodeOpts{tweak: func(c *Config) { c.MaxOutbound = -1 }}))
	m := startNode(t, "M", quiet(nodeOpts{connect: []string{x.addr()}, tweak: func(c *Config) {
		c.AddNodes = []string{other.addr()}
		c.SeedNodes = []string{other.addr()}
	}}))
	m.s.Addrman().Add(a2.addr(), "addr", "127.0.0.1:9", time.Now())
	waitFor(t, 5*time.Second, "M connected to X", func() bool { return m.connectedTo(x.addr()) })
	for i := 0; i < 8; i++ { // a few rounds of the connect loop
		m.s.connectMore()
	}
	if m.peerCount() != 1 || m.connectedTo(other.addr()) || m.connectedTo(a2.addr()) {
		t.Fatalf("with --connect M has %d peers", m.peerCount())
	}
}

// TestAddrRateLimit: a peer's addresses beyond its token bucket (0.1/s, burst 1,000) are
// dropped and counted; the peer is not punished.
func TestAddrRateLimit(t *testing.T) {
	n := startNode(t, "N", quiet(nodeOpts{tweak: func(c *Config) { c.MaxOutbound = -1 }}))
	r := rawFrom(t, n, "127.0.0.1", 77)
	msg := func(first, count int) *wire.MsgAddr {
		m := &wire.MsgAddr{}
		for i := first; i < first+count; i++ {
			ap := netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, byte(i >> 8), byte(i), 1}), 38333)
			m.Addrs = append(m.Addrs, wire.NewNetAddress(ap, uint64(time.Now().Unix())))
		}
		return m
	}
	if err := r.send(msg(0, 1000)); err != nil {
		t.Fatal(err)
	}
	if err := r.send(msg(1000, 500)); err != nil {
		t.Fatal(err)
	}
	if err := r.send(&wire.MsgPing{Nonce: 5}); err != nil { // answered after the addr messages
		t.Fatal(err)
	}
	for {
		m, err := r.recv(5 * time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if p, ok := m.(*wire.MsgPong); ok && p.Nonce == 5 {
			break
		}
	}
	// The first 1,000 took the burst; of the next 500 at most a token or two refilled.
	if got := n.s.AddrRateLimited(); got < 495 || got > 500 {
		t.Fatalf("%d addresses dropped by the rate limit, want about 500", got)
	}
	for _, ps := range n.s.peerList() {
		if ps.p.BanScore() != 0 {
			t.Fatalf("the peer was punished: ban score %d", ps.p.BanScore())
		}
	}
	if n.peerCount() != 1 {
		t.Fatal("the peer was dropped")
	}
	if !n.s.Addrman().Add("10.200.0.1:38333", "addr", "", time.Now()) {
		t.Fatal("the address manager does not take private addresses on regtest")
	}
}

// TestDNSSeed: with an empty address manager the node asks the network's DNS seeds (a real
// lookup of "localhost" through net.Resolver) and connects to what they answer, on the
// network's port; --dnsseed=false and --connect never ask them.
func TestDNSSeed(t *testing.T) {
	b := startNode(t, "B", quiet(nodeOpts{tweak: func(c *Config) { c.MaxOutbound = -1 }}))
	network := *params.Regtest
	network.DNSSeeds = []string{"localhost"}
	network.P2PPort = b.s.ListenPort()
	c := startNode(t, "C", quiet(nodeOpts{tweak: func(c *Config) { c.Network = &network }}))
	waitFor(t, 10*time.Second, "C connected to the DNS seed's answer", func() bool { return c.connectedTo(b.addr()) })
	if !c.log.Contains("DNS seed answered") {
		t.Fatal("no DNS seed line in C's log")
	}
	// With two full outbound connections up by the time the seeds are due, they are not asked.
	o1 := startNode(t, "O1", quiet(nodeOpts{tweak: func(c *Config) { c.MaxOutbound = -1 }}))
	o2 := startNode(t, "O2", quiet(nodeOpts{tweak: func(c *Config) { c.MaxOutbound = -1 }}))
	e := startNode(t, "E", nodeOpts{tweak: func(c *Config) { c.Network = &network; c.DNSSeedDelay = time.Second }})
	e.s.Addrman().Add(o1.addr(), "addr", "127.0.0.1:9", time.Now())
	e.s.Addrman().Add(o2.addr(), "addr", "127.0.0.1:9", time.Now())
	e.s.wake()
	waitFor(t, 10*time.Second, "E decided about the DNS seeds", func() bool { return e.log.Contains("DNS seeds not asked") || e.log.Contains("DNS seed answered") })
	if !e.log.Contains("DNS seeds not asked: enough outbound connections") {
		t.Fatal("DNS seeds asked with two outbound connections up")
	}
	for _, tweak := range []func(*Config){
		func(c *Config) { c.Network = &network; c.NoDNSSeed = true },
		func(c *Config) { c.Network = &network; c.Connect = []string{"127.0.0.1:9"} },
	} {
		d := startNode(t, "D", quiet(nodeOpts{tweak: tweak}))
		d.s.disc.mu.Lock()
		asked := d.s.disc.dnsAsked
		d.s.disc.mu.Unlock()
		if asked || strings.Contains(d.log.String(), "DNS seed") {
			t.Fatal("DNS seeds asked with --dnsseed=false or --connect")
		}
	}
}

// outboundFull counts tn's connected full outbound peers.
func (tn *tnode) outboundFull() int { return tn.s.fullOutbound() }

// TestDiscoveryFillsOutbound: nine nodes started one after another, each knowing only the
// seed node, all reach their full outbound set (6 of the 8 others here) through gossip: the
// late ones from the seed's answer, the early ones from the announcements relayed to them.
// Two nodes may be connected once each way, so a node's inbound peers (the early nodes are
// dialled by every later one) do not keep it from dialling them; with one connection a pair,
// 9 nodes could not have more than 4 outbound each.
func TestDiscoveryFillsOutbound(t *testing.T) {
	// Every node is on 127.0.0.1: no bound of inbound connections per IP.
	seed := startNode(t, "S", nodeOpts{discard: true, tweak: func(c *Config) { c.MaxOutbound = 2; c.MaxInboundPerIP = -1 }})
	start := time.Now()
	var nodes []*tnode
	for i := 0; i < 8; i++ {
		nodes = append(nodes, startNode(t, "N"+strconv.Itoa(i), nodeOpts{discard: true, tweak: func(c *Config) {
			c.MaxOutbound, c.MaxInboundPerIP = 6, -1
			c.SeedNodes = []string{seed.addr()}
		}}))
	}
	t.Cleanup(func() {
		if t.Failed() {
			for i, n := range nodes {
				t.Logf("N%d: outbound %d, peers %d, known %d", i, n.outboundFull(), n.peerCount(), n.s.Addrman().Len())
			}
		}
	})
	waitFor(t, 20*time.Second, "every node at 6 outbound peers", func() bool {
		for _, n := range nodes {
			if n.outboundFull() < 6 {
				return false
			}
		}
		return true
	})
	t.Logf("9 nodes at their full outbound set %s after the first started", time.Since(start).Round(time.Millisecond))
}

// TestOutboundDistinctGroups: a peer floods the victim with 50 addresses of one /24; the
// victim dials at most one of them at a time (one network group, one outbound slot) and
// still connects to each of three honest nodes it knows.
func TestOutboundDistinctGroups(t *testing.T) {
	var honest []*tnode
	for i := 0; i < 3; i++ {
		honest = append(honest, startNode(t, "H"+strconv.Itoa(i), quiet(nodeOpts{tweak: func(c *Config) { c.MaxOutbound = -1 }})))
	}
	v := startNode(t, "V", nodeOpts{tweak: func(c *Config) { c.MaxOutbound = 8 }}) // debug log: failed dials
	r := rawFrom(t, v, "127.0.0.1", 99)
	flood := &wire.MsgAddr{}
	for i := 1; i <= 50; i++ {
		ap := netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 77, 99, byte(i)}), 38333)
		flood.Addrs = append(flood.Addrs, wire.NewNetAddress(ap, uint64(time.Now().Unix())))
	}
	if err := r.send(flood); err != nil {
		t.Fatal(err)
	}
	for _, h := range honest {
		v.s.Addrman().Add(h.addr(), "addr", "127.0.0.1:9", time.Now())
	}
	v.s.wake()
	inRange := func() int {
		v.s.cm.mu.Lock()
		defer v.s.cm.mu.Unlock()
		n := 0
		for a := range v.s.cm.dialing {
			if strings.HasPrefix(a, "10.77.99.") {
				n++
			}
		}
		return n
	}
	seen := 0
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		n := inRange()
		if n > 1 {
			t.Fatalf("%d addresses of one /24 dialled at once", n)
		}
		seen = max(seen, n)
		time.Sleep(5 * time.Millisecond)
	}
	waitFor(t, 5*time.Second, "V connected to the three honest nodes", func() bool {
		for _, h := range honest {
			if !v.connectedTo(h.addr()) {
				return false
			}
		}
		return true
	})
	if seen == 0 && !v.log.Contains("peer=10.77.99.") { // the rule had something to hold back
		t.Fatal("no address of the flooded range was dialled")
	}
	newCount, _ := v.s.Addrman().TableLen()
	if newCount < 3 || newCount > 3+16 {
		t.Fatalf("%d addresses in the new table: the flood should take one bucket (16)", newCount)
	}
}

// TestSelfAnnouncement: a node announces the address it can be reached at: its
// --externalip, or the specific address it is bound to (--p2p-bind), not the local address
// its outbound connection left from.
func TestSelfAnnouncement(t *testing.T) {
	b := startNode(t, "B", quiet(nodeOpts{tweak: func(c *Config) { c.MaxOutbound = -1 }}))
	bound := startNode(t, "P", quiet(nodeOpts{listen: "127.0.0.3:0", connect: []string{b.addr()}}))
	port := strconv.Itoa(int(bound.s.ListenPort()))
	waitFor(t, 5*time.Second, "B learned P's bound address", func() bool {
		_, ok := b.s.Addrman().Get("127.0.0.3:" + port)
		return ok
	})
	if _, ok := b.s.Addrman().Get("127.0.0.1:" + port); ok {
		t.Fatal("P announced 127.0.0.1, where it does not listen")
	}
	ext := startNode(t, "E", quiet(nodeOpts{connect: []string{b.addr()}, tweak: func(c *Config) {
		c.ExternalIPs = []netip.Addr{netip.MustParseAddr("10.20.30.40")}
	}}))
	want := "10.20.30.40:" + strconv.Itoa(int(ext.s.ListenPort()))
	waitFor(t, 5*time.Second, "B learned E's --externalip", func() bool {
		_, ok := b.s.Addrman().Get(want)
		return ok
	})
}

// TestOneConnectionEachWay: two nodes may be connected once each way, as in Bitcoin Core.
// A and B dial each other at the same moment: both connections stay, one each way, and
// each node sees the other once as inbound and once as outbound. A second outbound
// connection to the same node (under another name) is refused as a duplicate, and the node
// is asked once to push new blocks, on the outbound connection.
func TestOneConnectionEachWay(t *testing.T) {
	a := startNode(t, "A", nodeOpts{tweak: noDial})
	b := startNode(t, "B", nodeOpts{tweak: noDial})
	errs := make(chan error, 2)
	go func() { errs <- a.s.AddNode(b.addr(), "add") }()
	go func() { errs <- b.s.AddNode(a.addr(), "add") }()
	for i := 0; i < 2; i++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	oneEachWay := func(tn *tnode) bool {
		in, out := 0, 0
		for _, st := range tn.s.Peers() {
			if st.Inbound {
				in++
			} else {
				out++
			}
		}
		return in == 1 && out == 1
	}
	waitFor(t, 10*time.Second, "one connection each way on both nodes", func() bool { return oneEachWay(a) && oneEachWay(b) })

	// The same node under another name: a second outbound connection, refused.
	other := "localhost:" + strconv.Itoa(int(b.s.ListenPort()))
	if err := a.s.AddNode(other, "onetry"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the second outbound connection refused", func() bool {
		return a.log.Contains("peer rejected: duplicate connection") || b.log.Contains("peer rejected: duplicate connection")
	})
	time.Sleep(200 * time.Millisecond)
	if !oneEachWay(a) || !oneEachWay(b) {
		t.Fatalf("after a duplicate dial: A %d peers, B %d peers", a.peerCount(), b.peerCount())
	}
	for _, tn := range []*tnode{a, b} {
		asked := 0
		tn.s.sync.mu.Lock()
		for ps := range tn.s.sync.peers {
			if ps.pushFrom {
				asked++
			}
		}
		tn.s.sync.mu.Unlock()
		if asked != 1 {
			t.Errorf("%s asked %d connections to push blocks, for one node", tn.name, asked)
		}
	}
}
