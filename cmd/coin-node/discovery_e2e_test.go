package main

import (
	"errors"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/jsonrpc"
	"github.com/cointoolkit/coin/lib/reason"
	"github.com/cointoolkit/coin/lib/rpcapi"
)

// startWith runs the node with these flags (besides the test's log level) and waits for
// its RPC server.
func (p *proc) startWith(flags ...string) *proc {
	t := p.t
	t.Helper()
	p.Extra = append(append([]string{"--log-level", "debug"}, p.flags...), flags...)
	p.Start(t)
	out := p.Proc.Out
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("---- %s ----\n%s", p.name, out.Tail(150))
		}
	})
	return p
}

// noDial makes the node dial nobody (--max-peers 0) on every start: the hub of a fixed
// topology, which would otherwise connect to the addresses it learns through gossip.
func (p *proc) noDial() *proc {
	p.flags = append(p.flags, "--max-peers", "0")
	return p
}

// peerAddrs lists the remote addresses of p's peers.
func (p *proc) peerAddrs() []string {
	var pi rpcapi.PeerInfo
	if err := p.RPC.Call(bg, "getpeerinfo", nil, &pi); err != nil {
		return nil
	}
	var out []string
	for _, x := range pi.Peers {
		out = append(out, x.Addr)
	}
	return out
}

func rpcCode(err error) int {
	var je *jsonrpc.Error
	if errors.As(err, &je) {
		return je.Code
	}
	return 0
}

// TestE2EDiscovery: three coin-node processes on loopback. A knows nobody; B keeps A with
// --addnode (and announces its own address to A); C knows only --seednode A: it asks A
// for addresses, leaves it, and connects to B, which it learned through gossip. Then the
// address RPCs: getaddednodeinfo, addnode add/remove/onetry and getnodeaddresses.
func TestE2EDiscovery(t *testing.T) {
	a := newProc(t, "A").startWith("--max-peers", "0")
	// A and B make no connection besides B's added node, so C is the one that dials.
	b := newProc(t, "B").startWith("--addnode", a.P2PAddr(), "--max-peers", "0")
	waitUntil(t, 10*time.Second, "B connected to A", func() bool { return a.peers() == 1 && b.peers() == 1 })
	c := newProc(t, "C").startWith("--seednode", a.P2PAddr(), "--dnsseed=false")
	waitUntil(t, 20*time.Second, "C connected to B, learned from A", func() bool {
		for _, x := range c.peerAddrs() {
			if x == b.P2PAddr() {
				return true
			}
		}
		return false
	})
	waitUntil(t, 10*time.Second, "C left the seed node", func() bool { return strings.Contains(c.log(), "seed node answered; disconnecting") })

	var addrs []rpcapi.NodeAddress
	if err := c.RPC.Call(bg, "getnodeaddresses", []any{0}, &addrs); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, x := range addrs {
		if x.Address == "127.0.0.1" && strconv.Itoa(int(x.Port)) == strconv.Itoa(b.P2PPort) && x.Network == "ipv4" && x.Services == 1 && x.Time > 0 {
			found = true
		}
	}
	if !found {
		t.Fatalf("C's getnodeaddresses lacks B (%s): %+v", b.P2PAddr(), addrs)
	}

	var info []rpcapi.AddedNodeInfo
	if err := b.RPC.Call(bg, "getaddednodeinfo", nil, &info); err != nil {
		t.Fatal(err)
	}
	if len(info) != 1 || info[0].AddedNode != a.P2PAddr() || !info[0].Connected ||
		len(info[0].Addresses) != 1 || info[0].Addresses[0].Connected != "outbound" {
		t.Fatalf("B's getaddednodeinfo: %+v", info)
	}
	// Core's codes, with our reason kinds as data.reason.
	if err := b.RPC.Call(bg, "addnode", []any{a.P2PAddr(), "add"}, nil); rpcCode(err) != -23 || !errors.Is(rpcapi.DecodeError(err), reason.NodeAlreadyAdded) {
		t.Fatalf("adding A twice: %v", err)
	}
	if err := b.RPC.Call(bg, "addnode", []any{a.P2PAddr(), "remove"}, nil); err != nil {
		t.Fatal(err)
	}
	if err := b.RPC.Call(bg, "getaddednodeinfo", []any{a.P2PAddr()}, &info); rpcCode(err) != -24 || !errors.Is(rpcapi.DecodeError(err), reason.NodeNotAdded) {
		t.Fatalf("getaddednodeinfo of a removed node: %v", err)
	}
	if err := b.RPC.Call(bg, "addnode", []any{a.P2PAddr(), "remove"}, nil); rpcCode(err) != -24 || !errors.Is(rpcapi.DecodeError(err), reason.NodeNotAdded) {
		t.Fatalf("removing A twice: %v", err)
	}
	for _, bad := range [][]any{{a.P2PAddr(), "sometimes"}, {"127.0.0.1:0", "add"}, {"", "add"}} {
		if err := b.RPC.Call(bg, "addnode", bad, nil); rpcCode(err) != jsonrpc.CodeInvalidParams {
			t.Fatalf("addnode %v: %v", bad, err)
		}
	}
	// onetry: D, a node nobody knows, is dialled once from A (whose --max-peers is 0).
	d := newProc(t, "D").startWith("--max-peers", "0")
	if err := a.RPC.Call(bg, "addnode", []any{d.P2PAddr(), "onetry"}, nil); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 10*time.Second, "A connected to D once", func() bool {
		for _, x := range a.peerAddrs() {
			if x == d.P2PAddr() {
				return true
			}
		}
		return false
	})
}

// TestE2EBadPeerFlags: an invalid --addnode or --seednode is a usage error (exit 2) that
// names the flag.
func TestE2EBadPeerFlags(t *testing.T) {
	bin := filepath.Join(bins(t), "coin-node")
	for _, args := range [][]string{{"--addnode", "127.0.0.1:99999"}, {"--seednode", "[::1"}} {
		cmd := exec.Command(bin, append([]string{"--network", "regtest", "--data-dir", t.TempDir()}, args...)...)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(stderr.String(), args[0]) {
			t.Fatalf("%v: %v, stderr %q", args, err, stderr.String())
		}
	}
}
