package faucet

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cointoolkit/coin/lib/amount"
	"github.com/cointoolkit/coin/lib/faucet/api"
	"github.com/cointoolkit/coin/lib/faucet/payout"
	"github.com/cointoolkit/coin/lib/jsonrpc"
	"github.com/cointoolkit/coin/lib/keys"
	"github.com/cointoolkit/coin/lib/policy"
	"github.com/cointoolkit/coin/lib/types"
	"github.com/cointoolkit/coin/lib/wallet"
)

// The operations 1 to 6 of the faucet API (docs/faucet.md#api): wallets, claims, status,
// balances and transfers.

// nodeCtx bounds the calls to the node made for one operation.
func (s *Service) nodeCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, s.cfg.NodeTimeout)
}

func (s *Service) decodeAddress(addr string) (types.Hash, error) {
	if err := required("address", addr); err != nil {
		return types.Hash{}, err
	}
	h, err := wallet.DecodeAddress(strings.TrimSpace(addr), s.cfg.Net)
	if err != nil {
		return types.Hash{}, err
	}
	return h, nil
}

// NewWallet makes a new wallet: its mnemonic and first address (1. GET /api/wallet/new).
func (s *Service) NewWallet(context.Context) (api.NewWalletResult, error) {
	m, a, err := wallet.NewMnemonic(keys.DefaultMnemonicWords, s.cfg.Net)
	if err != nil {
		return api.NewWalletResult{}, s.fault(err)
	}
	return api.NewWalletResult{Address: a, Mnemonic: m}, nil
}

// The bodies of the API's answers (lib/faucet/api), under the names they had here.
type (
	ClaimResult    = api.ClaimResult
	StatusResult   = api.StatusResult
	BalanceResult  = api.BalanceResult
	TransferResult = api.TransferResult
)

// Claim pays the claim amount to an address, within the address's cooldown, the caller's
// and the faucet's hourly limits (2. POST /api/faucet).
func (s *Service) Claim(ctx context.Context, c api.Caller, req api.ClaimRequest) (ClaimResult, error) {
	res, err := s.claim(ctx, c, req)
	return res, s.fault(err)
}

func (s *Service) claim(ctx context.Context, c api.Caller, req api.ClaimRequest) (ClaimResult, error) {
	addr := strings.ToLower(strings.TrimSpace(req.Address))
	pkh, err := s.decodeAddress(addr)
	if err != nil {
		return ClaimResult{}, err
	}
	if addr == s.cfg.Engine.Address() {
		return ClaimResult{}, apiErr(api.KindInvalid, "invalid_address", "that is the faucet's own address")
	}
	release, err := s.cfg.Claims.Reserve(addr)
	if err != nil {
		return ClaimResult{}, err
	}
	defer release()
	// The client's and the faucet's hourly counts take the claim now and give it back if
	// it is not paid.
	undoClient, wait := s.claimsPerClient.take(c.Client)
	if undoClient == nil {
		return ClaimResult{}, &payout.RateLimitError{Code: CodeClientRateLimited, RetryAfter: wait,
			What: fmt.Sprintf("this client was paid %d claims in the last hour", s.cfg.ClaimsPerClient)}
	}
	undoBudget, wait := s.budget.take("")
	if undoBudget == nil {
		undoClient()
		return ClaimResult{}, &payout.RateLimitError{Code: CodeBudgetExhausted, RetryAfter: wait,
			What: fmt.Sprintf("the faucet paid its budget of %d claims in the last hour", s.cfg.BudgetPerHour)}
	}
	txid, err := s.cfg.Engine.Pay(ctx, payout.Claim{Address: addr, PKH: pkh, Amount: s.cfg.Amount, Client: c.Client})
	if err != nil {
		undoClient()
		undoBudget()
		return ClaimResult{}, err
	}
	return ClaimResult{TxID: txid.String(), Amount: amount.Format(s.cfg.Amount)}, nil
}

