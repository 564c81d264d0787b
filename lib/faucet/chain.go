package faucet

import (
	"errors"
	"net/http"
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

// chainRoutes are the chain reads' routes.
func (s *Server) chainRoutes() []Route {
	return []Route{
		{Method: http.MethodGet, Path: "/api/block", Handle: s.block},
		{Method: http.MethodGet, Path: "/api/tx", Handle: s.transaction},
		{Method: http.MethodGet, Path: "/api/address/decay", Handle: s.addressDecay},
	}
}

// hashParam reads a 64-hex-character query parameter.
func hashParam(field, v string) (string, error) {
	v = strings.ToLower(strings.TrimSpace(v))
	if _, err := types.ParseHash(v); err != nil {
		return "", apiErr(http.StatusBadRequest, "bad_request", "%s must be 64 hexadecimal characters", field)
	}
	return v, nil
}

// GET /api/block?hash= or ?height=
func (s *Server) block(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	hash, height := q.Get("hash"), q.Get("height")
	if (hash == "") == (height == "") {
		return apiErr(http.StatusBadRequest, "bad_request", "give either hash or height")
	}
	ctx, cancel := s.nodeCtx(r)
	defer cancel()
	if height != "" {
		h, err := strconv.ParseUint(strings.TrimSpace(height), 10, 64)
		if err != nil {
			return apiErr(http.StatusBadRequest, "bad_request", "height must be a non-negative integer")
		}
		hash, err = s.cfg.Node.GetBlockHash(ctx, h)
		if errors.Is(err, reason.HeightOutOfRange) {
			return apiErr(http.StatusNotFound, string(reason.HeightOutOfRange), "no main-chain block at height %d", h)
		}
		if err != nil {
			return err
		}
	} else {
		var err error
		if hash, err = hashParam("hash", hash); err != nil {
			return err
		}
	}
	b, err := s.cfg.Node.GetBlock(ctx, hash)
	if errors.Is(err, reason.BlockNotFound) {
		return apiErr(http.StatusNotFound, string(reason.BlockNotFound), "no block %s", hash)
	}
	if err != nil {
		return err
	}
	tx := b.Tx
	if tx == nil {
		tx = []string{}
	}
	writeJSON(w, http.StatusOK, api.Block{Hash: b.Hash, Height: b.Height, PrevHash: b.PrevHash, MerkleRoot: b.MerkleRoot,
		Timestamp: b.Timestamp, DifficultyTarget: b.DifficultyTarget, Nonce: b.Nonce, Confirmations: b.Confirmations,
		Size: b.Size, TxCount: b.TxCount, Tx: tx})
	return nil
}

// GET /api/tx?txid=
func (s *Server) transaction(w http.ResponseWriter, r *http.Request) error {
	id, err := hashParam("txid", r.URL.Query().Get("txid"))
	if err != nil {
		return err
	}
	ctx, cancel := s.nodeCtx(r)
	defer cancel()
	t, err := s.cfg.Node.GetTransaction(ctx, id)
	if errors.Is(err, reason.TxNotFound) {
		return apiErr(http.StatusNotFound, string(reason.TxNotFound), "transaction %s is neither in the mempool nor in the main chain", id)
	}
	if err != nil {
		return err
	}
	out := api.Transaction{TxID: t.TxID, Kind: t.Kind, Size: t.Size, VinCount: t.VinCount, VoutCount: t.VoutCount,
		Confirmations: t.Confirmations, InMempool: t.InMempool, BlockHash: t.BlockHash, BlockHeight: t.BlockHeight}
	if t.Fee != nil {
		out.Fee = amount.Format(*t.Fee)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// GET /api/address/decay?address=
func (s *Server) addressDecay(w http.ResponseWriter, r *http.Request) error {
	addr, _, err := s.addressField("address", r.URL.Query().Get("address"))
	if err != nil {
		return err
	}
	ctx, cancel := s.nodeCtx(r)
	defer cancel()
	ci, err := s.cfg.Node.GetClusterInfo(ctx, addr)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, api.Decay{Address: addr, ClusterID: ci.ClusterID, ClusterAddresses: ci.Addresses,
		ClusterBalance: amount.Format(ci.Balance), ConcentrationPPB: ci.ConcentrationPPB, RatePerBlock: ci.RatePerBlock,
		YearlyDecayPercent: ci.YearlyDecayPct, CirculatingSupply: amount.Format(ci.CirculatingSupply)})
	return nil
}
