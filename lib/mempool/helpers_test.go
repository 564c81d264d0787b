package mempool

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/types"
)

// The checks here look at the pool from outside (what it holds, what it refuses) and from
// inside (its indexes and links); fixture_test.go builds the chain and the transactions.

func (f *fixture) mustAccept(txs ...*types.Transaction) {
	f.tb.Helper()
	for _, tx := range txs {
		id, err := f.pool.Accept(context.Background(), tx)
		if err != nil {
			f.tb.Fatalf("Accept(%s): %v", tx.TxID(), err)
		}
		if id != tx.TxID() {
			f.tb.Fatalf("Accept returned txid %s, want %s", id, tx.TxID())
		}
	}
}

// mustReject checks that tx is refused with an error matching want (errors.Is), and that the
// pool did not change.
func (f *fixture) mustReject(tx *types.Transaction, want error) error {
	f.tb.Helper()
	before := f.pool.Info()
	_, err := f.pool.Accept(context.Background(), tx)
	if err == nil {
		f.tb.Fatalf("Accept(%s) succeeded, want %v", tx.TxID(), want)
	}
	if !errors.Is(err, want) {
		f.tb.Fatalf("Accept(%s): got %v, want errors.Is %v", tx.TxID(), err, want)
	}
	var re *RejectError
	if !errors.As(err, &re) {
		f.tb.Fatalf("Accept(%s): %T is not a *RejectError", tx.TxID(), err)
	}
	if after := f.pool.Info(); after != before {
		f.tb.Fatalf("a rejected transaction changed the pool: %+v → %+v", before, after)
	}
	checkPool(f.tb, f.pool)
	return err
}

// expect checks that the pool holds exactly txs, with exact totals.
func (f *fixture) expect(txs ...*types.Transaction) {
	f.tb.Helper()
	want := Info{Size: len(txs)}
	ids := map[types.Hash]bool{}
	for _, tx := range txs {
		id := tx.TxID()
		fee, ok := f.fees[id]
		if !ok {
			f.tb.Fatalf("no fee recorded for %s", id)
		}
		ids[id] = true
		want.Bytes += tx.SerializeSize()
		want.TotalFee += fee
		e, ok := f.pool.Get(id)
		if !ok {
			f.tb.Fatalf("transaction %s is not in the pool", id)
		}
		if e.Fee != fee || e.Size != tx.SerializeSize() {
			f.tb.Fatalf("entry %s: fee %d size %d, want %d and %d", id, e.Fee, e.Size, fee, tx.SerializeSize())
		}
	}
	if got := f.pool.Info(); got != want {
		f.tb.Fatalf("Info() = %+v, want %+v", got, want)
	}
	for _, id := range f.pool.TxIDs() {
		if !ids[id] {
			f.tb.Fatalf("unexpected transaction %s in the pool", id)
		}
	}
	checkPool(f.tb, f.pool)
}

