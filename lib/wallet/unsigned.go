package wallet

import (
	"context"
	"crypto/ed25519"

	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/keys"

	"github.com/cointoolkit/coin/lib/types"
)

// PlanUnsigned builds req for the address addr (of the public key pub) from its coins in the
// node's pending view, as Spend (a transfer) or SpendAgent (an agent operation) would, but
// signs and broadcasts nothing: every input's public key and signature is zero. It serves a
// client that keeps its key (protocol §9.5): it signs
// types.SigMessage(magic, plan.TxID) itself and puts its key and that one signature in every
// input, which all belong to addr. An agent transaction passes the kind's context-free rules
// (consensus.CheckTransactionSanity) once pub is in its inputs, or is not returned.
func PlanUnsigned(ctx context.Context, node NodeClient, addr string, pub ed25519.PublicKey, req Request) (*Plan, error) {
	pkh := types.Hash(keys.HashPubKey(pub))
	coins, err := pendingCoins(ctx, node, []string{addr})
	if err != nil {
		return nil, err
	}
	if req.Kind == types.KindCoinbase || req.Kind == types.KindTransfer {
		if req.Change == (types.Hash{}) {
			req.Change = pkh
		}
		own := make([]Coin, 0, len(coins))
		for _, c := range coins {
			if c.PKH == pkh && c.Signer == (types.Hash{}) {
				own = append(own, c)
			}
		}
		return Select(own, req)
	}
	plan, err := SelectAgent(coins, req, pkh)
	if err != nil {
		return nil, err
	}
	keyed := *plan.Tx
	keyed.Inputs = append([]types.TxInput(nil), plan.Tx.Inputs...)
	for i := range keyed.Inputs {
		copy(keyed.Inputs[i].PublicKey[:], pub)
	}
	if err := consensus.CheckTransactionSanity(&keyed, plan.Size); err != nil {
		return nil, err
	}
	return plan, nil
}
