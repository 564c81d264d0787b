package p2p

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"runtime"
	"time"

	"github.com/cointoolkit/coin/lib/chainstate"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/p2p/wire"
	"github.com/cointoolkit/coin/lib/pow"
	"github.com/cointoolkit/coin/lib/types"
)

// Headers-first sync. The server keeps, in memory, the validated headers that are ahead of
// the chain (the tree: proof of work, linkage, target and timestamp rules checked, nothing
// else). The most-work valid header is best; path is the list of best's ancestors whose
// blocks are not stored yet, lowest first. Blocks of the first Window entries of path are
// requested from the peers that have them, at most MaxInFlightPerPeer per peer; they arrive
// in any order into received and the processor hands them to the node's SubmitBlock in path
// order. Everything here is guarded by Server.mu, and no chain or node call is made while
// holding it except the rare chain lookups of a header walk.

type tipInfo struct {
	hash   types.Hash
	height uint64
	work   *big.Int
}

// hnode is a validated header whose block is not stored yet.
type hnode struct {
	hash         types.Hash
	header       types.BlockHeader
	height       uint64
	work         *big.Int
	invalid      bool
	bodyFailures int
}

type blockReq struct {
	ps   *peerState
	sent time.Time
}

type recvBlock struct {
	block *types.Block
	from  *peerState
	size  int
	// verified is closed once the block's signatures were checked ahead of time (nil when
	// the block was not queued for that).
	verified chan struct{}
}

// headerRef is a header known to the tree (node) or stored in the chain (cnode).
type headerRef struct {
	hash    types.Hash
	header  *types.BlockHeader
	height  uint64
	work    *big.Int
	invalid bool
	node    *hnode
	cnode   *chainstate.Node
}

func treeRef(n *hnode) headerRef {
	return headerRef{hash: n.hash, header: &n.header, height: n.height, work: n.work, invalid: n.invalid, node: n}
}

func chainRef(n *chainstate.Node, st chainstate.Status) headerRef {
	return headerRef{hash: n.Hash, header: &n.Header, height: n.Height, work: n.Work, invalid: st >= chainstate.StatusInvalid, cnode: n}
}

var (
	errTreeFull = errors.New("header tree full")
	errVersion  = errors.New("unsupported block version")
)

// Syncing reports whether some peer is known to be ahead of our tip while we fetch headers
// or blocks from peers (the node's Network interface; getblocktemplate refuses meanwhile).
func (s *Server) Syncing() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.syncingLocked()
}

func (s *Server) syncingLocked() bool {
	behind := false
	for _, ps := range s.peers {
		if ps.p.Height() > s.tip.height {
			behind = true
			break
		}
	}
	if !behind {
		return false
	}
	if s.processing > 0 || len(s.inflight) > 0 || len(s.received) > 0 {
		return true
	}
	for _, ps := range s.peers {
		if ps.headersPending && ps.p.Height() > s.tip.height {
			return true
		}
	}
	return false
}

// refreshTip records the chain tip (read outside the lock).
func (s *Server) refreshTip() {
	t := s.chain.Tip()
	s.mu.Lock()
	s.setTipLocked(t)
	s.mu.Unlock()
}

func (s *Server) setTipLocked(t *chainstate.Node) {
	if t.Hash == s.tip.hash {
		return
	}
	progress := len(s.path) > 0 && s.path[0].hash == t.Hash
	s.tip = tipInfo{hash: t.Hash, height: t.Height, work: t.Work}
	if !progress {
		s.pathDirty = true
	}
}

// bestWorkLocked is the work a header must beat to become best.
func (s *Server) bestWorkLocked() *big.Int {
	if s.best != nil && !s.best.invalid && s.tree[s.best.hash] == s.best && s.best.work.Cmp(s.tip.work) > 0 {
		return s.best.work
	}
	return s.tip.work
}

