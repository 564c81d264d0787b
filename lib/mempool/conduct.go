package mempool

import (
	"fmt"

	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/policy"
	"github.com/cointoolkit/coin/lib/types"
)

// The pending view of protocol §9.3. An agent transaction is checked against the chain's
// conduct state with the effects of the agent transactions accepted before it, so its own
// effect is known the moment it is accepted. One that relies on another pending
// transaction's effect (the counterparty's registration, the contract's creation or
// fulfilment) becomes that transaction's child, exactly like a spender of its outputs: it is
// selected after it, and removed with it. After every block, and whenever an agent
// transaction leaves the pool, the view is rebuilt from the chain and the remaining agent
// transactions are checked again in arrival order; those that became invalid are dropped
// with a log line.

func (p *Pool) resetConduct() {
	p.conduct = consensus.NewConductOverlay(p.chain.Conduct())
	p.agentWriter = make(map[types.Hash]*Entry)
	p.contractWriter = make(map[types.Hash]*Entry)
	p.conductStale = false
}

func (p *Pool) conductContext(height uint64) consensus.ConductContext {
	return consensus.ConductContext{Height: height, SameOwner: consensus.SameOwner(p.chain)}
}

// conductReads lists the agents and contracts e's check read or wrote.
func conductReads(e *Entry) (agents, contracts []types.Hash) {
	tx := e.Tx
	agents = append(agents, consensus.Actor(tx))
	switch tx.Kind {
	case types.KindVouch:
		if pl, err := types.DecodeVouchPayload(tx.Payload); err == nil {
			agents = append(agents, pl.Target)
		}
	case types.KindContractCreate:
		if pl, err := types.DecodeContractCreatePayload(tx.Payload); err == nil {
			agents = append(agents, pl.Counterparty)
		}
	case types.KindContractFulfil, types.KindContractRefund:
		if pl, err := types.DecodeContractRefPayload(tx.Payload); err == nil {
			contracts = append(contracts, pl.ContractID)
		}
	case types.KindReview:
		if pl, err := types.DecodeReviewPayload(tx.Payload); err == nil {
			agents = append(agents, pl.Subject)
			contracts = append(contracts, pl.ContractID)
		}
	}
	for a := range e.Conduct.Agents {
		agents = append(agents, a)
	}
	for c := range e.Conduct.Contracts {
		contracts = append(contracts, c)
	}
	return agents, contracts
}

// applyConduct layers e's effect over the pending view and links e to the pool
// transactions whose effects it relied on.
func (p *Pool) applyConduct(e *Entry) {
	agents, contracts := conductReads(e)
	link := func(w *Entry) {
		if w != nil && w != e {
			e.parents[w.TxID] = w
			w.children[e.TxID] = e
		}
	}
	for _, a := range agents {
		link(p.agentWriter[a])
	}
	for _, c := range contracts {
		link(p.contractWriter[c])
	}
	for a := range e.Conduct.Agents {
		p.agentWriter[a] = e
	}
	for c := range e.Conduct.Contracts {
		p.contractWriter[c] = e
	}
	p.conduct.Merge(e.Conduct)
}

// recheckConduct rebuilds the pending view from the chain when a block changed it or an
// agent transaction left, checking the remaining agent transactions again in arrival order
// at the next block's height; those that fail leave the pool with their descendants.
func (p *Pool) recheckConduct() {
	var agents []*Entry
	for _, e := range p.txs {
		if e.Conduct != nil {
			agents = append(agents, e)
		}
	}
	if len(agents) == 0 && !p.conductStale {
		if !p.conduct.Empty() {
			p.resetConduct()
		}
		return
	}
	sortBySeq(agents)
	p.resetConduct()
	height, _ := p.chain.NextBlockInfo()
	ctx := p.conductContext(height)
	for _, e := range agents {
		if _, ok := p.txs[e.TxID]; !ok {
			continue // left as a descendant of an earlier one
		}
		ch, err := consensus.CheckConduct(e.Tx, e.TxID, ctx, p.conduct)
		if err != nil {
			p.log.Info("mempool: dropped an agent transaction the chain made invalid", "txid", e.TxID, "kind", e.Tx.Kind, "err", err)
			p.remove(e, true)
			continue
		}
		e.Conduct = ch
		p.applyConduct(e)
	}
	p.conductStale = false
}

