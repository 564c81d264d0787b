package p2p

import (
	"net/netip"
	"testing"
	"time"

	"github.com/cointoolkit/coin/lib/p2p/wire"
)

// tamperingPeer listens on ip and answers the handshake and getheaders with src's chain, and
// getdata with src's blocks whose coinbase pays one unit less: bodies that do not match their
// headers.
func tamperingPeer(t *testing.T, src *tnode, ip string) string {
	return scriptedPeer(t, src, ip+":0", 43, func(r *rawPeer, m wire.Message) error {
		gd, ok := m.(*wire.MsgGetData)
		if !ok {
			return nil
		}
		for _, iv := range gd.Inv {
			b, err := src.n.Chain().Block(iv.Hash)
			if err != nil {
				continue
			}
			b.Transactions[0].Outputs[0].Value--
			if err := r.send(&wire.MsgBlock{Block: b}); err != nil {
				return err
			}
		}
		return nil
	})
}

// TestTamperedBodiesFetchedElsewhere: a peer that sends blocks whose bodies do not match
// their headers is discouraged; the headers stay in the chain, and the blocks come from an honest
// peer that connects later, without asking for the headers again.
func TestTamperedBodiesFetchedElsewhere(t *testing.T) {
	w := newWallet(12)
	dirA := t.TempDir()
	a := startNode(t, "A", quiet(nodeOpts{dir: dirA}))
	a.mine(w, 50)
	tip := a.tip()
	liar := tamperingPeer(t, a, "127.0.0.2")
	l := startNode(t, "L", nodeOpts{connect: []string{liar}, hostileLoopback: true})
	waitFor(t, 10*time.Second, "the liar discouraged", func() bool {
		return l.s.bans.Discouraged(netip.MustParseAddr("127.0.0.2"))
	})
	if !l.log.Contains("invalid block from peer") {
		t.Fatal("no block from the liar was refused")
	}
	if st := l.n.Chain().HeaderState(tip); st.Node == nil || st.HaveBlock || st.Invalid {
		t.Fatalf("the liar's headers after the ban: %+v", st)
	}
	a.stop()
	a = startNode(t, "A-again", quiet(nodeOpts{dir: dirA, connect: []string{l.addr()}}))
	waitFor(t, 30*time.Second, "L synced from the honest peer", func() bool { return l.tip() == tip })
	if n, _ := l.n.Chain().HeaderCount(); n != 0 {
		t.Fatalf("%d header-only nodes left after the sync", n)
	}
}
