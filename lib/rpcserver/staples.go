package rpcserver

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"time"

	"github.com/cointoolkit/coin/lib/chainstate"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/jsonrpc"
	"github.com/cointoolkit/coin/lib/pow"
	"github.com/cointoolkit/coin/lib/reason"
	"github.com/cointoolkit/coin/lib/rpcapi"
	"github.com/cointoolkit/coin/lib/types"
)

// Bitcoin Core's staples (rpcapi.Methods, "Bitcoin Core's staples"): the chain and mining
// ones here, the mempool ones in mempool_staples.go, the waits in wait.go.

// startTimer is what a backend that knows when it started adds to uptime (lib/node's Node);
// without it uptime counts from Register.
type startTimer interface{ StartTime() time.Time }

// notifierSource is what a backend with a Notifier adds (lib/node's Node): the waits follow
// its block events; without one they look at the tip every waitPoll.
type notifierSource interface{ Notifier() *Notifier }

// stapleHandlers are the handlers of the staples; registered is when Register ran.
func (a *api) stapleHandlers(registered time.Time) map[string]handler {
	start := registered
	if st, ok := a.b.Backend.(startTimer); ok {
		start = st.StartTime()
	}
	fc := &feeRateCache{}
	return map[string]handler{
		"getbestblockhash": a.getBestBlockHash,
		"getdifficulty":    a.getDifficulty,
		"getmininginfo":    a.getMiningInfo,
		"getnetworkhashps": a.getNetworkHashPS,
		"getchaintips":     a.getChainTips,
		"getblockstats":    a.getBlockStats,
		"uptime": func(context.Context, jsonrpc.Params) (any, error) {
			return int64(time.Since(start).Seconds()), nil
		},
		"getmempoolentry":      a.getMempoolEntry,
		"testmempoolaccept":    a.testMempoolAccept,
		"decoderawtransaction": a.decodeRawTransaction,
		"estimatesmartfee": func(ctx context.Context, p jsonrpc.Params) (any, error) {
			return a.estimateSmartFee(ctx, p, fc)
		},
		"waitfornewblock":    a.waitForNewBlock,
		"waitforblockheight": a.waitForBlockHeight,
	}
}

func (a *api) getBestBlockHash(context.Context, jsonrpc.Params) (any, error) {
	return a.b.Chain().Tip().Hash.String(), nil
}

// difficulty is Core's: the network's easiest target divided by the block's target.
func (a *api) difficulty(bits uint32) float64 {
	t, _, _ := pow.CompactToBig(bits)
	if t.Sign() <= 0 {
		return 0
	}
	d, _ := new(big.Rat).SetFrac(a.b.Network().PowLimit, t).Float64()
	return d
}

func (a *api) getDifficulty(context.Context, jsonrpc.Params) (any, error) {
	return a.difficulty(a.b.Chain().Tip().Header.DifficultyTarget), nil
}

// defaultHashPSBlocks is getnetworkhashps's default window, as Core's.
const defaultHashPSBlocks = 120

// networkHashPS is the work of the nblocks blocks ending at end divided by the time between
// the earliest and the latest timestamp among them and the block before (Core's way), 0 when
// no time passed.
func networkHashPS(c Chain, end *chainstate.BlockNode, nblocks uint64) float64 {
	if nblocks == 0 || nblocks > end.Height {
		nblocks = end.Height
	}
	if nblocks == 0 {
		return 0
	}
	start := c.NodeAt(end.Height - nblocks)
	if start == nil {
		return 0
	}
	lo, hi := end.Header.Timestamp, end.Header.Timestamp
	for n := end; n != nil && n.Height >= start.Height; n = n.Parent {
		lo, hi = min(lo, n.Header.Timestamp), max(hi, n.Header.Timestamp)
	}
	if hi == lo {
		return 0
	}
	work := new(big.Int).Sub(end.WorkBig(), start.WorkBig())
	f, _ := new(big.Rat).SetFrac(work, new(big.Int).SetUint64(hi-lo)).Float64()
	return f
}

func (a *api) getNetworkHashPS(_ context.Context, p jsonrpc.Params) (any, error) {
	nblocks, err := p.OptUint64(0, defaultHashPSBlocks)
	if err != nil {
		return nil, err
	}
	c := a.b.Chain()
	end := c.Tip()
	if len(p) > 1 && string(p[1]) != "null" {
		h, err := p.Uint64(1)
		if err != nil {
			return nil, err
		}
		if end = c.NodeAt(h); end == nil {
			return nil, rpcapi.DomainError(reason.HeightOutOfRange, "block height out of range")
		}
	}
	return networkHashPS(c, end, nblocks), nil
}

func (a *api) getMiningInfo(context.Context, jsonrpc.Params) (any, error) {
	c := a.b.Chain()
	tip := c.Tip()
	bits := tip.Header.DifficultyTarget
	t, _, _ := pow.CompactToBig(bits)
	target := pow.TargetBytes(t)
	return rpcapi.MiningInfo{Blocks: tip.Height, Bits: fmt.Sprintf("%08x", bits), Difficulty: a.difficulty(bits),
		Target: fmt.Sprintf("%x", target[:]), NetworkHashPS: networkHashPS(c, tip, defaultHashPSBlocks),
		PooledTx: a.b.Mempool().Info().Size, Chain: a.b.Network().Name, Warnings: []string{}}, nil
}

func (a *api) getChainTips(context.Context, jsonrpc.Params) (any, error) {
	tips := a.b.Chain().ChainTips()
	out := make([]rpcapi.ChainTip, len(tips))
	for i, t := range tips {
		out[i] = rpcapi.ChainTip{Height: t.Node.Height, Hash: t.Node.Hash.String(), BranchLen: t.BranchLen, Status: t.Status}
	}
	return out, nil
}

