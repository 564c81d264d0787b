package wallet

import (
	"errors"
	"fmt"

	"github.com/cointoolkit/coin/lib/amount"
	"github.com/cointoolkit/coin/lib/bincode"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/policy"
	"github.com/cointoolkit/coin/lib/types"
)

// The wallet's fee policy (protocol §5); the relay fee and the dust limit it must respect are
// lib/policy's.
const (
	// DefaultFeeRate is the wallet's fee rate in subunits per serialized byte.
	DefaultFeeRate = 2
	// MaxFeeRate bounds a fee rate given by a user (a typo guard: 10,000 subunits per byte
	// is 0.1 COIN for a typical 200-byte transfer).
	MaxFeeRate = 10_000
)

// Building errors.
var (
	ErrInsufficientFunds = errors.New("insufficient funds")
	ErrDust              = fmt.Errorf("amount below the dust limit of %d subunits", policy.DustLimit)
	ErrTooLarge          = errors.New("transaction too large")
	ErrBadFeeRate        = fmt.Errorf("fee rate must be %d to %d subunits per byte", policy.MinRelayFeePerByte, MaxFeeRate)
	ErrNoPayments        = errors.New("nothing to pay")
	// ErrTooManyInputs: the payment needs more of the wallet's outputs than one transaction
	// may spend (consensus.MaxTxInputs, or fewer within consensus.MaxTxSize); the error
	// matches ErrTooLarge too. Consolidate merges small outputs into larger ones.
	ErrTooManyInputs = errors.New("too many small outputs")
	// ErrBadKind: the request's kind cannot be built (a coinbase, an unknown kind) or its
	// payload does not fit the kind (a transfer carries none).
	ErrBadKind = errors.New("cannot build this kind of transaction")
)

// InsufficientFundsError says what a payment needed and what was available. It matches
// ErrInsufficientFunds.
type InsufficientFundsError struct {
	Need, Have uint64
	// DecayMargin is the part of Need that covers the decay of every candidate input over
	// DecayMarginBlocks more blocks (0 when none decays).
	DecayMargin uint64
}

func (e *InsufficientFundsError) Error() string {
	if e.DecayMargin > 0 {
		return fmt.Sprintf("%v: need %s COIN (amount, fee and a decay margin of %s COIN), have %s COIN spendable at the next block",
			ErrInsufficientFunds, amount.Format(e.Need), amount.Format(e.DecayMargin), amount.Format(e.Have))
	}
	return fmt.Sprintf("%v: need %s COIN (amount and fee), have %s COIN spendable",
		ErrInsufficientFunds, amount.Format(e.Need), amount.Format(e.Have))
}

// Is makes errors.Is(err, ErrInsufficientFunds) true.
func (e *InsufficientFundsError) Is(target error) bool { return target == ErrInsufficientFunds }

// Coin is a spendable output: where it is, what it is worth if spent in the next block
// (its effective value), and the pubkey hash whose key signs for it.
type Coin struct {
	Outpoint types.Outpoint
	Value    uint64
	PKH      types.Hash
	// Confirmations is also the output's age in blocks at the next block, over which it
	// has decayed from Nominal to Value (0 for an output of a mempool transaction).
	Confirmations uint64
	// Nominal is the output's nominal value; 0 (or anything not above Value) means Value:
	// the output has not decayed.
	Nominal uint64
	// DecayRate is the per-block decay rate (parts per 10^12) the decay margin assumes for
	// the coin besides what its own values show (see DecayMargin); 0: none known.
	DecayRate uint64
	// Signer is the pubkey hash of the key that signs for the coin when it is not PKH (a
	// contract refund spends the escrow, which pays the counterparty, with the initiator's
	// key: protocol §9.1). Zero means PKH.
	Signer types.Hash
}

// signer is the pubkey hash whose key signs for c.
func (c *Coin) signer() types.Hash {
	if c.Signer != (types.Hash{}) {
		return c.Signer
	}
	return c.PKH
}

// Payment pays Value subunits to PKH.
type Payment struct {
	PKH   types.Hash
	Value uint64
}

// Request describes a transaction to build: its kind and payload, its outputs, the inputs
// it must spend, and the fee policy. Coin selection adds inputs and a change output.
type Request struct {
	// Kind is the transaction's kind. The zero value (KindCoinbase, which has no inputs and
	// is never built by a wallet) means KindTransfer.
	Kind types.TxKind
	// Payload is the kind's payload bincode (protocol §5 and 9); a transfer has none.
	Payload []byte
	// LockTime is the transaction's lock time (0: none).
	LockTime uint64
	// Locked, when set, is output 0: an AgentRegister's stake or a ContractCreate's escrow,
	// which the chain locks (protocol §9.1).
	Locked *Payment
	// Payments are the outputs after Locked, in order.
	Payments []Payment
	// Inputs are spent first, in this order, before any coin selection adds (a
	// ContractFulfil or ContractRefund spends its escrow as input 0). Their value counts
	// towards the outputs and the fee.
	Inputs []Coin
	// FeeRate in subunits per serialized byte; 0 means DefaultFeeRate.
	FeeRate uint64
	// Change receives what is left above the outputs and the fee.
	Change types.Hash
	// MaxInputs bounds the inputs (0: consensus.MaxTxInputs).
	MaxInputs int
}

