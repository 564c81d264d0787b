package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/cointoolkit/coin/lib/faucet/api"
)

// The HTTP API's door: each route decodes its request (a JSON body, the query), calls one
// Service method, and writes the result as JSON or the refusal as api.ErrorBody with the
// HTTP status of its kind. Routing is net/http's ServeMux ("POST /api/faucet"), with the
// API's own JSON answers for unknown paths (404) and methods (405, with Allow).

// apiRoutes is the route table of the endpoints (docs/faucet.md#api, protocol §9.4, §9.5, and
// the chain reads).
func (s *Server) apiRoutes() []Route {
	get, post := http.MethodGet, http.MethodPost
	return []Route{
		{Method: get, Path: "/api/wallet/new", Handle: s.walletNew},
		{Method: post, Path: "/api/faucet", Handle: s.claim},
		{Method: get, Path: "/api/status", Handle: query(func(ctx context.Context, _ url.Values) (any, error) { return s.Status(ctx) })},
		{Method: get, Path: "/api/wallet/balance", Handle: byParam("address", s.Balance)},
		{Method: post, Path: "/api/wallet/send", TakesMnemonic: true, Idempotent: true, Handle: acting(s.Send)},
		{Method: post, Path: "/api/wallet/derive", TakesMnemonic: true, Handle: body(s.Derive)},
		{Method: post, Path: "/api/agent/register", TakesMnemonic: true, Idempotent: true, Handle: acting(s.Register)},
		{Method: get, Path: "/api/agent/profile", Handle: byParam("address", s.Profile)},
		{Method: get, Path: "/api/agent/directory", Handle: query(func(ctx context.Context, q url.Values) (any, error) { return s.Directory(ctx, q) })},
		{Method: post, Path: "/api/agent/vouch", TakesMnemonic: true, Idempotent: true, Handle: acting(s.Vouch)},
		{Method: post, Path: "/api/agent/contract/create", TakesMnemonic: true, Idempotent: true, Handle: acting(s.ContractCreate)},
		{Method: post, Path: "/api/agent/contract/fulfil", TakesMnemonic: true, Idempotent: true, Handle: acting(s.ContractFulfil)},
		{Method: post, Path: "/api/agent/contract/refund", TakesMnemonic: true, Idempotent: true, Handle: acting(s.ContractRefund)},
		{Method: get, Path: "/api/agent/contract", Handle: byParam("contract_id", s.Contract)},
		{Method: get, Path: "/api/agent/events", Handle: s.agentEvents},
		{Method: post, Path: "/api/agent/review", TakesMnemonic: true, Idempotent: true, Handle: acting(s.Review)},
		{Method: post, Path: "/api/tx/submit", Idempotent: true, Handle: body(s.TxSubmit)}, // txsubmit.go (protocol §9.5)
		{Method: get, Path: "/openapi.json", Handle: s.openapi},
		// The chain reads (chain.go).
		{Method: get, Path: "/api/block", Handle: query(func(ctx context.Context, q url.Values) (any, error) { return s.Block(ctx, q) })},
		{Method: get, Path: "/api/tx", Handle: byParam("txid", s.Transaction)},
		{Method: get, Path: "/api/address/decay", Handle: byParam("address", s.Decay)},
	}
}

// body is the handler of an operation that takes a JSON body.
func body[Req, Res any](op func(context.Context, Req) (Res, error)) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		var req Req
		if err := api.Decode(r.Body, &req); err != nil {
			return err
		}
		res, err := op(r.Context(), req)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, res)
		return nil
	}
}

// acting is the handler of an operation that acts for a wallet: its answer is the result,
// or the unsigned transaction (not to be cached).
func acting[Req, T any](op func(context.Context, Req) (api.Answer[T], error)) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		var req Req
		if err := api.Decode(r.Body, &req); err != nil {
			return err
		}
		a, err := op(r.Context(), req)
		if err != nil {
			return err
		}
		if a.Unsigned != nil {
			w.Header().Set("Cache-Control", "no-store")
		}
		writeJSON(w, http.StatusOK, a.Body())
		return nil
	}
}

// query is the handler of a read by the query's parameters.
func query(op func(context.Context, url.Values) (any, error)) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		res, err := op(r.Context(), r.URL.Query())
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, res)
		return nil
	}
}

// byParam is the handler of a read by one query parameter.
func byParam[Res any](name string, op func(context.Context, string) (Res, error)) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		res, err := op(r.Context(), r.URL.Query().Get(name))
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, res)
		return nil
	}
}

