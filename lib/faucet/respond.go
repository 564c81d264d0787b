package faucet

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/cointoolkit/coin/lib/amount"
	"github.com/cointoolkit/coin/lib/faucet/api"
	"github.com/cointoolkit/coin/lib/faucet/payout"
	"github.com/cointoolkit/coin/lib/jsonrpc"
	"github.com/cointoolkit/coin/lib/keys"
	"github.com/cointoolkit/coin/lib/wallet"
)

// The service's refusals: every error an operation returns is an *Error (api.Error), of a
// kind and with the API's code; fault maps the errors of the parts below (the engine, the
// claim store, the wallet, the node's RPC) to one, by their kinds, never by their text.

// Error is an operation's refusal (api.Error: its kind, code, message and retry delay).
type Error = api.Error

func apiErr(kind api.Kind, code, format string, args ...any) *Error {
	return api.Errorf(kind, code, format, args...)
}

// fault is err as an *Error (nil for nil). An error of no known kind is logged and becomes
// the API's internal error, so no answer shows an internal message.
func (s *Service) fault(err error) error {
	if err == nil {
		return nil
	}
	return s.toAPIError(err)
}

// AsError is err as an *Error, by its kind and code: what a door writes for an
// operation's error (an error of no known kind is logged and becomes the internal error).
func (s *Service) AsError(err error) *Error { return s.toAPIError(err) }

// toAPIError maps an error to its kind and code.
func (s *Service) toAPIError(err error) *Error {
	var e *Error
	var rl *payout.RateLimitError
	var rej *payout.RejectedError
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
		return &Error{Kind: api.KindLimited, Code: code, Message: rl.Error(), RetryAfter: rl.RetryAfter}
	case errors.Is(err, keys.ErrBadMnemonic):
		return apiErr(api.KindInvalid, "invalid_mnemonic", "%v", err)
	case errors.Is(err, keys.ErrBadAddress):
		return apiErr(api.KindInvalid, "invalid_address", "%v", err)
	case errors.As(err, &ife):
		return apiErr(api.KindInvalid, "insufficient_funds", "%v", err)
	case errors.Is(err, wallet.ErrDust):
		return apiErr(api.KindInvalid, "invalid_amount", "%v", err)
	case errors.Is(err, wallet.ErrTooLarge):
		return apiErr(api.KindInvalid, "too_many_inputs", "%v; send a smaller amount", err)
	case errors.Is(err, payout.ErrFaucetEmpty):
		return apiErr(api.KindUnavailable, "faucet_empty", "%v", err)
	case errors.Is(err, payout.ErrBusy):
		return apiErr(api.KindUnavailable, "faucet_busy", "%v", err)
	case errors.Is(err, payout.ErrStopped):
		return apiErr(api.KindUnavailable, "shutting_down", "%v", err)
	case errors.As(err, &rej):
		return apiErr(api.KindUpstream, "node_rejected", "%v", err)
	case errors.Is(err, payout.ErrNodeUnavailable), jsonrpc.IsConnRefused(err):
		return apiErr(api.KindUpstream, "node_unavailable", "the node is unavailable")
	case errors.As(err, &rpcErr):
		return apiErr(api.KindUpstream, "node_error", "node error: %s", rpcErr.Message)
	case errors.Is(err, context.DeadlineExceeded):
		return apiErr(api.KindTimeout, "timeout", "the node did not answer in time")
	case errors.Is(err, context.Canceled):
		return apiErr(api.KindCanceled, "canceled", "request canceled")
	case nodeConnLost(err):
		return apiErr(api.KindUpstream, CodeNodeConnectionLost, "the connection to the node failed during the request; retry")
	}
	s.log.Error("internal error", "err", err)
	return apiErr(api.KindInternal, "internal", "internal error")
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

func required(field, v string) error {
	if strings.TrimSpace(v) == "" {
		return apiErr(api.KindInvalid, "bad_request", "field %s is required", field)
	}
	return nil
}

// parseAmount reads a request amount: a JSON number in COIN, parsed exactly from its
// decimal text (protocol §2).
func parseAmount(n api.Number) (uint64, error) { return parseAmountField("amount", n) }

// parseAmountField is parseAmount for the request field named field.
func parseAmountField(field string, n api.Number) (uint64, error) {
	if n == "" {
		return 0, apiErr(api.KindInvalid, "bad_request", "field %s is required", field)
	}
	v, err := amount.Parse(string(n))
	if err != nil {
		return 0, apiErr(api.KindInvalid, "invalid_amount", "%s: %v (a decimal number of COIN with at most 8 fractional digits)", field, err)
	}
	return v, nil
}