// Plan is a built, unsigned transaction and what went into it.
type Plan struct {
	Tx    *types.Transaction
	TxID  types.Hash // valid before and after signing: signatures are not part of it
	Coins []Coin     // the coins spent, in input order
	// Fee is Σ coin values − Σ outputs: fee rate × size, plus DecayMargin, plus change
	// below the dust limit when there is no change output.
	Fee uint64
	// DecayMargin is the part of Fee that covers the inputs' decay over DecayMarginBlocks
	// more blocks (Σ DecayMargin of Coins), so the transaction still pays its outputs and
	// the relay fee if it is mined that much later than the next block.
	DecayMargin uint64
	// ChangeIndex is the output index of the change, -1 when there is none. Change is its
	// value.
	ChangeIndex int
	Change      uint64
	Size        int // serialized size of the signed transaction
}

// kind is the kind to build, KindTransfer for the zero value.
func (r *Request) kind() types.TxKind {
	if r.Kind == types.KindCoinbase {
		return types.KindTransfer
	}
	return r.Kind
}

// outputs are the requested outputs in order: Locked, then Payments.
func (r *Request) outputs() []Payment {
	out := make([]Payment, 0, len(r.Payments)+1)
	if r.Locked != nil {
		out = append(out, *r.Locked)
	}
	return append(out, r.Payments...)
}

// Total is the sum of the outputs (Locked and Payments), each at least the dust limit.
func (r *Request) Total() (uint64, error) {
	var t uint64
	for _, p := range r.outputs() {
		if p.Value < policy.DustLimit {
			return 0, fmt.Errorf("%w: %d subunits", ErrDust, p.Value)
		}
		t += p.Value
		if t > amount.MaxMoney {
			return 0, fmt.Errorf("payments exceed the supply cap")
		}
	}
	return t, nil
}

// check validates what does not depend on the coins and returns the fee rate and the total
// of the outputs.
func (r *Request) check() (rate, total uint64, err error) {
	k := r.kind()
	if !k.Valid() {
		return 0, 0, fmt.Errorf("%w: kind %d", ErrBadKind, k)
	}
	if k == types.KindTransfer && len(r.Payload) != 0 {
		return 0, 0, fmt.Errorf("%w: a transfer carries no payload", ErrBadKind)
	}
	if k == types.KindTransfer && len(r.Payments) == 0 && r.Locked == nil && len(r.Inputs) == 0 {
		return 0, 0, ErrNoPayments // with Inputs and no payments: a consolidation into change
	}
	rate = r.FeeRate
	if rate == 0 {
		rate = DefaultFeeRate
	}
	if rate < policy.MinRelayFeePerByte || rate > MaxFeeRate {
		return 0, 0, ErrBadFeeRate
	}
	if total, err = r.Total(); err != nil {
		return 0, 0, err
	}
	if n := len(r.outputs()); n+1 > consensus.MaxTxOutputs {
		return 0, 0, fmt.Errorf("%w: %d payments, at most %d", ErrTooLarge, n, consensus.MaxTxOutputs-1)
	}
	return rate, total, nil
}

