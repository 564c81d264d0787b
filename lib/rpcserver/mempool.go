package rpcserver

import (
	"context"
	"math"

	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/jsonrpc"
	"github.com/cointoolkit/coin/lib/reason"
	"github.com/cointoolkit/coin/lib/rpcapi"
	"github.com/cointoolkit/coin/lib/types"
)

// effective is e's value when spent at height, as the chain prices it (its StateView).
func (a *api) effective(e *consensus.UtxoEntry, height uint64) (uint64, error) {
	return a.b.Chain().InputValue(e, height)
}

// clusterOf is the cluster pkh belongs to, as the chain's StateView says.
func (a *api) clusterOf(pkh types.Hash) (types.Hash, error) { return a.b.Chain().ClusterOf(pkh) }

func (a *api) sendRawTransaction(ctx context.Context, p jsonrpc.Params) (any, error) {
	raw, err := p.Hex(0)
	if err != nil {
		return nil, err
	}
	tx, err := types.DecodeTransaction(raw)
	if err != nil {
		return nil, rpcapi.DomainError(reason.DecodeFailed, "transaction decode failed: "+err.Error())
	}
	txid, err := a.b.SubmitTransaction(ctx, tx)
	if err != nil {
		return nil, rejection(err)
	}
	return txid.String(), nil
}

func (a *api) getMempoolInfo(context.Context, jsonrpc.Params) (any, error) {
	i := a.b.Mempool().Info()
	return rpcapi.MempoolInfo{Size: i.Size, Bytes: i.Bytes, TotalFee: i.TotalFee}, nil
}

// getRawMempool lists the pool's txids in the order a block template would take them all
// (Select with no size bound): parents, including the agent transactions another relies on
// (protocol §9.3), before their children, so a follower can apply them in that order.
func (a *api) getRawMempool(context.Context, jsonrpc.Params) (any, error) {
	es := a.b.Mempool().Select(math.MaxInt)
	ids := make([]string, len(es))
	for i, e := range es {
		ids[i] = e.TxID.String()
	}
	return ids, nil
}
