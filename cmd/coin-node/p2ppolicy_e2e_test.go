package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/reason"
	"github.com/cointoolkit/coin/lib/rpcapi"
)

// End-to-end tests of the peer policy (docs/p2p.md, "Bans and discouragement" and
// "Listening") through the real executables.

// TestE2EStrayRequestBansNoOne is the scenario that once ended a two-node setup: coin-cli
// pointed at the P2P port by mistake (an HTTP request where frames are expected), and a TLS
// hello for good measure. The node closes those connections with a debug line and bans no
// one, so node B, connecting from the same address, still connects and syncs.
func TestE2EStrayRequestBansNoOne(t *testing.T) {
	k := newWallet(t, 21)
	a := newProc(t, "A").noDial().start() // B's only connection: A does not dial B back
	a.generate(5, k.addr)

	ctx, cancel := context.WithTimeout(bg, 20*time.Second)
	defer cancel()
	cli := exec.CommandContext(ctx, filepath.Join(bins(t), "coin-cli"), "--rpc", fmt.Sprintf("http://127.0.0.1:%d", a.P2PPort), "getblockcount")
	out, err := cli.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ctx.Err() != nil {
		t.Fatalf("coin-cli against the P2P port: %v (want a failure, promptly)\n%s", err, out)
	}
	if c, err := net.DialTimeout("tcp", a.P2PAddr(), 5*time.Second); err == nil {
		c.Write([]byte{0x16, 0x03, 0x01, 0x00, 0xa5, 0x01, 0x00, 0x00, 0xa1, 0x03, 0x03, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd})
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := c.Read(make([]byte, 1)); err == nil {
			t.Fatal("the node answered a TLS hello")
		}
		c.Close()
	}
	waitUntil(t, 5*time.Second, "the debug lines", func() bool {
		return strings.Count(a.log(), "closing connection: not our protocol") >= 2
	})

	b := newProc(t, "B").start(a.P2PAddr())
	waitUntil(t, 20*time.Second, "B synced from A", func() bool { return b.height() == 5 && a.peers() == 1 })
	var banned []rpcapi.Banned
	if err := a.RPC.Call(bg, "listbanned", nil, &banned); err != nil || len(banned) != 0 {
		t.Fatalf("listbanned %+v (%v)", banned, err)
	}
	for _, bad := range []string{"peer banned", "peer discouraged", "subnet banned"} {
		if strings.Contains(a.log(), bad) {
			t.Errorf("A's log has %q", bad)
		}
	}
	for _, line := range strings.Split(a.log(), "\n") {
		if strings.Contains(line, "level=WARN") && strings.Contains(line, "sys=p2p") {
			t.Errorf("A warns about a peer: %s", line)
		}
	}
}

