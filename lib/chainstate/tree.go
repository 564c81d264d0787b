package chainstate

import (
	"errors"
	"hash/maphash"
	"iter"

	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/pow"
	"github.com/cointoolkit/coin/lib/types"
	"github.com/syndtr/goleveldb/leveldb"
)

// ancestor is n's ancestor at height h (h ≤ n.Height): a walk down the parents until the
// main chain, then a lookup.
func (c *Chain) ancestor(n *BlockNode, h uint64) *BlockNode {
	for n != nil && n.Height > h {
		if n.Height < uint64(len(c.main)) && c.main[n.Height] == n {
			return c.main[h]
		}
		n = n.Parent
	}
	return n
}

// medianTimePast is the median timestamp of n and its 10 predecessors.
func medianTimePast(n *BlockNode) uint64 {
	ts := make([]uint64, 0, consensus.MedianTimeSpan)
	for i := 0; i < consensus.MedianTimeSpan && n != nil; i++ {
		ts = append(ts, n.Header.Timestamp)
		n = n.Parent
	}
	return consensus.MedianTime(ts)
}

// nextTarget is the compact target a child of parent must carry.
func (c *Chain) nextTarget(parent *BlockNode) uint32 {
	h := parent.Height + 1
	if !c.net.Retarget || !pow.IsRetargetHeight(h) {
		return parent.Header.DifficultyTarget
	}
	start := c.ancestor(parent, pow.RetargetWindowStart(h))
	return pow.NextCompact(h, parent.Header.DifficultyTarget, parent.Header.Timestamp, start.Header.Timestamp, c.net.PowLimit, c.net.Retarget)
}

// Template is what a miner needs to build a child of the tip.
type Template struct {
	Parent         types.Hash
	Height         uint64
	Target         uint32
	MedianTimePast uint64
	MinTimestamp   uint64
	Pool           uint64 // decay pool after the parent
}

// NextBlock describes the next block on the current tip.
func (c *Chain) NextBlock() Template {
	c.mu.RLock()
	defer c.mu.RUnlock()
	tip := c.main[len(c.main)-1]
	mtp := medianTimePast(tip)
	return Template{Parent: tip.Hash, Height: tip.Height + 1, Target: c.nextTarget(tip),
		MedianTimePast: mtp, MinTimestamp: mtp + 1, Pool: c.stats.Pool}
}

// addNode puts n in the block index and keeps the tips, the header-only set and the best
// header.
func (c *Chain) addNode(n *BlockNode) {
	c.index.put(n)
	if p := n.Parent; p != nil {
		n.sib, p.kid = p.kid, n
	}
	if n.headerOnly {
		c.hdrs[n] = struct{}{}
	} else {
		c.addTip(n)
	}
	c.noteHeader(n)
}

// addTip makes the stored node n a tip in place of its parent, when it is valid.
func (c *Chain) addTip(n *BlockNode) {
	if n.status >= StatusInvalid {
		return
	}
	if p := n.Parent; p != nil {
		delete(c.tips, p)
	}
	if !hasValidChild(n) {
		c.tips[n] = struct{}{}
	}
}

// hasValidChild reports whether n has a valid stored child (header-only children do not
// count: they cannot be connected).
func hasValidChild(n *BlockNode) bool {
	for k := n.kid; k != nil; k = k.sib {
		if k.status < StatusInvalid && !k.headerOnly {
			return true
		}
	}
	return false
}

// subtree lists n and its descendants in the index, header-only ones included.
func subtree(n *BlockNode) []*BlockNode {
	out := []*BlockNode{n}
	for i := 0; i < len(out); i++ {
		for k := out[i].kid; k != nil; k = k.sib {
			out = append(out, k)
		}
	}
	return out
}

// dropped updates the tips and the best header after the subtree of bad left the valid part
// of the index.
func (c *Chain) dropped(bad []*BlockNode) {
	for _, n := range bad {
		delete(c.tips, n)
	}
	if p := bad[0].Parent; p != nil && p.status < StatusInvalid && !p.headerOnly && !hasValidChild(p) {
		c.tips[p] = struct{}{}
	}
	if b := c.bestHdr; b != nil && (b.status >= StatusInvalid || c.index.get(b.Hash) != b) {
		c.recomputeBestHeader()
	}
}

// bestCandidate is the valid stored node with the most work (first seen on a tie; the tip
// stays on a tie with it).
func (c *Chain) bestCandidate() *BlockNode {
	tip := c.main[len(c.main)-1]
	best := tip
	for n := range c.tips {
		switch n.Work.Cmp(best.Work) {
		case 1:
			best = n
		case 0:
			if best != tip && n.seq < best.seq {
				best = n
			}
		}
	}
	return best
}

// markInvalid marks n invalid and every descendant invalid-parent (header-only ones in
// memory only).
func (c *Chain) markInvalid(bad *BlockNode) error {
	batch := new(leveldb.Batch)
	sub := subtree(bad)
	for _, n := range sub {
		if n.status >= StatusInvalid {
			continue
		}
		n.status = StatusInvalidParent
		if n == bad {
			n.status = StatusInvalid
		}
		if !n.headerOnly {
			batch.Put(hashKey(pfxIndex, n.Hash), indexRecord(n))
		}
	}
	c.dropped(sub)
	if batch.Len() == 0 {
		return nil
	}
	return storageErr("mark invalid", c.writeBatch(batch, c.wo))
}

