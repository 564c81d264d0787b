package faucet

import (
	_ "embed"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/cointoolkit/coin/lib/amount"
	"github.com/cointoolkit/coin/lib/faucet/api"
	"github.com/cointoolkit/coin/lib/faucet/payout"
	"github.com/cointoolkit/coin/lib/faucet/web"
	"github.com/cointoolkit/coin/lib/logging"
	"github.com/cointoolkit/coin/lib/params"
)

// OpenAPI is the OpenAPI 3.1 document of the HTTP API, served at GET /openapi.json.
//
//go:embed openapi.json
var OpenAPI []byte

// Config configures a Server.
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
	// TrustedProxies is how many X-Forwarded-For hops, counted from the socket's peer,
	// are reverse proxies of the operator's (default 0: the client is the socket's peer).
	TrustedProxies int
	// MaxBodyBytes bounds request bodies (default 16 KiB).
	MaxBodyBytes int64
	// NodeTimeout bounds each call to the node made for a request (default 30 s).
	NodeTimeout time.Duration
	// AccessLog gets one record per request (no bodies, no query strings), under the
	// subsystem "http"; nil: none.
	AccessLog *slog.Logger
	// Log gets internal errors, under the subsystem "faucet"; nil: none.
	Log *slog.Logger
	// Events serves GET /api/agent/events (lib/faucet/events' SSE handler); nil: 503.
	Events http.Handler
	// MaxStreams bounds the event streams open at once (default DefaultMaxStreams; keep it
	// below the listener's connection limit so that ordinary requests always find a
	// connection), MaxStreamsPerClient those of one client (default
	// DefaultMaxStreamsPerClient); streams.go. A negative MaxStreams refuses every stream.
	MaxStreams          int
	MaxStreamsPerClient int
}

// Defaults of Config.
const (
	DefaultAmount       = 100 * amount.Coin
	DefaultCooldown     = time.Hour
	DefaultIPRate       = 30
	DefaultIPBurst      = 10
	DefaultMaxBodyBytes = 16 << 10
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

// Route is one endpoint of the API. The router, the per-IP limits and the OpenAPI test
// all read the route table, so a new endpoint is one more entry in routes.
type Route struct {
	Method string
	Path   string
	// TakesMnemonic marks endpoints whose body carries a mnemonic (and costs a PBKDF2):
	// they are rate limited per client by IPRate as well as by RequestRate.
	TakesMnemonic bool
	// Idempotent marks the endpoints that build a transaction: they honour an
	// Idempotency-Key header (idempotency.go).
	Idempotent bool
	Handle     func(w http.ResponseWriter, r *http.Request) error
}

// Server is the faucet's HTTP API: a door of the Service (service.go), with the HTTP
// concerns of its own: the route table, bodies, idempotency keys, the event streams' slots
// and the access log.
type Server struct {
	*Service
	access  *slog.Logger // nil: no access log
	routes  []Route
	streams *streamSlots // the event streams open, per client and in all
	// idem holds the answers of the requests that carried an Idempotency-Key.
	idem *idemStore
}

// NewServer is the HTTP API of a new Service of cfg (NewService).
func NewServer(cfg Config) (*Server, error) {
	svc, err := NewService(cfg)
	if err != nil {
		return nil, err
	}
	return NewServerOf(svc), nil
}

// NewServerOf is the HTTP API of svc.
func NewServerOf(svc *Service) *Server {
	cfg := svc.cfg
	s := &Server{Service: svc, streams: newStreamSlots(cfg.MaxStreams, cfg.MaxStreamsPerClient),
		idem: newIdemStore(idemMaxKeys, idemMaxBytes, idemTTL)}
	if cfg.AccessLog != nil {
		s.access = cfg.AccessLog.With(logging.SubsystemKey, "http")
	}
	s.routes = s.apiRoutes() // httpapi.go
	return s
}

// Routes lists the API's endpoints.
func (s *Server) Routes() []Route { return append([]Route(nil), s.routes...) }

// Handler is the API with its middleware: panic recovery, a token bucket per client on
// every request, bounded bodies, a stricter one on the endpoints that take a mnemonic, JSON
// errors for unknown paths and methods, and the access log; with /mcp and the discovery
// files (wellknown.go) in front, and the Web pages (lib/faucet/web: /, /agents, ...), which
// read through all this, in front of those.
func (s *Server) Handler() http.Handler {
	return web.New(s.withDiscovery(s.apiHandler()), s.Service, web.Options{Network: s.cfg.Net.Name, Payouts: s.webPayouts,
		Caller: s.caller, Around: s.logged})
}

// webPayouts lists the claims of the journaled payouts (those not yet payout.FinalConfirmations
// deep), newest first, at most n payouts, for the Web page.
func (s *Server) webPayouts(n int) ([]web.Payout, error) {
	ps, err := s.cfg.Claims.Payouts()
	if err != nil {
		return nil, err
	}
	var out []web.Payout
	for i := len(ps) - 1; i >= 0 && len(out) < n; i-- {
		p := web.Payout{TxID: ps[i].TxID.String(), Time: ps[i].Time}
		for _, c := range ps[i].Claims {
			p.Claims = append(p.Claims, web.PaidClaim{Address: c.Address, Amount: amount.Format(c.Amount)})
		}
		out = append(out, p)
	}
	return out, nil
}

// agentEvents is the event stream of lib/faucet/events, when Config.Events is set, within
// the client's and the faucet's share of stream slots (streams.go). A refusal closes the
// connection.
func (s *Server) agentEvents(w http.ResponseWriter, r *http.Request) error {
	if s.cfg.Events == nil {
		return apiErr(api.KindUnavailable, "events_off", "this faucet serves no event stream")
	}
	release, refusal := s.streams.acquire(clientNet(clientAddr(r, s.cfg.TrustedProxies)))
	if refusal != nil {
		w.Header().Set("Connection", "close")
		return refusal
	}
	defer release()
	s.cfg.Events.ServeHTTP(w, r)
	return nil
}

// logged is h with the access log and panic recovery of serving: the Web pages'.
func (s *Server) logged(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rw, done := s.serving(w, r)
		defer done()
		h.ServeHTTP(rw, r)
	})
}

