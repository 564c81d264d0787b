package p2p

import (
	"context"

	"github.com/cointoolkit/coin/lib/amount"
	"github.com/cointoolkit/coin/lib/chaingen"
	"github.com/cointoolkit/coin/lib/chainstate"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/types"
)

// mineAgentOps mines five blocks on the node's tip with one round of Proof of Conduct
// between two new agents of w's generator, named tag-a and tag-b: a transfer from three
// mature coinbases of w funds both, both register, a opens a contract with b, b fulfils it,
// and each reviews the other. The blocks carry the node's mempool too (nextBlock).
func (tn *tnode) mineAgentOps(w wallet, tag string, coinbases ...*types.Transaction) []*types.Block {
	tn.t.Helper()
	g := w.gen
	a, b := g.Wallet(tag+"-a"), g.Wallet(tag+"-b")
	var ins []chaingen.Output
	for _, cb := range coinbases {
		ins = append(ins, chaingen.OutputOf(cb, 0))
	}
	const fee = 10_000
	fund := g.Spend(ins...).Pay(a.PKH, 60*amount.Coin).Pay(b.PKH, 60*amount.Coin).Change(w.pkh, 1).Fee(fee).Tx()
	regA := g.Spend(chaingen.OutputOf(fund, 0)).Kind(types.KindAgentRegister, nil).Pay(a.PKH, consensus.AgentStake).Fee(fee).Tx()
	regB := g.Spend(chaingen.OutputOf(fund, 1)).Kind(types.KindAgentRegister, nil).Pay(b.PKH, consensus.AgentStake).Fee(fee).Tx()
	create := g.Spend(chaingen.OutputOf(regA, 1)).Kind(types.KindContractCreate,
		types.ContractCreatePayload{Counterparty: b.PKH, ExpiryBlocks: consensus.DefaultExpiry}.Bytes()).
		Pay(b.PKH, 1_000_000).Fee(fee).Tx()
	id := create.TxID()
	fulfil := g.Spend(chaingen.OutputOf(create, 0)).Kind(types.KindContractFulfil,
		types.ContractRefPayload{ContractID: id}.Bytes()).Fee(fee).Tx()
	reviewA := g.Spend(chaingen.OutputOf(create, 1)).Kind(types.KindReview,
		types.ReviewPayload{ContractID: id, Subject: b.PKH, Score: 9}.Bytes()).Fee(fee).Tx()
	reviewB := g.Spend(chaingen.OutputOf(regB, 1)).Kind(types.KindReview,
		types.ReviewPayload{ContractID: id, Subject: a.PKH, Score: 4}.Bytes()).Fee(fee).Tx()
	var out []*types.Block
	for _, txs := range [][]*types.Transaction{{fund}, {regA, regB}, {create}, {fulfil}, {reviewA, reviewB}} {
		blk := tn.nextBlock(w, txs...)
		if _, err := tn.n.SubmitBlock(context.Background(), blk); err != nil {
			tn.t.Fatalf("%s: mining agent operations: %v", tn.name, err)
		}
		out = append(out, blk)
	}
	return out
}

// conductInfo is the node's confirmed conduct state (getconductinfo).
func (tn *tnode) conductInfo() chainstate.ConductInfo {
	tn.t.Helper()
	info, err := tn.n.Chain().ConductInfo(context.Background())
	if err != nil {
		tn.t.Fatalf("%s: ConductInfo: %v", tn.name, err)
	}
	return info
}
