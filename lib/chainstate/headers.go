package chainstate

import (
	"errors"

	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/types"
)

// Headers-first sync: headers are accepted into the block index ahead of their blocks (in the
// manner of dcrd's ProcessBlockHeader), with the rules a block's header meets, so that the
// chain alone knows the best header and which blocks lead to it; lib/p2p only schedules the
// downloads.

// DefaultMaxHeaders bounds the header-only nodes in memory (Options.MaxHeaders).
const DefaultMaxHeaders = 100_000

// ErrTooManyHeaders is returned by ProcessBlockHeader when the header-only nodes are at
// Options.MaxHeaders even after dropping those that cannot matter (no more work than the
// tip). It is not a rule violation: the header may be offered again later.
var ErrTooManyHeaders = errors.New("too many headers ahead of the stored blocks")

// HeaderState is what the block index knows of a header: a value snapshot of one BlockNode,
// taken under the chain's lock, so that a reader sees the state that changes when blocks
// connect or fail (status, size, transaction count, main-chain membership) as of one moment
// and never reads it unlocked. The zero value means the header is unknown.
type HeaderState struct {
	Node      *BlockNode // nil when the header is unknown
	HaveBlock bool       // the block is stored (false for a header-only node)
	Invalid   bool       // the block or one of its ancestors failed validation
	Status    Status
	Size      uint32 // the block's serialized size (zero while header-only)
	TxCount   uint32 // the block's transactions (zero while header-only)
	MainChain bool   // the block is on the main chain
	TipHeight uint64 // the main chain's tip height at the moment of the snapshot
}

// HeadersResult is what ProcessBlockHeaders did.
type HeadersResult struct {
	// Last is the node of the last header accepted or already known (nil when the first
	// header failed).
	Last *BlockNode
	// Done counts the headers accepted or already known, from the first; New those of them
	// added to the index.
	Done, New int
	// Best is the best header afterwards (see BestHeader).
	Best *BlockNode
}

// ProcessBlockHeader accepts a header into the block index as a header-only node, after
// checking it as ProcessBlock checks a block's header: version, proof of work, a known
// parent that is not invalid, the expected target and the timestamp rules. A header already
// in the index is accepted again without effect, unless it is known to be invalid
// (consensus.ErrKnownInvalid). An unknown parent fails with consensus.ErrUnknownParent, an
// invalid one with consensus.ErrInvalidAncestor.
func (c *Chain) ProcessBlockHeader(h *types.BlockHeader) error {
	_, err := c.ProcessBlockHeaders([]types.BlockHeader{*h})
	return err
}

// ProcessBlockHeaders accepts a run of headers in order under one lock (a headers message),
// stopping at the first that fails.
func (c *Chain) ProcessBlockHeaders(hs []types.BlockHeader) (HeadersResult, error) {
	c.lock()
	defer c.unlock()
	var res HeadersResult
	for i := range hs {
		n, added, err := c.acceptHeader(&hs[i])
		if err != nil {
			res.Best = c.bestHeaderLocked()
			return res, err
		}
		res.Last = n
		res.Done++
		if added {
			res.New++
		}
	}
	res.Best = c.bestHeaderLocked()
	return res, nil
}

func (c *Chain) acceptHeader(h *types.BlockHeader) (*BlockNode, bool, error) {
	hash := h.Hash()
	if n := c.index.get(hash); n != nil {
		if n.status >= StatusInvalid {
			return nil, false, ruleErr(consensus.ErrKnownInvalid, "header %s is of an invalid block", hash)
		}
		return n, false, nil
	}
	if h.Version != consensus.BlockVersion {
		return nil, false, ruleErr(consensus.ErrBadBlockVersion, "unsupported block version %d", h.Version)
	}
	if err := consensus.CheckProofOfWork(h, hash, c.net.PowLimit); err != nil {
		return nil, false, err
	}
	parent := c.index.get(h.PrevHash)
	if parent == nil {
		return nil, false, ruleErr(consensus.ErrUnknownParent, "header %s: parent %s is unknown", hash, h.PrevHash)
	}
	if parent.status >= StatusInvalid {
		return nil, false, ruleErr(consensus.ErrInvalidAncestor, "header %s builds on invalid block %s", hash, parent.Hash)
	}
	if err := c.checkHeaderContext(h, parent); err != nil {
		return nil, false, err
	}
	if len(c.hdrs) >= c.opts.MaxHeaders {
		c.pruneHeaders()
		if len(c.hdrs) >= c.opts.MaxHeaders {
			return nil, false, ErrTooManyHeaders
		}
	}
	c.seq++
	n := &BlockNode{Hash: hash, Height: parent.Height + 1, status: StatusStored, Parent: parent,
		Work: parent.Work.Add(workOf(h.DifficultyTarget)), seq: c.seq, headerOnly: true}
	n.setHeader(h)
	c.addNode(n)
	return n, true, nil
}

