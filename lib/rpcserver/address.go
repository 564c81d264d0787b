package rpcserver

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/jsonrpc"
	"github.com/cointoolkit/coin/lib/reason"
	"github.com/cointoolkit/coin/lib/rpcapi"
	"github.com/cointoolkit/coin/lib/types"
)

// The outputs of an address: getutxosbyaddress (all of them, or paged on request) and getaddressbalance (sums computed
// here, so that a caller with thousands of outputs does not fetch them to add them up).

// addrOutput is one output of an address in the view a call asked for: a confirmed one
// (entry) or one of a mempool transaction (pending).
type addrOutput struct {
	op      types.Outpoint
	entry   *consensus.UtxoEntry // confirmed
	pending *types.TxOutput      // in the mempool
	locked  bool
}

// addressOutputs lists the outputs paying pkh, in outpoint order (txid bytes, then index):
// the confirmed ones, and with withPool those of the pending view (outputs mempool
// transactions spend left out, their own outputs added).
func (a *api) addressOutputs(pkh types.Hash, withPool bool) ([]addrOutput, error) {
	utxos, err := a.b.Chain().UtxosByAddress(pkh)
	if err != nil {
		return nil, err
	}
	pool := a.b.Mempool()
	out := make([]addrOutput, 0, len(utxos))
	for _, u := range utxos {
		if withPool {
			if _, spent := pool.SpentBy(u.Outpoint); spent {
				continue
			}
		}
		out = append(out, addrOutput{op: u.Outpoint, entry: u.Entry, locked: u.Entry.Locked})
	}
	if withPool {
		for _, po := range pool.OutputsTo(pkh) {
			if po.Spent {
				continue
			}
			o := po.Output
			out = append(out, addrOutput{op: po.Outpoint, pending: &o, locked: po.Locked})
		}
		slices.SortFunc(out, func(x, y addrOutput) int { return compareOutpoints(x.op, y.op) })
	}
	return out, nil
}

func compareOutpoints(x, y types.Outpoint) int {
	if c := bytes.Compare(x.TxID[:], y.TxID[:]); c != 0 {
		return c
	}
	switch {
	case x.Index < y.Index:
		return -1
	case x.Index > y.Index:
		return 1
	}
	return 0
}

// parseCursor reads an "after" parameter, "TXID:INDEX" (empty: from the start).
func parseCursor(s string) (types.Outpoint, bool, error) {
	if s == "" {
		return types.Outpoint{}, false, nil
	}
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return types.Outpoint{}, false, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid after: want TXID:INDEX of the last output of the previous page")
	}
	id, err := types.ParseHash(s[:i])
	n, nerr := strconv.ParseUint(s[i+1:], 10, 32)
	if err != nil || nerr != nil {
		return types.Outpoint{}, false, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid after: want TXID:INDEX of the last output of the previous page")
	}
	return types.Outpoint{TxID: id, Index: uint32(n)}, true, nil
}

func (a *api) getUtxosByAddress(_ context.Context, p jsonrpc.Params) (any, error) {
	pkh, err := a.addressParam(p, 0)
	if err != nil {
		return nil, err
	}
	withPool, err := p.OptBool(1, false)
	if err != nil {
		return nil, err
	}
	afterStr, err := p.OptString(2, "")
	if err != nil {
		return nil, err
	}
	after, hasAfter, err := parseCursor(afterStr)
	if err != nil {
		return nil, err
	}
	// Paging is opt-in: without a limit the call answers every output (the spec's call), or
	// refuses with result_too_large; it never answers a short list.
	paged := len(p) > 3 && string(p[3]) != "null"
	limit := uint64(utxoListMax)
	if paged {
		if limit, err = p.Uint64(3); err != nil {
			return nil, err
		}
		if limit < 1 || limit > rpcapi.UtxoPageMax {
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid limit: want 1 to %d", rpcapi.UtxoPageMax)
		}
	}
	outs, err := a.addressOutputs(types.Hash(pkh), withPool)
	if err != nil {
		return nil, internal(err)
	}
	if hasAfter {
		i, _ := slices.BinarySearchFunc(outs, after, func(o addrOutput, t types.Outpoint) int {
			return compareOutpoints(o.op, t)
		})
		for i < len(outs) && compareOutpoints(outs[i].op, after) <= 0 {
			i++
		}
		outs = outs[i:]
	}
	if uint64(len(outs)) > limit {
		if !paged {
			return nil, tooManyOutputs(p, len(outs))
		}
		outs = outs[:limit]
	}
	tip := a.b.Chain().Tip().Height
	res := make([]rpcapi.UTXO, 0, len(outs))
	for _, o := range outs {
		u, err := a.utxoResult(o, tip)
		if err != nil {
			return nil, internal(err)
		}
		res = append(res, u)
	}
	return res, nil
}

