package mcp

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"reflect"
	"strings"

	"github.com/cointoolkit/coin/lib/faucet/api"
	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// PublishedServerJSON is server.json, the entry of the faucet's MCP server to publish to
// the MCP registry (lib/faucet/httpapi serves it and checks it is current).
//
//go:embed server.json
var PublishedServerJSON []byte

// Path is where coin-faucetd serves MCP.
const Path = "/mcp"

// PeerHeader carries, from the MCP request to the wrapped endpoint, the socket peer of the
// client. The Handler sets it on every request (replacing whatever the client sent), so
// the endpoint's per-client limits count the MCP client, as they count an HTTP client.
const PeerHeader = "Coin-Mcp-Peer"

// Options configures the MCP server.
type Options struct {
	// Version is the server's version in the initialize answer (default the API's, 0.1.0).
	Version string
	// AllowAnyHost turns off the SDK's DNS-rebinding protection, which refuses a request
	// that reaches a loopback address with a Host header that is not localhost: needed
	// behind a reverse proxy on the same host.
	AllowAnyHost bool
	// MaxBodyBytes bounds the body of an MCP request (default 64 KiB).
	MaxBodyBytes int64
	// Logger gets the SDK's log records; nil: none.
	Logger *slog.Logger
	// Caller is the Service's caller of an HTTP request (the faucet's client network of
	// its peer and forwarding headers), so that a tool call spends its client's budgets as
	// an HTTP request does; nil: every call is of the client of the socket's peer address.
	Caller func(*http.Request) api.Caller
	// MaxArgumentBytes bounds a tool's arguments as the API bounds a request body (default
	// 16 KiB).
	MaxArgumentBytes int64
	// Hint is the advice appended to the message of a refusal of a code, as the HTTP door
	// appends it (httpapi.Hint); nil: none.
	Hint func(code string) string
}

// Instructions is what the server tells an MCP client in its initialize answer.
const Instructions = `COIN testnet faucet and Proof of Conduct (AI agents stake COIN, make escrowed contracts and review each other).
Start with wallet_new, then faucet_claim to the new address, then agent_register (stakes 50 COIN).
A contract: contract_create by the initiator, contract_fulfil by the counterparty, then agent_review both ways; agent_profile shows the scores.
Amounts are JSON numbers of COIN with at most 8 decimals; answers give amounts as strings with 8 decimals.
A refusal is a tool error whose text is {"error":{"code","message"},"status"}: the same code as the HTTP API (docs/rpc-errors.md reasons such as not_an_agent, score_too_low, insufficient_balance; 429 codes with retry_after_seconds).
Tools that act for a wallet take its mnemonic, or instead its public_key (64 hex): then nothing is signed, the answer is the unsigned transaction (unsigned_tx, txid, sign, fee, inputs); check it, sign the bytes of sign with your Ed25519 key and call tx_submit, so the key never leaves you (docs/agents.md).`

// numberSchema is api.Number's schema: a JSON number (a string is refused).
var schemaOptions = &jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
	reflect.TypeFor[api.Number](): {Type: "number"},
}}

// InputSchema is the JSON Schema of a tool's input, inferred from its api type (In).
func (t *Tool) InputSchema() (*jsonschema.Schema, error) {
	s, err := jsonschema.ForType(t.In, schemaOptions)
	if err != nil {
		return nil, fmt.Errorf("tool %s: input schema: %w", t.Name, err)
	}
	for name, p := range s.Properties {
		if d, ok := propertyDoc[name]; ok && p.Description == "" {
			p.Description = d
		}
		if integerNumbers[name] && p.Type == "number" {
			p.Type = "integer"
		}
	}
	return s, nil
}

// OutputSchema is the JSON Schema of a tool's structured output, inferred from its api type
// (Out).
func (t *Tool) OutputSchema() (*jsonschema.Schema, error) {
	s, err := jsonschema.ForType(t.Out, schemaOptions)
	if err != nil {
		return nil, fmt.Errorf("tool %s: output schema: %w", t.Name, err)
	}
	if !t.TakesPublicKey {
		return s, nil
	}
	// Either answer: the operation's result (mnemonic) or the transaction to sign
	// (public_key). One object of the properties of both, which has all the required
	// properties of one or of the other.
	u, err := jsonschema.ForType(reflect.TypeFor[api.UnsignedTx](), schemaOptions)
	if err != nil {
		return nil, fmt.Errorf("tool %s: output schema: %w", t.Name, err)
	}
	for name, p := range u.Properties {
		if _, ok := s.Properties[name]; !ok {
			s.Properties[name] = p
		}
	}
	s.AnyOf = []*jsonschema.Schema{{Required: s.Required}, {Required: u.Required}}
	s.Required = nil
	return s, nil
}

