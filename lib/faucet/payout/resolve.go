package payout

import (
	"context"
	"encoding/hex"
	"errors"
	"slices"

	"github.com/cointoolkit/coin/lib/jsonrpc"
	"github.com/cointoolkit/coin/lib/reason"
	"github.com/cointoolkit/coin/lib/types"
	"github.com/cointoolkit/coin/lib/wallet"
)

// Settling the payout journal (protocol §14): every journaled payout is sent again until it
// is mined, and one whose inputs a mined transaction spent (provably conflicted) is paid
// again by a new transaction.

// addJournal adds p to the engine's copy of the journal and reserves its inputs: a new
// payout never spends them, even when the node shows them unspent (it lost a payout that
// the journal will send again), so the engine itself never makes a conflict.
func (e *Engine) addJournal(p *Payout) {
	e.journal[p.TxID] = p
	for _, in := range p.Tx.Inputs {
		e.reserved[in.Outpoint()] = true
	}
	e.owed.Store(int64(len(e.journal)))
}

// dropJournal removes a payout from the engine's copy of the journal.
func (e *Engine) dropJournal(txid types.Hash) {
	if p, ok := e.journal[txid]; ok {
		for _, in := range p.Tx.Inputs {
			delete(e.reserved, in.Outpoint())
		}
	}
	delete(e.journal, txid)
	delete(e.minedAt, txid)
	e.owed.Store(int64(len(e.journal)))
}

// payoutState is what a pass of resolve learned about a journaled payout.
type payoutState int

const (
	stateUnknown    payoutState = iota // not settled in this pass (refused, or not asked)
	stateInPool                        // in the node's mempool
	stateMined                         // in the chain
	stateConflicted                    // an input was spent by a mined transaction
)

// tipID names the node's tip (height and hash), to tell whether a block arrived during a
// pass.
func (e *Engine) tipID(ctx context.Context) (string, error) {
	h, err := e.node.GetBlockCount(ctx)
	if err != nil {
		return "", err
	}
	return e.node.GetBlockHash(ctx, h)
}

// resolve goes through the journal, oldest first (parents before children): a payout mined
// FinalConfirmations deep leaves it; one the node does not have is sent again, unless it is
// provably conflicted, which resolve returns for repay. A conflict is concluded only when
// no block arrived during the pass, so a payout mined meanwhile is never taken for one whose
// inputs went elsewhere. An unreachable node ends the pass.
func (e *Engine) resolve(ctx context.Context) []*Payout {
	if len(e.journal) == 0 {
		return nil
	}
	list := make([]*Payout, 0, len(e.journal))
	for _, p := range e.journal {
		list = append(list, p)
	}
	slices.SortFunc(list, func(a, b *Payout) int { return cmpUint(a.Seq, b.Seq) })
	tip, err := e.tipID(ctx)
	if err != nil {
		return nil
	}
	state := make(map[types.Hash]payoutState, len(list))
	var unspent map[types.Outpoint]bool // the faucet's outputs in the chain, read when needed
	var conflicted []*Payout
	height := e.lastHeight.Load()
	for _, p := range list {
		// A payout seen mined is asked about again once it should be final (a
		// reorganisation that dropped it is noticed then).
		if at, ok := e.minedAt[p.TxID]; ok && height+1 < at+FinalConfirmations {
			state[p.TxID] = stateMined
			continue
		}
		t, err := e.node.GetTransaction(ctx, p.TxID.String())
		if err == nil && t.Confirmations > 0 && t.BlockHeight != nil {
			e.minedAt[p.TxID] = *t.BlockHeight
		} else {
			delete(e.minedAt, p.TxID)
		}
		switch {
		case err == nil && t.Confirmations >= FinalConfirmations:
			if err := e.cfg.Journal.Done(p); err != nil {
				e.log.Error("removing a mined payout from the journal", "txid", p.TxID, "err", err)
				return nil
			}
			e.dropJournal(p.TxID)
			delete(e.pending, p.TxID)
			state[p.TxID] = stateMined
			continue
		case err == nil && t.Confirmations > 0:
			delete(e.pending, p.TxID)
			state[p.TxID] = stateMined
			continue
		case err == nil:
			state[p.TxID] = stateInPool
			continue
		case !errors.Is(err, reason.TxNotFound):
			return nil
		}
		if unspent == nil {
			if unspent, err = e.chainOutputs(ctx); err != nil {
				return nil
			}
		}
		c, err := e.isConflicted(ctx, p, state, unspent)
		if err != nil {
			return nil
		}
		if c {
			state[p.TxID] = stateConflicted
			conflicted = append(conflicted, p)
			continue
		}
		if _, err := e.node.SendRawTransaction(ctx, hex.EncodeToString(p.Tx.Bytes())); err != nil {
			var rpcErr *jsonrpc.Error
			if !errors.As(err, &rpcErr) {
				return nil
			}
			if errors.Is(err, reason.AlreadyInMempool) || errors.Is(err, reason.AlreadyInChain) {
				state[p.TxID] = stateInPool
				continue
			}
			e.log.Warn("a journaled payout the node lost is refused again; it stays journaled", "txid", p.TxID,
				"claims", len(p.Claims), "reason", reason.Of(err), "message", rpcErr.Message)
			continue
		}
		state[p.TxID] = stateInPool
		e.log.Info("payout lost by the node; sent again from the journal", "txid", p.TxID, "claims", len(p.Claims))
	}
	if len(conflicted) > 0 {
		if after, err := e.tipID(ctx); err != nil || after != tip {
			return nil // a block arrived: decide at the next pass
		}
	}
	return conflicted
}

func cmpUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// chainOutputs are the unspent outputs of the faucet's addresses in the chain (mempool left
// out).
func (e *Engine) chainOutputs(ctx context.Context) (map[types.Outpoint]bool, error) {
	us, err := wallet.ListUTXOs(ctx, e.node, e.addrs, false)
	if err != nil {
		return nil, err
	}
	out := make(map[types.Outpoint]bool, len(us))
	for i := range us {
		if id, err := types.ParseHash(us[i].TxID); err == nil {
			out[types.Outpoint{TxID: id, Index: us[i].Index}] = true
		}
	}
	return out, nil
}

// isConflicted reports whether p, which is not in the chain nor in the node's mempool, can
// never be mined: an input of it is spent in the chain (its transaction is mined and the
// output is not unspent), or comes from a journaled payout that is conflicted itself.
// An input whose transaction the node does not know proves nothing.
func (e *Engine) isConflicted(ctx context.Context, p *Payout, state map[types.Hash]payoutState, unspent map[types.Outpoint]bool) (bool, error) {
	for _, in := range p.Tx.Inputs {
		op := in.Outpoint()
		if unspent[op] {
			continue
		}
		if st, ok := state[op.TxID]; ok {
			switch st {
			case stateConflicted:
				return true, nil
			case stateMined:
				return true, nil // mined, and the output is spent in the chain (not by p)
			}
			continue
		}
		t, err := e.node.GetTransaction(ctx, op.TxID.String())
		if err != nil {
			if errors.Is(err, reason.TxNotFound) {
				continue
			}
			return false, err
		}
		if t.Confirmations > 0 {
			return true, nil
		}
	}
	return false, nil
}

// repay pays again the claims of old, a conflicted payout, with a new transaction from the
// faucet's outputs: journaled in one write with old's record as conflicted, then broadcast.
// If it cannot be built now (funds), old stays journaled and the next pass tries again; once
// journaled, the repayment is owed like any payout.
func (e *Engine) repay(ctx context.Context, old *Payout) {
	plan, n, err := e.plan(old.Claims)
	if err == nil && n < len(old.Claims) {
		err = ErrFaucetEmpty
	}
	if err == nil {
		err = wallet.Sign(plan, e.cfg.Keys, e.cfg.Net.Magic)
	}
	if err != nil {
		e.log.Error("a conflicted payout cannot be paid again yet; will retry", "txid", old.TxID, "claims", len(old.Claims), "err", err)
		return
	}
	p := &Payout{Tx: plan.Tx, TxID: plan.TxID, Claims: old.Claims}
	if err := e.cfg.Journal.Replace(old, p); err != nil {
		e.log.Error("journaling the repayment of a conflicted payout", "txid", old.TxID, "err", err)
		return
	}
	e.dropJournal(old.TxID)
	delete(e.pending, old.TxID)
	e.addJournal(p)
	e.mu.Lock()
	e.repaid++
	e.mu.Unlock()
	e.log.Warn("a payout was conflicted by a mined transaction; its claims are paid again", "conflicted", old.TxID,
		"repayment", p.TxID, "claims", len(p.Claims))
	_, err = e.node.SendRawTransaction(ctx, hex.EncodeToString(p.Tx.Bytes()))
	var rpcErr *jsonrpc.Error
	if err != nil && !errors.Is(err, reason.AlreadyInMempool) {
		e.needSync = true
		if errors.As(err, &rpcErr) {
			e.log.Warn("the node refused a repayment; it stays journaled", "txid", p.TxID, "reason", reason.Of(err), "message", rpcErr.Message)
		}
		return
	}
	e.apply(plan)
}