// witnessFailure reports whether err is about data the block hash does not commit to: public
// keys and signatures are left out of the txid, so a copy of a valid block with a changed
// signature or public key has the same hash. Marking that hash invalid would make the node
// refuse the valid block for good, so such a block is forgotten instead.
func witnessFailure(err error) bool {
	return errors.Is(err, consensus.ErrBadSignature) || errors.Is(err, consensus.ErrPubKeyMismatch)
}

// forget removes bad and its descendants (header-only ones too) from the block index and
// the database, as if they had never been received. bad is not on the main chain.
func (c *Chain) forget(bad *BlockNode) error {
	batch := new(leveldb.Batch)
	gone := subtree(bad)
	for _, n := range gone {
		if !n.headerOnly {
			batch.Delete(hashKey(pfxBlockAt, n.Hash)) // its bytes stay in the blk files, unreferred
			batch.Delete(hashKey(pfxBlock, n.Hash))
			batch.Delete(hashKey(pfxIndex, n.Hash))
		}
	}
	if err := c.writeBatch(batch, c.wo); err != nil {
		return storageErr("forget block", err)
	}
	for _, n := range gone {
		c.index.del(n.Hash)
		delete(c.hdrs, n)
	}
	if p := bad.Parent; p != nil {
		p.unlinkKid(bad)
	}
	c.dropped(gone)
	return nil
}

// unlinkKid removes k from n's children.
func (n *BlockNode) unlinkKid(k *BlockNode) {
	for p := &n.kid; *p != nil; p = &(*p).sib {
		if *p == k {
			*p, k.sib = k.sib, nil
			return
		}
	}
}

// nodeIndex is the block index by hash: a hash set of nodes keyed by their own Hash, open
// addressing with linear probing. A slot is one pointer (a map[types.Hash]*BlockNode slot holds
// the 32-byte key too: about 60 bytes per block against 10 to 21 here; see
// TestIndexBytesPerBlock). Not safe for concurrent writes: the chain's lock guards it.
type nodeIndex struct {
	slots []*BlockNode // len a power of two, at most 3/4 full
	n     int
	seed  maphash.Seed
}

func newNodeIndex() nodeIndex {
	return nodeIndex{slots: make([]*BlockNode, 64), seed: maphash.MakeSeed()}
}

// slot is where h's probe starts: the standard library's seeded hash of the whole hash (the
// one Go's maps use), so nobody can aim block hashes at one run of slots.
func (x *nodeIndex) slot(h *types.Hash) int {
	return int(maphash.Bytes(x.seed, h[:]) & uint64(len(x.slots)-1))
}

// get is the node with hash h, or nil.
func (x *nodeIndex) get(h types.Hash) *BlockNode {
	mask := len(x.slots) - 1
	for i := x.slot(&h); ; i = (i + 1) & mask {
		n := x.slots[i]
		if n == nil || n.Hash == h {
			return n
		}
	}
}

// put adds n, in place of a node with the same hash.
func (x *nodeIndex) put(n *BlockNode) {
	if (x.n+1)*4 > len(x.slots)*3 {
		x.grow()
	}
	mask := len(x.slots) - 1
	for i := x.slot(&n.Hash); ; i = (i + 1) & mask {
		m := x.slots[i]
		if m == nil {
			x.slots[i] = n
			x.n++
			return
		}
		if m.Hash == n.Hash {
			x.slots[i] = n
			return
		}
	}
}

func (x *nodeIndex) grow() {
	old := x.slots
	x.slots = make([]*BlockNode, 2*len(old))
	mask := len(x.slots) - 1
	for _, n := range old {
		if n == nil {
			continue
		}
		i := x.slot(&n.Hash)
		for x.slots[i] != nil {
			i = (i + 1) & mask
		}
		x.slots[i] = n
	}
}

// del removes the node with hash h, if any (backward-shift deletion: no tombstones).
func (x *nodeIndex) del(h types.Hash) {
	mask := len(x.slots) - 1
	i := x.slot(&h)
	for {
		n := x.slots[i]
		if n == nil {
			return
		}
		if n.Hash == h {
			break
		}
		i = (i + 1) & mask
	}
	x.n--
	// Move later entries of the run back into the hole when their probe start allows it.
	for j := (i + 1) & mask; ; j = (j + 1) & mask {
		m := x.slots[j]
		if m == nil {
			break
		}
		s := x.slot(&m.Hash)
		// m may move to i when i lies on its probe path: cyclically s ≤ i < j.
		if (j-s)&mask >= (j-i)&mask {
			x.slots[i] = m
			i = j
		}
	}
	x.slots[i] = nil
}

// len is the number of nodes.
func (x *nodeIndex) len() int { return x.n }

// all is every node, in no order.
func (x *nodeIndex) all() iter.Seq[*BlockNode] {
	return func(yield func(*BlockNode) bool) {
		for _, n := range x.slots {
			if n != nil && !yield(n) {
				return
			}
		}
	}
}
