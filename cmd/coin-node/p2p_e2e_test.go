package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/jsonrpc"
	"github.com/cointoolkit/coin/lib/p2p/wire"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/proctest"
	"github.com/cointoolkit/coin/lib/rpcapi"
	"github.com/cointoolkit/coin/lib/types"
)

// End-to-end tests of the P2P layer: real coin-node processes on loopback, regtest, each with
// a temporary data directory, driven over JSON-RPC.

// proc is one coin-node, named for the test's messages.
type proc struct {
	*proctest.Node
	t     *testing.T
	name  string
	flags []string // given to every start (noDial)
}

// newProc prepares a node named name with its own data dir and ports; start runs it.
func newProc(t *testing.T, name string) *proc {
	return &proc{Node: proctest.NewNode(t, filepath.Join(bins(t), "coin-node")), t: t, name: name}
}

// start runs the node with the given --connect peers and waits for its RPC server.
func (p *proc) start(connect ...string) *proc {
	t := p.t
	t.Helper()
	p.Extra = append([]string{"--log-level", "debug"}, p.flags...)
	for _, c := range connect {
		p.Extra = append(p.Extra, "--connect", c)
	}
	p.Start(t)
	out := p.Proc.Out
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("---- %s ----\n%s", p.name, out.Tail(150))
		}
	})
	return p
}

// stop shuts the node down with SIGTERM and waits for it.
func (p *proc) stop() { p.Proc.Stop(p.t, 20*time.Second) }

func (p *proc) log() string { return p.Proc.Out.String() }

