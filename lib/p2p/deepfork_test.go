package p2p

import (
	"context"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/p2p/wire"
	"github.com/cointoolkit/coin/lib/types"
)

// TestDeepForkResolves: X and Y share a prefix, then each mines alone, Y more than X and
// both more than one headers message (wire.MaxHeaders) past the fork. When Y connects, X
// must fetch Y's headers past its own lighter branch (continuing each getheaders from the
// last header received) and reorganise onto Y's chain, in a bounded number of round trips.
func TestDeepForkResolves(t *testing.T) { testDeepFork(t, false) }

// TestDeepForkResolvesWhileAnotherPeerIsAsked: the same, while another peer of X leaves a
// getheaders unanswered: the follow-up of full answers that bring new headers does not wait
// for it (it would until that peer's headers deadline).
func TestDeepForkResolvesWhileAnotherPeerIsAsked(t *testing.T) { testDeepFork(t, true) }

func testDeepFork(t *testing.T, silentPeer bool) {
	w := newWallet(40)
	x := startNode(t, "X", quiet(nodeOpts{tweak: func(c *Config) { c.HeadersTimeout = time.Minute }}))
	dirY := t.TempDir()
	y := startNode(t, "Y-alone", quiet(nodeOpts{dir: dirY}))
	for _, b := range x.mine(w, 5) {
		if _, err := y.n.SubmitBlock(context.Background(), b); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	x.mine(w, wire.MaxHeaders+50)
	y.mine(w, wire.MaxHeaders+120)
	t.Logf("mined %d blocks in %s", 2*wire.MaxHeaders+170, time.Since(start))
	y.stop()
	wait := 60 * time.Second
	if silentPeer {
		r, err := dialRaw(t, x.addr(), "")
		if err != nil {
			t.Fatal(err)
		}
		if err := r.handshake(rawVersion(10*wire.MaxHeaders, 4000)); err != nil {
			t.Fatal(err)
		}
		for { // X asks it for headers; it never answers
			m, err := r.recv(5 * time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := m.(*wire.MsgGetHeaders); ok {
				break
			}
		}
		wait = 30 * time.Second // within X's headers deadline (a minute)
	}
	y = startNode(t, "Y", quiet(nodeOpts{dir: dirY, connect: []string{x.addr()}}))
	waitFor(t, wait, "X on Y's heavier chain", func() bool { return x.tip() == y.tip() })
	t.Logf("X sent %d getheaders", x.s.sync.headersRequests.Load())
	if n := x.s.sync.headersRequests.Load(); n > 9 {
		t.Fatalf("X sent %d getheaders to resolve a fork of two headers messages", n)
	}
}

// TestRepeatedHeadersBounded: a peer that answers every getheaders with the same full
// headers message of a lighter branch (ignoring the locator) is asked a bounded number of
// times and dropped, not asked forever.
func TestRepeatedHeadersBounded(t *testing.T) {
	w := newWallet(41)
	n := startNode(t, "N", quiet(nodeOpts{}))
	other := startNode(t, "S", quiet(nodeOpts{discard: true}))
	other.mine(w, wire.MaxHeaders)
	n.mine(w, wire.MaxHeaders+10)
	hs := other.n.Chain().HeadersAfter(nil, types.ZeroHash, wire.MaxHeaders)
	if len(hs) != wire.MaxHeaders {
		t.Fatalf("%d headers", len(hs))
	}
	r, err := dialRaw(t, n.addr(), "")
	if err != nil {
		t.Fatal(err)
	}
	if err := r.handshake(rawVersion(5*wire.MaxHeaders, 4100)); err != nil {
		t.Fatal(err)
	}
	asked := 0
	for {
		m, err := r.recv(10 * time.Second)
		if err != nil {
			break // dropped
		}
		if _, ok := m.(*wire.MsgGetHeaders); ok {
			asked++
			if asked > 20 {
				t.Fatalf("asked %d times for headers by a peer that repeats itself", asked)
			}
			if err := r.send(&wire.MsgHeaders{Headers: hs}); err != nil {
				break
			}
		}
	}
	if asked > maxRepeatedHeaders+1 {
		t.Fatalf("asked %d times, want at most %d", asked, maxRepeatedHeaders+1)
	}
	if !n.log.Contains("full headers answers in a row that do not advance") {
		t.Fatal("the drop is not logged")
	}
}