// utxoListMax is rpcapi.UtxoListMax; tests lower it (export_test.go).
var utxoListMax = rpcapi.UtxoListMax

// tooManyOutputs is the refusal of an unpaged getutxosbyaddress for an address of n outputs,
// more than one answer holds: it names the calls that do the job.
func tooManyOutputs(p jsonrpc.Params, n int) error {
	addr, _ := p.String(0)
	return rpcapi.DomainError(reason.ResultTooLarge, fmt.Sprintf("result too large: %s has %d unspent outputs, more than the %d one "+
		"getutxosbyaddress call lists: sum them with getaddressbalance %s, or list them a page at a time with "+
		"getutxosbyaddress %s INCLUDE_MEMPOOL AFTER LIMIT (limit at most %d, after the TXID:INDEX of the last output of the previous page)",
		addr, n, utxoListMax, addr, addr, rpcapi.UtxoPageMax))
}

// utxoResult is the getutxosbyaddress element of o, the chain's tip at height tip.
func (a *api) utxoResult(o addrOutput, tip uint64) (rpcapi.UTXO, error) {
	if o.pending != nil {
		cid, err := a.clusterOf(o.pending.PubKeyHash)
		if err != nil {
			return rpcapi.UTXO{}, err
		}
		return rpcapi.UTXO{TxID: o.op.TxID.String(), Index: o.op.Index, Value: o.pending.Value, ClusterID: cid.String(),
			PubKeyHash: o.pending.PubKeyHash.String(), EffectiveValue: o.pending.Value, Locked: o.locked}, nil
	}
	e := o.entry
	eff, err := a.effective(e, tip+1)
	if err != nil {
		return rpcapi.UTXO{}, err
	}
	cid, err := a.clusterOf(e.PubKeyHash)
	if err != nil {
		return rpcapi.UTXO{}, err
	}
	return rpcapi.UTXO{TxID: o.op.TxID.String(), Index: o.op.Index, Value: e.Value, BlockHeight: e.Height,
		IsCoinbase: e.Coinbase, ClusterID: cid.String(), PubKeyHash: e.PubKeyHash.String(), EffectiveValue: eff,
		Locked: e.Locked, Confirmations: tip - e.Height + 1}, nil
}

func (a *api) getAddressBalance(_ context.Context, p jsonrpc.Params) (any, error) {
	pkh, err := a.addressParam(p, 0)
	if err != nil {
		return nil, err
	}
	withPool, err := p.OptBool(1, false)
	if err != nil {
		return nil, err
	}
	outs, err := a.addressOutputs(types.Hash(pkh), withPool)
	if err != nil {
		return nil, internal(err)
	}
	next := a.b.Chain().Tip().Height + 1
	res := rpcapi.AddressBalance{Address: a.address(types.Hash(pkh)), UtxoCount: uint64(len(outs))}
	for _, o := range outs {
		switch {
		case o.pending != nil:
			res.Balance += o.pending.Value
			if o.locked {
				res.Locked += o.pending.Value
			} else {
				res.Spendable += o.pending.Value // a child may spend it in the same block
			}
		case o.entry.Locked:
			res.Balance += o.entry.Value
			res.Locked += o.entry.Value
		case o.entry.Coinbase && next < o.entry.Height+consensus.CoinbaseMaturity:
			res.Balance += o.entry.Value
			res.Immature += o.entry.Value
		default:
			eff, err := a.effective(o.entry, next)
			if err != nil {
				return nil, internal(err)
			}
			res.Balance += o.entry.Value
			res.Spendable += min(eff, o.entry.Value)
		}
	}
	return res, nil
}
