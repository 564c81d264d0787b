package faucet

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/cointoolkit/coin/lib/amount"
	"github.com/cointoolkit/coin/lib/faucet/api"
	"github.com/cointoolkit/coin/lib/jsonrpc"
	"github.com/cointoolkit/coin/lib/keys"
	"github.com/cointoolkit/coin/lib/policy"
	"github.com/cointoolkit/coin/lib/types"
	"github.com/cointoolkit/coin/lib/wallet"
)

// The endpoints 1 to 6 of the faucet API (docs/faucet.md#api).

// nodeCtx bounds a call to the node made for request r.
func (s *Server) nodeCtx(r *http.Request) (context.Context, context.CancelFunc) {
	return context.WithTimeout(r.Context(), s.cfg.NodeTimeout)
}

func (s *Server) decodeAddress(addr string) (types.Hash, error) {
	if err := required("address", addr); err != nil {
		return types.Hash{}, err
	}
	h, err := wallet.DecodeAddress(strings.TrimSpace(addr), s.cfg.Net)
	if err != nil {
		return types.Hash{}, err
	}
	return h, nil
}

// 1. GET /api/wallet/new
func (s *Server) walletNew(w http.ResponseWriter, _ *http.Request) error {
	m, a, err := wallet.NewMnemonic(keys.DefaultMnemonicWords, s.cfg.Net)
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, api.NewWalletResult{Address: a, Mnemonic: m})
	return nil
}

// The bodies of the API's answers (lib/faucet/api), under the names they had here.
type (
	ClaimResult    = api.ClaimResult
	StatusResult   = api.StatusResult
	BalanceResult  = api.BalanceResult
	TransferResult = api.TransferResult
)

// 2. POST /api/faucet
func (s *Server) faucet(w http.ResponseWriter, r *http.Request) error {
	var req api.ClaimRequest
	if err := decodeBody(r, &req); err != nil {
		return err
	}
	addr := strings.ToLower(strings.TrimSpace(req.Address))
	pkh, err := s.decodeAddress(addr)
	if err != nil {
		return err
	}
	if addr == s.cfg.Engine.Address() {
		return apiErr(http.StatusBadRequest, "invalid_address", "that is the faucet's own address")
	}
	release, err := s.cfg.Claims.Reserve(addr)
	if err != nil {
		return err
	}
	defer release()
	// The client's and the faucet's hourly counts take the claim now and give it back if
	// it is not paid.
	client := clientNet(clientAddr(r, s.cfg.TrustedProxies))
	undoClient, wait := s.claimsPerClient.take(client)
	if undoClient == nil {
		return &RateLimitError{Code: CodeClientRateLimited, RetryAfter: wait,
			What: fmt.Sprintf("this client was paid %d claims in the last hour", s.cfg.ClaimsPerClient)}
	}
	undoBudget, wait := s.budget.take("")
	if undoBudget == nil {
		undoClient()
		return &RateLimitError{Code: CodeBudgetExhausted, RetryAfter: wait,
			What: fmt.Sprintf("the faucet paid its budget of %d claims in the last hour", s.cfg.BudgetPerHour)}
	}
	txid, err := s.cfg.Engine.Pay(r.Context(), Claim{Address: addr, PKH: pkh, Amount: s.cfg.Amount, Client: client})
	if err != nil {
		undoClient()
		undoBudget()
		return err
	}
	writeJSON(w, http.StatusOK, ClaimResult{TxID: txid.String(), Amount: amount.Format(s.cfg.Amount)})
	return nil
}

