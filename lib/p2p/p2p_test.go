package p2p

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/p2p/wire"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/types"
)

func quiet(o nodeOpts) nodeOpts { o.quiet = true; return o }

// blocksByPeer is how many requested blocks each peer delivered.
func (s *Server) blocksByPeer() map[string]int {
	s.sync.mu.Lock()
	defer s.sync.mu.Unlock()
	out := make(map[string]int)
	for ps := range s.sync.peers {
		out[ps.p.Addr()] = ps.blocks
	}
	return out
}

func inPool(tn *tnode, id types.Hash) bool {
	_, ok := tn.n.Mempool().Get(id)
	return ok
}

func TestLineRelay(t *testing.T) {
	w := newWallet(1)
	// A makes no outbound connection: it would learn C's address through B (gossip) and
	// dial it, and the relay under test is along the line.
	a := startNode(t, "A", nodeOpts{tweak: func(c *Config) { c.MaxOutbound = -1 }})
	b := startNode(t, "B", nodeOpts{connect: []string{a.addr()}})
	c := startNode(t, "C", nodeOpts{connect: []string{b.addr()}})
	waitFor(t, 5*time.Second, "A-B-C connected", func() bool {
		return a.peerCount() == 1 && b.peerCount() == 2 && c.peerCount() == 1
	})
	blocks := a.mine(w, 101)
	waitFor(t, 30*time.Second, "C at A's tip", func() bool { return c.tip() == a.tip() })

	tx := w.spend(blocks[0].Transactions[0], 0, 10_000)
	start := time.Now()
	if _, err := c.n.SubmitTransaction(context.Background(), tx); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "the transaction at A", func() bool { return inPool(a, tx.TxID()) })
	if d := time.Since(start); d > time.Second {
		t.Fatalf("C to A through B took %s", d)
	}
	if !inPool(b, tx.TxID()) {
		t.Fatal("the transaction skipped B")
	}
	blk := a.mine(w, 1)[0]
	if len(blk.Transactions) != 2 || blk.Transactions[1].TxID() != tx.TxID() {
		t.Fatalf("A's block has %d transactions", len(blk.Transactions))
	}
	waitFor(t, 5*time.Second, "the block at C", func() bool { return c.tip() == blk.Hash() })
	if _, err := c.n.Chain().TxLocation(tx.TxID()); err != nil || inPool(c, tx.TxID()) {
		t.Fatalf("C: tx confirmed %v, in mempool %v", err, inPool(c, tx.TxID()))
	}
	if c.s.Syncing() || a.s.Syncing() {
		t.Fatal("syncing after convergence")
	}
}

func TestSyncFromTwoPeers(t *testing.T) {
	w := newWallet(2)
	a := startNode(t, "A", quiet(nodeOpts{tweak: noDial}))
	blocks := a.mine(w, 110)
	ops := a.mineAgentOps(w, "sync", blocks[0].Transactions[0], blocks[1].Transactions[0], blocks[2].Transactions[0])
	a.mine(w, 600-110-len(ops))
	b := startNode(t, "B", quiet(nodeOpts{connect: []string{a.addr()}}))
	waitFor(t, 60*time.Second, "B synced", func() bool { return b.tip() == a.tip() })
	l := startNode(t, "L", quiet(nodeOpts{connect: []string{a.addr(), b.addr()}}))
	sawSyncing := false
	waitFor(t, 60*time.Second, "L synced", func() bool {
		sawSyncing = sawSyncing || l.s.Syncing()
		return l.tip() == a.tip()
	})
	if !sawSyncing {
		t.Error("Syncing() was never true while L was behind")
	}
	waitFor(t, 5*time.Second, "L not syncing", func() bool { return !l.s.Syncing() })
	counts := l.s.blocksByPeer()
	if len(counts) != 2 {
		t.Fatalf("L has %d peers", len(counts))
	}
	// The second peer finishes its handshake a moment after the first, and a sync written in
	// bulk takes only tens of milliseconds, so the shares are uneven; each peer must still
	// have served a good part of the chain.
	for addr, n := range counts {
		if n < 40 {
			t.Errorf("peer %s served %d of 600 blocks: the download was not spread", addr, n)
		}
	}
	ia, _ := a.n.Chain().UtxoSetInfo(context.Background())
	il, _ := l.n.Chain().UtxoSetInfo(context.Background())
	if ia.Hash != il.Hash || ia.Height != 600 {
		t.Fatalf("utxo sets differ: %+v / %+v", ia, il)
	}
	if ca, cl := a.conductInfo(), l.conductInfo(); ca != cl || ca.Height != 600 || ca.Agents != 2 {
		t.Fatalf("conduct states differ (or miss the two agents): %+v / %+v", ca, cl)
	}
	if !l.log.Contains("sync: caught up") {
		t.Error("no log line for the end of the sync")
	}
}

