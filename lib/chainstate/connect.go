package chainstate

import (
	"errors"
	"fmt"
	"time"

	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/types"
)

func (c *Chain) loadBlock(n *BlockNode, cache map[types.Hash]blockWithIDs) (blockWithIDs, error) {
	if bw, ok := cache[n.Hash]; ok {
		return bw, nil
	}
	b, err := c.Block(n.Hash)
	if err != nil {
		return blockWithIDs{}, err
	}
	return blockWithIDs{b, b.TxIDs()}, nil
}

// connect validates n's block against the UTXO set and connects it in one batch.
func (c *Chain) connect(n *BlockNode, cache map[types.Hash]blockWithIDs) (ConnectedBlock, error) {
	bw, err := c.loadBlock(n, cache)
	if err != nil {
		return ConnectedBlock{}, err
	}
	b, ids := bw.b, bw.ids
	inBlock := txidSet(ids)
	if err := c.fetchInputs(b, inBlock, c.opts.SigWorkers); err != nil {
		return ConnectedBlock{}, err
	}
	memo := newClusterMemo(len(ids))
	eff, err := consensus.CheckBlockConnect(consensus.BlockInput{
		Block: b, TxIDs: ids, Height: n.Height, MedianTimePast: medianTimePast(n.Parent),
		PoolBefore: c.stats.Pool, Magic: c.net.Magic,
		View:       newConnectView(c, memo),
		SigWorkers: c.opts.SigWorkers, SkipSignatures: n.status == StatusValid, SigCache: c.opts.SigCache,
	})
	if err != nil {
		return ConnectedBlock{}, err
	}
	prev := c.stats
	next := prev
	next.TipHash, next.Height = n.Hash, n.Height
	next.TxCount += uint64(len(b.Transactions))
	next.Issued += eff.Subsidy
	next.Burned += eff.Burned
	next.Pool = eff.PoolAfter

	var key [37]byte
	// Clusters: transaction by transaction, merges first, then balances (protocol §8).
	cb := newClusterBlock(c, memo)
	k := 0
	for _, tx := range b.Transactions {
		n := 0
		if !tx.IsCoinbase() {
			n = len(tx.Inputs)
		}
		if err := cb.tx(eff.SpentUndo[k:k+n], tx.Outputs); err != nil {
			return ConnectedBlock{}, err
		}
		k += n
	}
	// Stage every change of the block in its journal; commit applies them all or none. The
	// journal is sized for the block's keys up front.
	pairs, hashes := conductKeyCounts(eff.Conduct)
	j := newBlockJournal(len(eff.Spent)+len(eff.Created), len(ids)+cb.keys()+hashes, pairs, 2)
	for i, op := range eff.Spent {
		if inBlock(op.TxID) {
			continue // created and spent inside this block: never in the set
		}
		e := eff.SpentUndo[i]
		next.UtxoCount--
		next.UtxoTotal -= e.Value
		utxoKeyTo(key[:], op)
		j.del(key[:])
	}
	// Each transaction's new outputs, then its index entry: staged next to each other, the
	// keys share the txid in the undo data.
	ci := 0
	for i, id := range ids {
		for ; ci < len(eff.Created) && eff.Created[ci].Outpoint.TxID == id; ci++ {
			cr := &eff.Created[ci]
			next.UtxoCount++
			next.UtxoTotal += cr.Entry.Value
			utxoKeyTo(key[:], cr.Outpoint)
			// A txid is unique on a chain (the coinbase commits to its height, every other
			// transaction spends outputs that can be spent once), so its outputs are new keys.
			j.insert(key[:], &cr.Entry)
		}
		j.insert(hashKey(pfxTx, id), TxLocation{Block: n.Hash, Height: n.Height, Position: uint32(i)})
	}
	if ci != len(eff.Created) {
		return ConnectedBlock{}, fmt.Errorf("block %s: created outputs out of block order", n.Hash)
	}
	cb.stage(&j)
	if err := c.stageConduct(&j, eff.Conduct, &next); err != nil {
		return ConnectedBlock{}, err
	}
	j.insert(heightKey(n.Height), n.Hash)
	j.put([]byte(keyStats), next)
	wc := &c.wc
	if wc.empty() {
		wc.since = time.Now()
	}
	ub, err := c.commit(&j)
	if err != nil {
		return ConnectedBlock{}, err
	}
	wc.blocks = append(wc.blocks, cachedBlock{n: n, undo: ub})
	wc.bytes += len(ub) + blockCacheCost
	n.status = StatusValid
	c.stats = next
	c.main = append(c.main, n)
	return ConnectedBlock{Block: b, Hash: n.Hash, Height: n.Height, TxIDs: ids}, nil
}

