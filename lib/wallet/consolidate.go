package wallet

import (
	"context"
	"errors"
	"math"
	"slices"
	"sync"

	"github.com/cointoolkit/coin/lib/amount"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/types"
)

// Consolidation: a wallet of thousands of small outputs cannot pay a large amount in one
// transaction (at most consensus.MaxTxInputs inputs and consensus.MaxTxSize bytes:
// ErrTooManyInputs). Consolidate merges its smallest outputs into one output of its first
// address, in as many transactions as needed, each within both limits, each built by
// Select (fee rate × size plus the inputs' decay margin, like every wallet transaction).
// Later transactions may spend the outputs of earlier ones while they are unconfirmed, so
// the wallet ends with one output.

// MaxInputsPerTx is the most inputs a transaction with one output can have within
// consensus.MaxTxInputs and consensus.MaxTxSize whatever the output indexes it spends (an
// input is 129 to 133 bytes, so the size is the bound). It is worked out once (coin-wallet
// asks for it when it builds its commands, on every run).
func MaxInputsPerTx() int { return maxInputsPerTx() }

var maxInputsPerTx = sync.OnceValue(func() int {
	tx := &types.Transaction{Version: consensus.TxVersion, Kind: types.KindTransfer,
		Outputs: []types.TxOutput{{Value: amount.MaxMoney}}}
	fits := func(n int) bool {
		tx.Inputs = make([]types.TxInput, n)
		for i := range tx.Inputs {
			tx.Inputs[i].PrevIndex = math.MaxUint32 // the widest output index varint
		}
		return tx.SerializeSize() <= consensus.MaxTxSize
	}
	if fits(consensus.MaxTxInputs) {
		return consensus.MaxTxInputs
	}
	lo, hi := 1, consensus.MaxTxInputs // fits(lo), !fits(hi)
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if fits(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
})

// ConsolidateOptions bound a consolidation.
type ConsolidateOptions struct {
	// FeeRate in subunits per byte; 0 means DefaultFeeRate.
	FeeRate uint64
	// MaxInputs bounds each transaction's inputs (0 or more than MaxInputsPerTx:
	// MaxInputsPerTx).
	MaxInputs int
	// MaxTxs bounds the number of transactions (0: as many as needed to end with one output).
	MaxTxs int
}

// ConsolidateTx is one broadcast consolidation transaction.
type ConsolidateTx struct {
	TxID   string `json:"txid"`
	Inputs int    `json:"inputs"`
	// Value is what the inputs were worth at the next block; Output = Value − Fee.
	Value  uint64 `json:"value"`
	Output uint64 `json:"output"`
	Fee    uint64 `json:"fee"`
	// DecayMargin is the part of Fee for the inputs' decay (Plan.DecayMargin).
	DecayMargin uint64 `json:"decay_margin"`
	Size        int    `json:"size"`
}

// Consolidate merges the spendable outputs of keys' addresses (the node's pending view,
// with their decay rates) into one output of keys[0]: each transaction spends the
// smallest outputs there are, its own predecessors' outputs included once they are among
// the smallest, up to opt.MaxInputs, until one output is left (or opt.MaxTxs transactions
// were sent). It returns the transactions broadcast; on an error, those broadcast before
// it. A wallet with fewer than two spendable outputs has nothing to merge.
func Consolidate(ctx context.Context, node NodeClient, net *params.Network, keys []Key, opt ConsolidateOptions) ([]ConsolidateTx, error) {
	if len(keys) == 0 {
		return nil, errors.New("consolidate: no keys")
	}
	pool, err := pendingCoins(ctx, node, keyAddresses(keys))
	if err != nil {
		return nil, err
	}
	slices.Reverse(pool)                                                      // smallest first
	pool = slices.DeleteFunc(pool, func(c Coin) bool { return c.Value == 0 }) // decayed to nothing: not worth an input
	maxIn := MaxInputsPerTx()
	if opt.MaxInputs > 1 && opt.MaxInputs < maxIn {
		maxIn = opt.MaxInputs
	}
	var done []ConsolidateTx
	for len(pool) > 1 && (opt.MaxTxs <= 0 || len(done) < opt.MaxTxs) {
		n := min(len(pool), maxIn)
		batch := pool[:n]
		plan, err := Select(nil, Request{Inputs: batch, FeeRate: opt.FeeRate, Change: keys[0].PKH, MaxInputs: maxIn})
		if err != nil {
			return done, err
		}
		if plan.ChangeIndex < 0 {
			return done, ErrInsufficientFunds // Select makes change for a transaction without other outputs
		}
		if err := Sign(plan, keys, net.Magic); err != nil {
			return done, err
		}
		if err := Broadcast(ctx, node, plan); err != nil {
			return done, err
		}
		var value, rate uint64
		for i := range batch {
			value += batch[i].Value
			rate = max(rate, batch[i].DecayRate)
		}
		done = append(done, ConsolidateTx{TxID: plan.TxID.String(), Inputs: n, Value: value, Output: plan.Change, Fee: plan.Fee,
			DecayMargin: plan.DecayMargin, Size: plan.Size})
		// The new output (unconfirmed: not decayed yet, decaying at its inputs' highest rate)
		// joins what is left, in order.
		merged := Coin{Outpoint: types.Outpoint{TxID: plan.TxID, Index: uint32(plan.ChangeIndex)}, Value: plan.Change,
			PKH: keys[0].PKH, Nominal: plan.Change, DecayRate: rate}
		rest := pool[n:]
		at, _ := slices.BinarySearchFunc(rest, merged.Value, func(c Coin, v uint64) int {
			switch {
			case c.Value < v:
				return -1
			case c.Value > v:
				return 1
			}
			return 0
		})
		pool = slices.Insert(slices.Clone(rest), at, merged)
	}
	return done, nil
}