// checkPool checks the pool's internal bookkeeping: totals, the spends index and the
// parent/child links agree with the transactions, and every transaction is valid against
// the chain plus its pool parents.
func checkPool(tb testing.TB, p *Pool) {
	tb.Helper()
	p.mu.RLock()
	defer p.mu.RUnlock()
	bytes, fees, inputs := 0, uint64(0), 0
	for id, e := range p.txs {
		if id != e.TxID || id != e.Tx.TxID() {
			tb.Fatalf("entry keyed %s has txid %s", id, e.TxID)
		}
		bytes += e.Size
		fees += e.Fee
		inputs += len(e.Tx.Inputs)
		parents := map[types.Hash]bool{}
		for i := range e.Tx.Inputs {
			op := e.Tx.Inputs[i].Outpoint()
			if p.spends[op] != e {
				tb.Fatalf("spends[%s] does not point at %s", op, id)
			}
			if _, ok := p.txs[op.TxID]; ok {
				parents[op.TxID] = true
			}
		}
		if len(parents) != len(e.parents) {
			tb.Fatalf("%s has %d pool parents, its links say %d", id, len(parents), len(e.parents))
		}
		for pid, pe := range e.parents {
			if !parents[pid] || p.txs[pid] != pe || pe.children[id] != e {
				tb.Fatalf("%s: broken link to parent %s", id, pid)
			}
		}
		for cid, ce := range e.children {
			if p.txs[cid] != ce || ce.parents[id] != e {
				tb.Fatalf("%s: broken link to child %s", id, cid)
			}
		}
		height, _ := p.chain.NextBlockInfo()
		res, err := consensus.CheckTransactionInputs(e.Tx, height, view{p.chain, p, height})
		if err != nil {
			tb.Fatalf("pool transaction %s is invalid: %v", id, err)
		}
		if res.Fee != e.Fee {
			tb.Fatalf("%s: entry fee %d, inputs say %d", id, e.Fee, res.Fee)
		}
	}
	if len(p.spends) != inputs {
		tb.Fatalf("spends index has %d outpoints, the transactions %d inputs", len(p.spends), inputs)
	}
	if bytes != p.bytes || fees != p.fees {
		tb.Fatalf("totals %d bytes %d fee, transactions say %d and %d", p.bytes, p.fees, bytes, fees)
	}
	if p.bytes > p.maxBytes {
		tb.Fatalf("pool holds %d bytes, bound %d", p.bytes, p.maxBytes)
	}
}

// tipBlock is the main chain's tip block.

func higherRate(a, b *Entry) bool { return lowerRate(b, a) }

// checkSelect checks Select's contract on sel, the result for maxBytes: parents come
// before children; every chosen transaction had the highest fee rate among those whose
// parents were all chosen before it and that still fitted; the total respects maxBytes.
func checkSelect(tb testing.TB, p *Pool, sel []*Entry, maxBytes int) {
	tb.Helper()
	p.mu.RLock()
	all := make([]*Entry, 0, len(p.txs))
	for _, e := range p.txs {
		all = append(all, e)
	}
	p.mu.RUnlock()
	chosen := map[types.Hash]bool{}
	used := 0
	for i, e := range sel {
		if chosen[e.TxID] {
			tb.Fatalf("Select returned %s twice", e.TxID)
		}
		for pid := range e.parents {
			if !chosen[pid] {
				tb.Fatalf("Select position %d: %s comes before its parent %s", i, e.TxID, pid)
			}
		}
		// No ready transaction that still fits pays more than e.
		for _, o := range all {
			if chosen[o.TxID] || o == e || used+o.Size > maxBytes {
				continue
			}
			ready := true
			for pid := range o.parents {
				ready = ready && chosen[pid]
			}
			if ready && higherRate(o, e) {
				tb.Fatalf("Select position %d: chose %s (%d/%d) while %s (%d/%d) was ready and pays more",
					i, e.TxID, e.Fee, e.Size, o.TxID, o.Fee, o.Size)
			}
		}
		chosen[e.TxID] = true
		used += e.Size
	}
	if used > maxBytes {
		tb.Fatalf("Select used %d bytes, limit %d", used, maxBytes)
	}
	// Nothing left out was both ready and small enough to fit.
	for _, o := range all {
		if chosen[o.TxID] {
			continue
		}
		ready := true
		for pid := range o.parents {
			ready = ready && chosen[pid]
		}
		if ready && used+o.Size <= maxBytes {
			tb.Fatalf("Select left out %s (%d bytes) though it was ready and fitted (%d of %d used)", o.TxID, o.Size, used, maxBytes)
		}
	}
}

func ids(es []*Entry) []types.Hash {
	out := make([]types.Hash, len(es))
	for i, e := range es {
		out[i] = e.TxID
	}
	return out
}

func txids(txs ...*types.Transaction) []types.Hash {
	out := make([]types.Hash, len(txs))
	for i, tx := range txs {
		out[i] = tx.TxID()
	}
	return out
}

func sameIDs(a, b []types.Hash) error {
	if len(a) != len(b) {
		return fmt.Errorf("%d transactions, want %d", len(a), len(b))
	}
	for i := range a {
		if a[i] != b[i] {
			return fmt.Errorf("position %d: %s, want %s", i, a[i], b[i])
		}
	}
	return nil
}
