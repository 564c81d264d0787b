package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"time"
)

// The faucet's operations as Go: the Service interface that lib/faucet's core implements
// and every door (the HTTP API, lib/faucet/mcp, lib/faucet/web) calls, and the Error every
// operation refuses with. A door translates its requests into these calls and an Error into
// its own form (an HTTP status and api.ErrorBody; an MCP tool error; an error page); no door
// calls another.

// Kind is the kind of an operation's refusal: what the door makes of it (Status gives the
// HTTP status the API's spec gives each kind; the MCP tool error carries the same status).
type Kind uint8

// The kinds of refusal.
const (
	KindInternal    Kind = iota // a fault of the faucet's (500)
	KindInvalid                 // the request is wrong (400)
	KindNotFound                // what the request names does not exist (404)
	KindNotAllowed              // the method is not the endpoint's (405)
	KindTooLarge                // the request body is too large (413)
	KindLimited                 // a rate limit or budget refuses it for now (429)
	KindCanceled                // the client went away (499)
	KindUpstream                // the node failed or refused (502)
	KindUnavailable             // the faucet cannot serve it now (503)
	KindTimeout                 // the node did not answer in time (504)
	KindConflict                // the request conflicts with an earlier one (422)
)

// Status is the HTTP status of k.
func (k Kind) Status() int {
	switch k {
	case KindInvalid:
		return http.StatusBadRequest
	case KindNotFound:
		return http.StatusNotFound
	case KindNotAllowed:
		return http.StatusMethodNotAllowed
	case KindTooLarge:
		return http.StatusRequestEntityTooLarge
	case KindLimited:
		return http.StatusTooManyRequests
	case KindCanceled:
		return 499
	case KindUpstream:
		return http.StatusBadGateway
	case KindUnavailable:
		return http.StatusServiceUnavailable
	case KindTimeout:
		return http.StatusGatewayTimeout
	case KindConflict:
		return http.StatusUnprocessableEntity
	}
	return http.StatusInternalServerError
}

// Error is an operation's refusal: its kind, the API's error code (docs/rpc-errors.md
// reasons and the faucet's own codes) and message, and for KindLimited when to retry.
type Error struct {
	Kind       Kind
	Code       string
	Message    string
	RetryAfter time.Duration
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Status is the HTTP status of e's kind.
func (e *Error) Status() int { return e.Kind.Status() }

// Errorf is an Error of kind and code with a formatted message.
func Errorf(kind Kind, code, format string, args ...any) *Error {
	return &Error{Kind: kind, Code: code, Message: fmt.Sprintf(format, args...)}
}

// RetrySeconds is d in whole seconds, at least 1: the Retry-After of a refusal.
func RetrySeconds(d time.Duration) int64 {
	s := int64(math.Ceil(d.Seconds()))
	if s < 1 {
		s = 1
	}
	return s
}

// Caller is who asks for an operation: the client's network (IPv4 address or IPv6 /64,
// behind the operator's trusted proxies), which the per-client limits count.
type Caller struct {
	Client string
}

// Answer is the answer of an operation that acts for a wallet: its Result when asked with a
// mnemonic (the transaction was signed and broadcast), or the transaction to sign when asked
// with public_key (Unsigned; nothing was broadcast).
type Answer[T any] struct {
	Result   *T
	Unsigned *UnsignedTx
}

// Body is the answer's JSON body: the unsigned transaction or the result.
func (a Answer[T]) Body() any {
	if a.Unsigned != nil {
		return a.Unsigned
	}
	return a.Result
}

// Service is the faucet's operations (docs/faucet.md#api; protocol §9.4, §9.5). Every
// method returns its result or an *Error. Admit is the per-client request budget a door
// spends once per request (mnemonic: also the budget of the requests that carry a mnemonic,
// each of which costs a key derivation).
type Service interface {
	Admit(c Caller, mnemonic bool) error

	NewWallet(ctx context.Context) (NewWalletResult, error)
	Claim(ctx context.Context, c Caller, req ClaimRequest) (ClaimResult, error)
	Status(ctx context.Context) (StatusResult, error)
	Balance(ctx context.Context, address string) (BalanceResult, error)
	Send(ctx context.Context, req SendRequest) (Answer[TransferResult], error)
	Derive(ctx context.Context, req DeriveRequest) (AddressResult, error)

	Register(ctx context.Context, req MnemonicRequest) (Answer[RegisterResult], error)
	Profile(ctx context.Context, address string) (AgentProfile, error)
	Directory(ctx context.Context, q url.Values) (Directory, error)
	Vouch(ctx context.Context, req VouchRequest) (Answer[VouchResult], error)
	ContractCreate(ctx context.Context, req ContractCreateRequest) (Answer[ContractCreateResult], error)
	ContractFulfil(ctx context.Context, req ContractRequest) (Answer[FulfilResult], error)
	ContractRefund(ctx context.Context, req ContractRequest) (Answer[RefundResult], error)
	Contract(ctx context.Context, contractID string) (Contract, error)
	Review(ctx context.Context, req ReviewRequest) (Answer[ReviewResult], error)
	TxSubmit(ctx context.Context, req TxSubmitRequest) (any, error)

	Block(ctx context.Context, q url.Values) (Block, error)
	Transaction(ctx context.Context, txid string) (Transaction, error)
	Decay(ctx context.Context, address string) (Decay, error)
}

// Decode reads one JSON object from r into v, and nothing after it: how the doors read a
// request (an HTTP body, an MCP tool's arguments). Its refusals are the API's bad_request and
// body_too_large (beyond an http.MaxBytesReader's limit); their messages never quote the
// input.
func Decode(r io.Reader, v any) error {
	if r == nil {
		return Errorf(KindInvalid, "bad_request", "a JSON body is required")
	}
	dec := json.NewDecoder(r)
	if err := dec.Decode(v); err != nil {
		var mbe *http.MaxBytesError
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &mbe):
			return Errorf(KindTooLarge, "body_too_large", "the body is larger than %d bytes", mbe.Limit)
		case errors.Is(err, io.EOF):
			return Errorf(KindInvalid, "bad_request", "a JSON body is required")
		case errors.As(err, &se), errors.Is(err, io.ErrUnexpectedEOF):
			return Errorf(KindInvalid, "bad_request", "the body is not valid JSON")
		case errors.As(err, &te):
			if te.Field != "" {
				return Errorf(KindInvalid, "bad_request", "field %s must be a %s", te.Field, jsonKind(te.Type.Kind().String()))
			}
			return Errorf(KindInvalid, "bad_request", "the body must be a JSON object")
		default:
			return Errorf(KindInvalid, "bad_request", "the body is not a valid JSON object")
		}
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return Errorf(KindTooLarge, "body_too_large", "the body is larger than %d bytes", mbe.Limit)
		}
		return Errorf(KindInvalid, "bad_request", "unexpected data after the JSON object")
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
