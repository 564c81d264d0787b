package p2p

import (
	"time"

	"github.com/cointoolkit/coin/lib/chainstate"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/p2p/wire"
	"github.com/cointoolkit/coin/lib/types"
)

// Download scheduling. The path is the chain's list of blocks to fetch (the header-only
// ancestors of its best header, lowest first, chainstate.Chain.BlocksToFetch), loaded again
// whenever it may have changed. Blocks of its first Window entries are requested from the
// peers that have them, at most MaxInFlightPerPeer per peer; they arrive in any order into
// received, and the processor (process.go) hands them to the node in path order. Everything
// here is guarded by Server.mu; the chain is never called while holding it.

type blockReq struct {
	ps   *peerState
	node *chainstate.BlockNode
	sent time.Time
}

type recvBlock struct {
	block *types.Block
	node  *chainstate.BlockNode // its entry on the path
	from  *peerState
	size  int
	// verified is closed once the block's signatures were checked ahead of time (nil when
	// the block was not queued for that).
	verified chan struct{}
}

// markPathDirtyLocked notes that the path must be loaded again (refreshPath).
func (s *syncManager) markPathDirtyLocked() {
	s.pathDirty = true
	s.pathGen++
}

// schedule loads the path again when it is stale, then requests blocks.
func (s *syncManager) schedule() {
	s.refreshPath()
	s.mu.Lock()
	s.scheduleLocked()
	s.mu.Unlock()
}