// HeaderState looks a header up in the block index, header-only nodes included, and
// snapshots it.
func (c *Chain) HeaderState(h types.Hash) HeaderState {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.headerStateLocked(c.index.get(h))
}

// headerStateLocked is n's snapshot (the zero value for nil); c.mu is held.
func (c *Chain) headerStateLocked(n *BlockNode) HeaderState {
	if n == nil {
		return HeaderState{}
	}
	tip := uint64(len(c.main) - 1)
	return HeaderState{Node: n, HaveBlock: !n.headerOnly, Invalid: n.status >= StatusInvalid,
		Status: n.status, Size: n.size, TxCount: n.txCount,
		MainChain: n.Height <= tip && c.main[n.Height] == n, TipHeight: tip}
}

// BestHeader is the valid header with the most cumulative work, header-only or stored (the
// first seen on a tie), or the tip when none has more work than it.
func (c *Chain) BestHeader() *BlockNode {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.bestHeaderLocked()
}

func (c *Chain) bestHeaderLocked() *BlockNode {
	tip := c.main[len(c.main)-1]
	if b := c.bestHdr; b != nil && b.Work.Cmp(tip.Work) > 0 {
		return b
	}
	return tip
}

// HeaderLocator is the block locator of the best header (see Locator), for asking peers
// for the headers that follow it.
func (c *Chain) HeaderLocator() []types.Hash {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.locatorFrom(c.bestHeaderLocked())
}

// BlocksToFetch lists the header-only ancestors of the best header, itself included, lowest
// first: the blocks to download, in the order they can be stored. The first one's parent is
// stored.
func (c *Chain) BlocksToFetch() []*BlockNode {
	c.mu.RLock()
	defer c.mu.RUnlock()
	var path []*BlockNode
	for n := c.bestHeaderLocked(); n.headerOnly; n = n.Parent {
		path = append(path, n)
	}
	for i, j := 0, len(path)-1; i < j; i, j = i+1, j-1 {
		path[i], path[j] = path[j], path[i]
	}
	return path
}

// HeaderCount is the number of header-only nodes and their bound (Options.MaxHeaders).
func (c *Chain) HeaderCount() (int, int) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.hdrs), c.opts.MaxHeaders
}

// InvalidateHeader marks a header-only node and its descendants invalid, in memory: sync
// gives up on a header whose block no peer delivers in a form that matches it. A stored
// block is validated by ProcessBlock instead, so for one this does nothing.
func (c *Chain) InvalidateHeader(h types.Hash) error {
	c.lock()
	defer c.unlock()
	n := c.index.get(h)
	if n == nil || !n.headerOnly || n.status >= StatusInvalid {
		return nil
	}
	return c.markInvalid(n) // writes nothing: n's subtree is header-only
}

// noteHeader makes a new valid node the best header when it has more work.
func (c *Chain) noteHeader(n *BlockNode) {
	if n.status < StatusInvalid && (c.bestHdr == nil || n.Work.Cmp(c.bestHdr.Work) > 0) {
		c.bestHdr = n
	}
}

// recomputeBestHeader finds the best header again after it left the valid index: the most
// work among the valid tips and header-only nodes, the first seen on a tie.
func (c *Chain) recomputeBestHeader() {
	c.bestHdr = nil
	consider := func(n *BlockNode) {
		if n.status >= StatusInvalid {
			return
		}
		if b := c.bestHdr; b == nil || n.Work.Cmp(b.Work) > 0 || n.Work.Cmp(b.Work) == 0 && n.seq < b.seq {
			c.bestHdr = n
		}
	}
	for n := range c.tips {
		consider(n)
	}
	for n := range c.hdrs {
		consider(n)
	}
	if c.bestHdr == nil {
		c.bestHdr = c.main[len(c.main)-1]
	}
}

// pruneHeaders drops the header-only nodes that cannot matter: invalid ones, and those
// without a valid descendant (or self) that has more work than the tip.
func (c *Chain) pruneHeaders() {
	tipWork := c.main[len(c.main)-1].Work
	keep := make(map[*BlockNode]bool)
	for n := range c.hdrs {
		if n.status >= StatusInvalid || n.Work.Cmp(tipWork) <= 0 {
			continue
		}
		for m := n; m.headerOnly && !keep[m]; m = m.Parent {
			keep[m] = true
		}
	}
	var gone []*BlockNode
	for n := range c.hdrs {
		if !keep[n] {
			gone = append(gone, n)
		}
	}
	for _, n := range gone {
		c.index.del(n.Hash)
		delete(c.hdrs, n)
	}
	for _, n := range gone {
		if p := n.Parent; c.index.get(p.Hash) == p {
			p.unlinkKid(n)
		}
	}
	if b := c.bestHdr; b != nil && c.index.get(b.Hash) != b {
		c.recomputeBestHeader()
	}
}
