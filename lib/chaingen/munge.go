package chaingen

import (
	"math/big"

	"github.com/cointoolkit/coin/lib/pow"
	"github.com/cointoolkit/coin/lib/types"
)

// A Munger changes a block after it is built and before it is solved, to make a variant
// that breaks one rule (or, like Timestamp, to place a valid block). Mungers that change a
// transaction recompute the merkle root, so each breaks only its own rule.
type Munger func(b *types.Block)

// FixMerkle recomputes the merkle root after a change to the transactions.
func FixMerkle(b *types.Block) { b.Header.MerkleRoot = types.MerkleRoot(b.TxIDs()) }

// BadMerkleRoot flips a bit of the merkle root.
func BadMerkleRoot(b *types.Block) { b.Header.MerkleRoot[0] ^= 1 }

// Version sets the block version.
func Version(v uint32) Munger { return func(b *types.Block) { b.Header.Version = v } }

// Target sets the compact target.
func Target(bits uint32) Munger { return func(b *types.Block) { b.Header.DifficultyTarget = bits } }

// Timestamp sets the header timestamp.
func Timestamp(ts uint64) Munger { return func(b *types.Block) { b.Header.Timestamp = ts } }

// Parent sets the previous-block hash (a parent nobody has makes an orphan).
func Parent(h types.Hash) Munger { return func(b *types.Block) { b.Header.PrevHash = h } }

// NoTransactions drops every transaction, the coinbase too.
func NoTransactions(b *types.Block) { b.Transactions = nil; FixMerkle(b) }

// CoinbaseValue sets the value of the coinbase's first output.
func CoinbaseValue(v uint64) Munger {
	return func(b *types.Block) { b.Transactions[0].Outputs[0].Value = v; FixMerkle(b) }
}

// Burn lowers the coinbase's first output by v: the block claims less than it may.
func Burn(v uint64) Munger {
	return func(b *types.Block) { b.Transactions[0].Outputs[0].Value -= v; FixMerkle(b) }
}

// CoinbaseHeight writes height into the coinbase payload (keeping the extra).
func CoinbaseHeight(height uint64) Munger {
	return func(b *types.Block) {
		cb := b.Transactions[0]
		p, _ := types.DecodeCoinbasePayload(cb.Payload)
		cb.Payload = types.CoinbasePayload{Height: height, Extra: p.Extra}.Bytes()
		FixMerkle(b)
	}
}

// Extra sets the coinbase extra data (at most 64 bytes).
func Extra(extra []byte) Munger {
	return func(b *types.Block) {
		cb := b.Transactions[0]
		p, _ := types.DecodeCoinbasePayload(cb.Payload)
		cb.Payload = types.CoinbasePayload{Height: p.Height, Extra: extra}.Bytes()
		FixMerkle(b)
	}
}

// PayTo makes the coinbase pay pkh.
func PayTo(pkh types.Hash) Munger {
	return func(b *types.Block) {
		for i := range b.Transactions[0].Outputs {
			b.Transactions[0].Outputs[i].PubKeyHash = pkh
		}
		FixMerkle(b)
	}
}

// SplitCoinbase pays the coinbase's value in n equal outputs to the same key; the remainder
// of the division is burned.
func SplitCoinbase(n int) Munger {
	return func(b *types.Block) {
		cb := b.Transactions[0]
		first := cb.Outputs[0]
		part := first.Value / uint64(n)
		cb.Outputs = cb.Outputs[:0]
		for i := 0; i < n; i++ {
			cb.Outputs = append(cb.Outputs, types.TxOutput{Value: part, PubKeyHash: first.PubKeyHash})
		}
		FixMerkle(b)
	}
}

// DuplicateTx appends a second copy of transaction i.
func DuplicateTx(i int) Munger {
	return func(b *types.Block) { b.Transactions = append(b.Transactions, b.Transactions[i]); FixMerkle(b) }
}

// SwapTxs swaps transactions i and j (0 and 1 puts a transfer first).
func SwapTxs(i, j int) Munger {
	return func(b *types.Block) {
		b.Transactions[i], b.Transactions[j] = b.Transactions[j], b.Transactions[i]
		FixMerkle(b)
	}
}

// BadSignature flips a bit of the signature of input in of transaction tx. The txid and the
// block hash do not commit to signatures, so the block keeps its hash.
func BadSignature(tx, in int) Munger {
	return func(b *types.Block) { b.Transactions[tx].Inputs[in].Signature[5] ^= 0x40 }
}

// Unsolve changes the nonce of a solved block until its hash is above its target: a block
// whose proof of work fails (about every second nonce at the regtest limit).
func Unsolve(b *types.Block, powLimit *big.Int) *types.Block {
	for pow.CheckProofOfWork(b.Hash(), b.Header.DifficultyTarget, powLimit) == nil {
		b.Header.Nonce++
	}
	return b
}
