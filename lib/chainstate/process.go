package chainstate

import (
	"errors"
	"fmt"
	"math/big"
	"slices"
	"time"

	"github.com/cointoolkit/coin/lib/bincode"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/pow"
	"github.com/cointoolkit/coin/lib/types"
	"github.com/syndtr/goleveldb/leveldb"
)

// ConnectedBlock is a block that joined or left the main chain.
type ConnectedBlock struct {
	Block  *types.Block
	Hash   types.Hash
	Height uint64
	TxIDs  []types.Hash
}

// Result tells what ProcessBlock did to the main chain, in order: first the blocks
// disconnected (tip first), then those connected (lowest first).
type Result struct {
	Hash         types.Hash
	Height       uint64
	IsTip        bool // the block is the new tip
	Disconnected []ConnectedBlock
	Connected    []ConnectedBlock
}

func ruleErr(kind consensus.ErrorKind, format string, args ...any) error {
	return consensus.RuleError{Err: kind, Description: fmt.Sprintf(format, args...)}
}

// ancestor is n's ancestor at height h (h ≤ n.Height).
func (c *Chain) ancestor(n *Node, h uint64) *Node {
	if h < uint64(len(c.main)) && n.Height < uint64(len(c.main)) && c.main[n.Height] == n {
		return c.main[h]
	}
	for n != nil && n.Height > h {
		n = n.Parent
	}
	return n
}

// medianTimePast is the median timestamp of n and its 10 predecessors.
func medianTimePast(n *Node) uint64 {
	ts := make([]uint64, 0, consensus.MedianTimeSpan)
	for i := 0; i < consensus.MedianTimeSpan && n != nil; i++ {
		ts = append(ts, n.Header.Timestamp)
		n = n.Parent
	}
	return consensus.MedianTime(ts)
}

