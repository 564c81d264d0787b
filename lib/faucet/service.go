package faucet

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/cointoolkit/coin/lib/amount"
	"github.com/cointoolkit/coin/lib/faucet/api"
	"github.com/cointoolkit/coin/lib/faucet/payout"
	"github.com/cointoolkit/coin/lib/logging"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/policy"
	"github.com/cointoolkit/coin/lib/wallet"
)

// Config configures a Service.
type Config struct {
	Net    *params.Network
	Node   NodeClient
	Engine *payout.Engine
	Claims *payout.ClaimStore
	// Amount paid per claim, in subunits (default 100 COIN).
	Amount uint64
	// Cooldown between two claims of one address (used for status; ClaimStore enforces it).
	Cooldown time.Duration
	// FeeRate of /api/wallet/send transfers, subunits per byte (default wallet.DefaultFeeRate).
	FeeRate uint64
	// IPRate is the sustained rate, per minute and client IP, of the endpoints that take a
	// mnemonic (default 30; negative disables), with bursts of IPBurst (default 10).
	IPRate  float64
	IPBurst int
	// RequestRate is the sustained rate, per second and client, of every request (default
	// 20; negative disables), with bursts of RequestBurst (default 100). A request to an
	// endpoint that takes a mnemonic takes a token from this bucket and one from IPRate's.
	RequestRate  float64
	RequestBurst int
	// ClaimsPerClient bounds the claims per hour of one client network (IPv4 /32, IPv6
	// /64); BudgetPerHour bounds the claims per hour of all clients together. Negative
	// disables; 0 takes DefaultLimits of Net (5 and 100 on testnet, off on regtest).
	ClaimsPerClient int
	BudgetPerHour   int
	// NodeTimeout bounds each call to the node made for a request (default 30 s).
	NodeTimeout time.Duration
	// Logger gets internal errors, under the subsystem "faucet"; nil: none.
	Logger *slog.Logger
}

// Defaults of Config.
const (
	DefaultAmount   = 100 * amount.Coin
	DefaultCooldown = time.Hour
	DefaultIPRate   = 30
	DefaultIPBurst  = 10
	// protocol §14's limits.
	DefaultRequestRate     = 20
	DefaultRequestBurst    = 100
	DefaultClaimsPerClient = 5
	DefaultBudgetPerHour   = 100
)

// DefaultLimits are the per-client and hourly budget limits of a faucet on net when Config
// leaves them 0 (negative: off). On testnet, a public faucet, they are protocol §14's
// DefaultClaimsPerClient and DefaultBudgetPerHour. On regtest, a developer's own chain where
// every claim comes from one client (127.0.0.1), they are off: with them, the sixth claim of
// docs/agents.md's own path (wallet_new, then faucet_claim) was refused for an hour, and a
// restart did not help.
func DefaultLimits(net *params.Network) (claimsPerClient, budgetPerHour int) {
	if net == params.Regtest {
		return -1, -1
	}
	return DefaultClaimsPerClient, DefaultBudgetPerHour
}

// Service is the faucet's core: its operations (api.Service) as Go methods over the payout
// engine, the claim store and the node, each returning its result or an *Error of a kind.
// It knows nothing of HTTP: the doors (the HTTP API, Server; the MCP tools, lib/faucet/mcp;
// the Web pages, lib/faucet/web) translate their requests into its calls and its errors
// into their own form.
type Service struct {
	cfg Config
	log *slog.Logger
	ip  *ClientLimiter // the operations that take a mnemonic, per client
	// reqs is every request, per client.
	reqs *ClientLimiter
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
	if cfg.NodeTimeout <= 0 {
		cfg.NodeTimeout = 30 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Service{cfg: cfg, log: cfg.Logger.With(logging.SubsystemKey, "faucet")}
	if cfg.IPRate > 0 {
		s.ip = NewClientLimiter(cfg.IPRate, cfg.IPBurst)
	}
	if cfg.RequestRate > 0 {
		s.reqs = NewClientLimiter(cfg.RequestRate*60, cfg.RequestBurst)
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

// Log is the service's logger (Config.Log under the subsystem "faucet"), for its doors.
func (s *Service) Log() *slog.Logger { return s.log }

// Admit spends a request of caller c from its per-client budget (RequestRate), and, for a
// request that carries a mnemonic, one from the budget of those (IPRate): the refusal is a
// client_rate_limited Error. A door calls it once per request, before the operation.
func (s *Service) Admit(c api.Caller, mnemonic bool) error {
	if ok, wait := s.reqs.Allow(c.Client); !ok {
		return ClientLimited(wait, "too many requests from this client")
	}
	if mnemonic {
		return s.AdmitMnemonic(c)
	}
	return nil
}

// AdmitMnemonic spends a request of c from the budget of the requests that carry a mnemonic
// (IPRate) only: for a door that spent the request's general budget (Admit) already.
func (s *Service) AdmitMnemonic(c api.Caller) error {
	if ok, wait := s.ip.Allow(c.Client); !ok {
		return ClientLimited(wait, "too many requests with a mnemonic from this client")
	}
	return nil
}

// ClientLimited is the refusal of a per-client limit: client_rate_limited, retry after wait
// (the HTTP door refuses /mcp envelopes with it too).
func ClientLimited(wait time.Duration, what string) *Error {
	e := apiErr(api.KindLimited, CodeClientRateLimited, "%s; retry in %d s", what, api.RetrySeconds(wait))
	e.RetryAfter = wait
	return e
}