// Select builds the transaction req describes, spending req.Inputs and then coins, taken in
// the order given until they cover the outputs and the fee. Any kind but a coinbase is
// built, with any payload: whether the chain accepts it is the node's to say. The fee is
// exactly the fee rate times the serialized size of the signed transaction plus the decay
// margin of the inputs (Σ DecayMargin: 0 when no input decays), with the change output (to
// req.Change, last) taking the rest; when the rest would be below the dust limit there is
// no change output and the rest goes to the fee. A transaction with no other output needs
// change. In the rare case where no change value fits its own varint width the fee is at
// most 8 bytes' worth higher than exact.
func Select(coins []Coin, req Request) (*Plan, error) {
	rate, total, err := req.check()
	if err != nil {
		return nil, err
	}
	maxIn := req.MaxInputs
	if maxIn <= 0 || maxIn > consensus.MaxTxInputs {
		maxIn = consensus.MaxTxInputs
	}
	outs := req.outputs()
	tx := &types.Transaction{Version: consensus.TxVersion, Kind: req.kind(), LockTime: req.LockTime,
		Payload: req.Payload, Outputs: make([]types.TxOutput, len(outs), len(outs)+1)}
	for i, p := range outs {
		tx.Outputs[i] = types.TxOutput{Value: p.Value, PubKeyHash: p.PKH}
	}
	required := make(map[types.Outpoint]bool, len(req.Inputs))
	var have uint64
	for _, c := range req.Inputs {
		required[c.Outpoint] = true
		have += c.Value
	}
	offered := make([]Coin, 0, len(coins))
	for _, c := range coins {
		if !required[c.Outpoint] {
			offered = append(offered, c)
			have += c.Value
		}
	}
	if len(req.Inputs) > maxIn {
		return nil, fmt.Errorf("%w: %d required inputs, at most %d", ErrTooLarge, len(req.Inputs), maxIn)
	}

	var in, margin uint64
	var used []Coin
	add := func(c Coin) {
		used = append(used, c)
		tx.Inputs = append(tx.Inputs, types.TxInput{PrevTxID: c.Outpoint.TxID, PrevIndex: c.Outpoint.Index})
		in += c.Value
		margin += DecayMargin(&c)
	}
	// try finishes the plan when the inputs so far pay for it.
	try := func() (*Plan, error) {
		sizeNoChange := tx.SerializeSize()
		if len(tx.Inputs) == 0 || in < total || in-total < rate*uint64(sizeNoChange)+margin {
			return nil, nil
		}
		plan := &Plan{Tx: tx, Coins: used, ChangeIndex: -1, DecayMargin: margin}
		rest := in - total
		if change, fee, ok := fitChange(rest, rate, sizeNoChange, margin); ok {
			tx.Outputs = append(tx.Outputs, types.TxOutput{Value: change, PubKeyHash: req.Change})
			plan.ChangeIndex, plan.Change, plan.Fee = len(tx.Outputs)-1, change, fee
		} else if len(tx.Outputs) == 0 {
			return nil, nil // an output-less transaction is invalid: more coins for change
		} else {
			plan.Fee = rest
		}
		plan.Size = tx.SerializeSize()
		if plan.Size > consensus.MaxTxSize {
			if len(used) > len(req.Inputs) {
				return nil, fmt.Errorf("%w: %d inputs make %d bytes, at most %d: %w", ErrTooLarge, len(used), plan.Size,
					consensus.MaxTxSize, ErrTooManyInputs)
			}
			return nil, fmt.Errorf("%w: %d bytes, at most %d", ErrTooLarge, plan.Size, consensus.MaxTxSize)
		}
		plan.TxID = tx.TxID()
		return plan, nil
	}
	for _, c := range req.Inputs {
		add(c)
	}
	if plan, err := try(); plan != nil || err != nil {
		return plan, err
	}
	for _, c := range offered {
		if len(used) == maxIn {
			break
		}
		if c.Value == 0 {
			continue
		}
		add(c)
		if plan, err := try(); plan != nil || err != nil {
			return plan, err
		}
	}
	// Not enough: say what the outputs would need with every offered coin as input.
	all := &types.Transaction{Version: consensus.TxVersion, Kind: tx.Kind, LockTime: tx.LockTime, Payload: tx.Payload,
		Outputs: tx.Outputs, Inputs: make([]types.TxInput, 0, len(req.Inputs)+len(offered))}
	allCoins := append(append([]Coin(nil), req.Inputs...), offered...)
	for _, c := range allCoins {
		all.Inputs = append(all.Inputs, types.TxInput{PrevIndex: c.Outpoint.Index})
	}
	allMargin := decayMargins(allCoins)
	need := total + rate*uint64(all.SerializeSize()) + allMargin
	if len(tx.Outputs) == 0 {
		need += policy.DustLimit + rate*(32+3) // a change output of at least the dust limit
	}
	if len(req.Inputs)+len(offered) > maxIn && have >= need {
		return nil, fmt.Errorf("%w: the payments need more than %d inputs: %w", ErrTooLarge, maxIn, ErrTooManyInputs)
	}
	return nil, &InsufficientFundsError{Need: need, Have: have, DecayMargin: allMargin}
}

// fitChange finds a change value c with c = rest − rate × (sizeNoChange + size of an output
// of c) − extra and c at least the dust limit. It returns ok false when there should be no
// change.
func fitChange(rest, rate uint64, sizeNoChange int, extra uint64) (change, fee uint64, ok bool) {
	const outBase = 32 // pubkey hash; the value's varint comes on top
	var fallback uint64
	haveFallback := false
	for _, w := range []int{1, 3, 5, 9} {
		f := rate*uint64(sizeNoChange+outBase+w) + extra
		if rest < f+policy.DustLimit {
			continue
		}
		c := rest - f
		switch got := bincode.VarintSize(c); {
		case got == w:
			return c, f, true
		case got < w && !haveFallback:
			// No exact solution at this width boundary: pay a few bytes more fee.
			fallback, haveFallback = c, true
		}
	}
	if haveFallback {
		return fallback, rest - fallback, true
	}
	return 0, 0, false
}
