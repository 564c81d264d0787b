package chainstate

import (
	"fmt"

	"github.com/cointoolkit/coin/lib/bincode"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/types"
)

// pfxUndoLegacy holds the undo data of blocks connected by versions before the keyed journal:
// the stats before the block and the entries its inputs spent, in input order. A database
// written by such a version keeps them for the blocks it connected; disconnecting one of those
// blocks translates its record into journal records here, once, so reorgs across the upgrade
// work and the rest of the code knows only the journal.
const pfxUndoLegacy = 'r'

// legacyUndo translates the legacy undo data of block b (the tip, so that the current state
// is the state after b) into journal records.
func (c *Chain) legacyUndo(b *types.Block, ids []types.Hash, raw []byte) ([]undoRecord, error) {
	r := bincode.NewReader(raw)
	var prev Stats
	prev.decode(r)
	spent := make([]*consensus.UtxoEntry, r.Len(36))
	for i := range spent {
		spent[i] = decodeEntry(r)
	}
	if err := r.Finish(); err != nil {
		return nil, err
	}
	inBlock := txidSet(ids)
	var recs []undoRecord
	var key [37]byte
	deltas := make(map[types.Hash]int64)
	k := 0
	spentHere := make(map[types.Outpoint]bool)
	for _, tx := range b.Transactions[1:] {
		for j := range tx.Inputs {
			if k >= len(spent) {
				return nil, fmt.Errorf("%d entries for more inputs", len(spent))
			}
			op := tx.Inputs[j].Outpoint()
			e := spent[k]
			k++
			spentHere[op] = true
			if inBlock(op.TxID) {
				continue
			}
			utxoKeyTo(key[:], op)
			recs = append(recs, undoRecord{key: string(key[:]), prev: e})
			ci, err := findCluster(c.getLocked, e.PubKeyHash)
			if err != nil {
				return nil, err
			}
			deltas[ci.Name] -= int64(e.Value)
		}
	}
	if k != len(spent) {
		return nil, fmt.Errorf("%d entries for %d inputs", len(spent), k)
	}
	for i, tx := range b.Transactions {
		for j := range tx.Outputs {
			op := types.Outpoint{TxID: ids[i], Index: uint32(j)}
			if spentHere[op] {
				continue
			}
			utxoKeyTo(key[:], op)
			recs = append(recs, undoRecord{key: string(key[:])})
			ci, err := findCluster(c.getLocked, tx.Outputs[j].PubKeyHash)
			if err != nil {
				return nil, err
			}
			deltas[ci.Name] += int64(tx.Outputs[j].Value)
		}
		recs = append(recs, undoRecord{key: string(hashKey(pfxTx, ids[i]))})
	}
	// A cluster's balance before b is its balance now less what b added. Versions before the
	// journal never merged clusters, so b merged none: each address's cluster now is its
	// cluster before b.
	for id, d := range deltas {
		if d == 0 {
			continue
		}
		now, err := c.clusterLocked(id)
		if err != nil {
			return nil, err
		}
		before := int64(now) - d
		if before < 0 {
			return nil, fmt.Errorf("cluster %s would go negative", id)
		}
		rec := undoRecord{key: string(hashKey(pfxCluster, id))}
		if before > 0 {
			rec.prev = uint64(before)
		}
		recs = append(recs, rec)
	}
	recs = append(recs, undoRecord{key: string(heightKey(prev.Height + 1))}, undoRecord{key: keyStats, prev: prev})
	return recs, nil
}