// txidSet tells whether a txid is one of ids (a set, so that a block's inputs are looked up
// in linear rather than quadratic time).
func txidSet(ids []types.Hash) func(types.Hash) bool {
	set := make(map[types.Hash]struct{}, len(ids))
	for _, id := range ids {
		set[id] = struct{}{}
	}
	return func(txid types.Hash) bool {
		_, ok := set[txid]
		return ok
	}
}

// disconnectTip undoes the tip block: every key its journal touched gets back the value it
// had before the block, whatever its table.
func (c *Chain) disconnectTip() (ConnectedBlock, error) {
	n := c.main[len(c.main)-1]
	if n.Height == 0 {
		return ConnectedBlock{}, errors.New("cannot disconnect the genesis block")
	}
	b, err := c.Block(n.Hash)
	if err != nil {
		return ConnectedBlock{}, err
	}
	ids := b.TxIDs()
	// The block's undo data may be in the pending write: let it land first.
	if err := c.settleLocked(); err != nil {
		return ConnectedBlock{}, err
	}
	wc := &c.wc
	var raw []byte
	cached := -1 // n's place in the write cache when its undo data is not written yet
	for i := len(wc.blocks) - 1; i >= 0; i-- {
		if wc.blocks[i].n == n && !wc.blocks[i].undone {
			cached = i
			break
		}
	}
	var recs []undoRecord
	var undoKey []byte
	if cached >= 0 {
		recs, err = decodeUndo(wc.blocks[cached].undo)
	} else if raw, undoKey, err = c.undoBytes(n.Hash); err == nil && undoKey != nil {
		recs, err = decodeUndo(raw)
	} else if err == nil {
		// Connected by a version before the keyed journal.
		undoKey = hashKey(pfxUndoLegacy, n.Hash)
		if raw, err = c.db.Get(undoKey, nil); err == nil {
			recs, err = c.legacyUndo(b, ids, raw)
		}
	}
	if err != nil {
		return ConnectedBlock{}, storageErr("undo data of "+n.Hash.String(), err)
	}
	// Read every key first (the secondary indexes need the values being replaced), so that
	// nothing changes when a read fails.
	slots := make([]*slot, len(recs))
	var prev *Stats
	for i, r := range recs {
		if slots[i], err = c.slotLocked([]byte(r.key)); err != nil {
			return ConnectedBlock{}, err
		}
		if r.key == keyStats {
			st, ok := r.prev.(Stats)
			if !ok {
				return ConnectedBlock{}, storageErr("undo", fmt.Errorf("undo data of %s holds no stats", n.Hash))
			}
			prev = &st
		}
	}
	if prev == nil {
		return ConnectedBlock{}, storageErr("undo", fmt.Errorf("undo data of %s holds no stats", n.Hash))
	}
	for i, r := range recs {
		slots[i].val = r.prev
		slots[i].dirty = true
	}
	wc.dirty = true
	if cached >= 0 {
		wc.blocks[cached].undone = true
	} else {
		wc.undone = append(wc.undone, undoKey)
	}
	c.stats = *prev
	c.main = c.main[:len(c.main)-1]
	return ConnectedBlock{Block: b, Hash: n.Hash, Height: n.Height, TxIDs: ids}, nil
}
