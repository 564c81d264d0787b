package payout

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/cointoolkit/coin/lib/jsonrpc"
	"github.com/cointoolkit/coin/lib/reason"
	"github.com/cointoolkit/coin/lib/types"
	"github.com/cointoolkit/coin/lib/wallet"
)

// A round: choosing outputs for a batch of claims, sending the transaction and reading the
// node's answer.

// candidates are the outputs a new transaction may spend: not at the chain depth limit, not
// spent by a journaled payout (which the node may have lost and will get again), largest
// first (one big change output pays most rounds alone, which keeps transactions
// small).
func (e *Engine) candidates() []wallet.Coin {
	out := make([]wallet.Coin, 0, len(e.coins))
	for op, c := range e.coins {
		if c.depth < e.cfg.MaxChainDepth && !e.avoid[op] && !e.reserved[op] {
			out = append(out, c.Coin)
		}
	}
	wallet.SortLargestFirst(out)
	return out
}

// plan builds the transaction paying as many of the claims, in order, as the funds allow.
func (e *Engine) plan(claims []Claim) (*wallet.Plan, int, error) {
	cands := e.candidates()
	var have uint64
	for _, c := range cands {
		have += c.Value
	}
	n := len(claims)
	// Drop claims from the end until their sum fits what is there (fee aside).
	var sum uint64
	for i, c := range claims {
		if sum+c.Amount > have {
			n = i
			break
		}
		sum += c.Amount
	}
	for ; n > 0; n-- {
		pays := make([]wallet.Payment, n)
		for i := range pays {
			pays[i] = wallet.Payment{PKH: claims[i].PKH, Value: claims[i].Amount}
		}
		p, err := wallet.Select(cands, wallet.Request{Payments: pays, FeeRate: e.cfg.FeeRate,
			Change: e.cfg.Keys[0].PKH, MaxInputs: e.cfg.MaxInputs})
		if err == nil {
			return p, n, nil
		}
		if !errors.Is(err, wallet.ErrInsufficientFunds) && !errors.Is(err, wallet.ErrTooLarge) {
			return nil, 0, err
		}
	}
	if len(cands) < len(e.coins) {
		return nil, 0, ErrBusy
	}
	return nil, 0, ErrFaucetEmpty
}

// maxAttempts bounds the tries of one round: the node may refuse a transaction because the
// engine's view was stale or an output's unconfirmed chain is too long for it; each retry
// re-reads the node's view and keeps clear of the refused outputs.
const maxAttempts = 4

// round pays a batch of claims with one transaction, retrying (see maxAttempts) when the
// node's answer shows the engine's view was stale.
func (e *Engine) round(ctx context.Context, batch []*request) {
	claims := make([]Claim, len(batch))
	for i, r := range batch {
		claims[i] = r.claim
	}
	fail := func(rs []*request, err error) {
		for _, r := range rs {
			r.done <- result{err: err}
		}
	}
	for attempt := 0; ; attempt++ {
		if e.needSync {
			if err := e.sync(ctx); err != nil {
				fail(batch, err)
				return
			}
		}
		plan, n, err := e.plan(claims)
		if err != nil {
			if attempt == 0 && (errors.Is(err, ErrFaucetEmpty) || errors.Is(err, ErrBusy)) {
				e.needSync = true // maybe funds arrived or matured since the last read
				continue
			}
			fail(batch, err)
			return
		}
		paid := claims[:n]
		txid, mined, err := e.send(ctx, plan, paid)
		if err == nil {
			e.apply(plan)
			if mined {
				// Already in the chain: nothing of it is pending, and the next sync reads its
				// outputs as confirmed.
				delete(e.pending, txid)
				e.needSync = true
			}
			for _, r := range batch[:n] {
				r.done <- result{txid: txid}
			}
			e.mu.Lock()
			e.paid += uint64(n)
			e.txs++
			e.mu.Unlock()
			if n < len(batch) {
				fail(batch[n:], ErrFaucetEmpty)
			}
			return
		}
		var rej *RejectedError
		if errors.As(err, &rej) && attempt+1 < maxAttempts {
			switch refusalOf(err) {
			case refusedStale:
				// The view was stale (inputs spent or gone, for example after a node restart
				// emptied its mempool): read the node's view again.
				e.log.Info("node rejected a payout; retrying with a fresh view", "txid", plan.TxID,
					"reason", reason.Of(err), "message", rej.Message)
				e.needSync = true
				continue
			case refusedChain:
				// The inputs' unconfirmed chain is too long for the node: keep clear of them
				// until the next block.
				e.log.Info("node rejected a payout; retrying with other outputs", "txid", plan.TxID,
					"reason", reason.Of(err), "message", rej.Message)
				for _, c := range plan.Coins {
					e.avoid[c.Outpoint] = true
				}
				continue
			}
		}
		fail(batch, err)
		return
	}
}

