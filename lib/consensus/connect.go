package consensus

import (
	"github.com/cointoolkit/coin/lib/types"
)

// BlockInput is everything CheckBlockConnect needs besides the block.
type BlockInput struct {
	Block          *types.Block
	TxIDs          []types.Hash // from CheckBlockSanity
	Height         uint64
	MedianTimePast uint64  // of the 11 blocks before this one
	PoolBefore     uint64  // the decay pool after the parent block
	Magic          [4]byte // the network's magic, part of every signed message
	// View is the chain state before the block: UTXOs, clusters, input values, conduct.
	View StateView
	// SigWorkers is how many goroutines verify signatures, in batches (0: every CPU, 1: the
	// calling goroutine).
	SigWorkers int
	// SkipSignatures is for callers that verified the same transactions already (never for
	// blocks from outside).
	SkipSignatures bool
	// SigCache, when set, lets transactions whose exact bytes were verified before (in the
	// mempool, or ahead of time) skip their signature checks.
	SigCache *SigCache
}

// Created is an output a block adds to the UTXO set.
type Created struct {
	Outpoint types.Outpoint
	Entry    UtxoEntry
}

// BlockEffect is what connecting a block does to the chain state.
type BlockEffect struct {
	Spent     []types.Outpoint // every outpoint spent, in block order
	SpentUndo []*UtxoEntry     // the entries they had, for undo data
	Created   []Created        // outputs added and not spent inside the block
	Fees      uint64
	Release   uint64 // taken from the pool for the coinbase
	DecayPaid uint64 // added to the pool by decayed inputs
	Burned    uint64 // the part of subsidy + fees + release the coinbase did not claim
	Subsidy   uint64
	PoolAfter uint64
	// Conduct is every agent and contract record the block's agent transactions change
	// (nil when it has none).
	Conduct *ConductChanges
}

// blockView layers a block's own outputs, spends and agent effects over the chain's view.
type blockView struct {
	StateView // clusters and values come from the chain's view (as of the parent block)
	base      StateView
	created   map[types.Outpoint]*UtxoEntry
	spent     map[types.Outpoint]struct{}
	conduct   *ConductOverlay // nil until the block's first agent transaction
}

func (v *blockView) Conduct() ConductView {
	if v.conduct != nil {
		return v.conduct
	}
	return v.base.Conduct()
}

// SameOwner reports whether a and b are in one cluster of view (protocol §9.2).
func SameOwner(view StateView) func(a, b types.Hash) (bool, error) {
	return func(a, b types.Hash) (bool, error) {
		ca, err := view.ClusterOf(a)
		if err != nil {
			return false, err
		}
		cb, err := view.ClusterOf(b)
		return ca == cb, err
	}
}

func (v *blockView) Utxo(op types.Outpoint) (*UtxoEntry, bool, error) {
	if _, gone := v.spent[op]; gone {
		return nil, false, nil
	}
	if e, ok := v.created[op]; ok {
		return e, true, nil
	}
	return v.base.Utxo(op)
}