// walkLocked calls fn with from and its ancestors, newest first, until fn returns false.
func (s *Server) walkLocked(from headerRef, fn func(h *types.BlockHeader, height uint64) bool) {
	if from.node == nil {
		for n := from.cnode; n != nil; n = n.Parent {
			if !fn(&n.Header, n.Height) {
				return
			}
		}
		return
	}
	n := from.node
	for {
		if !fn(&n.header, n.height) || n.height == 0 {
			return
		}
		if pn := s.tree[n.header.PrevHash]; pn != nil {
			n = pn
			continue
		}
		for cn := s.chain.NodeByHash(n.header.PrevHash); cn != nil; cn = cn.Parent {
			if !fn(&cn.Header, cn.Height) {
				return
			}
		}
		return
	}
}

// headerContextLocked is the target a child of parent must carry and the median time past
// it must exceed (the chain's own rules, computed over the tree and the chain).
func (s *Server) headerContextLocked(parent headerRef) (uint32, uint64) {
	h := parent.height + 1
	needStart := s.net.Retarget && pow.IsRetargetHeight(h)
	var startH, startTS uint64
	if needStart {
		startH = pow.RetargetWindowStart(h)
	}
	ts := make([]uint64, 0, consensus.MedianTimeSpan)
	s.walkLocked(parent, func(hd *types.BlockHeader, height uint64) bool {
		if len(ts) < consensus.MedianTimeSpan {
			ts = append(ts, hd.Timestamp)
		}
		if needStart && height == startH {
			startTS = hd.Timestamp
			return false
		}
		return len(ts) < consensus.MedianTimeSpan || needStart && height > startH
	})
	target := parent.header.DifficultyTarget
	if needStart {
		target = pow.NextCompact(h, parent.header.DifficultyTarget, parent.header.Timestamp, startTS, s.net.PowLimit, s.net.Retarget)
	}
	return target, consensus.MedianTime(ts)
}

// acceptHeaderLocked validates a header on parent and adds it to the tree.
func (s *Server) acceptHeaderLocked(h *types.BlockHeader, hash types.Hash, parent headerRef, now uint64) (*hnode, error) {
	if h.Version != consensus.BlockVersion {
		return nil, fmt.Errorf("%w %d", errVersion, h.Version)
	}
	if err := consensus.CheckProofOfWork(h, hash, s.net.PowLimit); err != nil {
		return nil, err
	}
	target, mtp := s.headerContextLocked(parent)
	hc := consensus.HeaderContext{Height: parent.height + 1, ExpectedTarget: target, MedianTimePast: mtp, Now: now}
	if err := consensus.CheckHeaderContext(h, hc); err != nil {
		return nil, err
	}
	if len(s.tree) >= s.cfg.MaxHeaders {
		s.pruneLocked()
		if len(s.tree) >= s.cfg.MaxHeaders {
			return nil, errTreeFull
		}
	}
	n := &hnode{hash: hash, header: *h, height: parent.height + 1,
		work: new(big.Int).Add(parent.work, pow.Work(h.DifficultyTarget))}
	s.tree[hash] = n
	return n, nil
}

