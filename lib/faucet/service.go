package faucet

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/cointoolkit/coin/lib/faucet/api"
	"github.com/cointoolkit/coin/lib/faucet/payout"
	"github.com/cointoolkit/coin/lib/logging"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/policy"
	"github.com/cointoolkit/coin/lib/wallet"
)

// Service is the faucet's core: its operations (api.Service) as Go methods over the payout
// engine, the claim store and the node, each returning its result or an *Error of a kind.
// It knows nothing of HTTP: the doors (the HTTP API, Server; the MCP tools, lib/faucet/mcp;
// the Web pages, lib/faucet/web) translate their requests into its calls and its errors
// into their own form.
type Service struct {
	cfg Config
	log *slog.Logger
	ip  *ipLimiter // the operations that take a mnemonic, per client
	// reqs is every request, per client.
	reqs *ipLimiter
	// claimsPerClient and budget count the claims of the last hour, per client network
	// and in all.
	claimsPerClient *window
	budget          *window
	locks           keyedMutex
	// txj journals the transactions the operations build, and txNode, the node they send
	// them through, writes them there first (agentjournal.go).
	txj    *txJournal
	txNode wallet.NodeClient
}

var _ api.Service = (*Service)(nil)

// NewService checks cfg, fills its defaults and opens the service on cfg.Claims's store.
// Every check of the faucet's configuration (the network, the claim amount) is made here,
// once.
func NewService(cfg Config) (*Service, error) {
	if cfg.Net == nil || cfg.Node == nil || cfg.Engine == nil || cfg.Claims == nil {
		return nil, errors.New("faucet server: network, node, engine and claim store are required")
	}
	if err := CheckNetwork(cfg.Net); err != nil {
		return nil, fmt.Errorf("faucet server: %w", err)
	}
	if cfg.Amount == 0 {
		cfg.Amount = DefaultAmount
	}
	if err := CheckAmount(cfg.Amount); err != nil {
		return nil, fmt.Errorf("faucet server: claim amount below the dust limit of %d subunits: %w", policy.DustLimit, err)
	}
	if cfg.Cooldown == 0 {
		cfg.Cooldown = DefaultCooldown
	}
	if cfg.FeeRate == 0 {
		cfg.FeeRate = wallet.DefaultFeeRate
	}
	if cfg.IPRate == 0 {
		cfg.IPRate = DefaultIPRate
	}
	if cfg.IPBurst == 0 {
		cfg.IPBurst = DefaultIPBurst
	}
	if cfg.RequestRate == 0 {
		cfg.RequestRate = DefaultRequestRate
	}
	if cfg.RequestBurst == 0 {
		cfg.RequestBurst = DefaultRequestBurst
	}
	perClient, budget := DefaultLimits(cfg.Net)
	if cfg.ClaimsPerClient == 0 {
		cfg.ClaimsPerClient = perClient
	}
	if cfg.BudgetPerHour == 0 {
		cfg.BudgetPerHour = budget
	}
	if cfg.TrustedProxies < 0 {
		return nil, errors.New("faucet server: trusted proxies must not be negative")
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if cfg.NodeTimeout <= 0 {
		cfg.NodeTimeout = 30 * time.Second
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.MaxStreams == 0 {
		cfg.MaxStreams = DefaultMaxStreams
	}
	if cfg.MaxStreamsPerClient <= 0 {
		cfg.MaxStreamsPerClient = DefaultMaxStreamsPerClient
	}
	s := &Service{cfg: cfg, log: cfg.Log.With(logging.SubsystemKey, "faucet")}
	if cfg.IPRate > 0 {
		s.ip = newIPLimiter(cfg.IPRate, cfg.IPBurst)
	}
	if cfg.RequestRate > 0 {
		s.reqs = newIPLimiter(cfg.RequestRate*60, cfg.RequestBurst)
	}
	if cfg.ClaimsPerClient > 0 {
		s.claimsPerClient = newWindow(cfg.ClaimsPerClient, time.Hour)
	}
	if cfg.BudgetPerHour > 0 {
		s.budget = newWindow(cfg.BudgetPerHour, time.Hour)
	}
	if err := s.countPaidClaims(); err != nil {
		return nil, err
	}
	txj, err := newTxJournal(cfg.Claims.DB())
	if err != nil {
		return nil, fmt.Errorf("faucet server: %w", err)
	}
	s.txj, s.txNode = txj, &journalingNode{NodeClient: cfg.Node, j: txj, log: s.log}
	return s, nil
}

// NodeClient is what the faucet needs from a node: its RPC client (rpcapi.Client), or a
// test double. The payout engine needs the same (payout.NodeClient).
type NodeClient = payout.NodeClient

// The codes of the rate limits' refusals (429), as payout.RateLimitError names them.
const (
	CodeAddressRateLimited = payout.CodeAddressRateLimited
	CodeClientRateLimited  = payout.CodeClientRateLimited
	CodeBudgetExhausted    = payout.CodeBudgetExhausted
)

// ErrMainnet refuses a faucet on mainnet.
var ErrMainnet = errors.New("the faucet gives coins away, so it runs only on testnet or regtest")

// CheckNetwork refuses mainnet (ErrMainnet): the one place of that rule, which NewService
// and coin-faucetd's flags both apply.
func CheckNetwork(net *params.Network) error {
	if net == params.Mainnet {
		return ErrMainnet
	}
	return nil
}

// CheckAmount refuses a claim amount below the dust limit (wallet.ErrDust): a claim must be
// a spendable output.
func CheckAmount(v uint64) error {
	if v < policy.DustLimit {
		return wallet.ErrDust
	}
	return nil
}

// Config is the service's configuration, with its defaults filled.
func (s *Service) Config() Config { return s.cfg }

// Admit spends a request of caller c from its per-client budget (RequestRate), and, for a
// request that carries a mnemonic, one from the budget of those (IPRate): the refusal is a
// client_rate_limited Error. A door calls it once per request, before the operation.
func (s *Service) Admit(c api.Caller, mnemonic bool) error {
	if ok, wait := s.reqs.allow(c.Client); !ok {
		return clientLimited(wait, "too many requests from this client")
	}
	if mnemonic {
		return s.admitMnemonic(c)
	}
	return nil
}

// admitMnemonic spends a request of c from the budget of the requests that carry a mnemonic.
func (s *Service) admitMnemonic(c api.Caller) error {
	if ok, wait := s.ip.allow(c.Client); !ok {
		return clientLimited(wait, "too many requests with a mnemonic from this client")
	}
	return nil
}

// clientLimited is the refusal of a per-client limit.
func clientLimited(wait time.Duration, what string) *Error {
	e := apiErr(api.KindLimited, CodeClientRateLimited, "%s; retry in %d s", what, api.RetrySeconds(wait))
	e.RetryAfter = wait
	return e
}
