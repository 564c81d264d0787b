package chaingen

import (
	"crypto/ed25519"

	"github.com/cointoolkit/coin/lib/types"
)

// TxBuilder builds one transaction of any kind: its inputs, its payload, payments, a fee (or
// a fee rate) and the change, each input signed by the wallet its output pays. Start one with
// Generator.Spend, end it with Tx.
type TxBuilder struct {
	g        *Generator
	tx       types.Transaction
	ins      []Output
	pays     []types.TxOutput
	fee      uint64
	rate     uint64
	byRate   bool
	change   types.Hash
	hasOwner bool
	parts    int
	magic    [4]byte
	signer   *Wallet
	unsigned bool
	name     string
}

// Spend starts a transfer (version 1) spending ins. With nothing else said, everything less
// a zero fee goes back in one output to the wallet the first input pays.
func (g *Generator) Spend(ins ...Output) *TxBuilder {
	b := &TxBuilder{g: g, tx: types.Transaction{Version: 1, Kind: types.KindTransfer}, ins: ins, parts: 1,
		magic: g.net.Magic}
	if len(ins) > 0 {
		b.change, b.hasOwner = ins[0].PKH, true
	}
	return b
}

// Kind makes the transaction one of kind with payload (for example
// types.VouchPayload{...}.Bytes()).
func (b *TxBuilder) Kind(kind types.TxKind, payload []byte) *TxBuilder {
	b.tx.Kind, b.tx.Payload = kind, payload
	return b
}

// Version sets the transaction version (1 is the only valid one).
func (b *TxBuilder) Version(v uint32) *TxBuilder { b.tx.Version = v; return b }

// LockTime sets the lock time (a height below 500,000,000, else a time).
func (b *TxBuilder) LockTime(lt uint64) *TxBuilder { b.tx.LockTime = lt; return b }

// Pay adds an output paying value to pkh, before the change.
func (b *TxBuilder) Pay(pkh types.Hash, value uint64) *TxBuilder {
	b.pays = append(b.pays, types.TxOutput{Value: value, PubKeyHash: pkh})
	return b
}

// Fee leaves fee to the miner.
func (b *TxBuilder) Fee(fee uint64) *TxBuilder { b.fee, b.byRate = fee, false; return b }

// FeeRate leaves exactly rate subunits per byte of the signed transaction.
func (b *TxBuilder) FeeRate(rate uint64) *TxBuilder { b.rate, b.byRate = rate, true; return b }

// Change sends what the inputs hold beyond the payments and the fee to pkh in parts equal
// outputs (the last takes the remainder); parts 0 means no change output.
func (b *TxBuilder) Change(pkh types.Hash, parts int) *TxBuilder {
	b.change, b.hasOwner, b.parts = pkh, true, parts
	return b
}

// SignedBy signs every input with w instead of each output's owner.
func (b *TxBuilder) SignedBy(w *Wallet) *TxBuilder { b.signer = w; return b }

// Magic signs for another network's magic.
func (b *TxBuilder) Magic(m [4]byte) *TxBuilder { b.magic = m; return b }

// Unsigned leaves the inputs without public keys and signatures.
func (b *TxBuilder) Unsigned() *TxBuilder { b.unsigned = true; return b }

// Name makes the transaction known to the generator as name (Generator.Tx, Generator.Out).
func (b *TxBuilder) Name(name string) *TxBuilder { b.name = name; return b }

// Tx builds and signs the transaction and records its outputs and fee.
func (b *TxBuilder) Tx() *types.Transaction {
	b.g.tb.Helper()
	fee := b.fee
	tx := b.assemble(fee)
	for i := 0; b.byRate; i++ {
		fee = b.rate * uint64(tx.SerializeSize())
		tx = b.assemble(fee)
		if b.rate*uint64(tx.SerializeSize()) == fee {
			break
		}
		if i == 8 {
			b.g.tb.Fatalf("chaingen: no fee pays exactly %d per byte", b.rate)
		}
	}
	g := b.g
	g.mu.Lock()
	g.fees[tx.TxID()] = fee
	g.recordLocked(tx, 0, false)
	if b.name != "" {
		g.txs[b.name] = tx
	}
	g.mu.Unlock()
	return tx
}

func (b *TxBuilder) assemble(fee uint64) *types.Transaction {
	g := b.g
	g.tb.Helper()
	tx := b.tx
	tx.Inputs = make([]types.TxInput, len(b.ins))
	var total, paid uint64
	for i, in := range b.ins {
		tx.Inputs[i] = types.TxInput{PrevTxID: in.Outpoint.TxID, PrevIndex: in.Outpoint.Index}
		total += in.Value
	}
	tx.Outputs = append([]types.TxOutput(nil), b.pays...)
	for _, p := range b.pays {
		paid += p.Value
	}
	if paid+fee > total {
		g.tb.Fatalf("chaingen: payments %d and fee %d exceed the inputs' %d", paid, fee, total)
	}
	if left := total - paid - fee; b.parts > 0 && b.hasOwner && (left > 0 || len(b.pays) == 0) {
		for i := 0; i < b.parts; i++ {
			part := left / uint64(b.parts)
			if i == b.parts-1 {
				part = left - part*uint64(b.parts-1)
			}
			tx.Outputs = append(tx.Outputs, types.TxOutput{Value: part, PubKeyHash: b.change})
		}
	}
	if b.unsigned {
		return &tx
	}
	if b.signer != nil {
		return b.signer.Sign(&tx, b.magic)
	}
	keys := make([]ed25519.PrivateKey, len(b.ins))
	for i, in := range b.ins {
		w, ok := g.owner(in.PKH)
		if !ok {
			g.tb.Fatalf("chaingen: input %d spends %s paying %s, which no wallet owns", i, in.Outpoint, in.PKH)
		}
		keys[i] = w.Key
	}
	signInputs(&tx, keys, b.magic)
	return &tx
}

// signInputs signs input i with keys[i].
func signInputs(tx *types.Transaction, keys []ed25519.PrivateKey, magic [4]byte) {
	msg := types.SigMessage(magic, tx.TxID())
	for i, k := range keys {
		copy(tx.Inputs[i].PublicKey[:], k.Public().(ed25519.PublicKey))
		copy(tx.Inputs[i].Signature[:], ed25519.Sign(k, msg))
	}
}

// Sign signs tx again after a change, each input with the wallet owning the output it
// spends (which the generator must know), for the generator's network, and records its
// outputs.
func (g *Generator) Sign(tx *types.Transaction) *types.Transaction {
	g.tb.Helper()
	keys := make([]ed25519.PrivateKey, len(tx.Inputs))
	for i := range tx.Inputs {
		op := tx.Inputs[i].Outpoint()
		o, ok := g.Lookup(op)
		w, known := g.owner(o.PKH)
		if !ok || !known {
			g.tb.Fatalf("chaingen: input %d spends %s, whose owner is unknown", i, op)
		}
		keys[i] = w.Key
	}
	signInputs(tx, keys, g.net.Magic)
	g.mu.Lock()
	g.recordLocked(tx, 0, false)
	g.mu.Unlock()
	return tx
}