// Conduct is the pending view (protocol §9.3): the chain's agent and contract state with the
// effects of the pool's agent transactions. It copies nothing: each lookup reads the pool
// under its lock (and the chain for what the pool does not change), so a single lookup costs
// a map access, and two lookups may see the pool as it was at different times.
func (p *Pool) Conduct() consensus.ConductView { return pendingView{p} }

// pendingView is Pool.Conduct: the pool's overlay, read under the pool's lock. Its records
// are never changed in place (a change replaces them), so they may be returned as they are.
type pendingView struct{ p *Pool }

func (v pendingView) Agent(pkh types.Hash) (*consensus.AgentRecord, bool, error) {
	v.p.mu.RLock()
	defer v.p.mu.RUnlock()
	return v.p.conduct.Agent(pkh)
}

func (v pendingView) Contract(id types.Hash) (*consensus.ContractRecord, bool, error) {
	v.p.mu.RLock()
	defer v.p.mu.RUnlock()
	return v.p.conduct.Contract(id)
}

func (v pendingView) Vouched(voucher, target types.Hash) (bool, error) {
	v.p.mu.RLock()
	defer v.p.mu.RUnlock()
	return v.p.conduct.Vouched(voucher, target)
}

func (v pendingView) FulfilledBetween(a, b types.Hash) (uint64, error) {
	v.p.mu.RLock()
	defer v.p.mu.RUnlock()
	return v.p.conduct.FulfilledBetween(a, b)
}

func (v pendingView) ReviewsOf(reviewer, subject types.Hash) (uint64, error) {
	v.p.mu.RLock()
	defer v.p.mu.RUnlock()
	return v.p.conduct.ReviewsOf(reviewer, subject)
}

// PendingAgents are the agents whose records the pool's transactions change (new
// registrations included), with their pending records.
func (p *Pool) PendingAgents() map[types.Hash]*consensus.AgentRecord {
	p.mu.RLock()
	defer p.mu.RUnlock()
	out := make(map[types.Hash]*consensus.AgentRecord, len(p.conduct.Agents))
	for k, v := range p.conduct.Agents {
		cp := *v
		out[k] = &cp
	}
	return out
}

// recheckFees values every remaining transaction's inputs again at the next block's height
// (protocol §8): decay lowers them block by block, so a transaction whose inputs decayed below
// its outputs, or whose fee fell below the minimum relay fee, leaves the pool with its
// descendants and a log line; the others keep their new fee.
func (p *Pool) recheckFees() {
	if len(p.txs) == 0 {
		return
	}
	height, _ := p.chain.NextBlockInfo()
	es := make([]*Entry, 0, len(p.txs))
	for _, e := range p.txs {
		es = append(es, e)
	}
	sortBySeq(es) // parents before children
	v := view{p.chain, p, height}
	for _, e := range es {
		if _, ok := p.txs[e.TxID]; !ok {
			continue
		}
		res, err := consensus.CheckTransactionInputs(e.Tx, height, v)
		if err == nil && res.Fee < uint64(e.Size)*policy.MinRelayFeePerByte {
			err = fmt.Errorf("%w: fee %d is below the minimum relay fee %d", ErrFeeTooLow, res.Fee, uint64(e.Size)*policy.MinRelayFeePerByte)
		}
		if err != nil {
			p.log.Info("mempool: dropped a transaction whose inputs decayed", "txid", e.TxID, "err", err)
			p.remove(e, true)
			continue
		}
		p.fees += res.Fee - e.Fee
		e.Fee = res.Fee
	}
}
