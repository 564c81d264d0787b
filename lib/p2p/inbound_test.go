package p2p

import (
	"net/netip"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/p2p/wire"
)

// Inbound connections from raw TCP clients, each from its own loopback address (all of
// 127.0.0.0/8 is loopback on Linux): the per-address bound, eviction when the inbound slots
// are full, and the ban score of handshake stalls.

// rawFrom dials n from localIP and completes the handshake.
func rawFrom(t *testing.T, n *tnode, localIP string, nonce uint64) *rawPeer {
	t.Helper()
	r, err := dialRaw(t, n.addr(), localIP)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.handshake(rawVersion(0, nonce)); err != nil {
		t.Fatalf("handshake from %s: %v", localIP, err)
	}
	return r
}

// TestInboundPerIP: four connections from one address are served (handshaking or not);
// the fifth is closed at once; another address still gets in.
func TestInboundPerIP(t *testing.T) {
	n := startNode(t, "N", nodeOpts{})
	var rs []*rawPeer
	for i := 0; i < 4; i++ {
		if i < 2 {
			rs = append(rs, rawFrom(t, n, "127.0.9.1", uint64(700+i)))
			continue
		}
		r, err := dialRaw(t, n.addr(), "127.0.9.1") // still handshaking: counts too
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
	}
	waitFor(t, 5*time.Second, "two peers", func() bool { return n.peerCount() == 2 })
	fifth, err := dialRaw(t, n.addr(), "127.0.9.1")
	if err != nil {
		t.Fatal(err)
	}
	if !fifth.closed(2 * time.Second) {
		t.Fatal("a fifth connection from one address was kept")
	}
	if !n.log.Contains("refused inbound connection: too many connections from this address") {
		t.Fatal("the refusal is not logged")
	}
	rawFrom(t, n, "127.0.9.2", 710)
	waitFor(t, 5*time.Second, "the other address's peer", func() bool { return n.peerCount() == 3 })
	for _, r := range rs[:2] {
		if r.closed(100 * time.Millisecond) {
			t.Fatal("an earlier connection was dropped")
		}
	}
	// Once one of the four leaves, the address may connect again.
	rs[0].c.Close()
	waitFor(t, 5*time.Second, "the slot freed", func() bool {
		n.s.cm.mu.Lock()
		defer n.s.cm.mu.Unlock()
		return n.s.cm.inboundIP[netip.MustParseAddr("127.0.9.1")] == 3
	})
	rawFrom(t, n, "127.0.9.1", 711)
}

// TestInboundEviction: with every inbound slot taken, a newcomer evicts the youngest peer
// of the network group with the most connections, sparing the eight oldest peers and the
// one that sent a new block, even when it is the youngest of that group.
func TestInboundEviction(t *testing.T) {
	w := newWallet(31)
	n := startNode(t, "N", nodeOpts{tweak: func(c *Config) { c.MaxInbound = 12 }})
	// The eight oldest, protected by age, in 127.1.0.0/16.
	var old []*rawPeer
	for i := 1; i <= 8; i++ {
		old = append(old, rawFrom(t, n, "127.1.0."+string(rune('0'+i)), uint64(800+i)))
	}
	waitFor(t, 5*time.Second, "8 peers", func() bool { return n.peerCount() == 8 })
	y1 := rawFrom(t, n, "127.3.0.1", 901)
	waitFor(t, 5*time.Second, "9 peers", func() bool { return n.peerCount() == 9 })
	y2 := rawFrom(t, n, "127.3.0.2", 902)
	waitFor(t, 5*time.Second, "10 peers", func() bool { return n.peerCount() == 10 })
	x := rawFrom(t, n, "127.3.0.3", 903)
	waitFor(t, 5*time.Second, "11 peers", func() bool { return n.peerCount() == 11 })
	wp := rawFrom(t, n, "127.4.0.1", 904)
	waitFor(t, 5*time.Second, "12 peers", func() bool { return n.peerCount() == 12 })
	// x sends a new block: it is protected although the youngest of 127.3.0.0/16.
	b := n.nextBlock(w)
	if err := x.send(&wire.MsgBlock{Block: b}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "x's block connected", func() bool { return n.tip() == b.Hash() })

	newcomer := rawFrom(t, n, "127.5.0.1", 905)
	if !y2.closed(3 * time.Second) {
		t.Fatal("y2, the youngest unprotected peer of the largest group, was not evicted")
	}
	for name, r := range map[string]*rawPeer{"x (sent a block)": x, "y1": y1, "w (another group)": wp, "newcomer": newcomer, "oldest": old[0]} {
		if r.closed(100 * time.Millisecond) {
			t.Fatalf("%s was dropped", name)
		}
	}
	if !n.log.Contains("evicting inbound peer to make room") {
		t.Fatal("the eviction is not logged")
	}
	waitFor(t, 5*time.Second, "12 peers again", func() bool { return n.peerCount() == 12 })
}