// blockParam reads a block hash, or a main-chain height (a JSON number or a string of
// digits), as parameter i.
func (a *api) blockParam(p jsonrpc.Params, i int) (*chainstate.BlockNode, error) {
	c := a.b.Chain()
	var height uint64
	if h, err := p.Uint64(i); err == nil {
		height = h
	} else {
		s, serr := p.String(i)
		if serr != nil {
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid parameter %d (hash_or_height): want a block hash or a height", i+1)
		}
		if hash, herr := types.ParseHash(s); herr == nil {
			st := c.HeaderState(hash)
			if !st.HaveBlock || st.Invalid {
				return nil, rpcapi.DomainError(reason.BlockNotFound, "block not found")
			}
			return st.Node, nil
		}
		if height, err = strconv.ParseUint(s, 10, 64); err != nil {
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid parameter %d (hash_or_height): want a block hash (64 hex digits) or a height", i+1)
		}
	}
	n := c.NodeAt(height)
	if n == nil {
		return nil, rpcapi.DomainError(reason.HeightOutOfRange, "block height out of range")
	}
	return n, nil
}

// txFee is one transaction's fee (nominal) and size.
type txFee struct {
	fee, size uint64
}

// rate is the fee per byte, rounded down.
func (f txFee) rate() uint64 { return f.fee / max(f.size, 1) }

// blockFees lists the fees and sizes of b's transactions but the coinbase: each the nominal
// value of its inputs, as created, less its outputs. The node keeps no record of the value the
// inputs had when spent (protocol §8's decay, which the pool receives): that part counts as
// fee here, so a fee is never below what the transaction paid.
func (a *api) blockFees(ctx context.Context, b *types.Block) ([]txFee, error) {
	c := a.b.Chain()
	out := make([]txFee, 0, len(b.Transactions))
	prev := map[types.Hash]*types.Transaction{}
	for _, tx := range b.Transactions[1:] {
		prev[tx.TxID()] = tx
	}
	for _, tx := range b.Transactions[1:] {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		var in, outv uint64
		for i := range tx.Inputs {
			pt, ok := prev[tx.Inputs[i].PrevTxID]
			if !ok {
				var err error
				if pt, _, err = c.Transaction(tx.Inputs[i].PrevTxID); err != nil {
					return nil, err
				}
			}
			if int(tx.Inputs[i].PrevIndex) >= len(pt.Outputs) {
				return nil, fmt.Errorf("input %d of %s: no output %d", i, tx.TxID(), tx.Inputs[i].PrevIndex)
			}
			in += pt.Outputs[tx.Inputs[i].PrevIndex].Value
		}
		for _, o := range tx.Outputs {
			outv += o.Value
		}
		fee := uint64(0)
		if in > outv {
			fee = in - outv
		}
		out = append(out, txFee{fee: fee, size: uint64(tx.SerializeSize())})
	}
	return out, nil
}

// percentile is the value at fraction q of sorted xs (xs not empty).
func percentile(xs []uint64, q float64) uint64 {
	i := int(q * float64(len(xs)-1))
	return xs[i]
}

func (a *api) getBlockStats(ctx context.Context, p jsonrpc.Params) (any, error) {
	n, err := a.blockParam(p, 0)
	if err != nil {
		return nil, err
	}
	c := a.b.Chain()
	b, err := c.Block(n.Hash)
	if err != nil {
		return nil, internal(err)
	}
	fees, err := a.blockFees(ctx, b)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
			return nil, err
		}
		return nil, internal(err)
	}
	ts := make([]uint64, 0, consensus.MedianTimeSpan)
	for m := n; m != nil && len(ts) < consensus.MedianTimeSpan; m = m.Parent {
		ts = append(ts, m.Header.Timestamp)
	}
	st := rpcapi.BlockStats{BlockHash: n.Hash.String(), Height: n.Height, Time: n.Header.Timestamp,
		MedianTime: consensus.MedianTime(ts), Subsidy: consensus.Subsidy(n.Height), Txs: uint64(len(b.Transactions))}
	for i, tx := range b.Transactions {
		if i > 0 {
			st.Ins += uint64(len(tx.Inputs))
		}
		st.Outs += uint64(len(tx.Outputs))
		for _, o := range tx.Outputs {
			if i > 0 {
				st.TotalOut += o.Value
			}
		}
	}
	st.UtxoIncrease = int64(st.Outs) - int64(st.Ins)
	if len(fees) > 0 {
		var sizes, fs, rates []uint64
		var totalSize uint64
		for _, f := range fees {
			st.TotalFee += f.fee
			totalSize += f.size
			sizes, fs, rates = append(sizes, f.size), append(fs, f.fee), append(rates, f.rate())
		}
		slices.Sort(sizes)
		slices.Sort(fs)
		slices.Sort(rates)
		k := uint64(len(fees))
		st.TotalSize = totalSize
		st.AvgFee, st.AvgTxSize, st.AvgFeeRate = st.TotalFee/k, totalSize/k, st.TotalFee/max(totalSize, 1)
		st.MinFee, st.MaxFee, st.MedianFee = fs[0], fs[k-1], percentile(fs, 0.5)
		st.MinTxSize, st.MaxTxSize, st.MedianTxSize = sizes[0], sizes[k-1], percentile(sizes, 0.5)
		st.MinFeeRate, st.MaxFeeRate = rates[0], rates[k-1]
		for i, q := range []float64{0.10, 0.25, 0.50, 0.75, 0.90} {
			st.FeeRatePercentiles[i] = percentile(rates, q)
		}
	}
	return st, nil
}