// refreshPath loads the path when it is stale. It is called without s.mu: the chain may be
// busy connecting a block, and peers' messages must not wait for that.
func (s *syncManager) refreshPath() {
	for {
		s.mu.Lock()
		if !s.pathDirty {
			s.mu.Unlock()
			return
		}
		gen := s.pathGen
		s.mu.Unlock()
		bh := s.chain.BestHeader()
		s.mu.Lock()
		target := s.targetLocked(bh)
		s.mu.Unlock()
		path := s.pathToward(target, bh)
		s.mu.Lock()
		if s.pathGen == gen { // else it changed again meanwhile: load it once more
			s.installPathLocked(path)
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
	}
}

// targetLocked is the header the download heads for: of the chain's best header bh and the
// connected peers' best headers with more work than the tip, the one with the most work
// (bh on a tie), leaving out chains a peer was asked for and did not deliver
// (peerState.unavail). So a heavier chain whose blocks nobody delivers does not keep the
// node from the chain another peer serves. Nil: nothing to head for.
func (s *syncManager) targetLocked(bh *chainstate.BlockNode) *chainstate.BlockNode {
	var best *chainstate.BlockNode
	if bh != nil {
		best = bh
		for ps := range s.peers {
			if ps.unavail != nil && extends(bh, ps.unavail) {
				best = nil
				break
			}
		}
	}
	for ps := range s.peers {
		n := ps.best
		if n == nil || (s.tip.node != nil && n.Work.Cmp(s.tip.node.Work) <= 0) || ps.undeliveredLocked() {
			continue
		}
		if best == nil || n.Work.Cmp(best.Work) > 0 {
			best = n
		}
	}
	return best
}

// undeliveredLocked reports whether ps's best header is, or extends, the header whose chain
// it did not deliver.
func (ps *peerState) undeliveredLocked() bool {
	return ps.unavail != nil && ps.best != nil && extends(ps.best, ps.unavail)
}

// extends reports whether n is u or a descendant of it.
func extends(n, u *chainstate.BlockNode) bool {
	for n != nil && n.Height > u.Height {
		n = n.Parent
	}
	return n == u
}

// pathToward lists the blocks to fetch toward target: its ancestors (itself included) whose
// blocks are not stored, lowest first; empty when target is nil, stored, invalid or no
// longer in the chain's index. bh is the chain's best header, whose path the chain lists
// itself.
func (s *syncManager) pathToward(target, bh *chainstate.BlockNode) []*chainstate.BlockNode {
	if target == nil {
		return nil
	}
	if target == bh {
		return s.chain.BlocksToFetch()
	}
	var path []*chainstate.BlockNode
	for n := target; n != nil; n = n.Parent {
		st := s.chain.HeaderState(n.Hash)
		if st.Node != n || st.Invalid {
			return nil
		}
		if st.HaveBlock {
			break
		}
		path = append(path, n)
	}
	for i, j := 0, len(path)-1; i < j; i, j = i+1, j-1 {
		path[i], path[j] = path[j], path[i]
	}
	return path
}

func (s *syncManager) installPathLocked(path []*chainstate.BlockNode) {
	s.pathDirty = false
	s.path = path
	s.best = nil
	if len(path) > 0 {
		s.best = path[len(path)-1]
	}
	for h, rb := range s.received {
		if !s.onPathLocked(rb.node) {
			delete(s.received, h)
			s.receivedBytes -= rb.size
		}
	}
	if len(s.bodyFailures) > 1024 {
		clear(s.bodyFailures)
	}
}

// onPathLocked reports whether n is on the download path.
func (s *syncManager) onPathLocked(n *chainstate.BlockNode) bool {
	if n == nil || len(s.path) == 0 || n.Height < s.path[0].Height {
		return false
	}
	i := n.Height - s.path[0].Height
	return i < uint64(len(s.path)) && s.path[i] == n
}

// servableLocked is how many entries of the path, from the start, ps can be asked for: up to
// its known height, and no further than where its best header leaves our path.
func (s *syncManager) servableLocked(ps *peerState) int {
	base := s.path[0].Height
	ph := ps.p.Height()
	if ph < base {
		return 0
	}
	limit := min(int(ph-base+1), len(s.path))
	n := ps.best
	if n == nil || n.Height < base {
		return limit // its best is below our path: its height says how far it can serve
	}
	for steps := 0; n.Height >= base && steps < 2*s.cfg.Window; steps++ {
		if s.onPathLocked(n) {
			if n == ps.best {
				return limit
			}
			return min(limit, int(n.Height-base+1))
		}
		n = n.Parent
	}
	if n.Height < base {
		return 0 // another branch, forking below our path
	}
	return limit
}

// scheduleLocked requests the blocks of the window that are neither in flight nor received,
// each from the least busy peer that has it. It waits while the path is stale.
func (s *syncManager) scheduleLocked() {
	if s.pathDirty || len(s.path) == 0 || s.ctx == nil || s.ctx.Err() != nil {
		return
	}
	type cand struct {
		ps    *peerState
		limit int
	}
	var cands []cand
	for ps := range s.peers {
		if ps.inflight >= s.cfg.MaxInFlightPerPeer {
			continue
		}
		if l := s.servableLocked(ps); l > 0 {
			cands = append(cands, cand{ps, l})
		}
	}
	if len(cands) == 0 {
		return
	}
	now := time.Now()
	batches := make(map[*peerState][]wire.InvVect)
	window := min(len(s.path), s.cfg.Window)
	for i := 0; i < window; i++ {
		n := s.path[i]
		if s.inflight[n.Hash] != nil || s.received[n.Hash] != nil {
			continue
		}
		if s.receivedBytes > s.cfg.MaxBufferedBytes && i >= 32 {
			break
		}
		if ob := s.orphanBlocks.take(n.Hash); ob != nil {
			s.received[n.Hash] = &recvBlock{block: ob.block, node: n, from: ob.from, size: ob.size, verified: s.preverify(ob.block)}
			s.receivedBytes += ob.size
			s.wakeProcessor()
			continue
		}
		var pick *peerState
		free := false
		for _, c := range cands {
			if c.ps.inflight >= s.cfg.MaxInFlightPerPeer {
				continue
			}
			free = true
			if c.limit <= i || c.ps.notFound.Has(n.Hash) {
				continue
			}
			if pick == nil || c.ps.inflight < pick.inflight {
				pick = c.ps
			}
		}
		if !free {
			break
		}
		if pick == nil {
			continue
		}
		s.inflight[n.Hash] = &blockReq{ps: pick, node: n, sent: now}
		pick.inflight++
		batches[pick] = append(batches[pick], wire.InvVect{Type: wire.InvBlock, Hash: n.Hash})
	}
	for ps, inv := range batches {
		s.blockRequests.Add(int64(len(inv)))
		if !ps.p.TrySend(&wire.MsgGetData{Inv: inv}) {
			for _, iv := range inv {
				delete(s.inflight, iv.Hash)
			}
			ps.inflight -= len(inv)
		}
	}
}

// updatePeerBestLocked notes that ps has the block of a header-only node.
func (s *syncManager) updatePeerBestLocked(ps *peerState, n *chainstate.BlockNode) {
	s.setPeerBestLocked(ps, n)
	ps.p.SetHeight(n.Height)
}

// setPeerBestLocked raises ps's best header to n when n has more work; the path is loaded
// again when that may change the target (targetLocked).
func (s *syncManager) setPeerBestLocked(ps *peerState, n *chainstate.BlockNode) {
	if ps.best != nil && n.Work.Cmp(ps.best.Work) <= 0 {
		return
	}
	ps.best = n
	if s.best == nil || n.Work.Cmp(s.best.Work) > 0 {
		s.markPathDirtyLocked()
	}
}

// onBlock handles a block: the answer to our getdata, or one sent unasked.
func (s *syncManager) onBlock(ps *peerState, b *types.Block, size int) {
	hash := b.Hash()
	ps.p.KnownBlocks().Add(hash)
	s.mu.Lock()
	req := s.inflight[hash]
	requested := req != nil && req.ps == ps
	s.mu.Unlock()
	// Which peer brought which block, asked or pushed: the network lab reads it to tell
	// where a block's time went (docs/network.md).
	s.log.Debug("block received", "peer", ps.p.Addr(), "hash", hash, "requested", requested, "size", size)
	s.mu.Lock()
	if req := s.inflight[hash]; req != nil && req.ps == ps {
		delete(s.inflight, hash)
		ps.inflight--
		ps.blocks++
		if ps.unavail != nil { // it delivers after all: its chain may be headed for again
			ps.unavail = nil
			s.markPathDirtyLocked()
		}
		s.updatePeerBestLocked(ps, req.node)
		if s.received[hash] == nil {
			s.received[hash] = &recvBlock{block: b, node: req.node, from: ps, size: size, verified: s.preverify(b)}
			s.receivedBytes += size
		}
		s.scheduleLocked()
		s.mu.Unlock()
		s.wakeProcessor()
		return
	}
	s.mu.Unlock()
	s.onUnsolicitedBlock(ps, b, hash, size)
}

// onUnsolicitedBlock handles a block we did not ask this peer for (a high-bandwidth peer's
// push, push.go). A new block on our path or on a stored parent is processed (its proof of
// work is its cost); known blocks and orphans count against the peer's flood allowance, and
// blocks stored off our best chain against freeOffChainPushes.
func (s *syncManager) onUnsolicitedBlock(ps *peerState, b *types.Block, hash types.Hash, size int) {
	if err := consensus.CheckProofOfWork(&b.Header, hash, s.net.PowLimit); err != nil {
		s.misbehave(ps, 100, "block "+hash.String()+": "+err.Error())
		return
	}
	st := s.chain.HeaderState(hash)
	s.mu.Lock()
	if s.received[hash] != nil {
		s.mu.Unlock()
		s.unrequested(ps, "blocks")
		return
	}
	if st.Node != nil && !st.HaveBlock && !st.Invalid && !s.pathDirty && s.onPathLocked(st.Node) {
		s.received[hash] = &recvBlock{block: b, node: st.Node, from: ps, size: size, verified: s.preverify(b)}
		s.receivedBytes += size
		s.updatePeerBestLocked(ps, st.Node)
		s.mu.Unlock()
		s.wakeProcessor()
		return
	}
	s.mu.Unlock()
	if st.HaveBlock {
		s.unrequested(ps, "blocks")
		return
	}
	if s.chain.HeaderState(b.Header.PrevHash).HaveBlock {
		s.submitPushed(ps, b, hash)
		return
	}
	if !s.unrequested(ps, "blocks") {
		return
	}
	s.mu.Lock()
	s.orphanBlocks.add(&orphanBlock{block: b, hash: hash, from: ps, size: size, added: time.Now()})
	s.mu.Unlock()
	s.requestHeaders(ps, types.ZeroHash)
}

// submitPushed validates an unrequested block on a stored parent, once even when several
// peers push it at the same time (the others' copies are dropped unvalidated), and charges
// the peer when the block, valid, is not on our best chain.
func (s *syncManager) submitPushed(ps *peerState, b *types.Block, hash types.Hash) {
	s.mu.Lock()
	if s.pushing[hash] {
		s.mu.Unlock()
		return
	}
	s.pushing[hash] = true
	s.mu.Unlock()
	stored, err := s.submit(ps, b, hash)
	s.mu.Lock()
	delete(s.pushing, hash)
	s.mu.Unlock()
	if !stored || err != nil {
		return // invalid ones are charged by blockRejected
	}
	st := s.chain.HeaderState(hash)
	if st.Node == nil {
		return
	}
	if onMainChain(s.chain.Tip(), st.Node) {
		s.mu.Lock()
		ps.offChain = 0
		s.updatePeerBestLocked(ps, st.Node)
		s.mu.Unlock()
		return
	}
	s.offChainPush(ps, hash)
}

func (s *syncManager) wakeProcessor() {
	select {
	case s.wakeProc <- struct{}{}:
	default:
	}
}
