package wallet

import (
	"crypto/ed25519"
	"errors"
	"fmt"

	"github.com/cointoolkit/coin/lib/amount"
	"github.com/cointoolkit/coin/lib/bincode"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/policy"
	"github.com/cointoolkit/coin/lib/types"
)

// Fee and output policy (DESIGN 5).
const (
	// DustLimit is the smallest standard output; smaller outputs are not relayed.
	DustLimit = policy.DustLimit
	// MinFeeRate is the node's minimum relay fee in subunits per serialized byte.
	MinFeeRate = policy.MinRelayFeePerByte
	// DefaultFeeRate is the wallet's fee rate in subunits per serialized byte.
	DefaultFeeRate = 2
	// MaxFeeRate bounds a fee rate given by a user (a typo guard: 10,000 subunits per byte
	// is 0.1 COIN for a typical 200-byte transfer).
	MaxFeeRate = 10_000
)

// Building errors.
var (
	ErrInsufficientFunds = errors.New("insufficient funds")
	ErrDust              = fmt.Errorf("amount below the dust limit of %d subunits", DustLimit)
	ErrTooLarge          = errors.New("transaction too large")
	ErrBadFeeRate        = fmt.Errorf("fee rate must be %d to %d subunits per byte", MinFeeRate, MaxFeeRate)
	ErrNoPayments        = errors.New("nothing to pay")
)

// InsufficientFundsError says what a payment needed and what was available. It matches
// ErrInsufficientFunds.
type InsufficientFundsError struct {
	Need, Have uint64
}

func (e *InsufficientFundsError) Error() string {
	return fmt.Sprintf("%v: need %s COIN (amount and fee), have %s COIN spendable",
		ErrInsufficientFunds, amount.Format(e.Need), amount.Format(e.Have))
}

// Is makes errors.Is(err, ErrInsufficientFunds) true.
func (e *InsufficientFundsError) Is(target error) bool { return target == ErrInsufficientFunds }

// Coin is a spendable output: where it is, what it is worth if spent in the next block
// (its effective value), and the pubkey hash whose key signs for it.
type Coin struct {
	Outpoint      types.Outpoint
	Value         uint64
	PKH           types.Hash
	Confirmations uint64
}

// Payment pays Value subunits to PKH.
type Payment struct {
	PKH   types.Hash
	Value uint64
}

// Request describes a transfer to build.
type Request struct {
	Payments []Payment
	// FeeRate in subunits per serialized byte; 0 means DefaultFeeRate.
	FeeRate uint64
	// Change receives what is left above the payments and the fee.
	Change types.Hash
	// MaxInputs bounds the inputs (0: consensus.MaxTxInputs).
	MaxInputs int
}

// Plan is a built, unsigned transaction and what went into it.
type Plan struct {
	Tx    *types.Transaction
	TxID  types.Hash // valid before and after signing: signatures are not part of it
	Coins []Coin     // the coins spent, in input order
	Fee   uint64
	// ChangeIndex is the output index of the change, -1 when there is none. Change is its
	// value.
	ChangeIndex int
	Change      uint64
	Size        int // serialized size of the signed transaction
}

// Total is the sum of the payments.
func (r *Request) Total() (uint64, error) {
	var t uint64
	for _, p := range r.Payments {
		if p.Value < DustLimit {
			return 0, fmt.Errorf("%w: %d subunits", ErrDust, p.Value)
		}
		t += p.Value
		if t > amount.MaxMoney {
			return 0, fmt.Errorf("payments exceed the supply cap")
		}
	}
	return t, nil
}