// onHeaders handles a headers message: the answer to our getheaders or an announcement.
func (s *Server) onHeaders(ps *peerState, m *wire.MsgHeaders) {
	hs := m.Headers
	hashes := make([]types.Hash, len(hs))
	for i := range hs {
		hashes[i] = hs[i].Hash()
		if i > 0 && hs[i].PrevHash != hashes[i-1] {
			s.misbehave(ps, 100, "headers do not form a chain")
			return
		}
	}
	s.mu.Lock()
	requested := ps.headersPending
	ps.headersPending = false
	s.mu.Unlock()
	// Announcements of new headers are welcome at any rate (each costs its proof of work);
	// unrequested headers that bring nothing new count against the peer's flood allowance.
	if len(hs) == 0 {
		if !requested {
			s.unrequested(ps, "headers")
		}
		return
	}
	// Outside the lock: where the batch meets the stored chain.
	pcn, pst, pok := s.chain.NodeStatus(hs[0].PrevHash)
	var stored []headerRef
	if pok {
		for k := range hs {
			cn, st, ok := s.chain.NodeStatus(hashes[k])
			if !ok {
				break
			}
			stored = append(stored, chainRef(cn, st))
		}
	}

	s.mu.Lock()
	var parent headerRef
	if n := s.tree[hs[0].PrevHash]; n != nil {
		parent = treeRef(n)
	} else if pok {
		parent = chainRef(pcn, pst)
	} else {
		ps.unconnecting++
		count := ps.unconnecting
		s.mu.Unlock()
		if !requested && !s.unrequested(ps, "headers") {
			return
		}
		s.log.Debug("headers do not connect; asking for the missing ones", "peer", ps.p.Addr(), "first", hashes[0])
		if count%10 == 0 {
			s.misbehave(ps, 20, "headers that do not connect")
		}
		s.requestHeaders(ps, types.ZeroHash)
		return
	}
	ps.unconnecting = 0
	now := uint64(time.Now().Unix())
	var (
		last    *headerRef
		lastNew *hnode
		fault   string
		stopped bool
	)
	for i := range hs {
		var ref headerRef
		switch {
		case i < len(stored):
			ref = stored[i]
		case s.tree[hashes[i]] != nil:
			ref = treeRef(s.tree[hashes[i]])
		default:
			if parent.invalid {
				fault = "headers build on invalid block " + parent.hash.String()
				break
			}
			n, err := s.acceptHeaderLocked(&hs[i], hashes[i], parent, now)
			if err != nil {
				if errors.Is(err, errTreeFull) || errors.Is(err, consensus.ErrTimeTooNew) {
					s.log.Debug("headers not accepted for now", "peer", ps.p.Addr(), "hash", hashes[i], "reason", err)
					stopped = true
				} else {
					fault = "invalid header " + hashes[i].String() + ": " + err.Error()
				}
				break
			}
			ref, lastNew = treeRef(n), n
		}
		if fault != "" || stopped {
			break
		}
		if ref.invalid {
			fault = "header of invalid block " + ref.hash.String()
			break
		}
		parent = ref
		last = &parent
	}
	if last != nil {
		if ps.bestWork == nil || last.work.Cmp(ps.bestWork) > 0 {
			ps.bestHash, ps.bestWork = last.hash, last.work
		}
		ps.p.SetHeight(last.height)
		ps.p.KnownBlocks().Add(last.hash)
	}
	if lastNew != nil && lastNew.work.Cmp(s.bestWorkLocked()) > 0 {
		s.best = lastNew
		s.pathDirty = true
	}
	more := requested && len(hs) == wire.MaxHeaders && fault == "" && !stopped
	if more {
		for _, o := range s.peers {
			if o != ps && o.headersPending {
				more = false
			}
		}
	}
	s.scheduleLocked()
	s.mu.Unlock()
	if fault != "" {
		s.misbehave(ps, 100, fault)
		return
	}
	if !requested && lastNew == nil {
		s.unrequested(ps, "headers")
	}
	if more {
		s.requestHeaders(ps, types.ZeroHash)
	}
}

// requestHeaders sends getheaders to ps with a locator from our best header, unless a
// request to it is pending.
func (s *Server) requestHeaders(ps *peerState, stop types.Hash) {
	s.mu.Lock()
	if ps.headersPending {
		s.mu.Unlock()
		return
	}
	ps.headersPending = true
	ps.headersSent = time.Now()
	ps.headersAsked = ps.headersSent
	loc, anchor := s.treeLocatorLocked()
	s.mu.Unlock()
	chainLoc := s.chain.LocatorFrom(anchor)
	if chainLoc == nil {
		chainLoc = s.chain.Locator()
	}
	loc = append(loc, chainLoc...)
	if len(loc) > wire.MaxLocator {
		loc = append(loc[:wire.MaxLocator-1], loc[len(loc)-1])
	}
	if !ps.p.TrySend(&wire.MsgGetHeaders{Locator: loc, Stop: stop}) {
		s.mu.Lock()
		ps.headersPending = false
		s.mu.Unlock()
	}
}

