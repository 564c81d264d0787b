package p2p

import (
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/chaingen"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/p2p/wire"
	"github.com/cointoolkit/coin/lib/types"
)

// pushReady reports whether every peer of tn has asked tn to push blocks and tn has asked
// it (both sides of high-bandwidth relay are set up).
func pushReady(tn *tnode) bool {
	s := tn.s.sync
	s.mu.Lock()
	defer s.mu.Unlock()
	for ps := range s.peers {
		if !ps.pushTo || !ps.pushFrom {
			return false
		}
	}
	return len(s.peers) > 0
}

// TestBlockPushLine: on a line A–B–C–D, a block mined on A reaches D pushed whole at each
// hop: one block message per hop, no getdata for a block and no getheaders anywhere (with
// headers announcements it took headers, getdata and block at each hop).
func TestBlockPushLine(t *testing.T) {
	w := newWallet(21)
	a := startNode(t, "A", nodeOpts{tweak: noDial})
	b := startNode(t, "B", nodeOpts{connect: []string{a.addr()}})
	c := startNode(t, "C", nodeOpts{connect: []string{b.addr()}})
	d := startNode(t, "D", nodeOpts{connect: []string{c.addr()}})
	line := []*tnode{a, b, c, d}
	waitFor(t, 10*time.Second, "the line connected, each peer a high-bandwidth one", func() bool {
		return a.peerCount() == 1 && b.peerCount() == 2 && c.peerCount() == 2 && d.peerCount() == 1 &&
			pushReady(a) && pushReady(b) && pushReady(c) && pushReady(d)
	})
	var getheaders [4]int64
	for i, n := range line {
		getheaders[i] = n.s.sync.headersRequests.Load()
	}
	const blocks = 5
	for i := 0; i < blocks; i++ {
		blk := a.mine(w, 1)[0]
		waitFor(t, 10*time.Second, fmt.Sprintf("block %d at D", i+1), func() bool { return d.tip() == blk.Hash() })
	}
	for i, n := range line {
		if got := n.s.sync.blockRequests.Load(); got != 0 {
			t.Errorf("%s asked for %d blocks with getdata, want 0", n.name, got)
		}
		if got := n.s.sync.headersRequests.Load() - getheaders[i]; got != 0 {
			t.Errorf("%s sent %d getheaders, want 0", n.name, got)
		}
	}
	// Each block went once over each link, downstream: A, B and C pushed it once each, D
	// (whose only peer has it) not at all.
	for i, want := range []int64{blocks, blocks, blocks, 0} {
		if got := line[i].s.sync.blocksPushed.Load(); got != want {
			t.Errorf("%s pushed %d blocks, want %d", line[i].name, got, want)
		}
	}
}

// TestBlockPushOldPeerGetsHeaders: a peer that never sent sendblocks (an older node) is
// announced new tips with headers and fetches them with getdata, as before.
func TestBlockPushOldPeerGetsHeaders(t *testing.T) {
	w := newWallet(22)
	n := startNode(t, "N", nodeOpts{tweak: noDial})
	r, err := dialRaw(t, n.addr(), "")
	if err != nil {
		t.Fatal(err)
	}
	if err := r.handshake(rawVersion(0, 4242)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "the peer connected", func() bool { return n.peerCount() == 1 })
	blk := n.mine(w, 1)[0]
	for {
		m, err := r.recv(5 * time.Second)
		if err != nil {
			t.Fatalf("waiting for the announcement: %v", err)
		}
		switch m := m.(type) {
		case *wire.MsgBlock:
			t.Fatal("a block pushed to a peer that did not ask for it")
		case *wire.MsgHeaders:
			if len(m.Headers) == 1 && m.Headers[0].Hash() == blk.Hash() {
				return
			}
		}
	}
}