// TestE2EManualBans: setban disconnects the subnet's peers at once and refuses them, the ban
// survives a restart in banlist.json, listbanned shows Core's fields, setban remove and
// clearbanned lift bans; errors carry their reasons. Along the way: disconnectnode,
// setnetworkactive, ping, getnettotals, getnetworkinfo and getpeerinfo's Core fields.
func TestE2EManualBans(t *testing.T) {
	k := newWallet(t, 22)
	a := newProc(t, "A").noDial().start() // B's only connection: A does not dial B back
	b := newProc(t, "B").start(a.P2PAddr())
	waitUntil(t, 10*time.Second, "A and B connected", func() bool { return a.peers() == 1 && b.peers() == 1 })
	a.generate(1, k.addr)
	waitUntil(t, 10*time.Second, "B at height 1", func() bool { return b.height() == 1 })

	// getpeerinfo's Core fields, ping, getnettotals, getnetworkinfo.
	if err := a.RPC.Call(bg, "ping", nil, nil); err != nil {
		t.Fatal(err)
	}
	var pi rpcapi.PeerInfo
	waitUntil(t, 10*time.Second, "a ping time", func() bool {
		return a.RPC.Call(bg, "getpeerinfo", nil, &pi) == nil && len(pi.Peers) == 1 && pi.Peers[0].PingTime > 0
	})
	p := pi.Peers[0]
	if !p.Inbound || p.ConnectionType != "inbound" || p.ID == 0 || p.AddrLocal != a.P2PAddr() || p.SubVer == "" ||
		p.MinPing <= 0 || p.BytesRecv == 0 || p.BytesSent == 0 || p.ConnTime == 0 {
		t.Fatalf("getpeerinfo entry %+v", p)
	}
	var pb rpcapi.PeerInfo
	// B's view of A: A's chain is known to B up to the block it sent.
	if err := b.RPC.Call(bg, "getpeerinfo", nil, &pb); err != nil || len(pb.Peers) != 1 || pb.Peers[0].ConnectionType != "manual" ||
		pb.Peers[0].SyncedHeaders != 1 || pb.Peers[0].SyncedBlocks != 1 || pb.Peers[0].Inbound {
		t.Fatalf("B's getpeerinfo %+v (%v)", pb, err)
	}
	var tot rpcapi.NetTotals
	if err := a.RPC.Call(bg, "getnettotals", nil, &tot); err != nil || tot.TotalBytesRecv < p.BytesRecv || tot.TotalBytesSent < p.BytesSent || tot.TimeMillis == 0 {
		t.Fatalf("getnettotals %+v (%v)", tot, err)
	}
	var ni rpcapi.NetworkInfo
	if err := a.RPC.Call(bg, "getnetworkinfo", nil, &ni); err != nil || ni.Connections != 1 || ni.ConnectionsIn != 1 ||
		ni.ConnectionsOut != 0 || !ni.NetworkActive || ni.ProtocolVersion == 0 || ni.SubVersion == "" || ni.RelayFee == "" {
		t.Fatalf("getnetworkinfo %+v (%v)", ni, err)
	}

	// disconnectnode by id: B reconnects (it keeps its --connect peer).
	if err := a.RPC.Call(bg, "disconnectnode", []any{"", p.ID}, nil); err != nil {
		t.Fatal(err)
	}
	if err := a.RPC.Call(bg, "disconnectnode", []any{"127.0.0.1:1"}, nil); !errors.Is(err, reason.NodeNotConnected) {
		t.Fatalf("disconnectnode of no peer: %v", err)
	}
	waitUntil(t, 15*time.Second, "B back with a new id", func() bool {
		return a.RPC.Call(bg, "getpeerinfo", nil, &pi) == nil && len(pi.Peers) == 1 && pi.Peers[0].ID != p.ID
	})

	// setban: B's address (loopback, so never discouraged, but bans are the operator's).
	if err := a.RPC.Call(bg, "setban", []any{"127.0.0.0/8", "add", 3600}, nil); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 5*time.Second, "B disconnected at once", func() bool { return a.peers() == 0 })
	if !strings.Contains(a.log(), `msg="subnet banned" sys=p2p subnet=127.0.0.0/8`) || !strings.Contains(a.log(), "banned by setban") {
		t.Fatal("the ban and the disconnection are not logged")
	}
	if err := a.RPC.Call(bg, "setban", []any{"127.0.0.0/8", "add"}, nil); !errors.Is(err, reason.AlreadyBanned) {
		t.Fatalf("a second setban add: %v", err)
	}
	if err := a.RPC.Call(bg, "setban", []any{"not-an-ip", "add"}, nil); !errors.Is(err, reason.InvalidSubnet) {
		t.Fatalf("setban of a bad subnet: %v", err)
	}
	a.stop()
	a.start()
	var banned []rpcapi.Banned
	if err := a.RPC.Call(bg, "listbanned", nil, &banned); err != nil || len(banned) != 1 {
		t.Fatalf("listbanned after a restart %+v (%v)", banned, err)
	}
	bn := banned[0]
	if bn.Address != "127.0.0.0/8" || bn.BanDuration != 3600 || bn.BannedUntil-bn.BanCreated != 3600 ||
		bn.TimeRemaining <= 3500 || bn.TimeRemaining > 3600 {
		t.Fatalf("listbanned entry %+v", bn)
	}
	time.Sleep(time.Second) // B keeps trying (its backoff is short); none gets through
	if a.peers() != 0 {
		t.Fatal("a banned peer connected")
	}
	if err := a.RPC.Call(bg, "setban", []any{"127.0.0.1", "remove"}, nil); !errors.Is(err, reason.NotBanned) {
		t.Fatalf("remove of a subnet not banned as such: %v", err)
	}
	if err := a.RPC.Call(bg, "setban", []any{"127.0.0.0/8", "remove"}, nil); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 45*time.Second, "B back after the unban (its backoff is at most 30 s)", func() bool { return a.peers() == 1 })
	if err := a.RPC.Call(bg, "setban", []any{"10.1.2.3", "add", 60}, nil); err != nil {
		t.Fatal(err)
	}
	if err := a.RPC.Call(bg, "clearbanned", nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := a.RPC.Call(bg, "listbanned", nil, &banned); err != nil || len(banned) != 0 {
		t.Fatalf("listbanned after clearbanned %+v (%v)", banned, err)
	}

	// setnetworkactive false closes everything and keeps B out; true lets it back.
	var state bool
	if err := a.RPC.Call(bg, "setnetworkactive", []any{false}, &state); err != nil || state {
		t.Fatalf("setnetworkactive false: %v %v", state, err)
	}
	waitUntil(t, 5*time.Second, "no peers", func() bool { return a.peers() == 0 })
	if err := a.RPC.Call(bg, "getnetworkinfo", nil, &ni); err != nil || ni.NetworkActive {
		t.Fatalf("getnetworkinfo %+v (%v)", ni, err)
	}
	if err := a.RPC.Call(bg, "setnetworkactive", []any{true}, &state); err != nil || !state {
		t.Fatalf("setnetworkactive true: %v %v", state, err)
	}
	waitUntil(t, 45*time.Second, "B back", func() bool { return a.peers() == 1 })
}

