package p2p

import (
	"context"
	"crypto/rand"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/p2p/wire"
	"github.com/cointoolkit/coin/lib/types"
)

// TestTxAnnounceFloodDoesNotBlockRelay: a peer announcing 50,000 random txids and delivering
// none is asked for at most maxPeerTxInflight of them, and transactions from an honest peer
// still reach the node at once.
func TestTxAnnounceFloodDoesNotBlockRelay(t *testing.T) {
	w := newWallet(42)
	n := startNode(t, "N", quiet(nodeOpts{}))
	blocks := n.mine(w, 104)
	h := startNode(t, "H", quiet(nodeOpts{connect: []string{n.addr()}}))
	waitFor(t, 30*time.Second, "H synced", func() bool { return h.tip() == n.tip() })

	r, err := dialRaw(t, n.addr(), "")
	if err != nil {
		t.Fatal(err)
	}
	if err := r.handshake(rawVersion(0, 4200)); err != nil {
		t.Fatal(err)
	}
	inv := make([]wire.InvVect, wire.MaxInv)
	for i := range inv {
		var id types.Hash
		rand.Read(id[:])
		inv[i] = wire.InvVect{Type: wire.InvTx, Hash: id}
	}
	if err := r.send(&wire.MsgInv{Inv: inv}); err != nil {
		t.Fatal(err)
	}
	var asked atomic.Int64
	go func() { // read (and answer pings), deliver nothing
		for {
			m, err := r.recv(time.Minute)
			if err != nil {
				return
			}
			if gd, ok := m.(*wire.MsgGetData); ok {
				asked.Add(int64(len(gd.Inv)))
			}
		}
	}()
	waitFor(t, 10*time.Second, "the flooder asked", func() bool { return asked.Load() > 0 })

	for i := 0; i < 3; i++ {
		tx := w.spend(blocks[i].Transactions[0], 0, 10_000)
		start := time.Now()
		if _, err := h.n.SubmitTransaction(context.Background(), tx); err != nil {
			t.Fatal(err)
		}
		waitFor(t, 5*time.Second, "the honest transaction at N", func() bool { return inPool(n, tx.TxID()) })
		t.Logf("honest transaction %d relayed in %s", i, time.Since(start).Round(time.Millisecond))
	}
	if got := asked.Load(); got > maxPeerTxInflight {
		t.Fatalf("the flooder was asked for %d transactions, want at most %d", got, maxPeerTxInflight)
	}
}

// TestTxRequestsPerPeer: the request tracker's bounds and hand-over, on its own: a peer's
// announcements past maxPeerTxAnnounced are ignored and at most maxPeerTxInflight are in
// flight; a transaction another peer announced too is asked of it once the first answers
// notfound, times out or disconnects.
func TestTxRequestsPerPeer(t *testing.T) {
	now := time.Now()
	tr := newTxRequests()
	a, b := &peerState{}, &peerState{}
	ids := make([]types.Hash, maxPeerTxAnnounced+1000)
	for i := range ids {
		rand.Read(ids[i][:])
	}
	got := tr.announce(a, ids, now)
	if len(got) != maxPeerTxInflight || tr.peers[a].announced != maxPeerTxAnnounced {
		t.Fatalf("asked %d, tracked %d", len(got), tr.peers[a].announced)
	}
	if tr.room(a) != 0 {
		t.Fatalf("room %d after the bound", tr.room(a))
	}
	// b announces three of a's: one in flight from a (b waits as the next announcer), one
	// queued at a and one past a's bound (both asked of b, which has free slots).
	shared := []types.Hash{got[0], ids[maxPeerTxInflight], ids[maxPeerTxAnnounced+1]}
	gotB := tr.announce(b, shared, now)
	if len(gotB) != 2 || gotB[0] != shared[1] || gotB[1] != shared[2] {
		t.Fatalf("b asked for %v", gotB)
	}
	if r, next := tr.failed(a, got[0], now); r == nil || next != b {
		t.Fatalf("after notfound from a: request %v, next %v", r, next)
	}
	if _, ok := tr.requested(b, got[0]); !ok {
		t.Fatal("not in flight from b")
	}
	// Timeouts free a's slots and the next of its queue is asked.
	ended, ask := tr.expire(now.Add(time.Hour), txRequestTimeout)
	if len(ended) != maxPeerTxInflight+2 || len(ask[a]) != maxPeerTxInflight {
		t.Fatalf("expired %d, asked a again for %d", len(ended), len(ask[a]))
	}
	tr.removePeer(a, now)
	tr.removePeer(b, now)
	if len(tr.wants) != 0 || len(tr.peers) != 0 {
		t.Fatalf("%d wants and %d peers left", len(tr.wants), len(tr.peers))
	}
}