// TestPushedBlockLimits: an unrequested block is validated like any other: an invalid one
// discourages its sender at once, and valid ones off our best chain are free only a few
// times in a row (freeOffChainPushes), then each costs offChainPushScore until the peer is
// discouraged. Each attacker first asks to be pushed to, as a high-bandwidth peer does.
func TestPushedBlockLimits(t *testing.T) {
	w := newWallet(23)
	n := startNode(t, "N", nodeOpts{hostileLoopback: true})
	gen := n.n.Chain().NextBlock() // a block on genesis, for side blocks later
	n.mine(w, 3)

	connect := func(src string, nonce uint64) *rawPeer {
		t.Helper()
		r, err := dialRaw(t, n.addr(), src)
		if err != nil {
			t.Skipf("cannot dial from %s (loopback aliases are a Linux feature): %v", src, err)
		}
		if err := r.handshake(rawVersion(n.height(), nonce)); err != nil {
			t.Fatal(err)
		}
		if err := r.send(&wire.MsgSendBlocks{Push: true}); err != nil {
			t.Fatal(err)
		}
		return r
	}

	// An invalid block on the tip.
	bad := n.nextBlock(w)
	bad.Transactions[0].Outputs[0].Value++ // pays more than subsidy + fees
	bad.Header.MerkleRoot = types.MerkleRoot(bad.TxIDs())
	if err := types.SolveBlock(bad, 1<<32); err != nil {
		t.Fatal(err)
	}
	r := connect("127.0.0.31", 31)
	r.send(&wire.MsgBlock{Block: bad})
	if !r.closed(10 * time.Second) {
		t.Fatal("an invalid pushed block did not drop its sender")
	}
	waitFor(t, 2*time.Second, "the invalid block's sender discouraged", func() bool {
		return n.s.bans.Discouraged(netip.MustParseAddr("127.0.0.31"))
	})

	// Valid blocks on genesis: stored, but off our best chain.
	reward, _ := consensus.MaxCoinbaseValue(gen.Height, 0, gen.Pool)
	side := func(i int) *types.Block {
		return w.gen.NextOn("", chaingen.Template{Parent: gen.Parent, Height: gen.Height, Target: gen.Target,
			Timestamp: max(uint64(time.Now().Unix()), gen.MinTimestamp), Pool: gen.Pool}, nil,
			chaingen.CoinbaseValue(reward), chaingen.Extra([]byte(fmt.Sprintf("side %d", i))))
	}
	tip := n.tip()
	r = connect("127.0.0.32", 32)
	for i := 0; i < freeOffChainPushes; i++ {
		blk := side(i)
		r.send(&wire.MsgBlock{Block: blk})
		waitFor(t, 5*time.Second, "a side block stored", func() bool { return n.n.Chain().HeaderState(blk.Hash()).HaveBlock })
	}
	if r.closed(200 * time.Millisecond) {
		t.Fatalf("dropped after %d side blocks, the free allowance", freeOffChainPushes)
	}
	for i := freeOffChainPushes; i < freeOffChainPushes+100/offChainPushScore; i++ {
		r.send(&wire.MsgBlock{Block: side(i)})
	}
	if !r.closed(10 * time.Second) {
		t.Fatal("a peer pushing side blocks was not dropped")
	}
	waitFor(t, 2*time.Second, "the side blocks' sender discouraged", func() bool {
		return n.s.bans.Discouraged(netip.MustParseAddr("127.0.0.32"))
	})
	if n.tip() != tip {
		t.Fatal("the tip moved")
	}
}

// TestPushPeersChosen: a node asks every outbound peer to push new blocks to it, and of its
// inbound peers only 3 (BIP 152's high-bandwidth peers), so inbound connections, however
// many, cannot take an outbound peer's place.
func TestPushPeersChosen(t *testing.T) {
	var outs []string
	for i := 0; i < 4; i++ {
		outs = append(outs, startNode(t, fmt.Sprint("O", i), quiet(nodeOpts{tweak: noDial})).addr())
	}
	n := startNode(t, "N", nodeOpts{connect: outs, tweak: func(c *Config) { c.MaxInboundPerIP = -1 }})
	waitFor(t, 10*time.Second, "N connected to its 4 outbound peers", func() bool { return n.peerCount() == 4 })
	asked := make(chan bool, 5)
	for i := 0; i < 5; i++ {
		r, err := dialRaw(t, n.addr(), "")
		if err != nil {
			t.Fatal(err)
		}
		if err := r.handshake(rawVersion(0, uint64(7100+i))); err != nil {
			t.Fatal(err)
		}
		go func() {
			deadline := time.Now().Add(2 * time.Second)
			for time.Now().Before(deadline) {
				m, err := r.recv(time.Until(deadline))
				if err != nil {
					break
				}
				if sb, ok := m.(*wire.MsgSendBlocks); ok && sb.Push {
					asked <- true
					return
				}
			}
			asked <- false
		}()
	}
	inboundAsked := 0
	for i := 0; i < 5; i++ {
		if <-asked {
			inboundAsked++
		}
	}
	if inboundAsked != maxHBPeers {
		t.Errorf("%d of 5 inbound peers asked to push, want %d", inboundAsked, maxHBPeers)
	}
	outboundAsked := 0
	n.s.sync.mu.Lock()
	for ps := range n.s.sync.peers {
		if !ps.p.Inbound() && ps.pushFrom {
			outboundAsked++
		}
	}
	n.s.sync.mu.Unlock()
	if outboundAsked != 4 {
		t.Errorf("%d of 4 outbound peers asked to push, want 4", outboundAsked)
	}
}
