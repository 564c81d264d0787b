package mempool

import (
	"errors"
	"strings"
)

// RejectError explains why a transaction was not accepted.
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

// Sentinel reasons, usable with errors.Is.
var (
	ErrAlreadyInPool   = errors.New("transaction already in mempool")
	ErrAlreadyInChain  = errors.New("transaction already in block chain")
	ErrConflict        = errors.New("conflicts with a mempool transaction")
	ErrInsufficientFee = errors.New("insufficient fee")
	ErrDust            = errors.New("dust output")
	ErrPoolFull        = errors.New("mempool full")
	ErrCoinbase        = errors.New("coinbase transaction not allowed in the mempool")
)
