package rpcserver

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/cointoolkit/coin/lib/amount"
	"github.com/cointoolkit/coin/lib/chainstate"
	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/jsonrpc"
	"github.com/cointoolkit/coin/lib/reason"
	"github.com/cointoolkit/coin/lib/rpcapi"
	"github.com/cointoolkit/coin/lib/types"
)

func (a *api) getBlockCount(context.Context, jsonrpc.Params) (any, error) {
	return a.b.Chain().Tip().Height, nil
}

func (a *api) getBlockHash(_ context.Context, p jsonrpc.Params) (any, error) {
	h, err := p.Uint64(0)
	if err != nil {
		return nil, err
	}
	n := a.b.Chain().NodeAt(h)
	if n == nil {
		return nil, rpcapi.DomainError(reason.HeightOutOfRange, "block height out of range")
	}
	return n.Hash.String(), nil
}

// nodeParam reads a block hash as parameter 0 and snapshots its block-index entry (a
// stored block that is not invalid).
func (a *api) nodeParam(p jsonrpc.Params) (chainstate.HeaderState, error) {
	h, err := hashParam(p, 0, "block hash")
	if err != nil {
		return chainstate.HeaderState{}, err
	}
	st := a.b.Chain().HeaderState(h)
	if !st.HaveBlock || st.Invalid {
		return chainstate.HeaderState{}, rpcapi.DomainError(reason.BlockNotFound, "block not found")
	}
	return st, nil
}

func headerResult(n *chainstate.BlockNode) rpcapi.Header {
	hd := n.BlockHeader()
	h := &hd
	return rpcapi.Header{Hash: n.Hash.String(), Version: h.Version, PrevHash: h.PrevHash.String(),
		MerkleRoot: h.MerkleRoot.String(), Timestamp: h.Timestamp, DifficultyTarget: h.DifficultyTarget, Nonce: h.Nonce}
}

func (a *api) getBlockHeader(_ context.Context, p jsonrpc.Params) (any, error) {
	st, err := a.nodeParam(p)
	if err != nil {
		return nil, err
	}
	return headerResult(st.Node), nil
}

func (a *api) getBlock(_ context.Context, p jsonrpc.Params) (any, error) {
	st, err := a.nodeParam(p)
	if err != nil {
		return nil, err
	}
	n := st.Node
	b, err := a.b.Chain().Block(n.Hash)
	if err != nil {
		return nil, internal(err)
	}
	hr := headerResult(n)
	res := rpcapi.Block{Hash: hr.Hash, Height: n.Height, Version: hr.Version, PrevHash: hr.PrevHash,
		MerkleRoot: hr.MerkleRoot, Timestamp: hr.Timestamp, DifficultyTarget: hr.DifficultyTarget, Nonce: hr.Nonce,
		TxCount: len(b.Transactions), Tx: make([]string, len(b.Transactions)), Size: int(st.Size), Confirmations: -1}
	for i, tx := range b.Transactions {
		res.Tx[i] = tx.TxID().String()
	}
	if st.MainChain {
		res.Confirmations = int64(st.TipHeight-n.Height) + 1
	}
	return res, nil
}

// findTx looks in the mempool, then the chain.
func (a *api) findTx(p jsonrpc.Params) (*types.Transaction, *rpcapi.Transaction, error) {
	txid, err := hashParam(p, 0, "txid")
	if err != nil {
		return nil, nil, err
	}
	summary := func(tx *types.Transaction) *rpcapi.Transaction {
		return &rpcapi.Transaction{TxID: txid.String(), Version: tx.Version, VinCount: len(tx.Inputs),
			VoutCount: len(tx.Outputs), LockTime: tx.LockTime, Kind: tx.Kind.String(), Size: tx.SerializeSize()}
	}
	if e, ok := a.b.Mempool().Get(txid); ok {
		r := summary(e.Tx)
		fee := e.Fee
		r.Fee, r.InMempool = &fee, true
		return e.Tx, r, nil
	}
	c := a.b.Chain()
	tx, loc, err := c.Transaction(txid)
	if errors.Is(err, chainstate.ErrNotFound) {
		return nil, nil, rpcapi.DomainError(reason.TxNotFound, "transaction not found")
	}
	if err != nil {
		return nil, nil, internal(err)
	}
	r := summary(tx)
	h := loc.Height
	r.BlockHash, r.BlockHeight = loc.Block.String(), &h
	r.Confirmations = c.Tip().Height - loc.Height + 1
	return tx, r, nil
}

func (a *api) getTransaction(_ context.Context, p jsonrpc.Params) (any, error) {
	_, r, err := a.findTx(p)
	if err != nil {
		return nil, err
	}
	return r, nil
}