// refusal is what a node's refusal of a payout says about the engine's view.
type refusal int

const (
	refusedOther refusal = iota
	refusedStale         // an input is missing or spent, or not yet spendable
	refusedChain         // the inputs' chain of unconfirmed transactions is too long
)

// staleKinds are the node's refusals that mean the engine's view of its outputs was stale:
// an input is missing or spent, by a block or by a transaction in the mempool, or not yet
// spendable; or the inputs are worth less than the engine counted (blocks it has not seen
// yet decayed them beyond its margin, protocol §8), below the outputs or the relay fee.
var staleKinds = []reason.Reason{reason.MissingInputs, reason.Conflict, reason.DoubleSpend, reason.ImmatureCoinbase,
	reason.InsufficientFunds, reason.FeeTooLow}

// refusalOf classifies the node's refusal by its kind (error.data.reason), never by its
// message.
func refusalOf(err error) refusal {
	for _, k := range staleKinds {
		if errors.Is(err, k) {
			return refusedStale
		}
	}
	if errors.Is(err, reason.TooLongChain) {
		return refusedChain
	}
	return refusedOther
}

// send journals the payout (the signed transaction with its claims' records, one write)
// and broadcasts it. It returns the txid, and whether the node says it is mined already.
// Once journaled the claims are owed: a refusal by the node forgets them (the transaction
// was never in a mempool), but a lost answer does not: the node may have it, and if not
// the journal sends it again (resolve) until it is mined, so the claims count as paid.
func (e *Engine) send(ctx context.Context, plan *wallet.Plan, claims []Claim) (types.Hash, bool, error) {
	if err := wallet.Sign(plan, e.cfg.Keys, e.cfg.Net.Magic); err != nil {
		return types.Hash{}, false, err
	}
	p := &Payout{Tx: plan.Tx, TxID: plan.TxID, Claims: claims}
	if err := e.cfg.Journal.Record(p); err != nil {
		return types.Hash{}, false, err
	}
	e.addJournal(p)
	forget := func(err error) (types.Hash, bool, error) {
		if ferr := e.cfg.Journal.Forget(p); ferr != nil {
			// The payout stays journaled, so the claims stay owed: resolve sends it again.
			e.log.Error("forgetting a refused payout", "txid", p.TxID, "err", ferr)
			return types.Hash{}, false, err
		}
		e.dropJournal(p.TxID)
		return types.Hash{}, false, err
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	id, err := e.node.SendRawTransaction(cctx, hex.EncodeToString(plan.Tx.Bytes()))
	if err == nil {
		if id != plan.TxID.String() {
			e.needSync = true
			return forget(fmt.Errorf("node returned txid %s for %s", id, plan.TxID))
		}
		return plan.TxID, false, nil
	}
	var rpcErr *jsonrpc.Error
	if errors.As(err, &rpcErr) {
		// The node has this very transaction, in its mempool or in the chain: the claims
		// are paid by it.
		if errors.Is(err, reason.AlreadyInMempool) {
			return plan.TxID, false, nil
		}
		if errors.Is(err, reason.AlreadyInChain) {
			return plan.TxID, true, nil
		}
		e.needSync = true
		return forget(&RejectedError{Message: rpcErr.Message, Err: err})
	}
	// The answer was lost: the node may or may not have the transaction. It is journaled,
	// so it is owed either way; the next sync sends it again first if the node lacks it.
	e.needSync = true
	e.log.Warn("the node's answer to a payout was lost; it is journaled and will be sent again until mined",
		"txid", plan.TxID, "err", err)
	return plan.TxID, false, nil
}
