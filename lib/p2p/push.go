package p2p

import (
	"sort"

	"github.com/cointoolkit/coin/lib/chainstate"
	"github.com/cointoolkit/coin/lib/p2p/wire"
	"github.com/cointoolkit/coin/lib/types"
)

// High-bandwidth block relay, after BIP 152's high-bandwidth mode (with whole blocks, not
// compact ones). Announcing a block with `headers` costs three link crossings per hop
// (headers, getdata, block); a block pushed whole costs one. A node asks every outbound
// peer to push new tips to it (`sendblocks`, Push true), and besides up to maxHBPeers
// inbound peers: at first the first to connect, then those that most recently delivered a
// new tip first (BIP 152's rule). So every connection pushes at least toward the node that
// dialled it, and a block crosses most links once: with only BIP 152's 3 peers, a node
// whose 3 did not lie toward a block's miner got it announced, three crossings a hop
// (docs/network.md measured this). Inbound peers cannot take an outbound peer's place. A
// node we have two connections to (one each way) is asked once. A peer that asked us so
// gets each new tip we validated (mined, submitted or received) as a whole `block` message
// right away, unless it is known to have it, and when it is known to have the parent (or to
// be at the parent's height); every other peer gets the `headers` announcement as before,
// so peers that do not know `sendblocks` (they ignore it) relay as before. A pushed block is
// validated once, like any block (download.go, onUnsolicitedBlock), and relayed only after
// it became our tip.

const (
	// maxHBPeers is how many inbound peers a node asks to push blocks to it, besides its
	// outbound peers (BIP 152: 3 peers in all).
	maxHBPeers = 3
	// maxBlockPushes bounds the peers one new tip is pushed to; the others get headers.
	maxBlockPushes = 8
	// freeOffChainPushes is how many unrequested blocks in a row a peer may send that are
	// valid but do not extend our best chain (a race between two miners' blocks) before each
	// further one costs offChainPushScore.
	freeOffChainPushes = 3
	offChainPushScore  = 20
)

// onSendBlocks records whether the peer wants our new tips pushed.
func (s *syncManager) onSendBlocks(ps *peerState, m *wire.MsgSendBlocks) {
	if !s.unrequested(ps, "sendblocks") {
		return
	}
	s.mu.Lock()
	ps.pushTo = m.Push
	s.mu.Unlock()
}

// setHB sends each peer whether it is (now) one of our high-bandwidth peers.
func setHB(on, off []*peerState) {
	for _, ps := range on {
		ps.p.TrySend(&wire.MsgSendBlocks{Push: true})
	}
	for _, ps := range off {
		ps.p.TrySend(&wire.MsgSendBlocks{Push: false})
	}
}

// sameNode reports whether a and b are connections to one node (one each way).
func sameNode(a, b *peerState) bool { return a == b || (a.node != 0 && a.node == b.node) }

// hbIndexLocked is the position in the high-bandwidth list of ps or of the other connection
// to its node (-1: neither): a node is one high-bandwidth peer however many connections
// we have to it, so the 3 slots go to 3 nodes and a loss on one path is covered by two others.
func (s *syncManager) hbIndexLocked(ps *peerState) int {
	for i, h := range s.hb {
		if sameNode(h, ps) {
			return i
		}
	}
	return -1
}

// hbAddLocked makes the inbound peer ps a high-bandwidth peer at the front (first) or back
// of the list; when the list is then too long it drops the last peer. It returns the peer
// dropped, if any. When the other connection to ps's node is in the list already, that one
// stays (moved to the front if first): its node pushes to us on it; when ps's node is an
// outbound peer, nothing changes: it pushes to us already.
func (s *syncManager) hbAddLocked(ps *peerState, first bool) (added bool, dropped *peerState) {
	if s.outboundPushLocked(ps) {
		return false, nil // an outbound peer (or the other connection to its node) pushes already
	}
	if i := s.hbIndexLocked(ps); i >= 0 {
		if first {
			h := s.hb[i]
			copy(s.hb[1:i+1], s.hb[:i])
			s.hb[0] = h
		}
		return false, nil
	}
	if first {
		s.hb = append([]*peerState{ps}, s.hb...)
	} else {
		s.hb = append(s.hb, ps)
	}
	ps.pushFrom = true
	if len(s.hb) <= maxHBPeers {
		return true, nil
	}
	victim := len(s.hb) - 1
	dropped = s.hb[victim]
	dropped.pushFrom = false
	s.hb = append(s.hb[:victim], s.hb[victim+1:]...)
	return dropped != ps, dropped
}

// outboundPushLocked reports whether ps's node pushes to us as an outbound peer: ps is
// outbound, or the other connection to its node is.
func (s *syncManager) outboundPushLocked(ps *peerState) bool {
	if !ps.p.Inbound() {
		return true
	}
	for o := range s.peers {
		if o != ps && !o.p.Inbound() && sameNode(o, ps) {
			return true
		}
	}
	return false
}