// treeLocatorLocked is the part of a block locator that lies in the tree (from best down,
// dense for 10 entries then twice as sparse at each step) and the hash below it.
func (s *Server) treeLocatorLocked() ([]types.Hash, types.Hash) {
	n := s.best
	if n == nil || s.tree[n.hash] != n || n.invalid || n.work.Cmp(s.tip.work) <= 0 {
		return nil, s.tip.hash
	}
	var loc []types.Hash
	step := 1
	for {
		loc = append(loc, n.hash)
		for j := 0; j < step; j++ {
			pn := s.tree[n.header.PrevHash]
			if pn == nil {
				return loc, n.header.PrevHash
			}
			n = pn
		}
		if len(loc) >= 10 {
			step *= 2
		}
	}
}

// onPathLocked reports whether n is on the download path.
func (s *Server) onPathLocked(n *hnode) bool {
	if len(s.path) == 0 || n.height < s.path[0].height {
		return false
	}
	i := n.height - s.path[0].height
	return i < uint64(len(s.path)) && s.path[i] == n
}

// computePathLocked rebuilds the download path from best.
func (s *Server) computePathLocked() {
	s.pathDirty = false
	s.path = s.path[:0]
	if s.best != nil && (s.best.invalid || s.best.work.Cmp(s.tip.work) <= 0) {
		s.best = nil
	}
	if s.best == nil {
		s.recomputeBestLocked()
	}
	if s.best != nil {
		var rev []*hnode
		for n := s.best; n != nil; n = s.tree[n.header.PrevHash] {
			rev = append(rev, n)
		}
		for i := len(rev) - 1; i >= 0; i-- {
			s.path = append(s.path, rev[i])
		}
	}
	for h, rb := range s.received {
		if n := s.tree[h]; n == nil || !s.onPathLocked(n) {
			delete(s.received, h)
			s.receivedBytes -= rb.size
		}
	}
}

// recomputeBestLocked picks the most-work header of the tree with no invalid ancestor in it.
func (s *Server) recomputeBestLocked() {
	s.best = nil
	ok := make(map[*hnode]bool)
	var valid func(n *hnode) bool
	valid = func(n *hnode) bool {
		var chain []*hnode
		res := true
		for m := n; m != nil; m = s.tree[m.header.PrevHash] {
			if v, seen := ok[m]; seen {
				res = v
				break
			}
			if m.invalid {
				res = false
				break
			}
			chain = append(chain, m)
		}
		for _, m := range chain {
			ok[m] = res
		}
		return res
	}
	for _, n := range s.tree {
		if n.work.Cmp(s.tip.work) <= 0 || (s.best != nil && n.work.Cmp(s.best.work) <= 0) {
			continue
		}
		if valid(n) {
			s.best = n
		}
	}
}

// markInvalidLocked marks a header invalid (its descendants are excluded by
// recomputeBestLocked).
func (s *Server) markInvalidLocked(n *hnode) {
	n.invalid = true
	s.best = nil
	s.pathDirty = true
}

// pruneLocked drops headers that can no longer matter: no more work than the tip and not on
// the download path.
func (s *Server) pruneLocked() {
	if s.pathDirty {
		s.computePathLocked()
	}
	for h, n := range s.tree {
		if (n.invalid || n.work.Cmp(s.tip.work) <= 0) && !s.onPathLocked(n) {
			delete(s.tree, h)
		}
	}
	s.lastPrune = time.Now()
}

