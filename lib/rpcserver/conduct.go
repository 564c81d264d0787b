package rpcserver

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/cointoolkit/coin/lib/amount"
	"github.com/cointoolkit/coin/lib/chainstate"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/jsonrpc"
	"github.com/cointoolkit/coin/lib/keys"
	"github.com/cointoolkit/coin/lib/reason"
	"github.com/cointoolkit/coin/lib/rpcapi"
	"github.com/cointoolkit/coin/lib/types"
)

// The Proof of Conduct methods (protocol §9.1, 9.4). Profiles, the directory and contracts are
// the pending view's (the chain's records with the mempool's agent transactions applied), so
// a client sees the effect of an operation the moment the node accepted it;
// getconductinfo is the confirmed state, comparable between nodes.

// Directory page bounds (endpoint 9, protocol §9.4).
const (
	defaultDirectoryLimit = 20
	maxDirectoryLimit     = 100
)

func (a *api) address(pkh types.Hash) string {
	s, err := keys.EncodeAddress(a.b.Network().HRP, keys.PubKeyHash(pkh))
	if err != nil {
		return pkh.String() // a network's HRP always encodes; never reached
	}
	return s
}

func (a *api) getAgentProfile(_ context.Context, p jsonrpc.Params) (any, error) {
	pkh, err := a.addressParam(p, 0)
	if err != nil {
		return nil, err
	}
	rec, ok, err := a.b.Mempool().Conduct().Agent(types.Hash(pkh))
	if err != nil {
		return nil, internal(err)
	}
	if !ok {
		return nil, rpcapi.DomainError(reason.AgentNotFound, fmt.Sprintf("%s is not a registered agent", a.address(types.Hash(pkh))))
	}
	conf, confirmed, err := a.b.Chain().Conduct().Agent(types.Hash(pkh))
	if err != nil {
		return nil, internal(err)
	}
	out := rpcapi.AgentProfile{Address: a.address(types.Hash(pkh)), ConductScore: rec.Score,
		Tier: consensus.TierOf(rec.Score).String(), ContractsCompleted: rec.ContractsCompleted,
		ContractsFailed: rec.ContractsFailed, VouchesReceived: rec.VouchesReceived, VouchesGiven: rec.VouchesGiven,
		ReviewsReceived: rec.ReviewsReceived, StakeTxID: rec.Stake.TxID.String(), Confirmed: confirmed}
	if rec.ReviewsReceived > 0 {
		avg := float64(rec.ReviewScoreSum) / float64(rec.ReviewsReceived)
		out.AverageReviewScore = &avg
	}
	if confirmed {
		h := conf.RegisteredHeight
		out.RegisteredHeight = &h
		out.RegisteredAt = time.Unix(int64(conf.RegisteredTime), 0).UTC().Format(time.RFC3339)
	}
	return out, nil
}

// dirLess is the directory's order: score, highest first, then address.
func dirLess(a, b chainstate.DirectoryEntry) bool {
	if a.Record.Score != b.Record.Score {
		return a.Record.Score > b.Record.Score
	}
	return bytes.Compare(a.Address[:], b.Address[:]) < 0
}

func (a *api) listAgents(_ context.Context, p jsonrpc.Params) (any, error) {
	offset, err := p.OptUint64(0, 0)
	if err != nil {
		return nil, err
	}
	limit, err := p.OptUint64(1, defaultDirectoryLimit)
	if err != nil {
		return nil, err
	}
	if limit > maxDirectoryLimit {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "limit %d is above the maximum of %d", limit, maxDirectoryLimit)
	}
	chain := a.b.Chain()
	total := chain.Stats().Agents
	// The pool's agents, in directory order, merged into the chain's index as it is read.
	var pending []chainstate.DirectoryEntry
	changed := a.b.Mempool().PendingAgents()
	for pkh, rec := range changed {
		if _, ok, err := chain.Conduct().Agent(pkh); err != nil {
			return nil, internal(err)
		} else if !ok {
			total++
		}
		pending = append(pending, chainstate.DirectoryEntry{Address: pkh, Record: rec})
	}
	slices.SortFunc(pending, func(x, y chainstate.DirectoryEntry) int {
		if dirLess(x, y) {
			return -1
		}
		return 1
	})
	out := rpcapi.AgentList{Agents: []rpcapi.AgentEntry{}, Total: total, Offset: offset, Limit: limit}
	var seen uint64
	emit := func(e chainstate.DirectoryEntry) bool {
		if seen >= offset {
			out.Agents = append(out.Agents, rpcapi.AgentEntry{Address: a.address(e.Address), ConductScore: e.Record.Score,
				Tier: consensus.TierOf(e.Record.Score).String(), ContractsCompleted: e.Record.ContractsCompleted})
		}
		seen++
		return uint64(len(out.Agents)) < limit
	}
	more := limit > 0
	if more {
		err = chain.Directory(func(e chainstate.DirectoryEntry) bool {
			if _, ok := changed[e.Address]; ok {
				return true // listed with its pending record
			}
			for len(pending) > 0 && dirLess(pending[0], e) {
				if more = emit(pending[0]); !more {
					return false
				}
				pending = pending[1:]
			}
			more = emit(e)
			return more
		})
		if err != nil {
			return nil, internal(err)
		}
	}
	for more && len(pending) > 0 {
		more = emit(pending[0])
		pending = pending[1:]
	}
	return out, nil
}

func (a *api) getContract(_ context.Context, p jsonrpc.Params) (any, error) {
	id, err := hashParam(p, 0, "contract id")
	if err != nil {
		return nil, err
	}
	c, ok, err := a.b.Mempool().Conduct().Contract(id)
	if err != nil {
		return nil, internal(err)
	}
	if !ok {
		return nil, rpcapi.DomainError(reason.ContractNotFound, "no contract "+id.String())
	}
	conf, inChain, err := a.b.Chain().Conduct().Contract(id)
	if err != nil {
		return nil, internal(err)
	}
	out := rpcapi.Contract{ContractID: c.ID.String(), Initiator: a.address(c.Initiator), Counterparty: a.address(c.Counterparty),
		Value: c.Value, ValueCoin: amount.Format(c.Value), CreatedHeight: c.CreatedHeight, ExpiresAt: c.ExpiresAt,
		Status: c.Status.String(), ReviewedByInitiator: c.Reviewed&consensus.ReviewedByInitiator != 0,
		ReviewedByCounterparty: c.Reviewed&consensus.ReviewedByCounterparty != 0,
		Confirmed:              inChain && *conf == *c}
	if c.ClosedBy != (types.Hash{}) {
		out.ClosedBy = c.ClosedBy.String()
	}
	return out, nil
}

func (a *api) getConductInfo(ctx context.Context, _ jsonrpc.Params) (any, error) {
	info, err := a.b.Chain().ConductInfo(ctx)
	if err != nil {
		return nil, internal(err)
	}
	return rpcapi.ConductInfo{Height: info.Height, BestBlockHash: info.TipHash.String(), Agents: info.Agents,
		OpenContracts: info.OpenContracts, Hash: info.Hash.String()}, nil
}
