package faucet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/cointoolkit/coin/lib/amount"
	"github.com/cointoolkit/coin/lib/faucet/api"
	"github.com/cointoolkit/coin/lib/jsonrpc"
	"github.com/cointoolkit/coin/lib/keys"
	"github.com/cointoolkit/coin/lib/wallet"
)

// Responses and request bodies: the API's errors and their HTTP statuses, JSON out, JSON in.

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
		code := rl.Code
		if code == "" {
			code = CodeAddressRateLimited
		}
		return &Error{Status: http.StatusTooManyRequests, Code: code, Message: rl.Error(), RetryAfter: rl.RetryAfter}
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
	case nodeConnLost(err):
		return apiErr(http.StatusBadGateway, CodeNodeConnectionLost, "the connection to the node failed during the request; retry")
	}
	s.log.Error("internal error", "err", err)
	return apiErr(http.StatusInternalServerError, "internal", "internal error")
}

// CodeNodeConnectionLost is the 502 of a request whose connection to the node broke (reset,
// closed mid-answer): the node failed, not the faucet.
const CodeNodeConnectionLost = "node_connection_lost"

// nodeConnLost reports whether err is a broken connection to the node: reset, closed
// before the whole answer, or another network error of the RPC transport. Errors are read by
// their kind (syscall errnos, io's sentinels, net.Error), never by their text.
func nodeConnLost(err error) bool {
	var ne net.Error
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNABORTED) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.As(err, &ne)
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
// decimal text (protocol §2).
func parseAmount(n api.Number) (uint64, error) { return parseAmountField("amount", n) }

// parseAmountField is parseAmount for the request field named field.
func parseAmountField(field string, n api.Number) (uint64, error) {
	if n == "" {
		return 0, apiErr(http.StatusBadRequest, "bad_request", "field %s is required", field)
	}
	v, err := amount.Parse(string(n))
	if err != nil {
		return 0, apiErr(http.StatusBadRequest, "invalid_amount", "%s: %v (a decimal number of COIN with at most 8 fractional digits)", field, err)
	}
	return v, nil
}
