package p2p

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/p2p/wire"
	"github.com/cointoolkit/coin/lib/types"
)

// TestUndeliveredHeaderChainAbandoned: a peer sends the valid headers of a chain heavier
// than ours and never its blocks. Within the stall timeout the node gives that chain up from
// that peer and follows the chain its other peer serves and keeps mining on; it is not
// "syncing" (templates refused) while the liar stays connected.
func TestUndeliveredHeaderChainAbandoned(t *testing.T) {
	w := newWallet(43)
	m := startNode(t, "M", quiet(nodeOpts{tweak: noDial}))
	m.mine(w, 20)
	heavy := startNode(t, "S", quiet(nodeOpts{discard: true}))
	heavy.mine(w, wire.MaxHeaders)
	hs := heavy.n.Chain().HeadersAfter(nil, types.ZeroHash, wire.MaxHeaders)
	n := startNode(t, "N", nodeOpts{connect: []string{m.addr()}})
	waitFor(t, 30*time.Second, "N synced with M", func() bool { return n.tip() == m.tip() })

	r, err := dialRaw(t, n.addr(), "")
	if err != nil {
		t.Fatal(err)
	}
	if err := r.handshake(rawVersion(wire.MaxHeaders, 4300)); err != nil {
		t.Fatal(err)
	}
	var asked, askedHeaders atomic.Int64
	go func() { // headers once, then no answer to getheaders; never a block
		for {
			m, err := r.recv(time.Minute)
			if err != nil {
				return
			}
			switch m := m.(type) {
			case *wire.MsgGetHeaders:
				if askedHeaders.Add(1) == 1 {
					r.send(&wire.MsgHeaders{Headers: hs})
				}
			case *wire.MsgGetData:
				asked.Add(int64(len(m.Inv)))
			}
		}
	}()
	waitFor(t, 10*time.Second, "blocks of the heavier chain requested", func() bool { return asked.Load() > 0 })

	for i := 0; i < 3; i++ {
		b := m.mine(w, 1)[0]
		start := time.Now()
		// The stall timeout is 2 s in these tests (startNode).
		waitFor(t, 8*time.Second, "N at M's new block", func() bool { return n.tip() == b.Hash() })
		t.Logf("M's block %d reached N in %s", i, time.Since(start).Round(time.Millisecond))
		waitFor(t, 3*time.Second, "N not syncing", func() bool { return !n.s.Syncing() })
	}
	// The liar is asked for headers again (it claims a greater height) and does not answer:
	// that does not make the node syncing either.
	waitFor(t, 10*time.Second, "headers asked of the liar again", func() bool { return askedHeaders.Load() >= 2 })
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if n.s.Syncing() {
			t.Fatal("syncing again toward the chain nobody delivers")
		}
	}
	if n.peerCount() != 2 {
		t.Fatalf("N has %d peers", n.peerCount())
	}
	if !n.log.Contains("does not deliver") {
		t.Fatal("giving up on the undelivered chain is not logged")
	}
}
