package faucet

import (
	"context"
	"errors"
	"net/url"
	"strconv"
	"strings"

	"github.com/cointoolkit/coin/lib/amount"
	"github.com/cointoolkit/coin/lib/faucet/api"
	"github.com/cointoolkit/coin/lib/reason"
	"github.com/cointoolkit/coin/lib/types"
)

// The chain reads (beyond the spec): GET /api/block, /api/tx and /api/address/decay, the
// node's getblock, gettransaction and getclusterinfo through the faucet's node client, so
// that an agent (lib/faucet/mcp's block_get, transaction_get and address_decay tools) can
// follow its transactions and its coins' decay without a node of its own.

// hashParam reads a 64-hex-character query parameter.
func hashParam(field, v string) (string, error) {
	v = strings.ToLower(strings.TrimSpace(v))
	if _, err := types.ParseHash(v); err != nil {
		return "", apiErr(api.KindInvalid, "bad_request", "%s must be 64 hexadecimal characters", field)
	}
	return v, nil
}

// Block is a block by the parameter hash or height (GET /api/block?hash= or ?height=).
func (s *Service) Block(ctx context.Context, q url.Values) (api.Block, error) {
	b, err := s.block(ctx, q)
	return b, s.fault(err)
}

func (s *Service) block(ctx context.Context, q url.Values) (api.Block, error) {
	hash, height := q.Get("hash"), q.Get("height")
	if (hash == "") == (height == "") {
		return api.Block{}, apiErr(api.KindInvalid, "bad_request", "give either hash or height")
	}
	ctx, cancel := s.nodeCtx(ctx)
	defer cancel()
	if height != "" {
		h, err := strconv.ParseUint(strings.TrimSpace(height), 10, 64)
		if err != nil {
			return api.Block{}, apiErr(api.KindInvalid, "bad_request", "height must be a non-negative integer")
		}
		hash, err = s.cfg.Node.GetBlockHash(ctx, h)
		if errors.Is(err, reason.HeightOutOfRange) {
			return api.Block{}, apiErr(api.KindNotFound, string(reason.HeightOutOfRange), "no main-chain block at height %d", h)
		}
		if err != nil {
			return api.Block{}, err
		}
	} else {
		var err error
		if hash, err = hashParam("hash", hash); err != nil {
			return api.Block{}, err
		}
	}
	b, err := s.cfg.Node.GetBlock(ctx, hash)
	if errors.Is(err, reason.BlockNotFound) {
		return api.Block{}, apiErr(api.KindNotFound, string(reason.BlockNotFound), "no block %s", hash)
	}
	if err != nil {
		return api.Block{}, err
	}
	tx := b.Tx
	if tx == nil {
		tx = []string{}
	}
	return api.Block{Hash: b.Hash, Height: b.Height, PrevHash: b.PrevHash, MerkleRoot: b.MerkleRoot,
		Timestamp: b.Timestamp, DifficultyTarget: b.DifficultyTarget, Nonce: b.Nonce, Confirmations: b.Confirmations,
		Size: b.Size, TxCount: b.TxCount, Tx: tx}, nil
}

// Transaction is where a transaction is (GET /api/tx?txid=).
func (s *Service) Transaction(ctx context.Context, txid string) (api.Transaction, error) {
	id, err := hashParam("txid", txid)
	if err != nil {
		return api.Transaction{}, err
	}
	ctx, cancel := s.nodeCtx(ctx)
	defer cancel()
	t, err := s.cfg.Node.GetTransaction(ctx, id)
	if errors.Is(err, reason.TxNotFound) {
		return api.Transaction{}, apiErr(api.KindNotFound, string(reason.TxNotFound), "transaction %s is neither in the mempool nor in the main chain", id)
	}
	if err != nil {
		return api.Transaction{}, s.fault(err)
	}
	out := api.Transaction{TxID: t.TxID, Kind: t.Kind, Size: t.Size, VinCount: t.VinCount, VoutCount: t.VoutCount,
		Confirmations: t.Confirmations, InMempool: t.InMempool, BlockHash: t.BlockHash, BlockHeight: t.BlockHeight}
	if t.Fee != nil {
		out.Fee = amount.Format(*t.Fee)
	}
	return out, nil
}

// Decay is the concentration decay of an address's cluster (GET /api/address/decay?address=).
func (s *Service) Decay(ctx context.Context, address string) (api.Decay, error) {
	addr, _, err := s.addressField("address", address)
	if err != nil {
		return api.Decay{}, s.fault(err)
	}
	ctx, cancel := s.nodeCtx(ctx)
	defer cancel()
	ci, err := s.cfg.Node.GetClusterInfo(ctx, addr)
	if err != nil {
		return api.Decay{}, s.fault(err)
	}
	return api.Decay{Address: addr, ClusterID: ci.ClusterID, ClusterAddresses: ci.Addresses,
		ClusterBalance: amount.Format(ci.Balance), ConcentrationPPB: ci.ConcentrationPPB, RatePerBlock: ci.RatePerBlock,
		YearlyDecayPercent: ci.YearlyDecayPct, CirculatingSupply: amount.Format(ci.CirculatingSupply)}, nil
}