// nextTarget is the compact target a child of parent must carry.
func (c *Chain) nextTarget(parent *Node) uint32 {
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

// ProcessBlock validates a block, stores it and moves the tip to the most-work valid chain.
// A block whose parent is unknown fails with consensus.ErrUnknownParent (the caller may keep
// it as an orphan); one already stored fails with consensus.ErrDuplicateBlock.
func (c *Chain) ProcessBlock(b *types.Block) (*Result, error) {
	hash := b.Hash()
	size := b.SerializeSize()
	c.mu.Lock()
	defer c.mu.Unlock()
	if n := c.index[hash]; n != nil {
		if n.Status >= StatusInvalid {
			return nil, ruleErr(consensus.ErrKnownInvalid, "block %s is known to be invalid", hash)
		}
		return nil, ruleErr(consensus.ErrDuplicateBlock, "block %s is already known", hash)
	}
	ids, err := consensus.CheckBlockSanity(b, hash, size, c.net.PowLimit)
	if err != nil {
		return nil, err
	}
	parent := c.index[b.Header.PrevHash]
	if parent == nil {
		return nil, ruleErr(consensus.ErrUnknownParent, "block %s: parent %s is unknown", hash, b.Header.PrevHash)
	}
	if parent.Status >= StatusInvalid {
		return nil, ruleErr(consensus.ErrInvalidAncestor, "block %s builds on invalid block %s", hash, parent.Hash)
	}
	hc := consensus.HeaderContext{Height: parent.Height + 1, ExpectedTarget: c.nextTarget(parent),
		MedianTimePast: medianTimePast(parent), Now: uint64(c.opts.Now().Unix())}
	if err := consensus.CheckHeaderContext(&b.Header, hc); err != nil {
		return nil, err
	}
	c.seq++
	n := &Node{Hash: hash, Header: b.Header, Height: parent.Height + 1, Status: StatusStored, Parent: parent,
		Work: new(big.Int).Add(parent.Work, workOf(b.Header.DifficultyTarget)), Size: uint32(size),
		TxCount: uint32(len(b.Transactions)), seq: c.seq}
	batch := new(leveldb.Batch)
	batch.Put(hashKey(pfxBlock, hash), b.Bytes())
	batch.Put(hashKey(pfxIndex, hash), indexRecord(n))
	if err := c.db.Write(batch, c.wo); err != nil {
		return nil, storageErr("store block", err)
	}
	c.addNode(n)
	res := &Result{Hash: hash, Height: n.Height}
	cache := map[types.Hash]blockWithIDs{hash: {b, ids}}
	err = c.activateBestChain(res, cache)
	if ferr := c.flushDue(); ferr != nil {
		err = ferr
	}
	res.IsTip = c.main[len(c.main)-1] == n
	if err == nil && n.Status >= StatusInvalid {
		err = errors.New("block is invalid") // cannot happen: its own failure is returned
	}
	return res, err
}

type blockWithIDs struct {
	b   *types.Block
	ids []types.Hash
}

// addNode puts n in the header index and keeps the tips.
func (c *Chain) addNode(n *Node) {
	c.index[n.Hash] = n
	if p := n.Parent; p != nil {
		p.kids = append(p.kids, n)
		if n.Status < StatusInvalid {
			delete(c.tips, p)
		}
	}
	if n.Status < StatusInvalid && !hasValidChild(n) {
		c.tips[n] = struct{}{}
	}
}

func hasValidChild(n *Node) bool {
	for _, k := range n.kids {
		if k.Status < StatusInvalid {
			return true
		}
	}
	return false
}

// subtree lists n and its stored descendants.
func subtree(n *Node) []*Node {
	out := []*Node{n}
	for i := 0; i < len(out); i++ {
		out = append(out, out[i].kids...)
	}
	return out
}

// dropped updates the tips after the subtree of bad left the valid part of the index.
func (c *Chain) dropped(bad []*Node) {
	for _, n := range bad {
		delete(c.tips, n)
	}
	if p := bad[0].Parent; p != nil && p.Status < StatusInvalid && !hasValidChild(p) {
		c.tips[p] = struct{}{}
	}
}

// bestCandidate is the valid stored node with the most work (first seen on a tie; the tip
// stays on a tie with it).
func (c *Chain) bestCandidate() *Node {
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

// activateBestChain reorganises to the most-work valid chain. When a block on the way fails,
// it and its descendants are marked invalid and the search starts again; the error of the
// first failure is returned.
func (c *Chain) activateBestChain(res *Result, cache map[types.Hash]blockWithIDs) error {
	var firstErr error
	for {
		target := c.bestCandidate()
		tip := c.main[len(c.main)-1]
		if target == tip {
			return firstErr
		}
		// Find the fork point.
		fork := c.ancestor(target, min(target.Height, tip.Height))
		for fork != nil && (fork.Height >= uint64(len(c.main)) || c.main[fork.Height] != fork) {
			fork = fork.Parent
		}
		for c.main[len(c.main)-1] != fork {
			cb, err := c.disconnectTip()
			if err != nil {
				return err
			}
			res.Disconnected = append(res.Disconnected, cb)
		}
		path := make([]*Node, 0, target.Height-fork.Height)
		for n := target; n != fork; n = n.Parent {
			path = append(path, n)
		}
		failed := false
		for i := len(path) - 1; i >= 0; i-- {
			cb, err := c.connect(path[i], cache)
			if err != nil {
				if !consensus.IsRuleError(err) {
					return err
				}
				mark := c.markInvalid
				if witnessFailure(err) {
					mark = c.forget
				}
				if markErr := mark(path[i]); markErr != nil {
					return markErr
				}
				if firstErr == nil {
					firstErr = err
				}
				failed = true
				break
			}
			res.Connected = append(res.Connected, cb)
		}
		if !failed {
			return firstErr
		}
	}
}

// markInvalid marks n invalid and every stored descendant invalid-parent.
func (c *Chain) markInvalid(bad *Node) error {
	batch := new(leveldb.Batch)
	sub := subtree(bad)
	for _, n := range sub {
		if n.Status >= StatusInvalid {
			continue
		}
		n.Status = StatusInvalidParent
		if n == bad {
			n.Status = StatusInvalid
		}
		batch.Put(hashKey(pfxIndex, n.Hash), indexRecord(n))
	}
	c.dropped(sub)
	return storageErr("mark invalid", c.db.Write(batch, c.wo))
}

// witnessFailure reports whether err is about data the block hash does not commit to: public
// keys and signatures are left out of the txid, so a copy of a valid block with a changed
// signature or public key has the same hash. Marking that hash invalid would make the node
// refuse the valid block for good, so such a block is forgotten instead.
func witnessFailure(err error) bool {
	return errors.Is(err, consensus.ErrBadSignature) || errors.Is(err, consensus.ErrPubKeyMismatch)
}

// forget removes bad and its stored descendants from the header index and the database, as if
// they had never been received. bad is not on the main chain.
func (c *Chain) forget(bad *Node) error {
	batch := new(leveldb.Batch)
	gone := subtree(bad)
	for _, n := range gone {
		batch.Delete(hashKey(pfxBlock, n.Hash))
		batch.Delete(hashKey(pfxIndex, n.Hash))
	}
	if err := c.db.Write(batch, c.wo); err != nil {
		return storageErr("forget block", err)
	}
	for _, n := range gone {
		delete(c.index, n.Hash)
	}
	if p := bad.Parent; p != nil {
		p.kids = slices.DeleteFunc(p.kids, func(k *Node) bool { return k == bad })
	}
	c.dropped(gone)
	return nil
}

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