// serving starts serving r: rw records the answer for the access log, and done, deferred by
// the caller, logs a panic (answering 500 when nothing was written yet) and then, when the
// access log is on, the request with its status, size and duration.
func (s *Server) serving(w http.ResponseWriter, r *http.Request) (rw *statusWriter, done func()) {
	start := time.Now()
	rw = &statusWriter{ResponseWriter: w}
	return rw, func() {
		if p := recover(); p != nil {
			s.log.Error("panic serving a request", "method", r.Method, "path", r.URL.Path, "panic", p)
			if !rw.wrote {
				s.writeError(rw, apiErr(api.KindInternal, "internal", "internal error"))
			}
		}
		if s.access != nil {
			s.access.Info("request", "client", clientAddr(r, s.cfg.TrustedProxies).String(), "method", r.Method, "path", r.URL.Path,
				"status", rw.status, "bytes", rw.bytes, "duration", time.Since(start).Round(time.Microsecond))
		}
	}
}

// statusWriter records the status and size of a response for the access log.
type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int
	wrote  bool
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wrote {
		w.status, w.wrote = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

// Unwrap lets http.ResponseController flush the event stream and set its write deadlines.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *statusWriter) Write(b []byte) (int, error) {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += n
	return n, err
}

// keyedMutex serialises work per key.
type keyedMutex struct {
	mu sync.Mutex
	m  map[string]*keyedEntry
}

type keyedEntry struct {
	mu   sync.Mutex
	refs int
}

func (k *keyedMutex) lock(key string) (unlock func()) {
	k.mu.Lock()
	if k.m == nil {
		k.m = map[string]*keyedEntry{}
	}
	e := k.m[key]
	if e == nil {
		e = &keyedEntry{}
		k.m[key] = e
	}
	e.refs++
	k.mu.Unlock()
	e.mu.Lock()
	return func() {
		e.mu.Unlock()
		k.mu.Lock()
		e.refs--
		if e.refs == 0 {
			delete(k.m, key)
		}
		k.mu.Unlock()
	}
}
