package rpcserver

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/cointoolkit/coin/lib/amount"
	"github.com/cointoolkit/coin/lib/chainstate"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/jsonrpc"
	"github.com/cointoolkit/coin/lib/mempool"
	"github.com/cointoolkit/coin/lib/policy"
	"github.com/cointoolkit/coin/lib/reason"
	"github.com/cointoolkit/coin/lib/rpcapi"
	"github.com/cointoolkit/coin/lib/types"
)

// The mempool staples: getmempoolentry, testmempoolaccept, decoderawtransaction and
// estimatesmartfee (docs/operations.md, "Fee estimation").

func coinNumber(v uint64) json.Number { return json.Number(amount.Format(v)) }

func (a *api) getMempoolEntry(_ context.Context, p jsonrpc.Params) (any, error) {
	txid, err := hashParam(p, 0, "txid")
	if err != nil {
		return nil, err
	}
	pool := a.b.Mempool()
	e, ok := pool.Get(txid)
	if !ok {
		return nil, rpcapi.DomainError(reason.TxNotFound, "transaction not in mempool")
	}
	res := rpcapi.MempoolEntry{TxID: txid.String(), VSize: e.Size, Size: e.Size, Fee: e.Fee, Time: e.Time.Unix(),
		Height: e.Height, Depends: []string{}, SpentBy: []string{}}
	// Ancestors: the pool transactions whose outputs it spends, and theirs.
	anc := map[types.Hash]*types.Transaction{}
	ancFee, ancSize := e.Fee, e.Size
	queue := []*types.Transaction{e.Tx}
	for len(queue) > 0 {
		tx := queue[0]
		queue = queue[1:]
		for i := range tx.Inputs {
			id := tx.Inputs[i].PrevTxID
			if _, seen := anc[id]; seen {
				continue
			}
			pe, ok := pool.Get(id)
			if !ok {
				continue
			}
			if tx == e.Tx {
				res.Depends = append(res.Depends, id.String())
			}
			anc[id] = pe.Tx
			ancFee, ancSize = ancFee+pe.Fee, ancSize+pe.Size
			queue = append(queue, pe.Tx)
		}
	}
	// Descendants: the pool transactions that spend its outputs, and theirs.
	desc := map[types.Hash]bool{}
	descFee, descSize := e.Fee, e.Size
	ids := []types.Hash{txid}
	for len(ids) > 0 {
		id := ids[0]
		ids = ids[1:]
		de, ok := pool.Get(id)
		if !ok {
			continue
		}
		for i := range de.Tx.Outputs {
			child, ok := pool.SpentBy(types.Outpoint{TxID: id, Index: uint32(i)})
			if !ok || desc[child] {
				continue
			}
			ce, ok := pool.Get(child)
			if !ok {
				continue
			}
			if id == txid {
				res.SpentBy = append(res.SpentBy, child.String())
			}
			desc[child] = true
			descFee, descSize = descFee+ce.Fee, descSize+ce.Size
			ids = append(ids, child)
		}
	}
	slices.Sort(res.Depends)
	res.SpentBy = slices.Compact(slices.Sorted(slices.Values(res.SpentBy)))
	res.AncestorCount, res.AncestorSize = len(anc)+1, ancSize
	res.DescendantCount, res.DescendantSize = len(desc)+1, descSize
	res.Fees = rpcapi.MempoolFees{Base: coinNumber(e.Fee), Modified: coinNumber(e.Fee), Ancestor: coinNumber(ancFee),
		Descendant: coinNumber(descFee)}
	return res, nil
}

// maxTestAccept bounds the transactions of one testmempoolaccept, as Core's.
const maxTestAccept = 25

// rawTxsParam reads testmempoolaccept's parameter: a JSON array of hex strings, or a string
// holding one hex transaction or such an array (as coin-cli sends what is typed).
func rawTxsParam(p jsonrpc.Params) ([]string, error) {
	bad := jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid parameter 1 (rawtxs): want a hex transaction or an array of up to %d", maxTestAccept)
	var list []string
	if len(p) > 0 && len(p[0]) > 0 && p[0][0] == '[' {
		if err := json.Unmarshal(p[0], &list); err != nil {
			return nil, bad
		}
	} else {
		s, err := p.String(0)
		if err != nil {
			return nil, err
		}
		if s = strings.TrimSpace(s); strings.HasPrefix(s, "[") {
			if err := json.Unmarshal([]byte(s), &list); err != nil {
				return nil, bad
			}
		} else {
			list = []string{s}
		}
	}
	if len(list) == 0 || len(list) > maxTestAccept {
		return nil, bad
	}
	return list, nil
}

func (a *api) testMempoolAccept(_ context.Context, p jsonrpc.Params) (any, error) {
	list, err := rawTxsParam(p)
	if err != nil {
		return nil, err
	}
	out := make([]rpcapi.TestAccept, len(list))
	for i, h := range list {
		raw, err := hex.DecodeString(h)
		var tx *types.Transaction
		if err == nil {
			tx, err = types.DecodeTransaction(raw)
		}
		if err != nil {
			out[i] = rpcapi.TestAccept{RejectReason: string(reason.DecodeFailed), RejectDetails: "transaction decode failed: " + err.Error()}
			continue
		}
		txid, fee, size, err := a.b.Mempool().TestAccept(tx)
		out[i] = rpcapi.TestAccept{TxID: txid.String(), VSize: size}
		if err != nil {
			out[i].RejectReason, out[i].RejectDetails = string(reason.Of(err)), err.Error()
			continue
		}
		out[i].Allowed, out[i].Fees = true, &rpcapi.TestAcceptFees{Base: coinNumber(fee)}
	}
	return out, nil
}

