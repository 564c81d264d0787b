package p2p

import (
	"time"

	"github.com/cointoolkit/coin/lib/types"
)

// orphanBlock is a block whose parent we do not have yet.
type orphanBlock struct {
	block *types.Block
	hash  types.Hash
	from  *peerState
	size  int
	added time.Time
}

// orphanBlocks holds blocks whose parent is unknown, bounded in count and bytes; when full,
// the oldest leave first.
type orphanBlocks struct {
	byHash   map[types.Hash]*orphanBlock
	byPrev   map[types.Hash][]*orphanBlock
	bytes    int
	maxCount int
	maxBytes int
}

func newOrphanBlocks(maxCount, maxBytes int) *orphanBlocks {
	return &orphanBlocks{byHash: make(map[types.Hash]*orphanBlock), byPrev: make(map[types.Hash][]*orphanBlock),
		maxCount: maxCount, maxBytes: maxBytes}
}

func (o *orphanBlocks) add(b *orphanBlock) {
	if _, ok := o.byHash[b.hash]; ok || b.size > o.maxBytes {
		return
	}
	for len(o.byHash) >= o.maxCount || o.bytes+b.size > o.maxBytes {
		var oldest *orphanBlock
		for _, x := range o.byHash {
			if oldest == nil || x.added.Before(oldest.added) {
				oldest = x
			}
		}
		o.remove(oldest)
	}
	o.byHash[b.hash] = b
	prev := b.block.Header.PrevHash
	o.byPrev[prev] = append(o.byPrev[prev], b)
	o.bytes += b.size
}

func (o *orphanBlocks) remove(b *orphanBlock) {
	if _, ok := o.byHash[b.hash]; !ok {
		return
	}
	delete(o.byHash, b.hash)
	o.bytes -= b.size
	prev := b.block.Header.PrevHash
	sib := o.byPrev[prev]
	for i, x := range sib {
		if x == b {
			sib = append(sib[:i], sib[i+1:]...)
			break
		}
	}
	if len(sib) == 0 {
		delete(o.byPrev, prev)
	} else {
		o.byPrev[prev] = sib
	}
}

// take removes and returns the orphan with hash h, if held.
func (o *orphanBlocks) take(h types.Hash) *orphanBlock {
	b := o.byHash[h]
	if b != nil {
		o.remove(b)
	}
	return b
}

// takeChildren removes and returns the orphans whose parent is h.
func (o *orphanBlocks) takeChildren(h types.Hash) []*orphanBlock {
	kids := append([]*orphanBlock(nil), o.byPrev[h]...)
	for _, b := range kids {
		o.remove(b)
	}
	return kids
}

func (o *orphanBlocks) expire(before time.Time) {
	for _, b := range o.byHash {
		if b.added.Before(before) {
			o.remove(b)
		}
	}
}

func (o *orphanBlocks) len() int { return len(o.byHash) }

// orphanTx is a transaction whose inputs are not all known yet.
type orphanTx struct {
	tx    *types.Transaction
	txid  types.Hash
	from  *peerState
	added time.Time
}

// orphanTxs holds transactions with missing inputs, bounded in count (each is at most
// MaxTxSize bytes); when full, the oldest leave first.
type orphanTxs struct {
	byID     map[types.Hash]*orphanTx
	byParent map[types.Hash]map[types.Hash]*orphanTx
	max      int
}

func newOrphanTxs(max int) *orphanTxs {
	return &orphanTxs{byID: make(map[types.Hash]*orphanTx), byParent: make(map[types.Hash]map[types.Hash]*orphanTx), max: max}
}

func (o *orphanTxs) has(id types.Hash) bool {
	_, ok := o.byID[id]
	return ok
}

func (o *orphanTxs) add(t *orphanTx) {
	if o.has(t.txid) {
		return
	}
	for len(o.byID) >= o.max {
		var oldest *orphanTx
		for _, x := range o.byID {
			if oldest == nil || x.added.Before(oldest.added) {
				oldest = x
			}
		}
		o.remove(oldest)
	}
	o.byID[t.txid] = t
	for i := range t.tx.Inputs {
		p := t.tx.Inputs[i].PrevTxID
		if o.byParent[p] == nil {
			o.byParent[p] = make(map[types.Hash]*orphanTx)
		}
		o.byParent[p][t.txid] = t
	}
}

func (o *orphanTxs) remove(t *orphanTx) {
	if _, ok := o.byID[t.txid]; !ok {
		return
	}
	delete(o.byID, t.txid)
	for i := range t.tx.Inputs {
		p := t.tx.Inputs[i].PrevTxID
		if m := o.byParent[p]; m != nil {
			delete(m, t.txid)
			if len(m) == 0 {
				delete(o.byParent, p)
			}
		}
	}
}

// takeChildren removes and returns the orphans spending an output of parent.
func (o *orphanTxs) takeChildren(parent types.Hash) []*orphanTx {
	var out []*orphanTx
	for _, t := range o.byParent[parent] {
		out = append(out, t)
	}
	for _, t := range out {
		o.remove(t)
	}
	return out
}

func (o *orphanTxs) expire(before time.Time) {
	for _, t := range o.byID {
		if t.added.Before(before) {
			o.remove(t)
		}
	}
}

func (o *orphanTxs) len() int { return len(o.byID) }
