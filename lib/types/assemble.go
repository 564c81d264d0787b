package types

import (
	"errors"

	"github.com/cointoolkit/coin/lib/pow"
)

// ErrNonceExhausted is returned by SolveBlock when the nonce range holds no solution.
var ErrNonceExhausted = errors.New("no nonce in range meets the target")

// BlockSpec describes a block to assemble: the node's getblocktemplate and generatetoaddress,
// the test chain generator and tests use it.
type BlockSpec struct {
	Parent    Hash
	Height    uint64
	Target    uint32
	Timestamp uint64
	PayTo     Hash   // pubkey hash of the coinbase output
	Reward    uint64 // what the coinbase pays: at most subsidy + fees + release
	Extra     []byte // coinbase extra data, at most MaxCoinbaseExtra bytes
	Txs       []*Transaction
}

// NewCoinbase is the coinbase transaction of a block at height paying value to pkh
// (protocol §5: kind 0, no inputs, the height and extra data as payload).
func NewCoinbase(height uint64, pkh Hash, value uint64, extra []byte) *Transaction {
	return &Transaction{
		Version: 1, Kind: KindCoinbase,
		Outputs: []TxOutput{{Value: value, PubKeyHash: pkh}},
		Payload: CoinbasePayload{Height: height, Extra: extra}.Bytes(),
	}
}

// NewBlock assembles the unsolved block (nonce 0) of s: its coinbase, then s.Txs, under a
// header committing to their merkle root.
func NewBlock(s BlockSpec) *Block {
	txs := make([]*Transaction, 0, len(s.Txs)+1)
	txs = append(txs, NewCoinbase(s.Height, s.PayTo, s.Reward, s.Extra))
	txs = append(txs, s.Txs...)
	b := &Block{Header: BlockHeader{Version: 1, PrevHash: s.Parent, Timestamp: s.Timestamp,
		DifficultyTarget: s.Target}, Transactions: txs}
	b.Header.MerkleRoot = MerkleRoot(b.TxIDs())
	return b
}

// SolveBlock searches nonces from the header's current nonce for up to tries attempts, one
// hash at a time: enough for easy targets (regtest, tests, generatetoaddress). Real targets
// are lib/miner's, with lib/sha256d's kernels.
func SolveBlock(b *Block, tries uint64) error {
	t, neg, over := pow.CompactToBig(b.Header.DifficultyTarget)
	if neg || over || t.Sign() == 0 {
		return errors.New("invalid target")
	}
	target := pow.TargetBytes(t)
	fixed := b.Header.FixedBytes()
	for i := uint64(0); i < tries; i++ {
		h := [32]byte(DoubleSHA256(fixed[:]))
		if pow.HashMeetsTarget(&h, &target) {
			b.Header = HeaderFromFixed(&fixed)
			return nil
		}
		n := b.Header.Nonce + i + 1
		for j := 0; j < 8; j++ {
			fixed[80+j] = byte(n >> (8 * j))
		}
	}
	return ErrNonceExhausted
}
