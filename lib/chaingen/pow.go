package chaingen

import (
	"errors"

	"github.com/cointoolkit/coin/lib/pow"
	"github.com/cointoolkit/coin/lib/types"
)

// The generator assembles and solves blocks itself rather than with lib/miner: the miner
// imports the RPC client, and the generator must stay importable by the tests of every
// package the node is built from (an import of one of them through the miner would be a
// cycle).

// errExhausted is returned by solve when the nonce range holds no solution.
var errExhausted = errors.New("chaingen: no nonce in range meets the target")

// CoinbaseTx is a coinbase transaction of a block at height paying value to pkh (for a
// block with a second one).
func CoinbaseTx(height uint64, pkh types.Hash, value uint64, extra []byte) *types.Transaction {
	return &types.Transaction{Version: 1, Kind: types.KindCoinbase,
		Outputs: []types.TxOutput{{Value: value, PubKeyHash: pkh}},
		Payload: types.CoinbasePayload{Height: height, Extra: extra}.Bytes()}
}

// assemble is the unsolved block (nonce 0) on t with its coinbase first.
func assemble(t Template, payTo types.Hash, reward uint64, extra []byte, txs []*types.Transaction) *types.Block {
	all := make([]*types.Transaction, 0, len(txs)+1)
	all = append(all, CoinbaseTx(t.Height, payTo, reward, extra))
	all = append(all, txs...)
	b := &types.Block{Header: types.BlockHeader{Version: 1, PrevHash: t.Parent, Timestamp: t.Timestamp,
		DifficultyTarget: t.Target}, Transactions: all}
	FixMerkle(b)
	return b
}

// solve searches nonces from the header's current one until the hash meets the target.
func solve(b *types.Block, tries uint64) error {
	t, neg, over := pow.CompactToBig(b.Header.DifficultyTarget)
	if neg || over || t.Sign() == 0 {
		return errors.New("chaingen: invalid target")
	}
	target := pow.TargetBytes(t)
	fixed := b.Header.FixedBytes()
	for i := uint64(0); i < tries; i++ {
		h := [32]byte(types.DoubleSHA256(fixed[:]))
		if pow.HashMeetsTarget(&h, &target) {
			b.Header = types.HeaderFromFixed(&fixed)
			return nil
		}
		n := b.Header.Nonce + i + 1
		for j := 0; j < 8; j++ {
			fixed[80+j] = byte(n >> (8 * j))
		}
	}
	return errExhausted
}
