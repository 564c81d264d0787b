package chaingen

import (
	"github.com/cointoolkit/coin/lib/types"
)

// assemble is the unsolved block (nonce 0) on t with its coinbase first.
func assemble(t Template, payTo types.Hash, reward uint64, extra []byte, txs []*types.Transaction) *types.Block {
	return types.NewBlock(types.BlockSpec{Parent: t.Parent, Height: t.Height, Target: t.Target,
		Timestamp: t.Timestamp, PayTo: payTo, Reward: reward, Extra: extra, Txs: txs})
}
