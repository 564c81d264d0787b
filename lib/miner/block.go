package miner

import (
	"errors"
	"math/big"

	"github.com/cointoolkit/coin/lib/pow"
	"github.com/cointoolkit/coin/lib/types"
)

// ErrExhausted is returned by Solve when the nonce range holds no solution.
var ErrExhausted = errors.New("miner: no nonce in range meets the target")

// Spec describes a block to assemble: the node's generatetoaddress and test chains use it.
type Spec struct {
	Parent    types.Hash
	Height    uint64
	Target    uint32
	Timestamp uint64
	PayTo     types.Hash // pubkey hash of the coinbase output
	Reward    uint64     // what the coinbase pays: at most subsidy + fees + release
	Extra     []byte     // coinbase extra data, at most 64 bytes
	Txs       []*types.Transaction
}

// Coinbase is the coinbase transaction of a block at height paying value to pkh.
func Coinbase(height uint64, pkh types.Hash, value uint64, extra []byte) *types.Transaction {
	return &types.Transaction{
		Version: 1, Kind: types.KindCoinbase,
		Outputs: []types.TxOutput{{Value: value, PubKeyHash: pkh}},
		Payload: types.CoinbasePayload{Height: height, Extra: extra}.Bytes(),
	}
}

// NewBlock assembles the unsolved block (nonce 0) of spec: its coinbase, then spec.Txs, under
// a header committing to their merkle root.
func NewBlock(s Spec) *types.Block {
	txs := make([]*types.Transaction, 0, len(s.Txs)+1)
	txs = append(txs, Coinbase(s.Height, s.PayTo, s.Reward, s.Extra))
	txs = append(txs, s.Txs...)
	b := &types.Block{Header: types.BlockHeader{Version: 1, PrevHash: s.Parent, Timestamp: s.Timestamp,
		DifficultyTarget: s.Target}, Transactions: txs}
	b.Header.MerkleRoot = types.MerkleRoot(b.TxIDs())
	return b
}

// Solve searches nonces from the header's current nonce for up to tries attempts, one hash
// at a time: enough for easy targets (regtest, tests, generatetoaddress). Real targets are the
// Miner's, with lib/sha256d's kernels.
func Solve(b *types.Block, tries uint64) error {
	t, neg, over := pow.CompactToBig(b.Header.DifficultyTarget)
	if neg || over || t.Sign() == 0 {
		return errors.New("miner: invalid target")
	}
	target := pow.TargetBytes(t)
	fixed := b.Header.FixedBytes()
	for i := uint64(0); i < tries; i++ {
		h := types.DoubleSHA256(fixed[:])
		hb := [32]byte(h)
		if pow.HashMeetsTarget(&hb, &target) {
			b.Header = types.HeaderFromFixed(&fixed)
			return nil
		}
		n := b.Header.Nonce + i + 1
		for j := 0; j < 8; j++ {
			fixed[80+j] = byte(n >> (8 * j))
		}
	}
	return ErrExhausted
}

// TargetOf decodes a compact target (for callers that compare work).
func TargetOf(bits uint32) *big.Int {
	t, _, _ := pow.CompactToBig(bits)
	return t
}
