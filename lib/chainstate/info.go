package chainstate

import (
	"context"

	"github.com/cointoolkit/coin/lib/types"
	"github.com/syndtr/goleveldb/leveldb/util"
	"lukechampine.com/blake3"
)

// UtxoSetInfo summarises the UTXO set with a hash over all of it.
type UtxoSetInfo struct {
	Height  uint64
	TipHash types.Hash
	Count   uint64
	Total   uint64
	// Hash is BLAKE3 over every (outpoint key ‖ stored entry) in key order: two nodes
	// with the same UTXO set report the same hash.
	Hash types.Hash
}

// UtxoSetInfo walks the whole UTXO set from a consistent snapshot.
func (c *Chain) UtxoSetInfo(ctx context.Context) (UtxoSetInfo, error) {
	unlock, err := c.rlockFlushed(ctx)
	if err != nil {
		return UtxoSetInfo{}, err
	}
	snap, err := c.db.GetSnapshot()
	s := c.stats
	unlock()
	if err != nil {
		return UtxoSetInfo{}, storageErr("snapshot", err)
	}
	defer snap.Release()
	it := snap.NewIterator(util.BytesPrefix([]byte{pfxUtxo}), nil)
	defer it.Release()
	h := blake3.New(32, nil)
	info := UtxoSetInfo{Height: s.Height, TipHash: s.TipHash, Total: s.UtxoTotal}
	for it.Next() {
		if info.Count%4096 == 0 && ctx.Err() != nil {
			return UtxoSetInfo{}, ctx.Err()
		}
		h.Write(it.Key()[1:])
		h.Write(it.Value())
		info.Count++
	}
	if err := it.Error(); err != nil {
		return UtxoSetInfo{}, storageErr("iterate utxos", err)
	}
	h.Sum(info.Hash[:0])
	return info, nil
}

// NextBlockInfo is the height and median time past of the block that would extend the tip:
// what finality and maturity of a transaction for the next block are judged by.
func (c *Chain) NextBlockInfo() (height, mtp uint64) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	tip := c.main[len(c.main)-1]
	return tip.Height + 1, medianTimePast(tip)
}

// Confirmed reports whether txid is in a block of the main chain.
func (c *Chain) Confirmed(txid types.Hash) bool {
	_, err := c.TxLocation(txid)
	return err == nil
}
