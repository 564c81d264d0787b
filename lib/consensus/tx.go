package consensus

import (
	"github.com/cointoolkit/coin/lib/amount"
	"github.com/cointoolkit/coin/lib/types"
	"github.com/hdevalence/ed25519consensus"
	"lukechampine.com/blake3"
)

// CheckTransactionSanity applies the rules that need nothing but the transaction itself.
// size is its serialized size (pass tx.SerializeSize()).
func CheckTransactionSanity(tx *types.Transaction, size int) error {
	if tx.Version != TxVersion {
		return ruleError(ErrBadTxVersion, "unsupported transaction version %d", tx.Version)
	}
	if size > MaxTxSize {
		return ruleError(ErrTxTooLarge, "transaction of %d bytes exceeds %d", size, MaxTxSize)
	}
	if len(tx.Inputs) > MaxTxInputs {
		return ruleError(ErrTooManyInputs, "transaction has %d inputs, the maximum is %d", len(tx.Inputs), MaxTxInputs)
	}
	if len(tx.Outputs) > MaxTxOutputs {
		return ruleError(ErrTooManyOutputs, "transaction has %d outputs, the maximum is %d", len(tx.Outputs), MaxTxOutputs)
	}
	if len(tx.Outputs) == 0 {
		return ruleError(ErrNoOutputs, "transaction has no outputs")
	}
	for i := range tx.Outputs {
		if tx.Outputs[i].Value < 1 {
			return ruleError(ErrZeroOutput, "output %d has zero value", i)
		}
	}
	if _, err := SumOutputs(func(i int) uint64 { return tx.Outputs[i].Value }, len(tx.Outputs)); err != nil {
		return err
	}
	if tx.IsCoinbase() {
		if len(tx.Inputs) != 0 {
			return ruleError(ErrBadCoinbaseInputs, "coinbase transaction has inputs")
		}
		if _, err := types.DecodeCoinbasePayload(tx.Payload); err != nil {
			return ruleError(ErrBadCoinbasePayload, "invalid coinbase payload: %v", err)
		}
		return nil
	}
	if len(tx.Inputs) == 0 {
		return ruleError(ErrNoInputs, "transaction has no inputs")
	}
	seen := make(map[types.Outpoint]struct{}, len(tx.Inputs))
	for i := range tx.Inputs {
		op := tx.Inputs[i].Outpoint()
		if _, dup := seen[op]; dup {
			return ruleError(ErrDuplicateInput, "transaction spends %s twice", op)
		}
		seen[op] = struct{}{}
	}
	if tx.Kind == types.KindTransfer {
		if len(tx.Payload) != 0 {
			return ruleError(ErrBadTransferPayload, "transfer transaction carries a payload")
		}
		return nil
	}
	return CheckAgentKind(tx)
}

// IsFinal reports whether the transaction's lock time allows it in a block at height whose
// median time past (of the 11 blocks before it) is mtp: 0 is always final, a value below
// 500,000,000 is a height that must be below the block's height, anything else a unix time
// that must be below the median time past.
func IsFinal(tx *types.Transaction, height, mtp uint64) bool {
	lt := tx.LockTime
	switch {
	case lt == 0:
		return true
	case lt < LockTimeThreshold:
		return lt < height
	default:
		return lt < mtp
	}
}

// CheckFinal fails with ErrNonFinal when IsFinal is false.
func CheckFinal(tx *types.Transaction, height, mtp uint64) error {
	if !IsFinal(tx, height, mtp) {
		return ruleError(ErrNonFinal, "transaction is not final: lock_time %d at height %d", tx.LockTime, height)
	}
	return nil
}

// UtxoEntry is an unspent output as the chain keeps it.
type UtxoEntry struct {
	Value      uint64
	PubKeyHash types.Hash
	Height     uint64 // height of the block that created it
	Coinbase   bool
	// Locked outputs (agent stake, contract escrow) do not decay.
	Locked bool
	// ClusterID is the cluster the output's address started (ClusterIDOf): clusters merge
	// later without rewriting outputs, so the owner's current cluster is
	// StateView.ClusterOf(PubKeyHash), which is what the node reports as cluster_id.
	ClusterID types.Hash
}

const clusterTag = "coin-cluster"

// ClusterIDOf is the id of the cluster a fresh address starts: BLAKE3("coin-cluster" ‖ pkh).
func ClusterIDOf(pkh types.Hash) types.Hash {
	var buf [len(clusterTag) + 32]byte
	copy(buf[:], clusterTag)
	copy(buf[len(clusterTag):], pkh[:])
	return blake3.Sum256(buf[:])
}

// UtxoView is what input checks need from the chain: the unspent output at op, or false.
// An error is a storage failure, never a rule violation.
type UtxoView interface {
	Utxo(op types.Outpoint) (*UtxoEntry, bool, error)
}

// ValueModel gives the effective value of a spent output in the block at spendHeight: the
// rule behind StateView.InputValue, which the chain state implements with one.
type ValueModel interface {
	EffectiveValue(e *UtxoEntry, spendHeight uint64) uint64
}