// Select builds a transfer paying req.Payments from coins, taken in the order given until
// they cover the payments and the fee. The fee is exactly the fee rate times the serialized
// size of the signed transaction, with the change output (to req.Change) taking the rest;
// when the rest would be below the dust limit there is no change output and the rest goes
// to the fee. In the rare case where no change value fits its own varint width the fee is at
// most 8 bytes' worth higher than exact.
func Select(coins []Coin, req Request) (*Plan, error) {
	if len(req.Payments) == 0 {
		return nil, ErrNoPayments
	}
	rate := req.FeeRate
	if rate == 0 {
		rate = DefaultFeeRate
	}
	if rate < MinFeeRate || rate > MaxFeeRate {
		return nil, ErrBadFeeRate
	}
	total, err := req.Total()
	if err != nil {
		return nil, err
	}
	maxIn := req.MaxInputs
	if maxIn <= 0 || maxIn > consensus.MaxTxInputs {
		maxIn = consensus.MaxTxInputs
	}
	if len(req.Payments)+1 > consensus.MaxTxOutputs {
		return nil, fmt.Errorf("%w: %d payments, at most %d", ErrTooLarge, len(req.Payments), consensus.MaxTxOutputs-1)
	}

	tx := &types.Transaction{Version: consensus.TxVersion, Kind: types.KindTransfer,
		Outputs: make([]types.TxOutput, len(req.Payments), len(req.Payments)+1)}
	for i, p := range req.Payments {
		tx.Outputs[i] = types.TxOutput{Value: p.Value, PubKeyHash: p.PKH}
	}
	var in, have uint64
	for _, c := range coins {
		have += c.Value
	}
	var used []Coin
	for _, c := range coins {
		if len(used) == maxIn {
			break
		}
		if c.Value == 0 {
			continue
		}
		used = append(used, c)
		tx.Inputs = append(tx.Inputs, types.TxInput{PrevTxID: c.Outpoint.TxID, PrevIndex: c.Outpoint.Index})
		in += c.Value
		sizeNoChange := tx.SerializeSize()
		if in < total || in-total < rate*uint64(sizeNoChange) {
			continue
		}
		plan := &Plan{Tx: tx, Coins: used, ChangeIndex: -1}
		rest := in - total
		if change, fee, ok := fitChange(rest, rate, sizeNoChange); ok {
			tx.Outputs = append(tx.Outputs, types.TxOutput{Value: change, PubKeyHash: req.Change})
			plan.ChangeIndex, plan.Change, plan.Fee = len(tx.Outputs)-1, change, fee
		} else {
			plan.Fee = rest
		}
		plan.Size = tx.SerializeSize()
		if plan.Size > consensus.MaxTxSize {
			return nil, fmt.Errorf("%w: %d bytes, at most %d", ErrTooLarge, plan.Size, consensus.MaxTxSize)
		}
		plan.TxID = tx.TxID()
		return plan, nil
	}
	// Not enough: say what the payments would need with every offered coin as input.
	all := &types.Transaction{Version: consensus.TxVersion, Kind: types.KindTransfer, Outputs: tx.Outputs,
		Inputs: make([]types.TxInput, 0, len(coins))}
	for _, c := range coins {
		all.Inputs = append(all.Inputs, types.TxInput{PrevIndex: c.Outpoint.Index})
	}
	need := total + rate*uint64(all.SerializeSize())
	if len(coins) > maxIn && have >= need {
		return nil, fmt.Errorf("%w: the payments need more than %d inputs", ErrTooLarge, maxIn)
	}
	return nil, &InsufficientFundsError{Need: need, Have: have}
}

// fitChange finds a change value c with c = rest − rate × (sizeNoChange + size of an output
// of c) and c at least the dust limit. It returns ok false when there should be no change.
func fitChange(rest, rate uint64, sizeNoChange int) (change, fee uint64, ok bool) {
	const outBase = 32 // pubkey hash; the value's varint comes on top
	var fallback uint64
	haveFallback := false
	for _, w := range []int{1, 3, 5, 9} {
		f := rate * uint64(sizeNoChange+outBase+w)
		if rest < f+DustLimit {
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

// Sign fills every input's public key and signature. keys must hold the key of each coin's
// pubkey hash (plan.Coins[i] is input i).
func Sign(plan *Plan, keys []Key, magic [4]byte) error {
	byPKH := make(map[types.Hash]*Key, len(keys))
	for i := range keys {
		byPKH[keys[i].PKH] = &keys[i]
	}
	if len(plan.Coins) != len(plan.Tx.Inputs) {
		return errors.New("sign: plan has a different number of coins and inputs")
	}
	msg := types.SigMessage(magic, plan.Tx.TxID())
	sigs := make(map[types.Hash][]byte, 1)
	for i, c := range plan.Coins {
		k, ok := byPKH[c.PKH]
		if !ok {
			return fmt.Errorf("sign: no key for input %d (pubkey hash %s)", i, c.PKH)
		}
		sig, ok := sigs[c.PKH]
		if !ok {
			sig = ed25519.Sign(k.Priv, msg)
			sigs[c.PKH] = sig
		}
		copy(plan.Tx.Inputs[i].PublicKey[:], k.Pub)
		copy(plan.Tx.Inputs[i].Signature[:], sig)
	}
	return nil
}