// TestInboundFullNoEviction: with few inbound peers, all of them protected by age, a
// newcomer is refused rather than evicting anyone.
func TestInboundFullNoEviction(t *testing.T) {
	n := startNode(t, "N", nodeOpts{tweak: func(c *Config) { c.MaxInbound = 3 }})
	var rs []*rawPeer
	for i := 1; i <= 3; i++ {
		rs = append(rs, rawFrom(t, n, "127.6.0."+string(rune('0'+i)), uint64(600+i)))
	}
	waitFor(t, 5*time.Second, "3 peers", func() bool { return n.peerCount() == 3 })
	r, err := dialRaw(t, n.addr(), "127.6.0.9")
	if err != nil {
		t.Fatal(err)
	}
	if !r.closed(2 * time.Second) {
		t.Fatal("a connection beyond MaxInbound was kept")
	}
	for _, r := range rs {
		if r.closed(100 * time.Millisecond) {
			t.Fatal("a protected peer was evicted")
		}
	}
}

// TestHandshakeStallDiscouraged: an address whose connections let the handshake time out
// gains HandshakeStallScore per stall (silent connections and ones that never send verack
// alike), carries it into a later connection, and is discouraged (never banned) at the
// fourth stall.
func TestHandshakeStallDiscouraged(t *testing.T) {
	n := startNode(t, "N", nodeOpts{hostileLoopback: true, tweak: func(c *Config) { c.Peer.HandshakeTimeout = 150 * time.Millisecond }})
	ip := netip.MustParseAddr("127.0.8.1")
	stall := func(sendVersion bool) {
		t.Helper()
		r, err := dialRaw(t, n.addr(), ip.String())
		if err != nil {
			t.Fatal(err)
		}
		if sendVersion {
			r.send(rawVersion(0, 42)) // then never a verack
		}
		if !r.closed(3 * time.Second) {
			t.Fatal("a stalled handshake was not ended")
		}
	}
	stall(false)
	waitFor(t, 2*time.Second, "score 25", func() bool { return n.s.stallScore(ip) == 25 })
	if n.s.bans.Discouraged(ip) {
		t.Fatal("discouraged after one stall")
	}
	stall(true)
	waitFor(t, 2*time.Second, "score 50", func() bool { return n.s.stallScore(ip) == 50 })

	// A connection that completes its handshake starts with the address's score.
	r := rawFrom(t, n, ip.String(), 43)
	waitFor(t, 2*time.Second, "the peer", func() bool { return n.peerCount() == 1 })
	if st := n.s.Peers()[0]; st.BanScore != 50 {
		t.Fatalf("ban score of a peer after two stalls: %d, want 50", st.BanScore)
	}
	r.c.Close()
	waitFor(t, 2*time.Second, "no peer", func() bool { return n.peerCount() == 0 })

	stall(false)
	stall(false)
	waitFor(t, 2*time.Second, "the discouragement", func() bool { return n.s.bans.Discouraged(ip) })
	if _, banned := n.s.bans.Banned(ip); banned || len(n.s.ListBanned()) != 0 {
		t.Fatal("handshake stalls led to a ban")
	}
	if !n.log.Contains("peer stalled the handshake") || !n.log.Contains("peer discouraged") ||
		!n.log.Contains("repeated handshake stalls") {
		t.Fatal("stalls and discouragement are not logged")
	}
	// Another address is not affected.
	rawFrom(t, n, "127.0.8.2", 44)
}

// TestDiscouragedInbound: a discouraged address still gets a free inbound slot, but with
// every slot taken it is refused rather than evicting anyone, and when another newcomer
// needs room, its connection is the one evicted, before any ordinary peer.
func TestDiscouragedInbound(t *testing.T) {
	n := startNode(t, "N", nodeOpts{tweak: func(c *Config) { c.MaxInbound = 10 }})
	bad := netip.MustParseAddr("127.7.0.66")
	n.s.bans.exemptLoopback = false // the node has no peers yet: nothing reads it concurrently
	if !n.s.bans.Discourage(bad, "test", "test") {
		t.Fatal("not discouraged")
	}
	n.s.bans.exemptLoopback = true
	var rs []*rawPeer
	for i := 1; i <= 9; i++ {
		rs = append(rs, rawFrom(t, n, "127.7.0."+string(rune('0'+i)), uint64(500+i)))
	}
	waitFor(t, 5*time.Second, "9 peers", func() bool { return n.peerCount() == 9 })
	d := rawFrom(t, n, bad.String(), 566) // the last free slot
	waitFor(t, 5*time.Second, "10 peers", func() bool { return n.peerCount() == 10 })
	// Full: a second connection from the discouraged address evicts no one.
	d2, err := dialRaw(t, n.addr(), bad.String())
	if err != nil {
		t.Fatal(err)
	}
	if !d2.closed(2 * time.Second) {
		t.Fatal("a discouraged address took a slot when none was free")
	}
	if !n.log.Contains("inbound slots full and the address is discouraged") {
		t.Fatal("the refusal is not logged")
	}
	// An ordinary newcomer evicts the discouraged peer, though the eight oldest would
	// otherwise shield everyone but the ninth.
	newcomer := rawFrom(t, n, "127.8.0.1", 600)
	if !d.closed(3 * time.Second) {
		t.Fatal("the discouraged peer was not evicted first")
	}
	for i, r := range append(rs, newcomer) {
		if r.closed(50 * time.Millisecond) {
			t.Fatalf("peer %d was dropped instead", i)
		}
	}
}