// hbConnected asks a newly connected outbound peer to push new tips to us, and an inbound
// one while there is room among the high-bandwidth peers (and its node pushes to us not
// already). An outbound connection to a node whose inbound connection held a slot frees it.
func (s *syncManager) hbConnected(ps *peerState) {
	var on, off []*peerState
	s.mu.Lock()
	if !ps.p.Inbound() {
		ps.pushFrom = true
		on = append(on, ps)
		for i, h := range s.hb {
			if sameNode(h, ps) {
				h.pushFrom = false
				s.hb = append(s.hb[:i], s.hb[i+1:]...)
				off = append(off, h)
				break
			}
		}
	} else if len(s.hb) < maxHBPeers {
		if added, _ := s.hbAddLocked(ps, false); added {
			on = append(on, ps)
		}
	}
	s.mu.Unlock()
	setHB(on, off)
}

// hbGoneLocked forgets a disconnected high-bandwidth peer and takes another connected
// inbound peer in its place (of a node not pushing to us already), which it returns.
func (s *syncManager) hbGoneLocked(ps *peerState) *peerState {
	found := false
	for i, h := range s.hb {
		if h == ps {
			s.hb = append(s.hb[:i], s.hb[i+1:]...)
			found = true
			break
		}
	}
	if !found {
		// An outbound peer gone: the inbound connection from its node, if any, may take a
		// free slot.
		if ps.p.Inbound() || len(s.hb) >= maxHBPeers {
			return nil
		}
		for o := range s.peers {
			if o != ps && sameNode(o, ps) && o.p.Inbound() && !o.pushFrom {
				s.hbAddLocked(o, false)
				return o
			}
		}
		return nil
	}
	var pick *peerState
	for o := range s.peers {
		if o == ps || o.pushFrom || s.hbIndexLocked(o) >= 0 || s.outboundPushLocked(o) {
			continue
		}
		if pick == nil || o.p.ID() < pick.p.ID() { // the longest connected
			pick = o
		}
	}
	if pick != nil {
		s.hbAddLocked(pick, false)
	}
	return pick
}

// hbDelivered notes that ps delivered a block that became our tip before any other peer:
// it becomes (or stays) our first high-bandwidth peer.
func (s *syncManager) hbDelivered(ps *peerState) {
	s.mu.Lock()
	if _, connected := s.peers[ps]; !connected {
		s.mu.Unlock()
		return
	}
	added, dropped := s.hbAddLocked(ps, true)
	s.mu.Unlock()
	var on, off []*peerState
	if added {
		on = append(on, ps)
	}
	if dropped != nil {
		off = append(off, dropped)
	}
	setHB(on, off)
}

// pushTargets splits the peers not known to have the block of n into those it is pushed to
// (they asked for pushes, and have its parent or are at its parent's height; at most
// maxBlockPushes) and those it is announced to. Both sets are then known to have it. A node
// we have two connections to (one each way) gets the block once: on a connection that asked
// for pushes if either did, and not at all when either connection is known to have it.
func (s *syncManager) pushTargets(n *chainstate.BlockNode) (push, announce []*peerState) {
	var parent types.Hash
	if n.Parent != nil {
		parent = n.Parent.Hash
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	has := make(map[uint64]bool)       // nodes known to have the block
	hasParent := make(map[uint64]bool) // nodes known to have its parent
	var cands []*peerState
	for ps := range s.peers {
		if ps.p.KnownBlocks().Has(parent) {
			hasParent[ps.node] = true
		}
		if ps.p.KnownBlocks().Has(n.Hash) {
			has[ps.node] = true
		} else {
			cands = append(cands, ps)
		}
	}
	// Connections that asked for pushes first, so a node's push one is the one used.
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].pushTo && !cands[j].pushTo })
	for _, ps := range cands {
		ps.p.KnownBlocks().Add(n.Hash)
		if ps.node != 0 && has[ps.node] {
			continue
		}
		has[ps.node] = true
		if ps.pushTo && len(push) < maxBlockPushes && ((ps.node != 0 && hasParent[ps.node]) || ps.p.KnownBlocks().Has(parent) || ps.p.Height()+1 >= n.Height) {
			push = append(push, ps)
		} else {
			announce = append(announce, ps)
		}
	}
	return push, announce
}

// offChainPush charges ps for a block it sent unasked that we stored but that is not on our
// best chain; a block that extended it clears the count.
func (s *syncManager) offChainPush(ps *peerState, hash types.Hash) {
	s.mu.Lock()
	ps.offChain++
	n := ps.offChain
	s.mu.Unlock()
	if n > freeOffChainPushes {
		s.misbehave(ps, offChainPushScore, "unrequested block off our best chain "+hash.String())
	}
}

// onMainChain reports whether the stored block n is the tip or one of its ancestors.
func onMainChain(tip, n *chainstate.BlockNode) bool {
	if tip.Height > n.Height+100 { // not a block just stored on our best chain
		return false
	}
	for t := tip; t != nil && t.Height >= n.Height; t = t.Parent {
		if t == n {
			return true
		}
	}
	return false
}
