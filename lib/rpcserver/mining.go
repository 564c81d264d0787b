package rpcserver

import (
	"context"
	"encoding/hex"
	"errors"
	"time"

	"github.com/cointoolkit/coin/lib/chainstate"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/jsonrpc"
	"github.com/cointoolkit/coin/lib/pow"
	"github.com/cointoolkit/coin/lib/reason"
	"github.com/cointoolkit/coin/lib/rpcapi"
	"github.com/cointoolkit/coin/lib/types"
)

// coinbaseReserve is room kept in a template for the header and the coinbase.
const coinbaseReserve = 1_000

// buildTemplate assembles an unsolved block on the tip paying pkh: the coinbase claims
// subsidy + fees + pool release, then the mempool's transactions by fee rate. It returns the
// chain template the block was built on, so that callers describe that block and not a newer tip.
func (a *api) buildTemplate(pkh types.Hash) (*types.Block, []uint64, chainstate.Template) {
	next := a.b.Chain().NextBlock()
	entries := a.b.Mempool().Select(consensus.MaxBlockSize - coinbaseReserve)
	txs := make([]*types.Transaction, len(entries))
	fees := make([]uint64, len(entries)+1)
	var total uint64
	for i, e := range entries {
		txs[i] = e.Tx
		fees[i+1] = e.Fee
		total += e.Fee
	}
	ts := uint64(time.Now().Unix())
	if ts < next.MinTimestamp {
		ts = next.MinTimestamp
	}
	reward, _ := consensus.MaxCoinbaseValue(next.Height, total, next.Pool)
	b := types.NewBlock(types.BlockSpec{Parent: next.Parent, Height: next.Height, Target: next.Target,
		Timestamp: ts, PayTo: pkh, Reward: reward, Txs: txs})
	return b, fees, next
}

func (a *api) getBlockTemplate(_ context.Context, p jsonrpc.Params) (any, error) {
	pkh, err := a.addressParam(p, 0)
	if err != nil {
		return nil, err
	}
	if a.b.Syncing() {
		return nil, rpcapi.DomainError(reason.Syncing, "node is syncing: block templates are refused until it has caught up")
	}
	b, fees, next := a.buildTemplate(types.Hash(pkh))
	t, _, _ := pow.CompactToBig(b.Header.DifficultyTarget)
	target := pow.TargetBytes(t)
	res := rpcapi.BlockTemplate{Version: b.Header.Version, PrevHash: b.Header.PrevHash.String(),
		MerkleRoot: b.Header.MerkleRoot.String(), Timestamp: b.Header.Timestamp,
		DifficultyTarget: b.Header.DifficultyTarget, Nonce: 0, Height: next.Height,
		Transactions: make([]rpcapi.TemplateTx, len(b.Transactions)), Target: hex.EncodeToString(target[:]),
		MinTime: next.MinTimestamp, CoinbaseValue: b.Transactions[0].Outputs[0].Value}
	for i, tx := range b.Transactions {
		res.Transactions[i] = rpcapi.TemplateTx{TxID: tx.TxID().String(), Data: hex.EncodeToString(tx.Bytes()), Fee: fees[i]}
	}
	return res, nil
}

func (a *api) submitBlock(ctx context.Context, p jsonrpc.Params) (any, error) {
	raw, err := p.Hex(0)
	if err != nil {
		return nil, err
	}
	if len(raw) > consensus.MaxBlockSize+1024 {
		return nil, rpcapi.DomainError(consensus.ErrBlockTooLarge, "block too large")
	}
	b, err := types.DecodeBlock(raw)
	if err != nil {
		return nil, rpcapi.DomainError(reason.DecodeFailed, "block decode failed: "+err.Error())
	}
	tip := a.b.Chain().Tip()
	if b.Header.PrevHash != tip.Hash {
		if a.b.Chain().NodeByHash(b.Hash()) != nil {
			return nil, rpcapi.DomainError(consensus.ErrDuplicateBlock, "duplicate: block already known")
		}
		return nil, rpcapi.DomainError(reason.StaleTemplate, "stale block template: the block builds on "+b.Header.PrevHash.String()+
			", the tip is "+tip.Hash.String())
	}
	if _, err := a.b.SubmitBlock(ctx, b); err != nil {
		return nil, rejection(err)
	}
	return "ok", nil
}

func (a *api) generateToAddress(ctx context.Context, p jsonrpc.Params) (any, error) {
	n, err := p.Uint64(0)
	if err != nil {
		return nil, err
	}
	if n > 10_000 {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid parameter 1 (nblocks): at most 10000")
	}
	pkh, err := a.addressParam(p, 1)
	if err != nil {
		return nil, err
	}
	hashes := make([]string, 0, n)
	for uint64(len(hashes)) < n && ctx.Err() == nil {
		h, err := a.generateOne(ctx, types.Hash(pkh))
		if err != nil {
			return nil, err
		}
		hashes = append(hashes, h.String())
	}
	return hashes, nil
}

// generateTries bounds how often one generated block is mined again because another block took
// the tip between its template and its submission.
const generateTries = 16

// generateOne mines one block on the tip and returns its hash once it is the tip. A block that
// lost the race for its height (to a miner's submitblock, a peer's block, or another
// generatetoaddress building the identical block) is mined again on the new tip; a stale one
// stays in the index as a side branch and is not reported, since the caller counts on the
// height growing by what it asked.
func (a *api) generateOne(ctx context.Context, pkh types.Hash) (types.Hash, error) {
	for stale := 0; stale < generateTries; {
		b, _, _ := a.buildTemplate(pkh)
		if err := types.SolveBlock(b, 1<<32); err != nil {
			return types.Hash{}, rpcapi.DomainError(reason.SolveFailed, err.Error())
		}
		res, err := a.b.SubmitBlock(ctx, b)
		switch {
		case errors.Is(err, consensus.ErrDuplicateBlock):
			// Another caller built the very same block (same parent, payee and second) first;
			// the chain grew, so this is not counted against the tries.
		case err != nil:
			return types.Hash{}, rejection(err)
		case res.IsTip:
			return b.Hash(), nil
		default:
			stale++
		}
	}
	return types.Hash{}, rpcapi.DomainError(reason.StaleTemplate, "generatetoaddress: other blocks kept taking the tip; no block of ours stayed on it")
}
