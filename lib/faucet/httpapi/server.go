package httpapi

import (
	_ "embed"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/cointoolkit/coin/lib/amount"
	"github.com/cointoolkit/coin/lib/faucet"
	"github.com/cointoolkit/coin/lib/faucet/api"
	"github.com/cointoolkit/coin/lib/faucet/web"
	"github.com/cointoolkit/coin/lib/logging"
)

// OpenAPI is the OpenAPI 3.1 document of the HTTP API, served at GET /openapi.json.
//
//go:embed openapi.json
var OpenAPI []byte

// Options configure the HTTP door: what only HTTP has (bodies, client addresses behind
// proxies, the event streams, the access log). The operations' configuration is the
// Service's (faucet.Config).
type Options struct {
	// TrustedProxies is how many X-Forwarded-For hops, counted from the socket's peer,
	// are reverse proxies of the operator's (default 0: the client is the socket's peer).
	TrustedProxies int
	// MaxBodyBytes bounds request bodies (default 16 KiB).
	MaxBodyBytes int64
	// AccessLog gets one record per request (no bodies, no query strings), under the
	// subsystem "http"; nil: none.
	AccessLog *slog.Logger
	// Events serves GET /api/agent/events (lib/faucet/events' SSE handler); nil: 503.
	Events http.Handler
	// MaxStreams bounds the event streams open at once (default DefaultMaxStreams; keep it
	// below the listener's connection limit so that ordinary requests always find a
	// connection), MaxStreamsPerClient those of one client (default
	// DefaultMaxStreamsPerClient); streams.go. A negative MaxStreams refuses every stream.
	MaxStreams          int
	MaxStreamsPerClient int
}

// DefaultMaxBodyBytes is Options.MaxBodyBytes's default.
const DefaultMaxBodyBytes = 16 << 10

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

// Server is the faucet's HTTP API: a door of the Service (lib/faucet), with the HTTP
// concerns of its own: the route table, bodies, client addresses, idempotency keys, the
// event streams' slots and the access log.
type Server struct {
	*faucet.Service
	cfg     faucet.Config // the Service's, with its defaults
	opts    Options       // with their defaults
	log     *slog.Logger
	access  *slog.Logger // nil: no access log
	routes  []Route
	streams *streamSlots // the event streams open, per client and in all
	// idem holds the answers of the requests that carried an Idempotency-Key.
	idem *idemStore
}

// NewServer is the HTTP API, with opts, of a new Service of cfg (faucet.NewService).
func NewServer(cfg faucet.Config, opts Options) (*Server, error) {
	if opts.TrustedProxies < 0 {
		return nil, errors.New("faucet server: trusted proxies must not be negative")
	}
	svc, err := faucet.NewService(cfg)
	if err != nil {
		return nil, err
	}
	return NewServerOf(svc, opts), nil
}

// NewServerOf is the HTTP API of svc, with opts (a negative TrustedProxies counts as 0).
func NewServerOf(svc *faucet.Service, opts Options) *Server {
	if opts.TrustedProxies < 0 {
		opts.TrustedProxies = 0
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if opts.MaxStreams == 0 {
		opts.MaxStreams = DefaultMaxStreams
	}
	if opts.MaxStreamsPerClient <= 0 {
		opts.MaxStreamsPerClient = DefaultMaxStreamsPerClient
	}
	s := &Server{Service: svc, cfg: svc.Config(), opts: opts, log: svc.Log(),
		streams: newStreamSlots(opts.MaxStreams, opts.MaxStreamsPerClient),
		idem:    newIdemStore(idemMaxKeys, idemMaxBytes, idemTTL)}
	if opts.AccessLog != nil {
		s.access = opts.AccessLog.With(logging.SubsystemKey, "http")
	}
	s.routes = s.apiRoutes() // httpapi.go
	return s
}

// Error is an operation's refusal, as the door writes it.
type Error = api.Error

func apiErr(kind api.Kind, code, format string, args ...any) *Error {
	return api.Errorf(kind, code, format, args...)
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

// agentEvents is the event stream of lib/faucet/events, when Options.Events is set, within
// the client's and the faucet's share of stream slots (streams.go). A refusal closes the
// connection.
func (s *Server) agentEvents(w http.ResponseWriter, r *http.Request) error {
	if s.opts.Events == nil {
		return apiErr(api.KindUnavailable, "events_off", "this faucet serves no event stream")
	}
	release, refusal := s.streams.acquire(clientNet(clientAddr(r, s.opts.TrustedProxies)))
	if refusal != nil {
		w.Header().Set("Connection", "close")
		return refusal
	}
	defer release()
	s.opts.Events.ServeHTTP(w, r)
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
			s.access.Info("request", "client", clientAddr(r, s.opts.TrustedProxies).String(), "method", r.Method, "path", r.URL.Path,
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