// Status is the network's and the faucet's status (3. GET /api/status).
func (s *Service) Status(ctx context.Context) (StatusResult, error) {
	ctx, cancel := s.nodeCtx(ctx)
	defer cancel()
	info, err := s.cfg.Node.GetBlockchainInfo(ctx)
	if err != nil {
		return StatusResult{}, s.fault(err)
	}
	st := s.cfg.Engine.Status()
	return StatusResult{BlockHeight: info.Height, MempoolSize: info.MempoolSize,
		FaucetBalance: amount.Format(st.Spendable), FaucetAddress: s.cfg.Engine.Address(),
		FaucetImmature: amount.Format(st.Immature), Network: s.cfg.Net.Name, ClaimAmount: amount.Format(s.cfg.Amount),
		CooldownSeconds: int64(s.cfg.Cooldown / time.Second), ClaimsPaid: st.Paid}, nil
}

// Balance is an address's balance (4. GET /api/wallet/balance?address=).
func (s *Service) Balance(ctx context.Context, address string) (BalanceResult, error) {
	addr := strings.ToLower(strings.TrimSpace(address))
	if _, err := s.decodeAddress(addr); err != nil {
		return BalanceResult{}, s.fault(err)
	}
	ctx, cancel := s.nodeCtx(ctx)
	defer cancel()
	// getaddressbalance sums in the node: balance, every confirmed output at its nominal
	// value (getclusterbalance's count: immature coinbases, stakes and escrows included);
	// spendable, those the next block may spend, at their effective value then.
	b, err := s.cfg.Node.GetAddressBalance(ctx, addr, false)
	if err != nil {
		return BalanceResult{}, s.fault(err)
	}
	return BalanceResult{Address: addr, Balance: amount.Format(b.Balance), UTXOCount: int(b.UtxoCount),
		Spendable: amount.Format(b.Spendable)}, nil
}

// Send builds, signs and broadcasts a transfer for the acting wallet (5. POST
// /api/wallet/send).
func (s *Service) Send(ctx context.Context, req api.SendRequest) (api.Answer[TransferResult], error) {
	type A = api.Answer[TransferResult]
	if err := oneKey(req.Mnemonic, req.PublicKey); err != nil {
		return A{}, err
	}
	if err := required("to", req.To); err != nil {
		return A{}, err
	}
	to := strings.ToLower(strings.TrimSpace(req.To))
	if _, err := wallet.DecodeAddress(to, s.cfg.Net); err != nil {
		return A{}, s.fault(err)
	}
	v, err := parseAmount(req.Amount)
	if err != nil {
		return A{}, err
	}
	if v < policy.DustLimit {
		return A{}, apiErr(api.KindInvalid, "invalid_amount", "amount is below the dust limit of %s COIN", amount.Format(policy.DustLimit))
	}
	// One transfer at a time per sending address (withAgentKey's lock), so two requests
	// never pick the same coins.
	var res *TransferResult
	err = s.withAgentKey(ctx, req.Mnemonic, req.PublicKey, nil, func(ctx context.Context, key wallet.Key) error {
		if key.Priv == nil { // public_key: the transfer to sign (unsigned.go)
			to, _ := wallet.DecodeAddress(to, s.cfg.Net)
			return s.buildUnsigned(ctx, key, wallet.Request{Payments: []wallet.Payment{{PKH: to, Value: v}}},
				func(err error) error { return err })
		}
		sent, err := wallet.Send(ctx, s.txNode, wallet.Transfer{Net: s.cfg.Net, Keys: []wallet.Key{key}, To: to,
			Amount: v, FeeRate: s.cfg.FeeRate})
		if err != nil {
			var rpcErr *jsonrpc.Error
			if errors.As(err, &rpcErr) {
				return apiErr(api.KindInvalid, "tx_rejected", "the node rejected the transaction: %s", rpcErr.Message)
			}
			return err
		}
		res = &TransferResult{TxID: sent.TxID, From: sent.From, To: sent.To, Amount: amount.Format(sent.Amount),
			Fee: amount.Format(sent.Fee)}
		return nil
	})
	return answer(s, res, err)
}

// Derive is the first address of a mnemonic (6. POST /api/wallet/derive).
func (s *Service) Derive(_ context.Context, req api.DeriveRequest) (api.AddressResult, error) {
	if err := required("mnemonic", req.Mnemonic); err != nil {
		return api.AddressResult{}, err
	}
	a, err := wallet.AddressFromMnemonic(req.Mnemonic, s.cfg.Net, 0)
	if err != nil {
		return api.AddressResult{}, s.fault(err)
	}
	return api.AddressResult{Address: a}, nil
}
