package chaingen

import (
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/types"
)

// Output is an output a transaction can spend: where it is, what it holds and whom it pays.
type Output struct {
	Outpoint types.Outpoint
	Value    uint64
	PKH      types.Hash
	Coinbase bool
	Height   uint64 // of the block that holds it, on the branch it was last seen; 0 if unmined
}

// OutputOf is output i of tx (its height unknown: 0).
func OutputOf(tx *types.Transaction, i int) Output { return outputOf(tx, tx.TxID(), i) }

func outputOf(tx *types.Transaction, id types.Hash, i int) Output {
	return Output{Outpoint: types.Outpoint{TxID: id, Index: uint32(i)}, Value: tx.Outputs[i].Value,
		PKH: tx.Outputs[i].PubKeyHash, Coinbase: tx.IsCoinbase()}
}

// OutputsOf is every output of tx.
func OutputsOf(tx *types.Transaction) []Output {
	id := tx.TxID()
	out := make([]Output, len(tx.Outputs))
	for i := range out {
		out[i] = outputOf(tx, id, i)
	}
	return out
}

// recordLocked remembers the outputs of tx (and, in a block, their height).
func (g *Generator) recordLocked(tx *types.Transaction, height uint64, mined bool) {
	id := tx.TxID()
	for i, o := range tx.Outputs {
		op := types.Outpoint{TxID: id, Index: uint32(i)}
		if !mined {
			if _, ok := g.outputs[op]; ok {
				continue
			}
			height = 0
		}
		g.outputs[op] = Output{Outpoint: op, Value: o.Value, PKH: o.PubKeyHash, Coinbase: tx.IsCoinbase(), Height: height}
	}
}

// Out is output i of the transaction called tx (see TxBuilder.Name).
func (g *Generator) Out(tx string, i int) Output {
	g.tb.Helper()
	return OutputOf(g.Tx(tx), i)
}

// Tx is the transaction called name.
func (g *Generator) Tx(name string) *types.Transaction {
	g.tb.Helper()
	g.mu.Lock()
	tx, ok := g.txs[name]
	g.mu.Unlock()
	if !ok {
		g.tb.Fatalf("chaingen: no transaction called %q", name)
	}
	return tx
}

// Coinbase is the first output of the named block's coinbase.
func (g *Generator) Coinbase(block string) Output {
	g.tb.Helper()
	e := g.entry(block)
	o := OutputOf(e.b.Transactions[0], 0)
	o.Height = e.height
	return o
}

// Lookup is the output at op, if a block or transaction the generator built created it.
func (g *Generator) Lookup(op types.Outpoint) (Output, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	o, ok := g.outputs[op]
	return o, ok
}

// FeeOf is what tx leaves to the miner: its inputs (when the generator knows them all) less
// its outputs, else the fee it was built with, else 0. A block's coinbase claims the fees
// of its transactions.
func (g *Generator) FeeOf(tx *types.Transaction) uint64 {
	var in, out uint64
	known := true
	g.mu.Lock()
	for i := range tx.Inputs {
		o, ok := g.outputs[tx.Inputs[i].Outpoint()]
		known = known && ok
		in += o.Value
	}
	fee := g.fees[tx.TxID()]
	g.mu.Unlock()
	if !known || len(tx.Inputs) == 0 {
		return fee
	}
	for _, o := range tx.Outputs {
		out += o.Value
	}
	if in < out {
		return 0
	}
	return in - out
}

// Fee is the fee tx was built to pay (TxBuilder), whatever its inputs hold.
func (g *Generator) Fee(tx *types.Transaction) (uint64, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	fee, ok := g.fees[tx.TxID()]
	return fee, ok
}

// Spendable is every output on the branch ending at the named block that a child of that
// block may spend: unspent on the branch, coinbases mature at the child's height, paying
// owner (or any known wallet when owner is nil), and not handed out by Take. Oldest first.
func (g *Generator) Spendable(tip string, owner *Wallet) []Output {
	g.tb.Helper()
	branch := g.Branch(tip)
	next := g.Height(tip) + 1
	var order []types.Outpoint
	unspent := map[types.Outpoint]Output{}
	for i, b := range branch {
		height := next - uint64(len(branch)-i)
		for _, tx := range b.Transactions {
			for j := range tx.Inputs {
				delete(unspent, tx.Inputs[j].Outpoint())
			}
			id := tx.TxID()
			for k := range tx.Outputs {
				o := outputOf(tx, id, k)
				o.Height = height
				order = append(order, o.Outpoint)
				unspent[o.Outpoint] = o
			}
		}
	}
	var out []Output
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, op := range order {
		o, ok := unspent[op]
		if !ok || g.taken[op] || o.Coinbase && o.Height+consensus.CoinbaseMaturity > next {
			continue
		}
		delete(unspent, op) // an outpoint listed twice (a duplicated transaction) counts once
		if w, known := g.byPKH[o.PKH]; !known || owner != nil && w != owner {
			continue
		}
		out = append(out, o)
	}
	return out
}

// Take hands out the n oldest spendable outputs (Spendable) of owner on the branch ending at
// tip, and never hands them out again: each test spends its own.
func (g *Generator) Take(tip string, owner *Wallet, n int) []Output {
	g.tb.Helper()
	all := g.Spendable(tip, owner)
	if len(all) < n {
		g.tb.Fatalf("chaingen: %d spendable outputs on %s, want %d", len(all), tip, n)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, o := range all[:n] {
		g.taken[o.Outpoint] = true
	}
	return all[:n:n]
}
