package types

import (
	"errors"
	"fmt"
	"sync"

	"github.com/cointoolkit/coin/lib/bincode"
	"lukechampine.com/blake3"
)

// TxKind is the transaction kind, a bincode enum without fields.
type TxKind uint32

// The transaction kinds of protocol §5.
const (
	KindCoinbase TxKind = iota
	KindTransfer
	KindAgentRegister
	KindVouch
	KindContractCreate
	KindContractFulfil
	KindContractRefund
	KindReview
	numKinds
)

var kindNames = [...]string{"coinbase", "transfer", "agent_register", "vouch", "contract_create",
	"contract_fulfil", "contract_refund", "review"}

// String is the kind's snake_case name.
func (k TxKind) String() string {
	if k < numKinds {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", uint32(k))
}

// Valid reports whether k is a known kind.
func (k TxKind) Valid() bool { return k < numKinds }

// ErrUnknownKind is returned when decoding a TxKind discriminant that does not exist.
var ErrUnknownKind = errors.New("unknown transaction kind")

// Outpoint names one output of a transaction.
type Outpoint struct {
	TxID  Hash
	Index uint32
}

// String is "txid:index".
func (o Outpoint) String() string { return fmt.Sprintf("%s:%d", o.TxID, o.Index) }

// TxInput spends an earlier output.
type TxInput struct {
	PrevTxID  Hash
	PrevIndex uint32
	PublicKey [32]byte
	Signature [64]byte
}

// Outpoint is the output this input spends.
func (in *TxInput) Outpoint() Outpoint { return Outpoint{in.PrevTxID, in.PrevIndex} }

// TxOutput pays value subunits to a pubkey hash.
type TxOutput struct {
	Value      uint64
	PubKeyHash Hash
}

// Transaction is the protocol §5 transaction.
type Transaction struct {
	Version  uint32
	Kind     TxKind
	Inputs   []TxInput
	Outputs  []TxOutput
	LockTime uint64
	Payload  []byte
}

// Minimum encoded sizes, used to bound vector lengths before allocating.
const (
	minInputSize  = 32 + 1 + 32 + 64
	minOutputSize = 1 + 32
	minTxSize     = 6
)

// MaxPayloadSize bounds a payload while decoding; consensus limits the whole transaction.
const MaxPayloadSize = 100_000

// IsCoinbase reports whether the transaction is of the coinbase kind.
func (tx *Transaction) IsCoinbase() bool { return tx.Kind == KindCoinbase }

func (tx *Transaction) encode(w *bincode.Writer, witness bool) {
	w.U32(tx.Version)
	w.U32(uint32(tx.Kind))
	w.Varint(uint64(len(tx.Inputs)))
	for i := range tx.Inputs {
		in := &tx.Inputs[i]
		w.Raw(in.PrevTxID[:])
		w.U32(in.PrevIndex)
		if witness {
			w.Raw(in.PublicKey[:])
			w.Raw(in.Signature[:])
		}
	}
	w.Varint(uint64(len(tx.Outputs)))
	for i := range tx.Outputs {
		w.U64(tx.Outputs[i].Value)
		w.Raw(tx.Outputs[i].PubKeyHash[:])
	}
	w.U64(tx.LockTime)
	w.VarBytes(tx.Payload)
}

// Encode appends the transaction's bincode to w.
func (tx *Transaction) Encode(w *bincode.Writer) { tx.encode(w, true) }

// Bytes is the transaction's bincode.
func (tx *Transaction) Bytes() []byte {
	w := bincode.NewWriter(make([]byte, 0, tx.SerializeSize()))
	tx.encode(w, true)
	return w.Bytes()
}

// SerializeSize is the length of the transaction's bincode, computed without encoding.
func (tx *Transaction) SerializeSize() int {
	n := bincode.VarintSize(uint64(tx.Version)) + bincode.VarintSize(uint64(tx.Kind)) +
		bincode.VarintSize(uint64(len(tx.Inputs))) + bincode.VarintSize(uint64(len(tx.Outputs))) +
		bincode.VarintSize(tx.LockTime) + bincode.VarintSize(uint64(len(tx.Payload))) + len(tx.Payload)
	for i := range tx.Inputs {
		n += 32 + bincode.VarintSize(uint64(tx.Inputs[i].PrevIndex)) + 32 + 64
	}
	for i := range tx.Outputs {
		n += bincode.VarintSize(tx.Outputs[i].Value) + 32
	}
	return n
}

var writerPool = sync.Pool{New: func() any { return bincode.NewWriter(make([]byte, 0, 1024)) }}

// TxID is BLAKE3-256 of the witness-stripped bincode.
func (tx *Transaction) TxID() Hash { return tx.hash(false) }

// WitnessHash is BLAKE3-256 of the full bincode, public keys and signatures included: it
// names a transaction together with its witness (the txid does not).
func (tx *Transaction) WitnessHash() Hash { return tx.hash(true) }

// hash is BLAKE3-256 of the encoding, with or without the witness, in a pooled buffer.
func (tx *Transaction) hash(witness bool) Hash {
	w := writerPool.Get().(*bincode.Writer)
	w.Reset()
	tx.encode(w, witness)
	h := blake3.Sum256(w.Bytes())
	writerPool.Put(w)
	return h
}

// Decode reads one transaction from r.
func (tx *Transaction) Decode(r *bincode.Reader) {
	tx.Version = r.U32()
	kind := r.U32()
	if r.Err() == nil && !TxKind(kind).Valid() {
		r.Fail(fmt.Errorf("%w: %d", ErrUnknownKind, kind))
	}
	tx.Kind = TxKind(kind)
	if n := r.Len(minInputSize); n > 0 {
		tx.Inputs = make([]TxInput, n)
		for i := range tx.Inputs {
			in := &tx.Inputs[i]
			r.Raw(in.PrevTxID[:])
			in.PrevIndex = r.U32()
			r.Raw(in.PublicKey[:])
			r.Raw(in.Signature[:])
		}
	} else {
		tx.Inputs = nil
	}
	if n := r.Len(minOutputSize); n > 0 {
		tx.Outputs = make([]TxOutput, n)
		for i := range tx.Outputs {
			tx.Outputs[i].Value = r.U64()
			r.Raw(tx.Outputs[i].PubKeyHash[:])
		}
	} else {
		tx.Outputs = nil
	}
	tx.LockTime = r.U64()
	tx.Payload = r.VarBytes(MaxPayloadSize)
	if len(tx.Payload) == 0 {
		tx.Payload = nil
	}
}

// DecodeTransaction decodes exactly one transaction from b.
func DecodeTransaction(b []byte) (*Transaction, error) {
	r := bincode.NewReader(b)
	tx := new(Transaction)
	tx.Decode(r)
	if err := r.Finish(); err != nil {
		return nil, fmt.Errorf("decode transaction: %w", err)
	}
	return tx, nil
}

// SigMessagePrefix starts every signed message.
const SigMessagePrefix = "COIN-TX-V1"

// SigMessage is what each input signs: "COIN-TX-V1" ‖ magic ‖ txid.
func SigMessage(magic [4]byte, txid Hash) []byte {
	m := make([]byte, 0, len(SigMessagePrefix)+4+32)
	m = append(m, SigMessagePrefix...)
	m = append(m, magic[:]...)
	return append(m, txid[:]...)
}

// CoinbasePayload is the payload of a coinbase transaction.
type CoinbasePayload struct {
	Height uint64
	Extra  []byte
}

// MaxCoinbaseExtra bounds CoinbasePayload.Extra.
const MaxCoinbaseExtra = 64

// Bytes is the payload's bincode.
func (p CoinbasePayload) Bytes() []byte {
	w := bincode.NewWriter(nil)
	w.U64(p.Height)
	w.VarBytes(p.Extra)
	return w.Bytes()
}

// DecodeCoinbasePayload decodes a coinbase payload; Extra longer than 64 bytes is an error.
func DecodeCoinbasePayload(b []byte) (CoinbasePayload, error) {
	r := bincode.NewReader(b)
	var p CoinbasePayload
	p.Height = r.U64()
	p.Extra = r.VarBytes(MaxCoinbaseExtra)
	if err := r.Finish(); err != nil {
		return CoinbasePayload{}, fmt.Errorf("decode coinbase payload: %w", err)
	}
	return p, nil
}