// caller is the Service's caller of r: its client network, behind TrustedProxies. The MCP
// and Web doors get it too (their Options.Caller), so every door counts a client alike.
func (s *Server) caller(r *http.Request) api.Caller {
	return api.Caller{Client: clientNet(clientAddr(r, s.opts.TrustedProxies))}
}

// 1. GET /api/wallet/new
func (s *Server) walletNew(w http.ResponseWriter, r *http.Request) error {
	res, err := s.NewWallet(r.Context())
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, res)
	return nil
}

// 2. POST /api/faucet
func (s *Server) claim(w http.ResponseWriter, r *http.Request) error {
	var req api.ClaimRequest
	if err := api.Decode(r.Body, &req); err != nil {
		return err
	}
	res, err := s.Claim(r.Context(), s.caller(r), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

// GET /openapi.json
func (s *Server) openapi(w http.ResponseWriter, _ *http.Request) error {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, err := w.Write(OpenAPI)
	return err
}

// apiHandler is the route table's endpoints with their middleware: the access log and panic
// recovery, the per-client request budget (Service.Admit) on every request, then the
// route; on it, bounded bodies, the budget of the endpoints that take a mnemonic, and
// idempotency keys.
func (s *Server) apiHandler() http.Handler {
	mux := http.NewServeMux()
	methods := map[string][]string{}
	for _, rt := range s.routes {
		methods[rt.Path] = append(methods[rt.Path], rt.Method)
		mux.Handle(rt.Method+" "+rt.Path, s.route(rt))
		if rt.Method == http.MethodGet {
			// A GET pattern serves HEAD too; the API's endpoints do not.
			mux.Handle(http.MethodHead+" "+rt.Path, http.HandlerFunc(s.methodNotAllowed))
		}
	}
	for p, ms := range methods {
		sort.Strings(ms)
		allow := ms
		mux.Handle(p, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Allow", strings.Join(allow, ", "))
			s.writeError(w, apiErr(api.KindNotAllowed, "method_not_allowed", "%s %s is not supported; use %s",
				r.Method, r.URL.Path, strings.Join(allow, " or ")))
		}))
	}
	mux.Handle("/", http.HandlerFunc(s.notFound))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rw, done := s.serving(w, r)
		defer done()
		if err := s.Admit(s.caller(r), false); err != nil {
			s.writeError(rw, s.AsError(err))
			return
		}
		if p := r.URL.Path; p == "" || p[0] != '/' || (p != "/" && path.Clean(p) != p) {
			// ServeMux would redirect to the clean path; the API has no endpoint there.
			s.notFound(rw, r)
			return
		}
		if r.URL.RawPath != "" {
			// The API routes by the decoded path (an escaped "/" is a "/"), as ServeMux
			// does when the path has no escapes.
			r2, u := *r, *r.URL
			u.RawPath = ""
			r2.URL = &u
			r = &r2
		}
		mux.ServeHTTP(rw, r)
	})
}

// methodNotAllowed answers a HEAD to a GET endpoint: 405, Allow: GET.
func (s *Server) methodNotAllowed(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Allow", http.MethodGet)
	s.writeError(w, apiErr(api.KindNotAllowed, "method_not_allowed", "%s %s is not supported; use %s",
		r.Method, r.URL.Path, http.MethodGet))
}

func (s *Server) notFound(w http.ResponseWriter, r *http.Request) {
	s.writeError(w, apiErr(api.KindNotFound, "not_found", "no endpoint %s", r.URL.Path))
}

// route is rt's handler with its middleware.
func (s *Server) route(rt Route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil {
			r.Body = http.MaxBytesReader(w, r.Body, s.opts.MaxBodyBytes)
		}
		client := s.caller(r)
		if rt.TakesMnemonic {
			if err := s.AdmitMnemonic(client); err != nil {
				s.writeError(w, s.AsError(err))
				return
			}
		}
		run := func(w http.ResponseWriter, r *http.Request) {
			if err := rt.Handle(w, r); err != nil {
				s.writeError(w, s.AsError(err))
			}
		}
		if rt.Idempotent {
			s.idempotent(w, r, client.Client, run)
			return
		}
		run(w, r)
	})
}

func (s *Server) writeError(w http.ResponseWriter, e *Error) {
	if e.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.FormatInt(api.RetrySeconds(e.RetryAfter), 10))
	}
	writeJSON(w, e.Status(), api.ErrorBody{Error: api.ErrorObject{Code: e.Code, Message: e.Message + Hint(e.Code)}})
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