func (a *api) decodeRawTransaction(_ context.Context, p jsonrpc.Params) (any, error) {
	raw, err := p.Hex(0)
	if err != nil {
		return nil, err
	}
	tx, err := types.DecodeTransaction(raw)
	if err != nil {
		return nil, rpcapi.DomainError(reason.DecodeFailed, "transaction decode failed: "+err.Error())
	}
	id := tx.TxID().String()
	size := tx.SerializeSize()
	res := rpcapi.DecodedTx{TxID: id, Hash: id, Version: tx.Version, Size: size, VSize: size, LockTime: tx.LockTime,
		Kind: tx.Kind.String(), Vin: make([]rpcapi.DecodedInput, len(tx.Inputs)), Vout: make([]rpcapi.DecodedOutput, len(tx.Outputs))}
	if len(tx.Payload) > 0 {
		res.Payload = hex.EncodeToString(tx.Payload)
	}
	for i, in := range tx.Inputs {
		res.Vin[i] = rpcapi.DecodedInput{TxID: in.PrevTxID.String(), Vout: in.PrevIndex,
			PubKey: hex.EncodeToString(in.PublicKey[:]), Signature: hex.EncodeToString(in.Signature[:])}
	}
	for i, o := range tx.Outputs {
		res.Vout[i] = rpcapi.DecodedOutput{Value: coinNumber(o.Value), ValueSubunits: o.Value, N: i,
			Address: a.address(o.PubKeyHash), PubKeyHash: o.PubKeyHash.String()}
	}
	return res, nil
}

// Fee estimation (docs/operations.md, "Fee estimation"): the rate that a transaction needs to
// be in one of the next conf_target blocks is the highest of
//   - the relay minimum (policy.MinRelayFeePerByte);
//   - the mempool's queue: with the pool's transactions by fee rate, highest first, the rate
//     of the first one beyond conf_target blocks' room, plus one (to be ahead of it);
//   - recent blocks that were at least half full (room was short): the median fee rate of
//     their transactions, over the last max(2 × conf_target, 6) blocks (at most 144).
const (
	maxConfTarget    = 1008
	feeWindowMin     = 6
	feeWindowMax     = 144
	fullBlockPercent = 50
)

// feeRateCache keeps the sorted fee rates of blocks read for estimates, by hash (a block's
// rates never change); it holds at most feeWindowMax × 2 blocks.
type feeRateCache struct {
	mu    sync.Mutex
	rates map[types.Hash][]uint64
}

func (fc *feeRateCache) get(h types.Hash) ([]uint64, bool) {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	r, ok := fc.rates[h]
	return r, ok
}

func (fc *feeRateCache) put(h types.Hash, r []uint64) {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	if fc.rates == nil || len(fc.rates) >= 2*feeWindowMax {
		fc.rates = map[types.Hash][]uint64{}
	}
	fc.rates[h] = r
}

// blockRates are the fee rates of n's transactions (coinbase aside), through the cache.
func (a *api) blockRates(ctx context.Context, fc *feeRateCache, n *chainstate.BlockNode) ([]uint64, error) {
	if r, ok := fc.get(n.Hash); ok {
		return r, nil
	}
	b, err := a.b.Chain().Block(n.Hash)
	if err != nil {
		return nil, err
	}
	fees, err := a.blockFees(ctx, b)
	if err != nil {
		return nil, err
	}
	r := make([]uint64, len(fees))
	for i, f := range fees {
		r[i] = f.rate()
	}
	slices.Sort(r)
	fc.put(n.Hash, r)
	return r, nil
}

func (a *api) estimateSmartFee(ctx context.Context, p jsonrpc.Params, fc *feeRateCache) (any, error) {
	target, err := p.Uint64(0)
	if err != nil {
		return nil, err
	}
	if target < 1 || target > maxConfTarget {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid parameter 1 (conf_target): want 1 to %d", maxConfTarget)
	}
	if mode, err := p.OptString(1, ""); err != nil {
		return nil, err
	} else if m := strings.ToLower(mode); m != "" && m != "unset" && m != "economical" && m != "conservative" {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid parameter 2 (estimate_mode): want unset, economical or conservative")
	}
	rate := uint64(policy.MinRelayFeePerByte)

	// The mempool's queue.
	es := a.b.Mempool().Select(math.MaxInt)
	slices.SortFunc(es, func(x, y *mempool.Entry) int {
		rx, ry := x.Fee/uint64(max(x.Size, 1)), y.Fee/uint64(max(y.Size, 1))
		switch {
		case rx > ry:
			return -1
		case rx < ry:
			return 1
		}
		return 0
	})
	room := target * uint64(consensus.MaxBlockSize-coinbaseReserve)
	var used uint64
	for _, e := range es {
		used += uint64(e.Size)
		if used > room {
			rate = max(rate, e.Fee/uint64(max(e.Size, 1))+1)
			break
		}
	}

	// Recent blocks that were short of room.
	c := a.b.Chain()
	window := min(max(2*target, feeWindowMin), feeWindowMax)
	var rates []uint64
	for n, i := c.Tip(), uint64(0); n != nil && n.Height > 0 && i < window; n, i = n.Parent, i+1 {
		if uint64(c.HeaderState(n.Hash).Size)*100 < uint64(consensus.MaxBlockSize)*fullBlockPercent {
			continue
		}
		r, err := a.blockRates(ctx, fc, n)
		if err != nil {
			return nil, internal(err)
		}
		rates = append(rates, r...)
	}
	if len(rates) > 0 {
		slices.Sort(rates)
		rate = max(rate, percentile(rates, 0.5))
	}
	return rpcapi.FeeEstimate{FeeRate: coinNumber(rate * 1000), FeeRatePerByte: rate, Blocks: target}, nil
}
