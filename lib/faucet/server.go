package faucet

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cointoolkit/coin/lib/amount"
	"github.com/cointoolkit/coin/lib/faucet/api"
	"github.com/cointoolkit/coin/lib/jsonrpc"
	"github.com/cointoolkit/coin/lib/keys"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/types"
	"github.com/cointoolkit/coin/lib/wallet"
)

// OpenAPI is the OpenAPI 3.1 document of the HTTP API, served at GET /openapi.json.
//
//go:embed openapi.json
var OpenAPI []byte

// Config configures a Server.
type Config struct {
	Net    *params.Network
	Node   Node
	Engine *Engine
	Claims *ClaimStore
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
	// MaxBodyBytes bounds request bodies (default 16 KiB).
	MaxBodyBytes int64
	// NodeTimeout bounds each call to the node made for a request (default 30 s).
	NodeTimeout time.Duration
	// AccessLog gets one record per request (no bodies, no query strings), under the
	// subsystem "http"; nil: none.
	AccessLog *slog.Logger
	// Log gets internal errors, under the subsystem "faucet"; nil: none.
	Log *slog.Logger
}

// Defaults of Config.
const (
	DefaultAmount       = 100 * amount.Coin
	DefaultCooldown     = time.Hour
	DefaultIPRate       = 30
	DefaultIPBurst      = 10
	DefaultMaxBodyBytes = 16 << 10
)

// Route is one endpoint of the API. The router, the per-IP limits and the OpenAPI test
// all read the route table, so a new endpoint is one more entry in routes.
type Route struct {
	Method string
	Path   string
	// TakesMnemonic marks endpoints whose body carries a mnemonic: they are rate limited
	// per client IP.
	TakesMnemonic bool
	Handle        func(w http.ResponseWriter, r *http.Request) error
}

// Server is the faucet's HTTP API.
type Server struct {
	cfg    Config
	log    *slog.Logger
	access *slog.Logger // nil: no access log
	routes []Route
	ip     *ipLimiter
	locks  keyedMutex
}