// scriptedPeer listens on addr ("127.0.0.1:0" or another loopback address) and plays a
// peer that shakes hands with nonce, serves getheaders from src's chain, and passes every
// other message to handle. It returns the address it listens on.
func scriptedPeer(t *testing.T, src *tnode, addr string, nonce uint64, handle func(r *rawPeer, m wire.Message) error) string {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("cannot listen on %s (loopback aliases are a Linux feature): %v", addr, err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := &rawPeer{t: t, c: c, br: bufio.NewReader(c)}
				if _, err := r.recv(5 * time.Second); err != nil {
					return
				}
				r.send(rawVersion(src.height(), nonce))
				r.send(&wire.MsgVerack{})
				for {
					m, err := r.recv(30 * time.Second)
					if err != nil {
						return
					}
					if gh, ok := m.(*wire.MsgGetHeaders); ok {
						r.send(&wire.MsgHeaders{Headers: src.n.Chain().HeadersAfter(gh.Locator, gh.Stop, wire.MaxHeaders)})
					} else if handle(r, m) != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// fakePeer answers the handshake and getheaders with src's chain, and never sends a block:
// a staller.
func fakePeer(t *testing.T, src *tnode) string {
	return scriptedPeer(t, src, "127.0.0.1:0", 42, func(*rawPeer, wire.Message) error { return nil })
}

func TestStalledPeerReplaced(t *testing.T) {
	w := newWallet(3)
	a := startNode(t, "A", quiet(nodeOpts{}))
	a.mine(w, 200)
	staller := fakePeer(t, a)
	l := startNode(t, "L", nodeOpts{connect: []string{staller, a.addr()}, tweak: func(c *Config) {
		c.StallTimeout = 300 * time.Millisecond
	}})
	waitFor(t, 60*time.Second, "L synced despite the staller", func() bool { return l.tip() == a.tip() })
	if !l.log.Contains("stalling the block download") {
		t.Fatal("the staller was not dropped for stalling")
	}
}

// TestHostilePeers: bytes that are not our protocol, another network and frame errors
// close the connection and nothing more; consensus-invalid data and floods discourage the
// address (loopback's exemption is off here, so that 127.0.0.x can play the attackers).
// Nothing is ever banned: bans are manual.
func TestHostilePeers(t *testing.T) {
	w := newWallet(4)
	n := startNode(t, "N", nodeOpts{hostileLoopback: true, tweak: noDial})
	h := startNode(t, "H", nodeOpts{connect: []string{n.addr()}})
	blocks := n.mine(w, 101)
	waitFor(t, 30*time.Second, "H synced", func() bool { return h.tip() == n.tip() })

	ipN := 10
	type scenario struct {
		name       string
		handshake  bool
		attack     func(r *rawPeer)
		discourage bool
		log        string
	}
	randHash := func() types.Hash {
		var h types.Hash
		rand.Read(h[:])
		return h
	}
	scenarios := []scenario{
		{name: "garbage", attack: func(r *rawPeer) { r.write([]byte("GET / HTTP/1.1\r\nHost: coin\r\n\r\n")) }, log: "closing connection: not our protocol"},
		{name: "TLS hello", attack: func(r *rawPeer) {
			r.write(append([]byte{0x16, 0x03, 0x01, 0x00, 0xa5, 0x01, 0x00, 0x00, 0xa1, 0x03, 0x03}, make([]byte, 32)...))
		}, log: "closing connection: not our protocol"},
		{name: "wrong magic", attack: func(r *rawPeer) {
			v := rawVersion(0, 7)
			v.Magic = params.Testnet.Magic
			r.write(wire.Encode(params.Testnet.Magic, v))
		}, log: "closing connection: not our protocol"},
		{name: "wrong network in version", attack: func(r *rawPeer) {
			v := rawVersion(0, 7)
			v.Magic = params.Mainnet.Magic
			r.send(v)
		}, log: "wrong network"},
		{name: "wrong genesis", attack: func(r *rawPeer) {
			v := rawVersion(0, 7)
			v.Genesis = params.Mainnet.GenesisHash
			r.send(v)
		}, log: "wrong genesis hash"},
		{name: "old protocol", attack: func(r *rawPeer) {
			v := rawVersion(0, 7)
			v.ProtocolVersion = 0
			r.send(v)
		}, log: "old protocol version"},
		{name: "bad checksum", handshake: true, attack: func(r *rawPeer) {
			f := wire.Encode(params.Regtest.Magic, &wire.MsgPing{Nonce: 5})
			f[20] ^= 0xff
			r.write(f)
		}},
		{name: "huge length", handshake: true, attack: func(r *rawPeer) {
			f := wire.Encode(params.Regtest.Magic, &wire.MsgPing{Nonce: 5})
			binary.LittleEndian.PutUint32(f[16:20], 0xfffffff0)
			r.write(f[:wire.HeaderSize])
		}},
		{name: "malformed payload", handshake: true, attack: func(r *rawPeer) {
			r.write(wire.EncodeFrameRaw(params.Regtest.Magic, wire.CmdInv, append([]byte{1, 9}, make([]byte, 32)...)))
		}},
		{name: "headers not chaining", handshake: true, attack: func(r *rawPeer) {
			g := params.Regtest.GenesisBlock().Header
			r.send(&wire.MsgHeaders{Headers: []types.BlockHeader{g, g}})
		}, discourage: true},
		{name: "invalid block", handshake: true, attack: func(r *rawPeer) {
			b := n.nextBlock(w)
			b.Transactions[0].Outputs[0].Value += 1 // pays more than subsidy + fees
			b.Header.MerkleRoot = types.MerkleRoot(b.TxIDs())
			if err := types.SolveBlock(b, 1<<32); err != nil {
				t.Fatal(err)
			}
			r.send(&wire.MsgBlock{Block: b})
		}, discourage: true},
		{name: "invalid transaction", handshake: true, attack: func(r *rawPeer) {
			tx := w.spend(blocks[1].Transactions[0], 0, 10_000)
			tx.Inputs[0].Signature[0] ^= 1
			r.send(&wire.MsgTx{Tx: tx})
		}, discourage: true},
		{name: "flood of unrequested inv", handshake: true, attack: func(r *rawPeer) {
			for i := 0; i < 1000; i++ {
				if r.send(&wire.MsgInv{Inv: []wire.InvVect{{Type: wire.InvTx, Hash: randHash()}}}) != nil {
					return
				}
			}
		}, discourage: true},
	}
	for _, sc := range scenarios {
		ipN++
		src := fmt.Sprintf("127.0.0.%d", ipN)
		r, err := dialRaw(t, n.addr(), src)
		if err != nil {
			t.Skipf("cannot dial from %s (loopback aliases are a Linux feature): %v", src, err)
		}
		if sc.handshake {
			if err := r.handshake(rawVersion(0, uint64(1000+ipN))); err != nil {
				t.Fatalf("%s: handshake: %v", sc.name, err)
			}
		}
		sc.attack(r)
		if !r.closed(10 * time.Second) {
			t.Fatalf("%s: the node did not drop the peer", sc.name)
		}
		ip := netip.MustParseAddr(src)
		waitFor(t, 2*time.Second, sc.name+": the verdict", func() bool {
			return n.s.bans.Discouraged(ip) == sc.discourage
		})
		if _, banned := n.s.bans.Banned(ip); banned {
			t.Fatalf("%s: banned", sc.name)
		}
		// The address may connect again: discouraged ones take free slots.
		r2, err := dialRaw(t, n.addr(), src)
		if err != nil {
			t.Fatal(err)
		}
		if err := r2.handshake(rawVersion(0, uint64(2000+ipN))); err != nil {
			t.Fatalf("%s: reconnect refused: %v", sc.name, err)
		}
		r2.c.Close()
		if sc.log != "" && !n.log.Contains(sc.log) {
			t.Fatalf("%s: no log line with %q", sc.name, sc.log)
		}
	}
	// The node kept serving its honest peer throughout.
	if h.peerCount() != 1 {
		t.Fatalf("H has %d peers", h.peerCount())
	}
	n.mine(w, 1)
	waitFor(t, 10*time.Second, "H still served", func() bool { return h.tip() == n.tip() })
	if n.s.bans.Discouraged(netip.MustParseAddr("127.0.0.1")) {
		t.Fatal("the honest peer's address was discouraged")
	}
	if !strings.Contains(n.log.String(), "level=INFO msg=\"peer discouraged\"") {
		t.Fatal("no discouragement log line at info")
	}
	// Discouragement lives in memory only: nothing is written, and a restart forgets it.
	n.stop()
	if raw, err := os.ReadFile(filepath.Join(n.dir, "banlist.json")); err == nil && strings.Contains(string(raw), "127.0.0") {
		t.Fatalf("discouragement persisted: %s", raw)
	}
	if raw, _ := os.ReadFile(filepath.Join(n.dir, "peers.json")); strings.Contains(string(raw), "bans") {
		t.Fatalf("peers.json holds bans: %s", raw)
	}
}

func TestSelfConnection(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	n := startNode(t, "N", nodeOpts{listen: addr, connect: []string{addr}})
	waitFor(t, 5*time.Second, "the self-connection log line", func() bool { return n.log.Contains("peer rejected: self-connection") })
	time.Sleep(500 * time.Millisecond)
	if got := strings.Count(n.log.String(), "peer rejected: self-connection"); got > 2 {
		t.Fatalf("dialled itself %d times", got)
	}
	if n.peerCount() != 0 {
		t.Fatal("connected to itself")
	}
}

func TestOrphans(t *testing.T) {
	w := newWallet(5)
	n := startNode(t, "N", nodeOpts{})
	blocks := n.mine(w, 101)
	r, err := dialRaw(t, n.addr(), "")
	if err != nil {
		t.Fatal(err)
	}
	if err := r.handshake(rawVersion(0, 77)); err != nil {
		t.Fatal(err)
	}
	parent := w.spend(blocks[0].Transactions[0], 0, 10_000)
	child := w.spend(parent, 0, 10_000)
	r.send(&wire.MsgTx{Tx: child})
	waitFor(t, 5*time.Second, "the child in the orphan pool", func() bool {
		n.s.sync.txMu.Lock()
		defer n.s.sync.txMu.Unlock()
		return n.s.sync.orphanTxs.has(child.TxID())
	})
	r.send(&wire.MsgTx{Tx: parent})
	waitFor(t, 5*time.Second, "parent and child in the mempool", func() bool {
		return inPool(n, parent.TxID()) && inPool(n, child.TxID())
	})

	// A block whose parent is missing waits for it.
	b1 := n.nextBlock(w)
	b2 := types.NewBlock(types.BlockSpec{Parent: b1.Hash(), Height: 103, Target: params.Regtest.PowLimitBits,
		Timestamp: b1.Header.Timestamp + 1, PayTo: w.pkh, Reward: consensus.Subsidy(103)})
	if err := types.SolveBlock(b2, 1<<32); err != nil {
		t.Fatal(err)
	}
	r.send(&wire.MsgBlock{Block: b2})
	waitFor(t, 5*time.Second, "the orphan block held", func() bool {
		n.s.sync.mu.Lock()
		defer n.s.sync.mu.Unlock()
		return n.s.sync.orphanBlocks.len() == 1
	})
	r.send(&wire.MsgBlock{Block: b1})
	waitFor(t, 5*time.Second, "both blocks connected", func() bool { return n.tip() == b2.Hash() })
	if inPool(n, child.TxID()) {
		t.Fatal("mined transactions still in the mempool")
	}
}

// TestReorgAcrossNetwork partitions two miners, lets the other side mine more, and heals.
func TestReorgAcrossNetwork(t *testing.T) {
	w := newWallet(6)
	dirY := t.TempDir()
	x := startNode(t, "X", nodeOpts{})
	blocks := x.mine(w, 110)
	y := startNode(t, "Y", nodeOpts{dir: dirY, connect: []string{x.addr()}})
	waitFor(t, 30*time.Second, "Y synced", func() bool { return y.tip() == x.tip() })
	y.stop()

	// Partition: Y runs alone (no outbound at all), mines a transaction; X mines more.
	y = startNode(t, "Y-alone", nodeOpts{dir: dirY, tweak: func(c *Config) { c.MaxOutbound = -1 }})
	tx := w.spend(blocks[0].Transactions[0], 0, 10_000)
	if _, err := y.n.SubmitTransaction(context.Background(), tx); err != nil {
		t.Fatal(err)
	}
	y.mine(w, 2)
	// Each side runs its own round of agent operations; X's branch has more work.
	cb := func(i int) *types.Transaction { return blocks[i].Transactions[0] }
	y.mineAgentOps(w, "y", cb(1), cb(2), cb(3))
	x.mineAgentOps(w, "x", cb(4), cb(5), cb(6))
	x.mine(w, 4)
	if x.peerCount() != 0 || inPool(y, tx.TxID()) {
		t.Fatal("not partitioned")
	}
	if cx, cy := x.conductInfo(), y.conductInfo(); cx.Hash == cy.Hash || cx.Agents != 2 || cy.Agents != 2 {
		t.Fatalf("the partitioned sides' conduct states: X %+v, Y %+v", cx, cy)
	}
	y.stop()

	// Heal.
	y = startNode(t, "Y-healed", nodeOpts{dir: dirY, connect: []string{x.addr()}})
	waitFor(t, 30*time.Second, "Y on X's chain", func() bool { return y.tip() == x.tip() })
	// Y's agents are undone: its conduct state is X's.
	if cx, cy := x.conductInfo(), y.conductInfo(); cx != cy {
		t.Fatalf("conduct states differ after the reorg: X %+v, Y %+v", cx, cy)
	}
	if _, ok, err := y.n.Chain().Conduct().Agent(w.gen.Wallet("y-a").PKH); ok || err != nil {
		t.Fatalf("Y's agent of the losing branch is still registered (%v)", err)
	}
	waitFor(t, 5*time.Second, "the losing branch's transaction back in Y's mempool", func() bool { return inPool(y, tx.TxID()) })
	waitFor(t, 5*time.Second, "the returned transaction relayed to X", func() bool { return inPool(x, tx.TxID()) })
	blk := x.mine(w, 1)[0]
	waitFor(t, 5*time.Second, "Y at X's new block", func() bool { return y.tip() == blk.Hash() })
	if _, err := y.n.Chain().TxLocation(tx.TxID()); err != nil {
		t.Fatal("the transaction was not mined on the winning chain")
	}
	if cx, cy := x.conductInfo(), y.conductInfo(); cx != cy {
		t.Fatalf("conduct states differ: X %+v, Y %+v", cx, cy)
	}
}

func TestPeersJSONReconnect(t *testing.T) {
	w := newWallet(7)
	a := startNode(t, "A", nodeOpts{tweak: noDial})
	dirB := t.TempDir()
	b := startNode(t, "B", nodeOpts{dir: dirB, connect: []string{a.addr()}})
	waitFor(t, 5*time.Second, "B connected", func() bool { return b.peerCount() == 1 })
	b.stop()
	raw, err := os.ReadFile(filepath.Join(dirB, "peers.json"))
	if err != nil || !strings.Contains(string(raw), a.addr()) {
		t.Fatalf("peers.json: %v\n%s", err, raw)
	}
	b = startNode(t, "B-restarted", nodeOpts{dir: dirB})
	waitFor(t, 10*time.Second, "B reconnected from peers.json", func() bool { return b.peerCount() == 1 })
	// A must have the connection too before it mines, or its announcements may go to no one
	// (and its height in the handshake was 0, so B would have no reason to ask).
	waitFor(t, 10*time.Second, "A sees B again", func() bool { return a.peerCount() == 1 })
	a.mine(w, 3)
	waitFor(t, 10*time.Second, "B synced", func() bool { return b.tip() == a.tip() })
}

func TestInboundLimit(t *testing.T) {
	n := startNode(t, "N", nodeOpts{tweak: func(c *Config) { c.MaxInbound = 2 }})
	for i := 0; i < 2; i++ {
		r, err := dialRaw(t, n.addr(), "")
		if err != nil {
			t.Fatal(err)
		}
		if err := r.handshake(rawVersion(0, uint64(500+i))); err != nil {
			t.Fatal(err)
		}
	}
	r, err := dialRaw(t, n.addr(), "")
	if err != nil {
		t.Fatal(err)
	}
	if !r.closed(5 * time.Second) {
		t.Fatal("a third inbound connection was kept")
	}
	waitFor(t, 5*time.Second, "two peers", func() bool { return n.peerCount() == 2 })
}

// TestSyncingFlag: a peer that claims a higher chain makes the node sync only while it
// fetches; an empty answer ends it.
func TestSyncingFlag(t *testing.T) {
	n := startNode(t, "N", nodeOpts{})
	r, err := dialRaw(t, n.addr(), "")
	if err != nil {
		t.Fatal(err)
	}
	if err := r.handshake(rawVersion(50, 99)); err != nil {
		t.Fatal(err)
	}
	var gh *wire.MsgGetHeaders
	for gh == nil {
		m, err := r.recv(5 * time.Second)
		if err != nil {
			t.Fatal(err)
		}
		gh, _ = m.(*wire.MsgGetHeaders)
	}
	if !n.s.Syncing() {
		t.Fatal("not syncing while headers are requested from a peer that is ahead")
	}
	r.send(&wire.MsgHeaders{})
	waitFor(t, 5*time.Second, "syncing to end", func() bool { return !n.s.Syncing() })
}

// TestTipMovedDuringHandshake: a block connected after the node sent a new peer its version
// message, but before the handshake ended, is announced to that peer once it is connected.
// Before, the block's announcement went to the peers connected at the time only, and the
// peer, told the old height, did not ask: it stayed behind until the next block.
func TestTipMovedDuringHandshake(t *testing.T) {
	w := newWallet(3)
	n := startNode(t, "N", nodeOpts{})
	n.mine(w, 2)
	// The sync manager learns of a new tip after the chain connects it (the version message
	// names the tip it knows): wait for it to know height 2.
	waitFor(t, 10*time.Second, "the sync manager at height 2", func() bool { _, h := n.s.sync.tipNow(); return h == 2 })
	r, err := dialRaw(t, n.addr(), "")
	if err != nil {
		t.Fatal(err)
	}
	if err := r.send(rawVersion(2, 4242)); err != nil {
		t.Fatal(err)
	}
	for gotVersion, gotVerack := false, false; !gotVersion || !gotVerack; {
		m, err := r.recv(10 * time.Second)
		if err != nil {
			t.Fatal(err)
		}
		switch m := m.(type) {
		case *wire.MsgVersion:
			gotVersion = true
			if m.BestHeight != 2 {
				t.Fatalf("version at height %d, want 2", m.BestHeight)
			}
		case *wire.MsgVerack:
			gotVerack = true
		}
	}
	// The handshake waits for our verack: the tip moves meanwhile, and its announcement to
	// the peers connected now goes out (this wait only lets the old code miss it).
	blk := n.mine(w, 1)[0]
	time.Sleep(200 * time.Millisecond)
	if err := r.send(&wire.MsgVerack{}); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; {
		m, err := r.recv(time.Until(deadline))
		if err != nil {
			t.Fatalf("no announcement of the block connected during the handshake: %v", err)
		}
		switch m := m.(type) {
		case *wire.MsgHeaders:
			if len(m.Headers) > 0 && m.Headers[len(m.Headers)-1].Hash() == blk.Hash() {
				return
			}
		case *wire.MsgBlock:
			if m.Block.Hash() == blk.Hash() {
				return
			}
		}
	}
}