func waitUntil(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// bg is the context of the tests' RPC calls.
var bg = context.Background()

func (p *proc) height() uint64 {
	h, err := p.RPC.GetBlockCount(bg)
	if err != nil {
		return 0
	}
	return h
}

func (p *proc) best() string {
	var s rpcapi.SyncStatus
	if err := p.RPC.Call(bg, "getsyncstatus", nil, &s); err != nil {
		return ""
	}
	return s.BestBlockHash
}

func (p *proc) peers() int {
	var pi rpcapi.PeerInfo
	if err := p.RPC.Call(bg, "getpeerinfo", nil, &pi); err != nil {
		return -1
	}
	return pi.Connected
}

func (p *proc) generate(n int, addr string) []string {
	p.t.Helper()
	hs, err := p.RPC.GenerateToAddress(bg, n, addr)
	if err != nil {
		p.t.Fatalf("%s: generatetoaddress: %v", p.name, err)
	}
	return hs
}

func (p *proc) utxoHash() string {
	p.t.Helper()
	var info rpcapi.TxOutSetInfo
	if err := p.RPC.Call(bg, "gettxoutsetinfo", nil, &info); err != nil {
		p.t.Fatalf("%s: gettxoutsetinfo: %v", p.name, err)
	}
	return info.Hash
}

// conductHash is getconductinfo's hash of the node's conduct state.
func (p *proc) conductHash() string {
	p.t.Helper()
	var info rpcapi.ConductInfo
	if err := p.RPC.Call(bg, "getconductinfo", nil, &info); err != nil {
		p.t.Fatalf("%s: getconductinfo: %v", p.name, err)
	}
	return info.Hash
}

func (p *proc) inMempool(txid string) bool {
	tx, err := p.RPC.GetTransaction(bg, txid)
	return err == nil && tx.InMempool
}

// spendCoinbase builds and signs a transfer of the coinbase of the block blockHash (read
// from p) back to w, paying fee.
func spendCoinbase(t *testing.T, w wallet, p *proc, blockHash string, fee uint64) (*types.Transaction, string) {
	t.Helper()
	b, err := p.RPC.GetBlock(bg, blockHash)
	if err != nil {
		t.Fatal(err)
	}
	var rawHex string
	if err := p.RPC.Call(bg, "getrawtransaction", []any{b.Tx[0]}, &rawHex); err != nil {
		t.Fatal(err)
	}
	raw, _ := hex.DecodeString(rawHex)
	cb, err := types.DecodeTransaction(raw)
	if err != nil {
		t.Fatal(err)
	}
	// The miner's cluster holds the whole supply, so its coinbase decays (protocol §8): pay
	// what it is worth at the next block, less the fee and as much again as it decayed, so
	// that it stays valid if mined some blocks later.
	eff := effectiveValue(t, p, w.addr, types.Outpoint{TxID: cb.TxID()})
	tx := &types.Transaction{Version: 1, Kind: types.KindTransfer,
		Inputs:  []types.TxInput{{PrevTxID: cb.TxID(), PrevIndex: 0}},
		Outputs: []types.TxOutput{{Value: eff - fee - (cb.Outputs[0].Value - eff), PubKeyHash: w.pkh}}}
	types.SignInputs(tx, w.key, params.Regtest.Magic)
	return tx, hex.EncodeToString(tx.Bytes())
}

// effectiveValue is what the node says the output op of addr is worth in the next block.
func effectiveValue(t *testing.T, p *proc, addr string, op types.Outpoint) uint64 {
	t.Helper()
	us, err := p.RPC.GetUtxosByAddress(bg, addr, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range us {
		if u.TxID == op.TxID.String() && u.Index == op.Index {
			return u.EffectiveValue
		}
	}
	t.Fatalf("%s is no unspent output of %s", op, addr)
	return 0
}

// TestE2ELine: three nodes in a line A–B–C. Blocks mined on A reach C; a transaction sent to
// C reaches A through B within a second and A mines it; C, restarted without --connect,
// reconnects from peers.json.
func TestE2ELine(t *testing.T) {
	k := newWallet(t, 10)
	a := newProc(t, "A").noDial().start()
	b := newProc(t, "B").start(a.P2PAddr())
	c := newProc(t, "C").start(b.P2PAddr())
	waitUntil(t, 10*time.Second, "A-B-C connected", func() bool { return a.peers() == 1 && b.peers() == 2 && c.peers() == 1 })

	hashes := a.generate(101, k.addr)
	waitUntil(t, 30*time.Second, "C at height 101", func() bool { return c.best() == hashes[100] })

	tx, txHex := spendCoinbase(t, k, c, hashes[0], 10_000)
	txid := tx.TxID().String()
	start := time.Now()
	if got, err := c.RPC.SendRawTransaction(bg, txHex); err != nil || got != txid {
		t.Fatalf("sendrawtransaction: %v %s", err, got)
	}
	waitUntil(t, 10*time.Second, "the transaction in A's mempool", func() bool { return a.inMempool(txid) })
	if d := time.Since(start); d > time.Second {
		t.Fatalf("the transaction took %s from C to A", d)
	}
	if !b.inMempool(txid) {
		t.Fatal("the transaction did not pass through B")
	}
	mined := a.generate(1, k.addr)
	waitUntil(t, 10*time.Second, "C at A's new block", func() bool { return c.best() == mined[0] })
	got, err := c.RPC.GetTransaction(bg, txid)
	if err != nil || got.InMempool || got.BlockHash != mined[0] {
		t.Fatalf("on C the transaction is %+v (%v)", got, err)
	}
	var info rpcapi.BlockchainInfo
	if err := c.RPC.Call(bg, "getblockchaininfo", nil, &info); err != nil || info.InitialBlockDownload || info.PeerCount != 1 || info.Height != 102 {
		t.Fatalf("getblockchaininfo %+v (%v)", info, err)
	}
	var ni rpcapi.NodeInfo
	if err := b.RPC.Call(bg, "getinfo", nil, &ni); err != nil || ni.Connections != 2 {
		t.Fatalf("getinfo on B %+v (%v)", ni, err)
	}

	// Restart C with no --connect: it reconnects to B from peers.json.
	c.stop()
	raw, err := os.ReadFile(filepath.Join(c.DataDir, "peers.json"))
	if err != nil || !strings.Contains(string(raw), b.P2PAddr()) {
		t.Fatalf("peers.json of C: %v\n%s", err, raw)
	}
	c.start()
	waitUntil(t, 15*time.Second, "C reconnected from peers.json", func() bool { return c.peers() >= 1 })
	more := a.generate(2, k.addr)
	waitUntil(t, 10*time.Second, "the restarted C synced", func() bool { return c.best() == more[1] })
}

// TestE2ELateJoinerSync2000: a node started late syncs 2,000 blocks from two peers and ends
// with the same UTXO set; it reports syncing (and refuses block templates) only meanwhile.
func TestE2ELateJoinerSync2000(t *testing.T) {
	if testing.Short() {
		t.Skip("2,000-block sync skipped in -short mode")
	}
	k := newWallet(t, 11)
	// A dials nobody: two nodes may be connected once each way, so a hub that dialled the
	// addresses it learns would hold a second connection to B.
	a := newProc(t, "A").noDial().start()
	b := newProc(t, "B").start(a.P2PAddr())
	waitUntil(t, 10*time.Second, "A-B connected", func() bool { return a.peers() == 1 })
	hashes := a.generate(2000, k.addr)
	tip := hashes[len(hashes)-1]
	waitUntil(t, 60*time.Second, "B at 2,000", func() bool { return b.best() == tip })

	l := newProc(t, "L")
	start := time.Now()
	l.start(a.P2PAddr(), b.P2PAddr())
	sawSyncing, sawRefusal := false, false
	waitUntil(t, 120*time.Second, "L at 2,000", func() bool {
		st, err := l.RPC.GetSyncStatus(bg)
		if err != nil {
			return false
		}
		if st.Syncing {
			sawSyncing = true
			if !sawRefusal {
				_, err := l.RPC.GetBlockTemplate(bg, k.addr)
				var je *jsonrpc.Error
				sawRefusal = errors.As(err, &je) && strings.Contains(je.Message, "syncing")
			}
		}
		return st.BestBlockHash == tip
	})
	t.Logf("L synced 2,000 blocks from two peers in %s", time.Since(start).Round(time.Millisecond))
	if !sawSyncing || !sawRefusal {
		t.Errorf("during the sync: syncing seen %v, getblocktemplate refused %v", sawSyncing, sawRefusal)
	}
	waitUntil(t, 10*time.Second, "L done syncing", func() bool {
		st, err := l.RPC.GetSyncStatus(bg)
		return err == nil && !st.Syncing
	})
	var info rpcapi.BlockchainInfo
	if err := l.RPC.Call(bg, "getblockchaininfo", nil, &info); err != nil || info.InitialBlockDownload || info.Height != 2000 || info.PeerCount != 2 {
		t.Fatalf("getblockchaininfo %+v (%v)", info, err)
	}
	if _, err := l.RPC.GetBlockTemplate(bg, k.addr); err != nil {
		t.Fatalf("getblocktemplate after the sync: %v", err)
	}
	ha, hb, hl := a.utxoHash(), b.utxoHash(), l.utxoHash()
	if ha != hl || hb != hl {
		t.Fatalf("gettxoutsetinfo hashes differ: A %s B %s L %s", ha, hb, hl)
	}
	if ca, cb, cl := a.conductHash(), b.conductHash(), l.conductHash(); ca != cl || cb != cl {
		t.Fatalf("getconductinfo hashes differ: A %s B %s L %s", ca, cb, cl)
	}
	var pi rpcapi.PeerInfo
	if err := l.RPC.Call(bg, "getpeerinfo", nil, &pi); err != nil || len(pi.Peers) != 2 {
		t.Fatalf("getpeerinfo %+v (%v)", pi, err)
	}
	// Each peer delivered a good part of the blocks: L's log says which peer brought each
	// block it asked for. (Bytes received do not tell: the peer L takes the headers from
	// sends 160 kB more, so that one passed such a bound with no block at all.)
	served := map[string]int{}
	for line := range strings.Lines(l.log()) {
		if !strings.Contains(line, `msg="block received"`) || !strings.Contains(line, "requested=true") {
			continue
		}
		for _, f := range strings.Fields(line) {
			if addr, ok := strings.CutPrefix(f, "peer="); ok {
				served[addr]++
			}
		}
	}
	for _, p := range pi.Peers {
		if n := served[p.Addr]; n < 2000/5 || p.StartingHeight != 2000 {
			t.Errorf("peer %+v delivered %d of 2,000 blocks (want a fifth at least): the download was not spread over both peers", p, n)
		}
	}
	t.Logf("blocks delivered by peer: %v", served)
}

// TestE2EKilledDuringSync: a node catching up keeps connected blocks in its write cache (bulk
// mode); killed with SIGKILL in the middle of a 2,000-block sync it restarts on the state of
// its last write plus the blocks it had stored, and finishes with the same UTXO set.
func TestE2EKilledDuringSync(t *testing.T) {
	if testing.Short() {
		t.Skip("2,000-block sync skipped in -short mode")
	}
	k := newWallet(t, 12)
	a := newProc(t, "A").start()
	tip := a.generate(2000, k.addr)[1999]
	l := newProc(t, "L").start(a.P2PAddr())
	var at uint64
	waitUntil(t, 60*time.Second, "L past height 100", func() bool { at = l.height(); return at >= 100 })
	l.Proc.Kill()
	if at >= 2000 {
		t.Fatal("L synced before the kill; the test needs a slower sync")
	}
	l.start(a.P2PAddr())
	restarted := l.height()
	waitUntil(t, 60*time.Second, "the restarted L at 2,000", func() bool { return l.best() == tip })
	if ha, hl := a.utxoHash(), l.utxoHash(); ha != hl {
		t.Fatalf("gettxoutsetinfo hashes differ after the kill: A %s L %s", ha, hl)
	}
	if ca, cl := a.conductHash(), l.conductHash(); ca != cl {
		t.Fatalf("getconductinfo hashes differ after the kill: A %s L %s", ca, cl)
	}
	t.Logf("killed at height %d or later, restarted at %d, then synced", at, restarted)
}

// TestE2EPartitionHeal: A–B and C–D mine apart (C–D with a transaction), then C reconnects to
// B: every node converges on the most-work chain and the losing side's transaction is back
// in the mempools, then mined.
func TestE2EPartitionHeal(t *testing.T) {
	k := newWallet(t, 12)
	a := newProc(t, "A").noDial().start()
	b := newProc(t, "B").start(a.P2PAddr())
	c := newProc(t, "C").start(b.P2PAddr())
	d := newProc(t, "D").start(c.P2PAddr())
	all := []*proc{a, b, c, d}
	hashes := a.generate(101, k.addr)
	for _, p := range all {
		waitUntil(t, 30*time.Second, p.name+" at 101", func() bool { return p.best() == hashes[100] })
	}

	// Partition: C restarts alone (no --connect, peers.json removed, dialling nobody: it
	// would dial D back, one connection each way); D reconnects to it.
	c.stop()
	os.Remove(filepath.Join(c.DataDir, "peers.json"))
	c.noDial().start()
	waitUntil(t, 20*time.Second, "C-D reconnected", func() bool { return c.peers() == 1 && d.peers() == 1 && b.peers() == 1 })
	tx, txHex := spendCoinbase(t, k, d, hashes[0], 10_000)
	txid := tx.TxID().String()
	if _, err := d.RPC.SendRawTransaction(bg, txHex); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 5*time.Second, "the transaction at C", func() bool { return c.inMempool(txid) })
	lose := c.generate(2, k.addr)
	win := a.generate(4, k.addr)
	waitUntil(t, 10*time.Second, "D on the losing branch", func() bool { return d.best() == lose[1] })
	waitUntil(t, 10*time.Second, "B on the winning branch", func() bool { return b.best() == win[3] })
	if tx, err := d.RPC.GetTransaction(bg, txid); err != nil || tx.BlockHash == "" {
		t.Fatalf("the transaction is not mined on the losing branch: %+v %v", tx, err)
	}

	// Heal: C reconnects to B (dialling again: --max-peers 0 would leave --connect no slot).
	c.stop()
	c.flags = nil
	c.start(b.P2PAddr())
	for _, p := range all {
		waitUntil(t, 30*time.Second, p.name+" on the most-work chain", func() bool { return p.best() == win[3] })
	}
	for _, p := range []*proc{c, d} {
		waitUntil(t, 10*time.Second, "the losing branch's transaction back in "+p.name+"'s mempool", func() bool { return p.inMempool(txid) })
	}
	waitUntil(t, 10*time.Second, "the returned transaction relayed to A", func() bool { return a.inMempool(txid) })
	want, wantConduct := a.utxoHash(), a.conductHash()
	for _, p := range all[1:] {
		if h := p.utxoHash(); h != want {
			t.Fatalf("%s: UTXO set hash %s, A has %s", p.name, h, want)
		}
		if h := p.conductHash(); h != wantConduct {
			t.Fatalf("%s: conduct hash %s, A has %s", p.name, h, wantConduct)
		}
	}
	if !strings.Contains(c.log(), "chain reorganised") || !strings.Contains(d.log(), "chain reorganised") {
		t.Error("no reorganisation logged on the losing side")
	}
	final := a.generate(1, k.addr)
	for _, p := range all {
		waitUntil(t, 10*time.Second, p.name+" at the final block", func() bool { return p.best() == final[0] })
	}
	if tx, err := d.RPC.GetTransaction(bg, txid); err != nil || tx.BlockHash != final[0] {
		t.Fatalf("the transaction was not mined on the winning chain: %+v %v", tx, err)
	}
}

// TestE2EHostilePeer: a raw TCP client sends garbage, then a frame with a huge length
// prefix; each time it is dropped, with nothing more (bytes that are not our protocol ban no
// one: a reconnection from its address completes a handshake), while the node keeps serving
// its honest peer.
func TestE2EHostilePeer(t *testing.T) {
	k := newWallet(t, 13)
	a := newProc(t, "A").noDial().start() // B's only connection: A does not dial B back
	b := newProc(t, "B").start(a.P2PAddr())
	waitUntil(t, 10*time.Second, "A-B connected", func() bool { return a.peers() == 1 })
	attacks := []struct {
		name string
		data []byte
	}{
		{"garbage", bytes.Repeat([]byte{0xde, 0xad, 0xbe, 0xef}, 64)},
		{"huge length prefix", func() []byte {
			f := wire.Encode(params.Regtest.Magic, &wire.MsgVersion{ProtocolVersion: wire.ProtocolVersion,
				Magic: params.Regtest.Magic, Genesis: params.Regtest.GenesisHash, Nonce: 1})
			f[16], f[17], f[18], f[19] = 0xff, 0xff, 0xff, 0x7f
			return f[:wire.HeaderSize]
		}()},
	}
	for i, at := range attacks {
		src := fmt.Sprintf("127.0.0.%d", 2+i)
		conn, err := (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}}).Dial("tcp", a.P2PAddr())
		if err != nil {
			t.Skipf("cannot dial from %s: %v", src, err)
		}
		conn.Write(at.data)
		if !closedWithin(conn, 10*time.Second) {
			t.Fatalf("%s: not dropped", at.name)
		}
		// Reconnect: the address is not banned, the node answers its version.
		conn, err = (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}}).Dial("tcp", a.P2PAddr())
		if err != nil {
			t.Fatal(err)
		}
		conn.Write(wire.Encode(params.Regtest.Magic, &wire.MsgVersion{ProtocolVersion: wire.ProtocolVersion,
			Magic: params.Regtest.Magic, Genesis: params.Regtest.GenesisHash, Nonce: uint64(2 + i)}))
		conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, _, err := wire.ReadFrame(bufio.NewReader(conn), params.Regtest.Magic); err != nil {
			t.Fatalf("%s: the address's next connection got no version: %v", at.name, err)
		}
		conn.Close()
	}
	if strings.Contains(a.log(), "peer banned") || strings.Contains(a.log(), "peer discouraged") {
		t.Fatal("bytes that are not our protocol led to a ban")
	}
	hs := a.generate(3, k.addr)
	waitUntil(t, 10*time.Second, "B still served", func() bool { return b.best() == hs[2] })
	if a.peers() != 1 {
		t.Fatal("the honest peer was dropped")
	}
	a.stop()
	if raw, err := os.ReadFile(filepath.Join(a.DataDir, "banlist.json")); err == nil && strings.Contains(string(raw), "127.0.0") {
		t.Fatalf("bans saved:\n%s", raw)
	}
}

func closedWithin(c net.Conn, d time.Duration) bool {
	c.SetReadDeadline(time.Now().Add(d))
	_, err := io.Copy(io.Discard, c)
	var ne net.Error
	return !(errors.As(err, &ne) && ne.Timeout())
}
