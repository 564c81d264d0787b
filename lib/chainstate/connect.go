package chainstate

import (
	"errors"
	"fmt"
	"time"

	"github.com/cointoolkit/coin/lib/bincode"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/types"
	"github.com/syndtr/goleveldb/leveldb"
)

func (c *Chain) loadBlock(n *Node, cache map[types.Hash]blockWithIDs) (blockWithIDs, error) {
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
func (c *Chain) connect(n *Node, cache map[types.Hash]blockWithIDs) (ConnectedBlock, error) {
	bw, err := c.loadBlock(n, cache)
	if err != nil {
		return ConnectedBlock{}, err
	}
	b, ids := bw.b, bw.ids
	eff, err := consensus.CheckBlockConnect(consensus.BlockInput{
		Block: b, TxIDs: ids, Height: n.Height, MedianTimePast: medianTimePast(n.Parent),
		PoolBefore: c.stats.Pool, Magic: c.net.Magic,
		View: chainView{c}, Values: c.opts.Values,
		SigWorkers: c.opts.SigWorkers, SkipSignatures: n.Status == StatusValid, SigCache: c.opts.SigCache,
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

	// Work out every change first and check the cluster balances, so that nothing is
	// changed when the stored state turns out inconsistent.
	deltas := make(map[types.Hash]int64)
	inBlock := txidSet(ids)
	for i, op := range eff.Spent {
		e := eff.SpentUndo[i]
		if inBlock(op.TxID) {
			continue // created and spent inside this block: never in the set
		}
		deltas[e.ClusterID] -= int64(e.Value)
		next.UtxoCount--
		next.UtxoTotal -= e.Value
	}
	for i := range eff.Created {
		e := &eff.Created[i].Entry
		deltas[e.ClusterID] += int64(e.Value)
		next.UtxoCount++
		next.UtxoTotal += e.Value
	}
	balances, err := c.clusterBalances(deltas)
	if err != nil {
		return ConnectedBlock{}, err
	}

	wc := &c.wc
	if wc.empty() {
		wc.since = time.Now()
	}
	for i, op := range eff.Spent {
		if !inBlock(op.TxID) {
			wc.spend(op, eff.SpentUndo[i])
		}
	}
	for i := range eff.Created {
		wc.create(eff.Created[i].Outpoint, &eff.Created[i].Entry)
	}
	for id, bal := range balances {
		wc.clusters[id] = bal
	}
	for i, id := range ids {
		wc.txs[id] = TxLocation{Block: n.Hash, Height: n.Height, Position: uint32(i)}
	}
	u := undo{prev: prev, spent: eff.SpentUndo}
	ub := u.bytes()
	wc.blocks = append(wc.blocks, cachedBlock{n: n, undo: ub})
	wc.bytes += len(ids)*txCacheCost + len(ub) + blockCacheCost
	n.Status = StatusValid
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

// clusterBalances are the balances of the clusters after adding the deltas.
func (c *Chain) clusterBalances(deltas map[types.Hash]int64) (map[types.Hash]uint64, error) {
	out := make(map[types.Hash]uint64, len(deltas))
	for id, d := range deltas {
		if d == 0 {
			continue
		}
		bal, err := c.clusterLocked(id)
		if err != nil {
			return nil, err
		}
		nb := int64(bal) + d
		if nb < 0 {
			return nil, storageErr("cluster balance", fmt.Errorf("cluster %s would go negative", id))
		}
		out[id] = uint64(nb)
	}
	return out, nil
}

// applyClusters adds the deltas to the stored cluster balances (the write cache is empty).
func (c *Chain) applyClusters(batch *leveldb.Batch, deltas map[types.Hash]int64) error {
	balances, err := c.clusterBalances(deltas)
	if err != nil {
		return err
	}
	for id, bal := range balances {
		if bal == 0 {
			batch.Delete(hashKey(pfxCluster, id))
			continue
		}
		w := bincode.NewWriter(nil)
		w.U64(bal)
		batch.Put(hashKey(pfxCluster, id), w.Bytes())
	}
	return nil
}

// disconnectTip undoes the tip block in one batch.
func (c *Chain) disconnectTip() (ConnectedBlock, error) {
	n := c.main[len(c.main)-1]
	if n.Height == 0 {
		return ConnectedBlock{}, errors.New("cannot disconnect the genesis block")
	}
	// The undo data and the state to undo are read from the database.
	if err := c.flushLocked(); err != nil {
		return ConnectedBlock{}, err
	}
	b, err := c.Block(n.Hash)
	if err != nil {
		return ConnectedBlock{}, err
	}
	raw, err := c.db.Get(hashKey(pfxUndo, n.Hash), nil)
	if err != nil {
		return ConnectedBlock{}, storageErr("read undo", err)
	}
	u, err := decodeUndo(raw)
	if err != nil {
		return ConnectedBlock{}, storageErr("decode undo", err)
	}
	ids := b.TxIDs()
	inBlock := txidSet(ids)
	batch := new(leveldb.Batch)
	clusters := make(map[types.Hash]int64)
	spentHere := make(map[types.Outpoint]bool)
	k := 0
	for _, tx := range b.Transactions[1:] {
		for j := range tx.Inputs {
			op := tx.Inputs[j].Outpoint()
			e := u.spent[k]
			k++
			spentHere[op] = true
			if inBlock(op.TxID) {
				continue
			}
			eb := entryBytes(e)
			batch.Put(utxoKey(op), eb)
			batch.Put(addrKey(e.PubKeyHash, op), eb)
			clusters[e.ClusterID] += int64(e.Value)
		}
	}
	if k != len(u.spent) {
		return ConnectedBlock{}, storageErr("undo", fmt.Errorf("undo data of %s has %d entries for %d inputs", n.Hash, len(u.spent), k))
	}
	for i, tx := range b.Transactions {
		for j := range tx.Outputs {
			op := types.Outpoint{TxID: ids[i], Index: uint32(j)}
			if spentHere[op] {
				continue
			}
			batch.Delete(utxoKey(op))
			batch.Delete(addrKey(tx.Outputs[j].PubKeyHash, op))
			clusters[consensus.ClusterIDOf(tx.Outputs[j].PubKeyHash)] -= int64(tx.Outputs[j].Value)
		}
		batch.Delete(hashKey(pfxTx, ids[i]))
	}
	if err := c.applyClusters(batch, clusters); err != nil {
		return ConnectedBlock{}, err
	}
	batch.Delete(hashKey(pfxUndo, n.Hash))
	batch.Delete(heightKey(n.Height))
	batch.Put([]byte(keyStats), c.statsBytes(&u.prev))
	if err := c.db.Write(batch, c.wo); err != nil {
		return ConnectedBlock{}, storageErr("disconnect block", err)
	}
	c.stats = u.prev
	c.main = c.main[:len(c.main)-1]
	return ConnectedBlock{Block: b, Hash: n.Hash, Height: n.Height, TxIDs: ids}, nil
}