// NewServer checks cfg and fills its defaults.
func NewServer(cfg Config) (*Server, error) {
	if cfg.Net == nil || cfg.Node == nil || cfg.Engine == nil || cfg.Claims == nil {
		return nil, errors.New("faucet server: network, node, engine and claim store are required")
	}
	if cfg.Net == params.Mainnet {
		return nil, errors.New("faucet server: refusing to run on mainnet")
	}
	if cfg.Amount == 0 {
		cfg.Amount = DefaultAmount
	}
	if cfg.Amount < wallet.DustLimit {
		return nil, fmt.Errorf("faucet server: claim amount below the dust limit of %d subunits", wallet.DustLimit)
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
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if cfg.NodeTimeout <= 0 {
		cfg.NodeTimeout = 30 * time.Second
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	s := &Server{cfg: cfg, log: cfg.Log.With("sys", "faucet")}
	if cfg.AccessLog != nil {
		s.access = cfg.AccessLog.With("sys", "http")
	}
	if cfg.IPRate > 0 {
		s.ip = newIPLimiter(cfg.IPRate, cfg.IPBurst)
	}
	s.routes = []Route{
		{Method: http.MethodGet, Path: "/api/wallet/new", Handle: s.walletNew},
		{Method: http.MethodPost, Path: "/api/faucet", Handle: s.faucet},
		{Method: http.MethodGet, Path: "/api/status", Handle: s.status},
		{Method: http.MethodGet, Path: "/api/wallet/balance", Handle: s.balance},
		{Method: http.MethodPost, Path: "/api/wallet/send", TakesMnemonic: true, Handle: s.send},
		{Method: http.MethodPost, Path: "/api/wallet/derive", TakesMnemonic: true, Handle: s.derive},
		{Method: http.MethodGet, Path: "/openapi.json", Handle: s.openapi},
	}
	return s, nil
}

// Routes lists the API's endpoints.
func (s *Server) Routes() []Route { return append([]Route(nil), s.routes...) }

// Error is an error response: its status, and the code and message of its body
// (api.ErrorBody: {"error": {"code": ..., "message": ...}}).
type Error struct {
	Status     int           `json:"-"`
	Code       string        `json:"code"`
	Message    string        `json:"message"`
	RetryAfter time.Duration `json:"-"`
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

func apiErr(status int, code, format string, args ...any) *Error {
	return &Error{Status: status, Code: code, Message: fmt.Sprintf(format, args...)}
}

// Handler is the API with its middleware: panic recovery, bounded bodies, per-IP limits on
// the endpoints that take a mnemonic, JSON errors for unknown paths and methods, and the
// access log.
func (s *Server) Handler() http.Handler {
	byPath := map[string]map[string]Route{}
	for _, rt := range s.routes {
		if byPath[rt.Path] == nil {
			byPath[rt.Path] = map[string]Route{}
		}
		byPath[rt.Path][rt.Method] = rt
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rw := &statusWriter{ResponseWriter: w}
		defer func() {
			if p := recover(); p != nil {
				s.log.Error("panic serving a request", "method", r.Method, "path", r.URL.Path, "panic", p)
				if !rw.wrote {
					s.writeError(rw, apiErr(http.StatusInternalServerError, "internal", "internal error"))
				}
			}
			if s.access != nil {
				s.access.Info("request", "client", clientIP(r), "method", r.Method, "path", r.URL.Path,
					"status", rw.status, "bytes", rw.bytes, "duration", time.Since(start).Round(time.Microsecond))
			}
		}()
		methods, ok := byPath[r.URL.Path]
		if !ok {
			s.writeError(rw, apiErr(http.StatusNotFound, "not_found", "no endpoint %s", r.URL.Path))
			return
		}
		rt, ok := methods[r.Method]
		if !ok {
			allow := make([]string, 0, len(methods))
			for m := range methods {
				allow = append(allow, m)
			}
			sort.Strings(allow)
			rw.Header().Set("Allow", strings.Join(allow, ", "))
			s.writeError(rw, apiErr(http.StatusMethodNotAllowed, "method_not_allowed", "%s %s is not supported; use %s",
				r.Method, r.URL.Path, strings.Join(allow, " or ")))
			return
		}
		if r.Body != nil {
			r.Body = http.MaxBytesReader(rw, r.Body, s.cfg.MaxBodyBytes)
		}
		if rt.TakesMnemonic {
			if ok, wait := s.ip.allow(clientIP(r)); !ok {
				e := apiErr(http.StatusTooManyRequests, "rate_limited", "too many requests from this address; retry in %d s", retrySeconds(wait))
				e.RetryAfter = wait
				s.writeError(rw, e)
				return
			}
		}
		if err := rt.Handle(rw, r); err != nil {
			s.writeError(rw, s.toAPIError(err))
		}
	})
}

// toAPIError maps an error to its HTTP status and code.
func (s *Server) toAPIError(err error) *Error {
	var e *Error
	var rl *RateLimitError
	var rej *RejectedError
	var rpcErr *jsonrpc.Error
	var ife *wallet.InsufficientFundsError
	switch {
	case errors.As(err, &e):
		return e
	case errors.As(err, &rl):
		return &Error{Status: http.StatusTooManyRequests, Code: "rate_limited", Message: rl.Error(), RetryAfter: rl.RetryAfter}
	case errors.Is(err, keys.ErrBadMnemonic):
		return apiErr(http.StatusBadRequest, "invalid_mnemonic", "%v", err)
	case errors.Is(err, keys.ErrBadAddress):
		return apiErr(http.StatusBadRequest, "invalid_address", "%v", err)
	case errors.As(err, &ife):
		return apiErr(http.StatusBadRequest, "insufficient_funds", "%v", err)
	case errors.Is(err, wallet.ErrDust):
		return apiErr(http.StatusBadRequest, "invalid_amount", "%v", err)
	case errors.Is(err, wallet.ErrTooLarge):
		return apiErr(http.StatusBadRequest, "too_many_inputs", "%v; send a smaller amount", err)
	case errors.Is(err, ErrFaucetEmpty):
		return apiErr(http.StatusServiceUnavailable, "faucet_empty", "%v", err)
	case errors.Is(err, ErrBusy):
		return apiErr(http.StatusServiceUnavailable, "faucet_busy", "%v", err)
	case errors.Is(err, ErrStopped):
		return apiErr(http.StatusServiceUnavailable, "shutting_down", "%v", err)
	case errors.As(err, &rej):
		return apiErr(http.StatusBadGateway, "node_rejected", "%v", err)
	case errors.Is(err, ErrNodeUnavailable), jsonrpc.IsConnRefused(err):
		return apiErr(http.StatusBadGateway, "node_unavailable", "the node is unavailable")
	case errors.As(err, &rpcErr):
		return apiErr(http.StatusBadGateway, "node_error", "node error: %s", rpcErr.Message)
	case errors.Is(err, context.DeadlineExceeded):
		return apiErr(http.StatusGatewayTimeout, "timeout", "the node did not answer in time")
	case errors.Is(err, context.Canceled):
		return apiErr(499, "canceled", "request canceled")
	}
	s.log.Error("internal error", "err", err)
	return apiErr(http.StatusInternalServerError, "internal", "internal error")
}

func (s *Server) writeError(w http.ResponseWriter, e *Error) {
	if e.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.FormatInt(retrySeconds(e.RetryAfter), 10))
	}
	writeJSON(w, e.Status, api.ErrorBody{Error: api.ErrorObject{Code: e.Code, Message: e.Message}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"error":{"code":"internal","message":"encoding the response failed"}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// decodeBody reads a JSON object into v: bounded (413 beyond MaxBodyBytes), one object,
// no trailing data. Error messages never quote the body.
func decodeBody(r *http.Request, v any) error {
	if r.Body == nil {
		return apiErr(http.StatusBadRequest, "bad_request", "a JSON body is required")
	}
	dec := json.NewDecoder(r.Body)
	if err := dec.Decode(v); err != nil {
		var mbe *http.MaxBytesError
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &mbe):
			return apiErr(http.StatusRequestEntityTooLarge, "body_too_large", "the body is larger than %d bytes", mbe.Limit)
		case errors.Is(err, io.EOF):
			return apiErr(http.StatusBadRequest, "bad_request", "a JSON body is required")
		case errors.As(err, &se), errors.Is(err, io.ErrUnexpectedEOF):
			return apiErr(http.StatusBadRequest, "bad_request", "the body is not valid JSON")
		case errors.As(err, &te):
			if te.Field != "" {
				return apiErr(http.StatusBadRequest, "bad_request", "field %s must be a %s", te.Field, jsonKind(te.Type.Kind().String()))
			}
			return apiErr(http.StatusBadRequest, "bad_request", "the body must be a JSON object")
		default:
			return apiErr(http.StatusBadRequest, "bad_request", "the body is not a valid JSON object")
		}
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return apiErr(http.StatusRequestEntityTooLarge, "body_too_large", "the body is larger than %d bytes", mbe.Limit)
		}
		return apiErr(http.StatusBadRequest, "bad_request", "unexpected data after the JSON object")
	}
	return nil
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "string"
	case "struct", "map":
		return "object"
	}
	return "number"
}