// TestE2EListening: --listen=false accepts nothing (B cannot connect; getnetworkinfo has
// no local address); --p2p-bind listens where told, --externalip is advertised.
func TestE2EListening(t *testing.T) {
	off := newProc(t, "OFF")
	off.startWith("--listen=false")
	if c, err := net.DialTimeout("tcp", off.P2PAddr(), 2*time.Second); err == nil {
		c.Close()
		t.Fatal("--listen=false accepted a connection")
	}
	var ni rpcapi.NetworkInfo
	if err := off.RPC.Call(bg, "getnetworkinfo", nil, &ni); err != nil || len(ni.LocalAddresses) != 0 {
		t.Fatalf("getnetworkinfo %+v (%v)", ni, err)
	}

	bound := newProc(t, "BOUND")
	bound.startWith("--p2p-bind", "127.0.0.3", "--externalip", "203.0.113.7", "--max-peers", "0") // it does not dial PEER back
	addr := fmt.Sprintf("127.0.0.3:%d", bound.P2PPort)
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		t.Fatalf("--p2p-bind 127.0.0.3: %v", err)
	}
	c.Close()
	if c, err := net.DialTimeout("tcp", bound.P2PAddr(), 2*time.Second); err == nil {
		c.Close()
		t.Fatal("listening on 127.0.0.1 too, though bound to 127.0.0.3 only")
	}
	if err := bound.RPC.Call(bg, "getnetworkinfo", nil, &ni); err != nil || len(ni.LocalAddresses) != 1 ||
		ni.LocalAddresses[0].Address != "203.0.113.7" || int(ni.LocalAddresses[0].Port) != bound.P2PPort {
		t.Fatalf("getnetworkinfo %+v (%v)", ni, err)
	}
	peer := newProc(t, "PEER").start(addr)
	waitUntil(t, 10*time.Second, "a peer through the bound address", func() bool { return peer.peers() == 1 })
}
