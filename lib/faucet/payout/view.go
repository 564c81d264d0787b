package payout

import (
	"context"
	"fmt"
	"time"

	"github.com/cointoolkit/coin/lib/chainfollow"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/rpcapi"
	"github.com/cointoolkit/coin/lib/types"
	"github.com/cointoolkit/coin/lib/wallet"
)

// The engine's view of the faucet's outputs: confirmed and unconfirmed coins with the depth
// of their unconfirmed chains, the pending payouts, and how they follow the node.

// confirmBlock forgets the pending payouts that b, a new main-chain block, mined.
func (e *Engine) confirmBlock(b chainfollow.Block) {
	for _, id := range b.Txs {
		if h, err := types.ParseHash(id); err == nil {
			delete(e.pending, h)
			if _, ok := e.journal[h]; ok {
				e.minedAt[h] = b.Height
			}
		}
	}
}

// depthOf is the chain depth of a transaction of the engine (0 when it is not pending).
func (e *Engine) depthOf(txid types.Hash) int {
	p, ok := e.pending[txid]
	if !ok {
		return 0
	}
	return p.depth
}

// recomputeDepths recomputes every pending transaction's depth from its parents (pending
// ones are in creation order by construction: a parent is always older).
func (e *Engine) recomputeDepths() {
	memo := make(map[types.Hash]int, len(e.pending))
	var depth func(types.Hash) int
	depth = func(id types.Hash) int {
		p, ok := e.pending[id]
		if !ok {
			return 0
		}
		if d, ok := memo[id]; ok {
			return d
		}
		memo[id] = 1 // cycle guard (cannot happen)
		d := 0
		for _, par := range p.parents {
			d = max(d, depth(par))
		}
		memo[id] = d + 1
		return d + 1
	}
	for id, p := range e.pending {
		p.depth = depth(id)
	}
}

// sync replaces the engine's view of the faucet's outputs with the node's pending view,
// after settling the journal (resolve: sending again the payouts the node does not have);
// then it pays again the claims of the payouts it found conflicted. The height it records
// (where the engine's follower starts) is read before the journal is: a block that comes
// while it is settled is then delivered by the follower, not taken as already seen.
func (e *Engine) sync(ctx context.Context) error {
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	h, err := e.node.GetBlockCount(cctx)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrNodeUnavailable, err)
	}
	conflicted := e.resolve(cctx)
	us, err := wallet.ListUTXOs(cctx, e.node, e.addrs, true)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrNodeUnavailable, err)
	}
	coins, err := wallet.Coins(us)
	if err != nil {
		return err
	}
	e.readRates(cctx, h)
	e.recomputeDepths()
	e.coins = make(map[types.Outpoint]*ecoin, len(coins))
	var immature uint64
	eff := make(map[types.Outpoint]uint64, len(us))
	for i := range us {
		u := &us[i].UTXO
		if us[i].Immature {
			immature += effectiveValue(u)
		}
		if id, err := types.ParseHash(u.TxID); err == nil {
			eff[types.Outpoint{TxID: id, Index: u.Index}] = effectiveValue(u)
		}
	}
	for _, c := range coins {
		v, ok := eff[c.Outpoint]
		if !ok {
			v = c.Value
		}
		c.Value = e.marginValue(v, c.PKH)
		d := 0
		if c.Confirmations == 0 {
			d = e.depthOf(c.Outpoint.TxID)
			if d == 0 {
				d = 1 // an unconfirmed output the engine did not make: depth unknown, at least 1
			}
		}
		e.coins[c.Outpoint] = &ecoin{Coin: c, eff: v, depth: d}
	}
	e.lastHeight.Store(h)
	e.needSync = false
	e.mu.Lock()
	e.immature = immature
	e.synced = true
	e.mu.Unlock()
	e.updateBalance()
	for _, p := range conflicted {
		e.repay(cctx, p)
	}
	return nil
}

// effectiveValue is what u is worth when spent in the next block as the node reports it
// (protocol §8), never more than its nominal value.
func effectiveValue(u *rpcapi.UTXO) uint64 {
	if u.EffectiveValue > 0 && u.EffectiveValue <= u.Value {
		return u.EffectiveValue
	}
	return u.Value
}

// readRates asks the node for the decay rate of each of the faucet's addresses' clusters.
// When it cannot say, the rate is R_MAX, the most a cluster of no agent decays. A cluster's
// rate is the chain's (getclusterinfo reads no mempool), so rates all read at height h are
// not read again until the height changes: syncs between blocks (after a refusal, a mined
// payout) cost no getclusterinfo.
func (e *Engine) readRates(ctx context.Context, h uint64) {
	if e.ratesRead && e.ratesAt == h {
		return
	}
	e.ratesAt, e.ratesRead = h, true
	for i, a := range e.addrs {
		pkh := e.cfg.Keys[i].PKH
		ci, err := e.node.GetClusterInfo(ctx, a)
		if err != nil {
			if _, known := e.rates[pkh]; !known {
				e.log.Warn("reading the decay rate of the faucet's cluster; assuming the highest", "address", a, "err", err)
			}
			e.rates[pkh] = consensus.DecayRateMax
			e.ratesRead = false // ask again at the next sync
			continue
		}
		e.rates[pkh] = min(ci.RatePerBlock, consensus.DecayRateOne)
	}
}

// marginValue is what an output of pkh worth eff at the next block is still worth
// DecayMargin blocks later at its cluster's rate: the value the engine spends it for, so
// that its transactions stay valid while they wait that long.
func (e *Engine) marginValue(eff uint64, pkh types.Hash) uint64 {
	rate, ok := e.rates[pkh]
	if !ok {
		rate = consensus.DecayRateMax
	}
	return consensus.EffectiveValue(eff, rate, uint64(e.cfg.DecayMargin))
}

func (e *Engine) updateBalance() {
	var s uint64
	for _, c := range e.coins {
		s += c.eff
	}
	e.mu.Lock()
	e.spendable = s
	e.mu.Unlock()
}

// apply updates the engine's view with an accepted transaction.
func (e *Engine) apply(plan *wallet.Plan) {
	p := &ptx{tx: plan.Tx}
	for _, c := range plan.Coins {
		if ec, ok := e.coins[c.Outpoint]; ok {
			p.depth = max(p.depth, ec.depth)
		}
		if _, ok := e.pending[c.Outpoint.TxID]; ok {
			p.parents = append(p.parents, c.Outpoint.TxID)
		}
		delete(e.coins, c.Outpoint)
	}
	p.depth++
	e.pending[plan.TxID] = p
	for i, o := range plan.Tx.Outputs {
		if e.ownPKH[o.PubKeyHash] {
			op := types.Outpoint{TxID: plan.TxID, Index: uint32(i)}
			e.coins[op] = &ecoin{Coin: wallet.Coin{Outpoint: op, Value: e.marginValue(o.Value, o.PubKeyHash), PKH: o.PubKeyHash},
				eff: o.Value, depth: p.depth}
		}
	}
	e.updateBalance()
}
