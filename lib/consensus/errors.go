package consensus

import (
	"errors"
	"fmt"
)

// ErrorKind identifies one consensus rule.
type ErrorKind string

// Error makes an ErrorKind usable with errors.Is.
func (k ErrorKind) Error() string { return string(k) }

// The rules, one kind each.
const (
	// Transactions, context-free.
	ErrTxVersion          = ErrorKind("ErrTxVersion")
	ErrTxTooLarge         = ErrorKind("ErrTxTooLarge")
	ErrNoInputs           = ErrorKind("ErrNoInputs")
	ErrNoOutputs          = ErrorKind("ErrNoOutputs")
	ErrTooManyInputs      = ErrorKind("ErrTooManyInputs")
	ErrTooManyOutputs     = ErrorKind("ErrTooManyOutputs")
	ErrZeroOutput         = ErrorKind("ErrZeroOutput")
	ErrValueOverflow      = ErrorKind("ErrValueOverflow")
	ErrDuplicateInput     = ErrorKind("ErrDuplicateInput")
	ErrCoinbaseInputs     = ErrorKind("ErrCoinbaseInputs")
	ErrCoinbasePayload    = ErrorKind("ErrCoinbasePayload")
	ErrTransferPayload    = ErrorKind("ErrTransferPayload")
	ErrAgentNotEnabled    = ErrorKind("ErrAgentNotEnabled")
	ErrUnexpectedCoinbase = ErrorKind("ErrUnexpectedCoinbase")

	// Transactions against the chain.
	ErrMissingInputs     = ErrorKind("ErrMissingInputs")
	ErrImmatureCoinbase  = ErrorKind("ErrImmatureCoinbase")
	ErrPubKeyMismatch    = ErrorKind("ErrPubKeyMismatch")
	ErrBadSignature      = ErrorKind("ErrBadSignature")
	ErrInsufficientFunds = ErrorKind("ErrInsufficientFunds")
	ErrNonFinal          = ErrorKind("ErrNonFinal")
	ErrSpendLocked       = ErrorKind("ErrSpendLocked")

	// Blocks, context-free.
	ErrBlockVersion       = ErrorKind("ErrBlockVersion")
	ErrBlockTooLarge      = ErrorKind("ErrBlockTooLarge")
	ErrNoTransactions     = ErrorKind("ErrNoTransactions")
	ErrFirstTxNotCoinbase = ErrorKind("ErrFirstTxNotCoinbase")
	ErrMultipleCoinbases  = ErrorKind("ErrMultipleCoinbases")
	ErrBadMerkleRoot      = ErrorKind("ErrBadMerkleRoot")
	ErrDuplicateTx        = ErrorKind("ErrDuplicateTx")
	ErrBadTarget          = ErrorKind("ErrBadTarget")
	ErrHighHash           = ErrorKind("ErrHighHash")

	// Blocks in context.
	ErrBadCoinbaseHeight = ErrorKind("ErrBadCoinbaseHeight")
	ErrBadCoinbaseValue  = ErrorKind("ErrBadCoinbaseValue")
	ErrDoubleSpend       = ErrorKind("ErrDoubleSpend")
	ErrWrongDifficulty   = ErrorKind("ErrWrongDifficulty")
	ErrTimeTooOld        = ErrorKind("ErrTimeTooOld")
	ErrTimeTooNew        = ErrorKind("ErrTimeTooNew")
	ErrUnknownParent     = ErrorKind("ErrUnknownParent")
	ErrInvalidAncestor   = ErrorKind("ErrInvalidAncestor")
	ErrDuplicateBlock    = ErrorKind("ErrDuplicateBlock")
	ErrKnownInvalid      = ErrorKind("ErrKnownInvalid")
)

// RuleError is a consensus rule violation: Err says which rule, Description says what
// happened in words a user can read.
type RuleError struct {
	Err         ErrorKind
	Description string
}

func (e RuleError) Error() string { return e.Description }

// Unwrap lets errors.Is match the ErrorKind.
func (e RuleError) Unwrap() error { return e.Err }

func ruleError(kind ErrorKind, format string, args ...any) error {
	return RuleError{Err: kind, Description: fmt.Sprintf(format, args...)}
}

// IsRuleError reports whether err is (or wraps) a RuleError.
func IsRuleError(err error) bool {
	var re RuleError
	return errors.As(err, &re)
}