// 3. GET /api/status
func (s *Server) status(w http.ResponseWriter, r *http.Request) error {
	ctx, cancel := s.nodeCtx(r)
	defer cancel()
	info, err := s.cfg.Node.GetBlockchainInfo(ctx)
	if err != nil {
		return err
	}
	st := s.cfg.Engine.Status()
	writeJSON(w, http.StatusOK, StatusResult{BlockHeight: info.Height, MempoolSize: info.MempoolSize,
		FaucetBalance: amount.Format(st.Spendable), FaucetAddress: s.cfg.Engine.Address(),
		FaucetImmature: amount.Format(st.Immature), Network: s.cfg.Net.Name, ClaimAmount: amount.Format(s.cfg.Amount),
		CooldownSeconds: int64(s.cfg.Cooldown / time.Second), ClaimsPaid: st.Paid})
	return nil
}

// 4. GET /api/wallet/balance?address=
func (s *Server) balance(w http.ResponseWriter, r *http.Request) error {
	addr := strings.ToLower(strings.TrimSpace(r.URL.Query().Get("address")))
	if _, err := s.decodeAddress(addr); err != nil {
		return err
	}
	ctx, cancel := s.nodeCtx(r)
	defer cancel()
	// getaddressbalance sums in the node: balance, every confirmed output at its nominal
	// value (getclusterbalance's count: immature coinbases, stakes and escrows included);
	// spendable, those the next block may spend, at their effective value then.
	b, err := s.cfg.Node.GetAddressBalance(ctx, addr, false)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, BalanceResult{Address: addr, Balance: amount.Format(b.Balance), UTXOCount: int(b.UtxoCount),
		Spendable: amount.Format(b.Spendable)})
	return nil
}

// 5. POST /api/wallet/send
func (s *Server) send(w http.ResponseWriter, r *http.Request) error {
	var req api.SendRequest
	if err := decodeActing(r, &req, &req.Mnemonic, &req.PublicKey); err != nil {
		return err
	}
	if err := required("to", req.To); err != nil {
		return err
	}
	to := strings.ToLower(strings.TrimSpace(req.To))
	if _, err := wallet.DecodeAddress(to, s.cfg.Net); err != nil {
		return err
	}
	v, err := parseAmount(req.Amount)
	if err != nil {
		return err
	}
	if v < policy.DustLimit {
		return apiErr(http.StatusBadRequest, "invalid_amount", "amount is below the dust limit of %s COIN", amount.Format(policy.DustLimit))
	}
	// One transfer at a time per sending address (withAgentKey's lock), so two requests
	// never pick the same coins.
	return s.withAgentKey(w, r, req.Mnemonic, req.PublicKey, nil, func(ctx context.Context, key wallet.Key) error {
		if key.Priv == nil { // public_key: the transfer to sign (unsigned.go)
			to, _ := wallet.DecodeAddress(to, s.cfg.Net)
			return s.buildUnsigned(ctx, key, wallet.Request{Payments: []wallet.Payment{{PKH: to, Value: v}}},
				func(err error) error { return err })
		}
		res, err := wallet.Send(ctx, s.txNode, wallet.Transfer{Net: s.cfg.Net, Keys: []wallet.Key{key}, To: to,
			Amount: v, FeeRate: s.cfg.FeeRate})
		if err != nil {
			var rpcErr *jsonrpc.Error
			if errors.As(err, &rpcErr) {
				return apiErr(http.StatusBadRequest, "tx_rejected", "the node rejected the transaction: %s", rpcErr.Message)
			}
			return err
		}
		writeJSON(w, http.StatusOK, TransferResult{TxID: res.TxID, From: res.From, To: res.To, Amount: amount.Format(res.Amount),
			Fee: amount.Format(res.Fee)})
		return nil
	})
}

// 6. POST /api/wallet/derive
func (s *Server) derive(w http.ResponseWriter, r *http.Request) error {
	var req api.DeriveRequest
	if err := decodeWithMnemonic(r, &req, &req.Mnemonic); err != nil {
		return err
	}
	a, err := wallet.AddressFromMnemonic(req.Mnemonic, s.cfg.Net, 0)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, api.AddressResult{Address: a})
	return nil
}

// GET /openapi.json
func (s *Server) openapi(w http.ResponseWriter, _ *http.Request) error {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, err := w.Write(OpenAPI)
	return err
}