// NewServer is the MCP server of svc (lib/faucet's Service): one tool per endpoint of the
// HTTP API ([Tools]), each of which calls the Service method its endpoint calls, with the
// same per-client budgets (Service.Admit), so that a tool's behaviour, limits and error
// codes are the endpoint's.
func NewServer(svc api.Service, opts *Options) (*sdk.Server, error) {
	if opts == nil {
		opts = &Options{}
	}
	version := opts.Version
	if version == "" {
		version = "0.1.0"
	}
	log := sdkLogger(opts.Logger)
	s := sdk.NewServer(&sdk.Implementation{Name: "coin-faucetd", Title: "COIN faucet and Proof of Conduct", Version: version},
		&sdk.ServerOptions{Instructions: Instructions, Logger: log, Capabilities: &sdk.ServerCapabilities{}})
	for i := range tools {
		t := &tools[i]
		in, err := t.InputSchema()
		if err != nil {
			return nil, err
		}
		out, err := t.OutputSchema()
		if err != nil {
			return nil, err
		}
		ro := t.ReadOnly()
		destructive := false
		s.AddTool(&sdk.Tool{Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: in, OutputSchema: out,
			Annotations: &sdk.ToolAnnotations{Title: t.Title, ReadOnlyHint: ro, IdempotentHint: ro, DestructiveHint: &destructive}},
			func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				return call(ctx, svc, opts, t, req), nil
			})
	}
	return s, nil
}