// servableLocked is how many entries of the path, from the start, ps can be asked for: up to
// its known height, and no further than where its best header leaves our path.
func (s *Server) servableLocked(ps *peerState) int {
	base := s.path[0].height
	ph := ps.p.Height()
	if ph < base {
		return 0
	}
	limit := min(int(ph-base+1), len(s.path))
	if ps.bestWork == nil {
		return limit
	}
	n := s.tree[ps.bestHash]
	if n == nil {
		return limit // its best is in the chain: on our path's base or a stored branch
	}
	for steps := 0; n != nil && n.height >= base && steps < 2*s.cfg.Window; steps++ {
		if s.onPathLocked(n) {
			if n.hash == ps.bestHash {
				return limit
			}
			return min(limit, int(n.height-base+1))
		}
		n = s.tree[n.header.PrevHash]
	}
	if n == nil || n.height < base {
		return 0 // another branch, forking below our path
	}
	return limit
}

// scheduleLocked requests the blocks of the window that are neither in flight nor received,
// each from the least busy peer that has it.
func (s *Server) scheduleLocked() {
	if s.pathDirty {
		s.computePathLocked()
	}
	if len(s.path) == 0 || s.ctx == nil || s.ctx.Err() != nil {
		return
	}
	type cand struct {
		ps    *peerState
		limit int
	}
	var cands []cand
	for _, ps := range s.peers {
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
		if s.inflight[n.hash] != nil || s.received[n.hash] != nil {
			continue
		}
		if s.receivedBytes > s.cfg.MaxBufferedBytes && i >= 32 {
			break
		}
		if ob := s.orphanBlocks.take(n.hash); ob != nil {
			s.received[n.hash] = &recvBlock{block: ob.block, from: ob.from, size: ob.size, verified: s.preverify(ob.block)}
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
			if c.limit <= i || c.ps.notFound.Has(n.hash) {
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
		s.inflight[n.hash] = &blockReq{ps: pick, sent: now}
		pick.inflight++
		batches[pick] = append(batches[pick], wire.InvVect{Type: wire.InvBlock, Hash: n.hash})
	}
	for ps, inv := range batches {
		if !ps.p.TrySend(&wire.MsgGetData{Inv: inv}) {
			for _, iv := range inv {
				delete(s.inflight, iv.Hash)
			}
			ps.inflight -= len(inv)
		}
	}
}

func (s *Server) wakeProcessor() {
	select {
	case s.wakeProc <- struct{}{}:
	default:
	}
}

// updatePeerBestLocked notes that ps has the block of a tree header.
func (s *Server) updatePeerBestLocked(ps *peerState, hash types.Hash) {
	n := s.tree[hash]
	if n == nil {
		return
	}
	if ps.bestWork == nil || n.work.Cmp(ps.bestWork) > 0 {
		ps.bestHash, ps.bestWork = n.hash, n.work
	}
	ps.p.SetHeight(n.height)
}

// onBlock handles a block: the answer to our getdata, or one sent unasked.
func (s *Server) onBlock(ps *peerState, b *types.Block, size int) {
	hash := b.Hash()
	ps.p.KnownBlocks().Add(hash)
	s.mu.Lock()
	if req := s.inflight[hash]; req != nil && req.ps == ps {
		delete(s.inflight, hash)
		ps.inflight--
		ps.blocks++
		s.updatePeerBestLocked(ps, hash)
		if s.received[hash] == nil {
			s.received[hash] = &recvBlock{block: b, from: ps, size: size, verified: s.preverify(b)}
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

// onUnsolicitedBlock handles a block we did not ask this peer for. A new block on our path or
// on a stored parent is processed (its proof of work is its cost); known blocks and orphans
// count against the peer's flood allowance.
func (s *Server) onUnsolicitedBlock(ps *peerState, b *types.Block, hash types.Hash, size int) {
	if err := consensus.CheckProofOfWork(&b.Header, hash, s.net.PowLimit); err != nil {
		s.misbehave(ps, 100, "block "+hash.String()+": "+err.Error())
		return
	}
	s.mu.Lock()
	if s.received[hash] != nil {
		s.mu.Unlock()
		s.unrequested(ps, "blocks")
		return
	}
	if n := s.tree[hash]; n != nil && !n.invalid && s.onPathLocked(n) {
		s.received[hash] = &recvBlock{block: b, from: ps, size: size, verified: s.preverify(b)}
		s.receivedBytes += size
		s.updatePeerBestLocked(ps, hash)
		s.mu.Unlock()
		s.wakeProcessor()
		return
	}
	s.mu.Unlock()
	if _, _, ok := s.chain.NodeStatus(hash); ok {
		s.unrequested(ps, "blocks")
		return
	}
	if _, _, ok := s.chain.NodeStatus(b.Header.PrevHash); ok {
		s.submit(ps, b, hash)
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

// submit hands a block to the node and deals with the outcome. It reports whether the block
// is stored now and the node's error.
func (s *Server) submit(from *peerState, b *types.Block, hash types.Hash) (bool, error) {
	res, err := s.b.SubmitBlock(b)
	stored := false
	switch {
	case err == nil || errors.Is(err, consensus.ErrDuplicateBlock):
		stored, err = true, nil
	case errors.Is(err, consensus.ErrUnknownParent):
	case errors.Is(err, consensus.ErrTimeTooNew):
		s.log.Info("block ahead of our clock ignored", "hash", hash, "err", err)
	case consensus.IsRuleError(err):
		s.blockRejected(from, hash, err)
	default:
		s.log.Error("block not stored", "hash", hash, "err", err)
	}
	if res != nil && len(res.Disconnected) > 0 {
		s.relayReturned(res)
	}
	t := s.chain.Tip()
	s.mu.Lock()
	s.setTipLocked(t)
	var children []*orphanBlock
	if stored {
		delete(s.tree, hash)
		children = s.orphanBlocks.takeChildren(hash)
	}
	s.mu.Unlock()
	for _, c := range children {
		s.submit(c.from, c.block, c.hash)
	}
	return stored, err
}

// blockRejected marks an invalid block's header and bans the peer that sent it. A block the
// chain did not store (its body does not match the header, or a signature is bad, which the
// hash does not commit to) may be fetched again from another peer, up to three times.
func (s *Server) blockRejected(from *peerState, hash types.Hash, err error) {
	addr := "?"
	if from != nil {
		addr = from.p.Addr()
	}
	s.log.Info("invalid block from peer", "peer", addr, "hash", hash, "err", err)
	_, st, ok := s.chain.NodeStatus(hash)
	invalid := ok && st >= chainstate.StatusInvalid || errors.Is(err, consensus.ErrKnownInvalid) ||
		errors.Is(err, consensus.ErrInvalidAncestor)
	s.mu.Lock()
	if n := s.tree[hash]; n != nil {
		n.bodyFailures++
		if invalid || n.bodyFailures >= 3 {
			s.markInvalidLocked(n)
		}
	}
	s.mu.Unlock()
	s.misbehave(from, 100, "invalid block "+hash.String()+": "+err.Error())
}

// processLoop feeds downloaded blocks to the node in path order.
func (s *Server) processLoop() {
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-s.wakeProc:
		}
		for s.ctx.Err() == nil {
			s.mu.Lock()
			if s.pathDirty {
				s.computePathLocked()
			}
			if len(s.path) == 0 || s.received[s.path[0].hash] == nil {
				s.mu.Unlock()
				break
			}
			// The block stays in received until it is processed, so that the scheduler does
			// not fetch it again while it waits for its signatures.
			n := s.path[0]
			rb := s.received[n.hash]
			s.processing++
			last := len(s.path) <= runtime.GOMAXPROCS(0) // the rest is being verified now
			s.mu.Unlock()

			// Connect only once the block's own signatures are checked (on the other cores
			// while the previous block connected), so no signature is verified twice.
			if rb.verified != nil {
				select {
				case <-rb.verified:
				default:
					// Near the end of a catch-up, write the chain's cache while the last
					// blocks are verified rather than after them.
					if last {
						s.flushChain()
					}
					select {
					case <-rb.verified:
					case <-s.ctx.Done():
					}
				}
			}
			stored, err := s.submit(rb.from, rb.block, n.hash)

			s.mu.Lock()
			s.processing--
			if s.received[n.hash] == rb { // not dropped by a path recomputation meanwhile
				delete(s.received, n.hash)
				s.receivedBytes -= rb.size
			}
			if stored && len(s.path) > 0 && s.path[0] == n {
				s.path = s.path[1:]
			} else {
				s.pathDirty = true
			}
			if errors.Is(err, consensus.ErrUnknownParent) {
				// The chain dropped an ancestor we thought stored: start the headers over.
				s.log.Info("sync: block parent unknown to the chain; fetching headers again", "hash", n.hash)
				s.tree = make(map[types.Hash]*hnode)
				s.best, s.path = nil, nil
			}
			s.scheduleLocked()
			announce, ok := s.checkSyncLocked()
			syncing := s.wasSyncing
			s.mu.Unlock()
			s.setBulk(syncing)
			if ok {
				s.announce(announce)
			}
			if errors.Is(err, consensus.ErrUnknownParent) {
				for _, ps := range s.peerList() {
					s.requestHeaders(ps, types.ZeroHash)
				}
			}
		}
	}
}

// checkSyncLocked logs the start and end of a sync and, when it ended, returns the tip to
// announce if announcements were held back meanwhile.
func (s *Server) checkSyncLocked() (types.Hash, bool) {
	now := s.syncingLocked()
	if now != s.wasSyncing {
		s.wasSyncing = now
		// Following a peer block by block is routine (debug); a real catch-up is logged.
		if now {
			var ph uint64
			for _, ps := range s.peers {
				ph = max(ph, ps.p.Height())
			}
			s.syncFrom, s.syncStart = s.tip.height, time.Now()
			level := slog.LevelDebug
			if ph >= s.tip.height+100 {
				level = slog.LevelInfo
			}
			s.log.Log(context.Background(), level, "sync: catching up", "height", s.tip.height, "peer_height", ph)
		} else {
			level := slog.LevelDebug
			if s.tip.height >= s.syncFrom+100 || time.Since(s.syncStart) > 5*time.Second {
				level = slog.LevelInfo
			}
			s.log.Log(context.Background(), level, "sync: caught up", "height", s.tip.height, "tip", s.tip.hash,
				"blocks", int64(s.tip.height)-int64(s.syncFrom), "took", time.Since(s.syncStart).Round(time.Millisecond).String())
		}
	}
	if !now && s.announcePending {
		s.announcePending = false
		return s.tip.hash, true
	}
	return types.Hash{}, false
}

// setBulk keeps the chain in bulk mode while the node catches up, so that the blocks it
// connects are written to the database together instead of one batch each (the chain state
// bounds that by size and age), and has the chain write them as soon as the node has caught
// up.
func (s *Server) setBulk(on bool) {
	s.bulkMu.Lock()
	defer s.bulkMu.Unlock()
	if s.bulk == on {
		return
	}
	s.bulk = on
	if err := s.chain.SetBulk(on); err != nil {
		s.log.Error("writing the chain state", "err", err)
	}
}

// flushChain has a chain in bulk mode write its cache now.
func (s *Server) flushChain() {
	s.bulkMu.Lock()
	defer s.bulkMu.Unlock()
	if !s.bulk {
		return
	}
	if err := s.chain.Flush(); err != nil {
		s.log.Error("writing the chain state", "err", err)
	}
}

// tickLoop runs the periodic work: timeouts, stalls, header requests, pruning, expiry and
// saving peers.json.
func (s *Server) tickLoop() {
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	lastSave := time.Now()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-t.C:
		}
		s.refreshTip()
		s.checkTimeouts()
		s.maybeRequestHeaders()
		s.mu.Lock()
		if len(s.tree) > s.cfg.MaxHeaders/2 && time.Since(s.lastPrune) > 5*time.Second {
			s.pruneLocked()
		}
		s.orphanBlocks.expire(time.Now().Add(-10 * time.Minute))
		s.scheduleLocked()
		announce, ok := s.checkSyncLocked()
		syncing := s.wasSyncing
		s.mu.Unlock()
		s.setBulk(syncing)
		if ok {
			s.announce(announce)
		}
		s.expireTxState()
		if time.Since(lastSave) > 10*time.Second {
			lastSave = time.Now()
			if err := s.addrs.Save(); err != nil {
				s.log.Warn("saving peers.json", "err", err)
			}
		}
	}
}

// checkTimeouts drops peers that do not deliver: a block request older than BlockTimeout, the
// block holding up the window for StallTimeout while another peer could send it, or a
// headers request unanswered for HeadersTimeout.
func (s *Server) checkTimeouts() {
	now := time.Now()
	drop := make(map[*peerState]string)
	s.mu.Lock()
	for h, r := range s.inflight {
		if now.Sub(r.sent) > s.cfg.BlockTimeout {
			drop[r.ps] = fmt.Sprintf("block %s not delivered within %s", h, s.cfg.BlockTimeout)
		}
	}
	if len(s.path) > 0 {
		head := s.path[0]
		if r := s.inflight[head.hash]; r != nil && now.Sub(r.sent) > s.cfg.StallTimeout {
			for _, o := range s.peers {
				if o != r.ps && !o.notFound.Has(head.hash) && s.servableLocked(o) > 0 {
					drop[r.ps] = fmt.Sprintf("stalling the block download: block %s not delivered within %s", head.hash, s.cfg.StallTimeout)
					break
				}
			}
		}
	}
	for _, ps := range s.peers {
		if ps.headersPending && now.Sub(ps.headersSent) > s.cfg.HeadersTimeout {
			drop[ps] = fmt.Sprintf("headers request unanswered for %s", s.cfg.HeadersTimeout)
		}
	}
	s.mu.Unlock()
	for ps, reason := range drop {
		s.log.Info("dropping slow peer", "peer", ps.p.Addr(), "reason", reason)
		ps.p.Disconnect(errors.New(reason))
	}
}

// maybeRequestHeaders asks a peer that claims more than we know for headers when no headers
// request is pending (after a full header tree drained, or a peer that announced by height).
func (s *Server) maybeRequestHeaders() {
	s.mu.Lock()
	known := s.tip.height
	if s.best != nil && s.tree[s.best.hash] == s.best {
		known = max(known, s.best.height)
	}
	var ask *peerState
	if len(s.tree) < s.cfg.MaxHeaders*3/4 {
		pending := false
		for _, ps := range s.peers {
			pending = pending || ps.headersPending
		}
		for _, ps := range s.peers {
			if !pending && ps.p.Height() > known && time.Since(ps.headersAsked) > 5*time.Second {
				ask = ps
				break
			}
		}
	}
	s.mu.Unlock()
	if ask != nil {
		s.requestHeaders(ask, types.ZeroHash)
	}
}

// onGetHeaders answers with our main-chain headers after the peer's locator.
func (s *Server) onGetHeaders(ps *peerState, m *wire.MsgGetHeaders) {
	hs := s.chain.HeadersAfter(m.Locator, m.Stop, wire.MaxHeaders)
	if len(hs) > 0 {
		ps.p.KnownBlocks().Add(hs[len(hs)-1].Hash())
	}
	ps.p.Send(&wire.MsgHeaders{Headers: hs})
}

// onConnect starts the conversation with a new peer.
func (s *Server) onConnect(ps *peerState) {
	if !ps.p.Inbound() {
		ps.p.TrySend(&wire.MsgGetAddr{})
	}
	s.mu.Lock()
	known := s.tip.height
	if s.best != nil && s.tree[s.best.hash] == s.best {
		known = max(known, s.best.height)
	}
	ahead := ps.p.Height() > known
	s.mu.Unlock()
	if ahead {
		s.requestHeaders(ps, types.ZeroHash)
	}
}
