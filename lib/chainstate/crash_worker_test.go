package chainstate

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/cointoolkit/coin/lib/chaingen"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/types"
)

// crashWorker builds blocks on a chain from a seed: transfers between three wallets (some
// spending an output of the same block), now and then a coinbase that burns part of its
// reward, and now and then a fork from up to three blocks back that wins (reorg) or ties.
// The blocks and transactions come from a chaingen generator on the chain's tips.
type crashWorker struct {
	c      *Chain
	g      *chaingen.Generator
	rng    *rand.Rand
	pkhs   []types.Hash
	pool   []types.Outpoint // outputs that may be unspent; checked against the chain when picked
	inPool map[types.Outpoint]bool
}

// newCrashWorker is a worker on c; its generator panics on a failure (it has no test).
func newCrashWorker(c *Chain, seed uint64) (*crashWorker, error) {
	tip := c.Tip()
	w := &crashWorker{c: c, g: chaingen.New(nil, c.net), rng: rand.New(rand.NewPCG(seed, tip.Height)),
		inPool: map[types.Outpoint]bool{}}
	for i := 0; i < 3; i++ {
		// The wallets follow from their names: a child finds its parent's outputs.
		pkh := w.g.Wallet(fmt.Sprintf("crash-%d", i)).PKH
		w.pkhs = append(w.pkhs, pkh)
		list, err := c.UtxosByAddress(pkh)
		if err != nil {
			return nil, err
		}
		for _, u := range list {
			w.add(u.Outpoint)
		}
	}
	return w, nil
}

func (w *crashWorker) add(op types.Outpoint) {
	if !w.inPool[op] {
		w.inPool[op] = true
		w.pool = append(w.pool, op)
	}
}

// pick finds an output spendable in a block at height on a branch that has the main chain up
// to maxHeight, not in used.
func (w *crashWorker) pick(height, maxHeight uint64, used map[types.Outpoint]bool) (chaingen.Output, bool, error) {
	for try := 0; try < 16 && len(w.pool) > 0; try++ {
		i := w.rng.IntN(len(w.pool))
		op := w.pool[i]
		e, ok, err := w.c.Utxo(op)
		if err != nil {
			return chaingen.Output{}, false, err
		}
		if !ok { // spent (a disconnect puts it back)
			w.pool[i] = w.pool[len(w.pool)-1]
			w.pool = w.pool[:len(w.pool)-1]
			delete(w.inPool, op)
			continue
		}
		if used[op] || e.Height > maxHeight || (e.Coinbase && height < e.Height+consensus.CoinbaseMaturity) ||
			!slices.Contains(w.pkhs, e.PubKeyHash) {
			continue
		}
		used[op] = true
		return chaingen.Output{Outpoint: op, Value: e.Value, PKH: e.PubKeyHash, Coinbase: e.Coinbase, Height: e.Height}, true, nil
	}
	return chaingen.Output{}, false, nil
}

// transfer builds a transfer of the inputs (each signed by its owner) into n outputs paying
// random wallets, leaving fee.
func (w *crashWorker) transfer(ins []chaingen.Output, fee uint64, n int) *types.Transaction {
	var total uint64
	for _, in := range ins {
		total += in.Value
	}
	v := total - fee
	n = max(1, min(n, int(v)))
	b := w.g.Spend(ins...).Fee(fee)
	for i := 0; i < n; i++ {
		part := v / uint64(n)
		if i == n-1 {
			part = v - part*uint64(n-1)
		}
		b.Pay(w.pkhs[w.rng.IntN(len(w.pkhs))], part)
	}
	return b.Tx()
}

// txs builds up to n transfers for a block at height on the main chain up to maxHeight.
func (w *crashWorker) txs(height, maxHeight uint64, n int, used map[types.Outpoint]bool) ([]*types.Transaction, error) {
	var txs []*types.Transaction
	for i := 0; i < n; i++ {
		var ins []chaingen.Output
		for j := 1 + w.rng.IntN(2); j > 0; j-- {
			in, ok, err := w.pick(height, maxHeight, used)
			if err != nil {
				return nil, err
			}
			if ok {
				ins = append(ins, in)
			}
		}
		if len(ins) == 0 {
			break
		}
		var total, fee uint64
		for _, in := range ins {
			total += in.Value
		}
		if total > 10_000 {
			fee = w.rng.Uint64N(1000)
		}
		tx := w.transfer(ins, fee, 1+w.rng.IntN(3))
		txs = append(txs, tx)
		if w.rng.IntN(4) == 0 { // spend its first output in the same block
			txs = append(txs, w.transfer([]chaingen.Output{chaingen.OutputOf(tx, 0)}, 0, 1))
		}
	}
	return txs, nil
}

// block builds and solves a block on parent paying a random wallet the subsidy and the fees
// (the decay pool stays empty with nominal values), now and then less a burned part.
func (w *crashWorker) block(parent *Node, txs []*types.Transaction) *types.Block {
	extra := make([]byte, 8)
	for i := range extra {
		extra[i] = byte(w.rng.Uint32())
	}
	mungers := []chaingen.Munger{chaingen.PayTo(w.pkhs[w.rng.IntN(len(w.pkhs))]), chaingen.Extra(extra)}
	if w.rng.IntN(10) == 0 {
		mungers = append(mungers, chaingen.Burn(w.rng.Uint64N(1000)))
	}
	return w.g.NextOn("", chaingen.Template{Parent: parent.Hash, Height: parent.Height + 1,
		Target: parent.Header.DifficultyTarget, Timestamp: parent.Header.Timestamp + 60}, txs, mungers...)
}

// process hands a block to the chain and keeps the pool up to date.
func (w *crashWorker) process(b *types.Block) (*Node, error) {
	res, err := w.c.ProcessBlock(b)
	if err != nil {
		return nil, fmt.Errorf("block %s: %w", b.Hash(), err)
	}
	for _, d := range res.Disconnected {
		for _, tx := range d.Block.Transactions[1:] {
			for i := range tx.Inputs {
				w.add(tx.Inputs[i].Outpoint())
			}
		}
	}
	for _, cb := range res.Connected {
		for i, tx := range cb.Block.Transactions {
			for j := range tx.Outputs {
				w.add(types.Outpoint{TxID: cb.TxIDs[i], Index: uint32(j)})
			}
		}
	}
	n := w.c.NodeByHash(b.Hash())
	if n == nil {
		return nil, errors.New("processed block not in the index")
	}
	return n, nil
}

// step adds one block on the tip, or a fork.
func (w *crashWorker) step() error {
	tip := w.c.Tip()
	if tip.Height > 5 && w.rng.IntN(10) == 0 {
		depth := uint64(1 + w.rng.IntN(3))
		fork := w.c.NodeAt(tip.Height - depth)
		length := depth + 1 // one more than the blocks it replaces: a reorg
		if w.rng.IntN(4) == 0 {
			length = depth // as much work as the main chain: the first seen stays
		}
		used := map[types.Outpoint]bool{}
		parent := fork
		for i := uint64(0); i < length; i++ {
			txs, err := w.txs(parent.Height+1, fork.Height, w.rng.IntN(3), used)
			if err != nil {
				return err
			}
			if parent, err = w.process(w.block(parent, txs)); err != nil {
				return err
			}
		}
		return nil
	}
	txs, err := w.txs(tip.Height+1, tip.Height, w.rng.IntN(5), map[types.Outpoint]bool{})
	if err != nil {
		return err
	}
	_, err = w.process(w.block(tip, txs))
	return err
}