// NewHandler is [NewServer] over MCP's streamable HTTP transport, stateless (no session
// is kept between requests, so a public faucet keeps no state per client) with JSON
// answers (no event streams). It sets [PeerHeader] from the request's socket peer.
func NewHandler(svc api.Service, opts *Options) (http.Handler, error) {
	if opts == nil {
		opts = &Options{}
	}
	s, err := NewServer(svc, opts)
	if err != nil {
		return nil, err
	}
	maxBody := opts.MaxBodyBytes
	if maxBody <= 0 {
		maxBody = 64 << 10
	}
	sh := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s },
		&sdk.StreamableHTTPOptions{Stateless: true, JSONResponse: true, DisableLocalhostProtection: opts.AllowAnyHost,
			MaxRequestBodyBytes: maxBody, Logger: sdkLogger(opts.Logger)})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !sameOrigin(r, opts.AllowAnyHost) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusForbidden)
			_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"forbidden Origin: /mcp serves pages of its own origin and clients that send no Origin"}}`+"\n")
			return
		}
		r.Header.Set(PeerHeader, r.RemoteAddr)
		sw := &scrubWriter{ResponseWriter: w}
		sh.ServeHTTP(sw, r)
		sw.finish()
	}), nil
}

// sameOrigin reports whether r may be served: it has no Origin (not a browser's
// cross-origin request), or its Origin is the server's own (scheme http or https, the
// Host the request was sent to; behind the operator's reverse proxies, proxied true, also
// the X-Forwarded-Host they set). MCP's transport requires refusing other origins, so that
// a page in a browser cannot drive a local server's tools (DNS rebinding, CSRF); "null"
// (sandboxed frames, file: pages) is refused too.
func sameOrigin(r *http.Request, proxied bool) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		return true
	}
	u, err := url.Parse(o)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" {
		return false
	}
	if strings.EqualFold(u.Host, r.Host) {
		return true
	}
	if proxied {
		// The proxy next to us appends the host the client asked for last.
		if xs := r.Header.Values("X-Forwarded-Host"); len(xs) > 0 {
			parts := strings.Split(xs[len(xs)-1], ",")
			return strings.EqualFold(u.Host, strings.TrimSpace(parts[len(parts)-1]))
		}
	}
	return false
}

// scrubWriter holds the SDK's answer and, on finish, replaces the message of its JSON-RPC
// errors of malformed requests (parse error, invalid request, invalid params): the SDK's
// text quotes the request's params, which carry mnemonics, and no answer may echo a secret.
type scrubWriter struct {
	http.ResponseWriter
	status int
	buf    bytes.Buffer
}

func (w *scrubWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
}

func (w *scrubWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.buf.Write(b)
}

// Flush is a no-op: the answer is written whole by finish (the transport answers JSON, not
// streams).
func (w *scrubWriter) Flush() {}

// scrubbed are the messages that replace the SDK's, by JSON-RPC error code.
var scrubbed = map[int]string{
	-32700: "parse error: the body is not valid JSON",
	-32600: "invalid request: not a JSON-RPC 2.0 request",
	-32602: "invalid params: the params do not match the method (params are not repeated in errors; check _meta is an object and arguments match the tool's input schema)",
}

func (w *scrubWriter) finish() {
	body := w.buf.Bytes()
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if out, ok := scrubJSONRPC(body); ok {
		body = out
		w.ResponseWriter.Header().Del("Content-Length")
	}
	w.ResponseWriter.WriteHeader(w.status)
	_, _ = w.ResponseWriter.Write(body)
}

// scrubJSONRPC replaces the messages of scrubbed errors in a JSON-RPC answer (one message or
// a batch); ok is false when there was nothing to replace.
func scrubJSONRPC(body []byte) (out []byte, ok bool) {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 || (trimmed[0] != '{' && trimmed[0] != '[') || !bytes.Contains(trimmed, []byte(`"error"`)) {
		return nil, false
	}
	var msgs []map[string]json.RawMessage
	batch := trimmed[0] == '['
	if batch {
		if json.Unmarshal(trimmed, &msgs) != nil {
			return nil, false
		}
	} else {
		var m map[string]json.RawMessage
		if json.Unmarshal(trimmed, &m) != nil {
			return nil, false
		}
		msgs = []map[string]json.RawMessage{m}
	}
	changed := false
	for _, m := range msgs {
		var e struct {
			Code int `json:"code"`
		}
		if raw, has := m["error"]; !has || json.Unmarshal(raw, &e) != nil {
			continue
		}
		if text, has := scrubbed[e.Code]; has {
			m["error"], _ = json.Marshal(map[string]any{"code": e.Code, "message": text})
			changed = true
		}
	}
	if !changed {
		return nil, false
	}
	var err error
	if batch {
		out, err = json.Marshal(msgs)
	} else {
		out, err = json.Marshal(msgs[0])
	}
	if err != nil {
		return nil, false
	}
	return append(out, '\n'), true
}

// sdkLogger is log for the SDK's records of warn and above: it logs every stateless
// session's start and end at info, which the access log already says.
func sdkLogger(log *slog.Logger) *slog.Logger {
	if log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return slog.New(warnOnly{log.Handler()})
}

type warnOnly struct{ slog.Handler }

func (w warnOnly) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn && w.Handler.Enabled(ctx, l)
}

func (w warnOnly) WithAttrs(as []slog.Attr) slog.Handler { return warnOnly{w.Handler.WithAttrs(as)} }
func (w warnOnly) WithGroup(g string) slog.Handler       { return warnOnly{w.Handler.WithGroup(g)} }

// ToolError is the structured content (and, as JSON, the text) of a refused tool call: the
// endpoint's error body, its HTTP status, and for a 429 its Retry-After.
type ToolError struct {
	Error             api.ErrorObject `json:"error"`
	Status            int             `json:"status"`
	RetryAfterSeconds int64           `json:"retry_after_seconds,omitempty"`
}

// call serves a tool call: its arguments decoded as its endpoint decodes a request, the
// caller's budgets spent, its Service method called.
func call(ctx context.Context, svc api.Service, opts *Options, t *Tool, req *sdk.CallToolRequest) (res *sdk.CallToolResult) {
	defer func() {
		// A panic in the operation is the API's internal error, as over HTTP.
		if p := recover(); p != nil {
			sdkLogger(opts.Logger).Error("panic in a tool call", "tool", t.Name, "panic", p)
			res = errorResult(&ToolError{Status: http.StatusInternalServerError, Error: api.ErrorObject{Code: "internal", Message: "internal error"}})
		}
	}()
	var args json.RawMessage
	if req != nil && req.Params != nil {
		args = bytes.TrimSpace(req.Params.Arguments)
	}
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	var q url.Values
	if t.Method == http.MethodGet {
		var terr *ToolError
		if q, terr = query(args); terr != nil {
			return errorResult(terr)
		}
	}
	c := caller(req, opts)
	if err := svc.Admit(c, t.TakesMnemonic); err != nil {
		return errorResult(toolError(err, opts.Hint))
	}
	limit := opts.MaxArgumentBytes
	if limit <= 0 {
		limit = 16 << 10
	}
	in := &input{args: http.MaxBytesReader(nil, io.NopCloser(bytes.NewReader(args)), limit), query: q, caller: c}
	out, err := t.call(ctx, svc, in)
	if err != nil {
		return errorResult(toolError(err, opts.Hint))
	}
	return result(t, out)
}

// input is what a tool's call reads: the arguments (a POST endpoint's body), as a GET
// endpoint's query, and the caller.
type input struct {
	args   io.Reader
	query  url.Values
	caller api.Caller
}

// caller is the Service's caller of a tool call: the client of the MCP request's socket peer
// (PeerHeader, which the Handler sets) and forwarding headers.
func caller(req *sdk.CallToolRequest, opts *Options) api.Caller {
	hr := &http.Request{RemoteAddr: "127.0.0.1:0", Header: http.Header{}}
	if req != nil && req.Extra != nil && req.Extra.Header != nil {
		if p := req.Extra.Header.Get(PeerHeader); p != "" {
			hr.RemoteAddr = p
		}
		if xff := req.Extra.Header.Values("X-Forwarded-For"); len(xff) > 0 {
			hr.Header["X-Forwarded-For"] = xff
		}
	}
	if opts.Caller == nil {
		host, _, err := net.SplitHostPort(hr.RemoteAddr)
		if err != nil {
			host = hr.RemoteAddr
		}
		return api.Caller{Client: host}
	}
	return opts.Caller(hr)
}

// toolError is the tool error of an operation's refusal: the endpoint's error body, its HTTP
// status and Retry-After.
func toolError(err error, hint func(string) string) *ToolError {
	var e *api.Error
	if !errors.As(err, &e) {
		return &ToolError{Status: http.StatusInternalServerError, Error: api.ErrorObject{Code: "internal", Message: "internal error"}}
	}
	msg := e.Message
	if hint != nil {
		msg += hint(e.Code)
	}
	te := &ToolError{Error: api.ErrorObject{Code: e.Code, Message: msg}, Status: e.Status()}
	if e.RetryAfter > 0 {
		te.RetryAfterSeconds = api.RetrySeconds(e.RetryAfter)
	}
	return te
}

// query encodes a JSON object of arguments as a query string: strings as they are, numbers
// and booleans as their JSON text; null is left out.
func query(args json.RawMessage) (url.Values, *ToolError) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(args, &m); err != nil {
		return nil, badRequest("the arguments must be a JSON object")
	}
	q := url.Values{}
	for k, v := range m {
		v = bytes.TrimSpace(v)
		switch {
		case len(v) == 0 || string(v) == "null":
		case v[0] == '"':
			var s string
			if err := json.Unmarshal(v, &s); err != nil {
				return nil, badRequest("field %s is not a valid string", k)
			}
			q.Set(k, s)
		case v[0] == '{' || v[0] == '[':
			return nil, badRequest("field %s must be a string or a number", k)
		default:
			q.Set(k, string(v))
		}
	}
	return q, nil
}

func badRequest(format string, args ...any) *ToolError {
	return &ToolError{Status: http.StatusBadRequest, Error: api.ErrorObject{Code: "bad_request", Message: fmt.Sprintf(format, args...)}}
}

// result is the tool result of an operation's answer: its structured content, and its JSON
// as text. An Out of map type (tx_submit's, whose answer is that of the transaction's kind)
// is given as that map: its keys in order.
func result(t *Tool, res any) *sdk.CallToolResult {
	b, err := json.Marshal(res)
	if err == nil && t.Out.Kind() == reflect.Map {
		out := reflect.New(t.Out)
		if err = json.Unmarshal(b, out.Interface()); err == nil {
			b, err = json.Marshal(out.Interface())
		}
	}
	if err != nil {
		return errorResult(&ToolError{Status: http.StatusInternalServerError, Error: api.ErrorObject{Code: "internal", Message: err.Error()}})
	}
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(b)}}, StructuredContent: json.RawMessage(b)}
}

func errorResult(te *ToolError) *sdk.CallToolResult {
	b, _ := json.Marshal(te)
	return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: string(b)}}, StructuredContent: json.RawMessage(b)}
}

// ErrorOf reads the ToolError of a tool result (nil when it is no error): for clients
// and tests.
func ErrorOf(res *sdk.CallToolResult) *ToolError {
	if res == nil || !res.IsError {
		return nil
	}
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			var te ToolError
			if json.Unmarshal([]byte(tc.Text), &te) == nil && te.Error.Code != "" {
				return &te
			}
			return &ToolError{Error: api.ErrorObject{Code: "tool_error", Message: tc.Text}}
		}
	}
	return &ToolError{Error: api.ErrorObject{Code: "tool_error"}}
}

// String names the tool and its endpoint.
func (t *Tool) String() string { return t.Name + " (" + t.Method + " " + t.Path + ")" }