func (a *api) getRawTransaction(_ context.Context, p jsonrpc.Params) (any, error) {
	tx, _, err := a.findTx(p)
	if err != nil {
		return nil, err
	}
	return hex.EncodeToString(tx.Bytes()), nil
}

func (a *api) getClusterBalance(_ context.Context, p jsonrpc.Params) (any, error) {
	id, err := hashParam(p, 0, "cluster id")
	if err != nil {
		return nil, err
	}
	v, err := a.b.Chain().ClusterBalance(id)
	if err != nil {
		return nil, internal(err)
	}
	return v, nil
}

func (a *api) getInfo(context.Context, jsonrpc.Params) (any, error) {
	s := a.b.Chain().Stats()
	return rpcapi.NodeInfo{Blocks: s.Height, BestBlockHash: s.TipHash.String(), Connections: len(a.b.Peers()),
		CirculatingSupply: json.Number(amount.Format(s.UtxoTotal)), DecayPool: json.Number(amount.Format(s.Pool))}, nil
}

func (a *api) getBlockchainInfo(context.Context, jsonrpc.Params) (any, error) {
	s := a.b.Chain().Stats()
	return rpcapi.BlockchainInfo{Height: s.Height, BestBlockHash: s.TipHash.String(), CirculatingSupply: s.UtxoTotal,
		DecayPoolBalance: s.Pool, InitialBlockDownload: a.b.Syncing(), UtxoCount: s.UtxoCount,
		MempoolSize: a.b.Mempool().Info().Size, PeerCount: len(a.b.Peers()), Network: a.b.Network().Name}, nil
}

// syncTarget is what a backend that knows the height it is syncing toward adds to
// getsyncstatus (lib/node's Node); without it the target is the tip.
type syncTarget interface{ SyncTarget() uint64 }

func (a *api) getSyncStatus(context.Context, jsonrpc.Params) (any, error) {
	s := a.b.Chain().Stats()
	st := rpcapi.SyncStatus{Syncing: a.b.Syncing(), CurrentHeight: s.Height, PeerCount: len(a.b.Peers()),
		BestBlockHash: s.TipHash.String(), TargetHeight: s.Height, Progress: 1}
	if t, ok := a.b.Backend.(syncTarget); ok {
		st.TargetHeight = max(st.TargetHeight, t.SyncTarget())
	}
	if st.TargetHeight > 0 {
		st.Progress = float64(st.CurrentHeight) / float64(st.TargetHeight)
	}
	return st, nil
}

func (a *api) getTxOutSetInfo(ctx context.Context, _ jsonrpc.Params) (any, error) {
	info, err := a.b.Chain().UtxoSetInfo(ctx)
	if err != nil {
		return nil, internal(err)
	}
	return rpcapi.TxOutSetInfo{Height: info.Height, BestBlockHash: info.TipHash.String(), UtxoCount: info.Count,
		TotalAmount: info.Total, Hash: info.Hash.String()}, nil
}

func (a *api) getPeerInfo(context.Context, jsonrpc.Params) (any, error) {
	peers := a.b.Peers()
	if peers == nil {
		peers = []rpcapi.Peer{}
	}
	return rpcapi.PeerInfo{Connected: len(peers), Peers: peers}, nil
}

func (a *api) getClusterInfo(_ context.Context, p jsonrpc.Params) (any, error) {
	s, err := p.String(0)
	if err != nil {
		return nil, err
	}
	var cs chainstate.ClusterSummary
	if id, herr := types.ParseHash(s); herr == nil {
		var ok bool
		if cs, ok, err = a.b.Chain().ClusterByID(id); err != nil {
			return nil, internal(err)
		} else if !ok {
			return nil, rpcapi.DomainError(reason.ClusterNotFound, "no cluster "+s+" (it may have merged into another: ask by address)")
		}
	} else {
		pkh, err := a.addressParam(p, 0)
		if err != nil {
			return nil, err
		}
		if cs, err = a.b.Chain().ClusterOfAddress(types.Hash(pkh)); err != nil {
			return nil, internal(err)
		}
	}
	c := consensus.Concentration(cs.Balance, cs.Supply)
	rate := consensus.DecayRate(c, consensus.TierNone)
	ppm := consensus.YearlyDecayPPM(rate)
	return rpcapi.ClusterInfo{ClusterID: cs.ID.String(), Balance: cs.Balance, Addresses: cs.Addresses,
		ConcentrationPPB: c, RatePerBlock: rate, YearlyDecayPct: fmt.Sprintf("%d.%04d", ppm/10_000, ppm%10_000),
		CirculatingSupply: cs.Supply}, nil
}