// NominalValue is the ValueModel without decay: the effective value is the nominal value.
type NominalValue struct{}

// EffectiveValue returns e.Value.
func (NominalValue) EffectiveValue(e *UtxoEntry, _ uint64) uint64 { return e.Value }

// InputsResult is what CheckTransactionInputs learns about a transaction's inputs.
type InputsResult struct {
	Spent     []*UtxoEntry // one per input, in order
	Fee       uint64       // Σ effective inputs − Σ outputs
	InValue   uint64       // Σ effective input values
	Nominal   uint64       // Σ nominal input values
	DecayPaid uint64       // Nominal − InValue, which flows to the decay pool
}

// CheckTransactionInputs checks a non-coinbase transaction against the UTXO view for a block
// at height: every input exists, coinbase outputs are mature, each public key hashes to the
// spent output's pubkey hash (a locked output's spender is LockedSpender's), and the
// effective input value covers the outputs. Signatures are
// checked separately (VerifySignatures) so they can run in parallel.
func CheckTransactionInputs(tx *types.Transaction, height uint64, view StateView) (*InputsResult, error) {
	if tx.IsCoinbase() {
		return nil, ruleError(ErrUnexpectedCoinbase, "coinbase transaction outside the first position")
	}
	res := &InputsResult{Spent: make([]*UtxoEntry, len(tx.Inputs))}
	for i := range tx.Inputs {
		in := &tx.Inputs[i]
		e, ok, err := view.Utxo(in.Outpoint())
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, ruleError(ErrMissingInputs, "missing inputs: %s is not an unspent output", in.Outpoint())
		}
		if e.Coinbase && height < e.Height+CoinbaseMaturity {
			return nil, ruleError(ErrImmatureCoinbase, "input %d spends a coinbase of height %d before height %d",
				i, e.Height, e.Height+CoinbaseMaturity)
		}
		owner := e.PubKeyHash
		if e.Locked {
			if owner, err = LockedSpender(tx, i, e, view.Conduct()); err != nil {
				return nil, err
			}
		}
		if types.Blake3(in.PublicKey[:]) != owner {
			return nil, ruleError(ErrPubKeyMismatch, "input %d: public key does not match the spent output", i)
		}
		eff, err := view.InputValue(e, height)
		if err != nil {
			return nil, err
		}
		if eff > e.Value {
			eff = e.Value // decay only ever lowers a value; a model saying otherwise is capped
		}
		var ok1, ok2 bool
		res.InValue, ok1 = addChecked(res.InValue, eff)
		res.Nominal, ok2 = addChecked(res.Nominal, e.Value)
		if !ok1 || !ok2 || res.Nominal > amount.MaxMoney {
			return nil, ruleError(ErrValueOverflow, "total input value exceeds the maximum")
		}
		res.Spent[i] = e
	}
	out, err := SumOutputs(func(i int) uint64 { return tx.Outputs[i].Value }, len(tx.Outputs))
	if err != nil {
		return nil, err
	}
	if res.InValue < out {
		return nil, ruleError(ErrInsufficientFunds, "insufficient funds: inputs %d, outputs %d", res.InValue, out)
	}
	res.Fee = res.InValue - out
	res.DecayPaid = res.Nominal - res.InValue
	return res, nil
}

// SigCheck is one input's signature to verify.
type SigCheck struct {
	PublicKey *[32]byte
	Signature *[64]byte
	Message   []byte
	TxID      types.Hash
	Input     int
}

// SigChecks lists a transaction's signature checks (the message is shared by all inputs).
func SigChecks(tx *types.Transaction, txid types.Hash, magic [4]byte, dst []SigCheck) []SigCheck {
	msg := types.SigMessage(magic, txid)
	for i := range tx.Inputs {
		dst = append(dst, SigCheck{&tx.Inputs[i].PublicKey, &tx.Inputs[i].Signature, msg, txid, i})
	}
	return dst
}

// Verify checks one signature with the ZIP 215 rules (protocol §4): the cofactored equation
// [8][S]B = [8]R + [8][k]A, non-canonical encodings of A and R accepted, S < L. Batch
// verification (VerifyBatch) accepts exactly the signatures this accepts.
func (c *SigCheck) Verify() error {
	if !ed25519consensus.Verify(c.PublicKey[:], c.Message, c.Signature[:]) {
		return c.invalid()
	}
	return nil
}

// invalid is the error of an invalid signature, the same whether single or batch verification
// found it.
func (c *SigCheck) invalid() error {
	return ruleError(ErrBadSignature, "transaction %s: input %d: invalid signature", c.TxID, c.Input)
}

// VerifySignatures checks every input signature of tx: one by one for a single input, as a
// batch for several (the error names the first invalid input either way).
func VerifySignatures(tx *types.Transaction, txid types.Hash, magic [4]byte) error {
	checks := SigChecks(tx, txid, magic, make([]SigCheck, 0, len(tx.Inputs)))
	return VerifyBatch(checks)
}
