package mempool

import (
	"strings"

	"github.com/cointoolkit/coin/lib/reason"
)

// RejectError explains why a transaction was not accepted: Err is the rule's kind (an
// ErrorKind) or the consensus.RuleError, so errors.Is and reason.Of see the kind.
type RejectError struct {
	Reason string
	Err    error // the underlying rule error, if any
}

func (e *RejectError) Error() string {
	if e.Err == nil {
		return e.Reason
	}
	msg := e.Err.Error()
	switch {
	case e.Reason == "" || strings.HasPrefix(msg, e.Reason):
		return msg // "missing inputs: ..." from consensus already says it
	case strings.HasPrefix(e.Reason, msg):
		return e.Reason // "insufficient fee: fee 171 is below ..." already names the sentinel
	}
	return e.Reason + ": " + msg
}

func (e *RejectError) Unwrap() error { return e.Err }

func reject(reason string, err error) error { return &RejectError{Reason: reason, Err: err} }

// ErrorKind identifies one mempool policy rule; its text is the start of the rejection's
// message. Rejections by a consensus rule carry the consensus.ErrorKind instead.
type ErrorKind string

// Error makes an ErrorKind usable with errors.Is.
func (k ErrorKind) Error() string { return string(k) }

// Reason is the kind's stable name in the node's RPC errors (error.data.reason, protocol §11).
func (k ErrorKind) Reason() reason.Reason { return reasons[k] }

// Is matches target by reason, so that errors.Is(err, reason.AlreadyInChain) holds for an
// error of kind ErrAlreadyInChain, as it does for the same error received over RPC.
func (k ErrorKind) Is(target error) bool { return reason.Match(k.Reason(), target) }

// The policy rules, one kind each, usable with errors.Is.
const (
	ErrAlreadyInPool   = ErrorKind("transaction already in mempool")
	ErrAlreadyInChain  = ErrorKind("transaction already in block chain")
	ErrConflict        = ErrorKind("conflicts with a mempool transaction")
	ErrInsufficientFee = ErrorKind("insufficient fee")
	ErrDust            = ErrorKind("dust output")
	ErrPoolFull        = ErrorKind("mempool full")
	ErrCoinbase        = ErrorKind("coinbase transaction not allowed in the mempool")
)

// reasons maps every kind to its reason; every kind has one of its own (reason_test.go in
// lib/reason checks both).
var reasons = map[ErrorKind]reason.Reason{
	ErrAlreadyInPool:   reason.AlreadyInMempool,
	ErrAlreadyInChain:  reason.AlreadyInChain,
	ErrConflict:        reason.Conflict,
	ErrInsufficientFee: reason.FeeTooLow,
	ErrDust:            reason.Dust,
	ErrPoolFull:        reason.MempoolFull,
	ErrCoinbase:        reason.CoinbaseInMempool,
}