// CheckBlockConnect applies every contextual transaction rule of a block that already passed
// CheckBlockSanity and CheckHeaderContext: coinbase height, lock times, inputs against the UTXO
// view and against each other (no double spend inside the block), maturity, signatures
// (in batches, on SigWorkers goroutines: VerifyParallel) and the coinbase limit. It returns the block's effect on the chain state
// and changes nothing itself.
func CheckBlockConnect(in BlockInput) (*BlockEffect, error) {
	b := in.Block
	if err := CheckCoinbaseHeight(b.Transactions[0], in.Height); err != nil {
		return nil, err
	}
	v := &blockView{StateView: in.View, base: in.View, created: make(map[types.Outpoint]*UtxoEntry), spent: make(map[types.Outpoint]struct{})}
	eff := &BlockEffect{Subsidy: Subsidy(in.Height), Release: PoolRelease(in.PoolBefore)}
	var checks []SigCheck
	nIn := 0
	for _, tx := range b.Transactions {
		nIn += len(tx.Inputs)
	}
	eff.Spent = make([]types.Outpoint, 0, nIn)
	eff.SpentUndo = make([]*UtxoEntry, 0, nIn)
	if !in.SkipSignatures {
		checks = make([]SigCheck, 0, nIn)
	}
	for i, tx := range b.Transactions {
		if err := CheckFinal(tx, in.Height, in.MedianTimePast); err != nil {
			return nil, txError(in.TxIDs[i], err)
		}
		if i > 0 {
			for j := range tx.Inputs {
				op := tx.Inputs[j].Outpoint()
				if _, dup := v.spent[op]; dup {
					return nil, txError(in.TxIDs[i], ruleError(ErrDoubleSpend, "input %d spends %s, already spent in this block", j, op))
				}
			}
			var ch *ConductChanges
			if IsAgentKind(tx.Kind) {
				ctx := ConductContext{Height: in.Height, Time: b.Header.Timestamp, SameOwner: SameOwner(in.View)}
				var err error
				if ch, err = CheckConduct(tx, in.TxIDs[i], ctx, v.Conduct()); err != nil {
					return nil, txError(in.TxIDs[i], err)
				}
			}
			res, err := CheckTransactionInputs(tx, in.Height, v)
			if err != nil {
				return nil, txError(in.TxIDs[i], err)
			}
			if ch != nil {
				if v.conduct == nil {
					v.conduct = NewConductOverlay(in.View.Conduct())
				}
				v.conduct.Merge(ch)
			}
			for j := range tx.Inputs {
				op := tx.Inputs[j].Outpoint()
				v.spent[op] = struct{}{}
				eff.Spent = append(eff.Spent, op)
				eff.SpentUndo = append(eff.SpentUndo, res.Spent[j])
			}
			var ok1, ok2 bool
			eff.Fees, ok1 = addChecked(eff.Fees, res.Fee)
			eff.DecayPaid, ok2 = addChecked(eff.DecayPaid, res.DecayPaid)
			if !ok1 || !ok2 {
				return nil, ruleError(ErrValueOverflow, "block fees overflow")
			}
			if !in.SkipSignatures && !in.SigCache.Take(SigCacheKey(tx)) {
				checks = SigChecks(tx, in.TxIDs[i], in.Magic, checks)
			}
		}
		for j := range tx.Outputs {
			out := &tx.Outputs[j]
			v.created[types.Outpoint{TxID: in.TxIDs[i], Index: uint32(j)}] = &UtxoEntry{
				Value: out.Value, PubKeyHash: out.PubKeyHash, Height: in.Height,
				Coinbase: tx.IsCoinbase(), Locked: LockedOutput(tx, j), ClusterID: ClusterIDOf(out.PubKeyHash),
			}
		}
	}
	burned, err := CheckCoinbaseValue(b.Transactions[0], in.Height, eff.Fees, in.PoolBefore)
	if err != nil {
		return nil, err
	}
	eff.Burned = burned
	if err := VerifyParallel(checks, in.SigWorkers); err != nil {
		return nil, err
	}
	eff.PoolAfter = in.PoolBefore - eff.Release + eff.DecayPaid
	if v.conduct != nil {
		eff.Conduct = v.conduct.ConductChanges
	}
	for i, tx := range b.Transactions {
		for j := range tx.Outputs {
			op := types.Outpoint{TxID: in.TxIDs[i], Index: uint32(j)}
			if _, gone := v.spent[op]; !gone {
				eff.Created = append(eff.Created, Created{op, *v.created[op]})
			}
		}
	}
	return eff, nil
}

func txError(txid types.Hash, err error) error {
	if re, ok := err.(RuleError); ok {
		re.Description = "transaction " + txid.String() + ": " + re.Description
		return re
	}
	return err
}