func required(field, v string) error {
	if strings.TrimSpace(v) == "" {
		return apiErr(http.StatusBadRequest, "bad_request", "field %s is required", field)
	}
	return nil
}

// parseAmount reads a request amount: a JSON number in COIN, parsed exactly from its
// decimal text (DESIGN 2).
func parseAmount(n json.Number) (uint64, error) {
	if n == "" {
		return 0, apiErr(http.StatusBadRequest, "bad_request", "field amount is required")
	}
	v, err := amount.Parse(string(n))
	if err != nil {
		return 0, apiErr(http.StatusBadRequest, "invalid_amount", "amount: %v (a decimal number of COIN with at most 8 fractional digits)", err)
	}
	return v, nil
}

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
	txid, err := s.cfg.Engine.Pay(r.Context(), Claim{Address: addr, PKH: pkh, Amount: s.cfg.Amount})
	if err != nil {
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
	us, err := s.cfg.Node.GetUtxosByAddress(ctx, addr, false)
	if err != nil {
		return err
	}
	var sum uint64
	n := 0
	for i := range us {
		if us[i].Locked {
			continue
		}
		sum += wallet.CoinValue(&us[i])
		n++
	}
	writeJSON(w, http.StatusOK, BalanceResult{Address: addr, Balance: amount.Format(sum), UTXOCount: n})
	return nil
}

// 5. POST /api/wallet/send
func (s *Server) send(w http.ResponseWriter, r *http.Request) error {
	var req api.SendRequest
	if err := decodeBody(r, &req); err != nil {
		return err
	}
	if err := required("mnemonic", req.Mnemonic); err != nil {
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
	if v < wallet.DustLimit {
		return apiErr(http.StatusBadRequest, "invalid_amount", "amount is below the dust limit of %s COIN", amount.Format(wallet.DustLimit))
	}
	ring, err := wallet.KeyringFromMnemonic(req.Mnemonic, "", s.cfg.Net, 0)
	if err != nil {
		return err
	}
	key, err := ring.Key(0)
	ring.Wipe()
	if err != nil {
		return err
	}
	defer key.Wipe()
	// One transfer at a time per sending address, so two requests never pick the same coins.
	unlock := s.locks.lock(key.Address)
	defer unlock()
	ctx, cancel := s.nodeCtx(r)
	defer cancel()
	res, err := wallet.Send(ctx, s.cfg.Node, wallet.Transfer{Net: s.cfg.Net, Keys: []wallet.Key{key}, To: to,
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
}

// 6. POST /api/wallet/derive
func (s *Server) derive(w http.ResponseWriter, r *http.Request) error {
	var req api.DeriveRequest
	if err := decodeBody(r, &req); err != nil {
		return err
	}
	if err := required("mnemonic", req.Mnemonic); err != nil {
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

func (w *statusWriter) Write(b []byte) (int, error) {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += n
	return n, err
}

func clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
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
